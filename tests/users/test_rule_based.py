"""The rule-based user the families' users build on (`agentgym.users.rule_based`), with a small
user of its own: the shared reading of a message, the stock picks, the goal shift's timing and
announcement, the judging after a world change, and typos that keep what they must."""

from __future__ import annotations

from typing import Any

import numpy as np

from agentgym.core.task import NoiseEvent, UserTurn, WorldEvent
from agentgym.envs.tooluse.user import ToolUseUser
from agentgym.toolenv.user import DetailUser
from agentgym.users.rule_based import RuleBasedUser
from agentgym.users.stock import EMPTY, GO_AHEAD, KEYWORDS, REPHRASE
from agentgym.users.understanding import Reading, compile_understanding, parse_lexicon

READ = compile_understanding(parse_lexicon({
    "slots": {"budget": ["budget"], "area": ["area"]}, "values": {}, "open": ["anything else"], "statements": {},
})).read


class Steady:
    """A user stream that draws the same number each time."""

    def __init__(self, u: float) -> None:
        self.u = u

    def random(self) -> float:
        return self.u


class BudgetUser(RuleBasedUser):
    STOCK = frozenset(GO_AHEAD)

    def __init__(self, rng: Any) -> None:
        super().__init__(rng, READ, ["area"])
        self.verdict: UserTurn | None = None

    def opening(self) -> str:
        return "Find me a flat in Riverside."

    def _respond(self, r: Reading, message: str) -> str | UserTurn:
        if "budget" in r.asked:
            self._reveal("budget")
            return "Up to 900."
        if r.question:
            return UserTurn("Bye.", end="gave_up")
        return self._pick(GO_AHEAD)

    def _judge(self) -> UserTurn | None:
        return self.verdict

    def _fire_shift(self, turn: int) -> str:
        shift, fire = self._take_shift()
        fire(NoiseEvent(target="budget", detail=shift))
        return f"Actually, {shift}."

    def plan_goal_shift(self, rng: Any, fire: Any) -> bool:
        return self._plan_shift("up to 800", rng, fire)


def test_empty_keyword_and_unplaced_messages_get_the_shared_replies() -> None:
    user = BudgetUser(Steady(0.0))
    assert user.reply("   ", 1) == UserTurn(EMPTY)
    assert user.reply("budget budget area area budget area", 1) == UserTurn(KEYWORDS)
    assert user.reply("zzz qqq", 1) == UserTurn(REPHRASE)


def test_the_family_answers_and_its_whole_turn_ends_the_reply() -> None:
    user = BudgetUser(Steady(0.5))
    assert user.known_constraints() == ["area"]
    assert user.reply("What is your budget?", 1) == UserTurn("Up to 900.")
    assert user.known_constraints() == ["area", "budget"]
    assert user.reply("Which area?", 1) == UserTurn("Bye.", end="gave_up")
    assert user.reply("I like the area.", 1) == UserTurn(GO_AHEAD[1])  # the first of the four draws: 0.5


def test_a_shift_is_announced_from_its_turn_after_the_reply_and_once() -> None:
    user, fired = BudgetUser(Steady(0.0)), []
    assert user.plan_goal_shift(Steady(0.99), fired.append) and user.shift_pending()  # from turn 2 + 2 = 4
    assert user.reply("What is your budget?", 3) == UserTurn("Up to 900.")
    assert user.reply("What is your budget?", 4) == UserTurn("Up to 900. Actually, up to 800.")
    assert not user.shift_pending() and [e.detail for e in fired] == ["up to 800"]
    assert user.reply("What is your budget?", 5) == UserTurn("Up to 900.")


def test_on_a_world_change_the_shift_comes_before_the_verdict() -> None:
    user = BudgetUser(Steady(0.0))
    user.verdict = UserTurn("Great, thanks!", end="accepted")
    assert user.react([WorldEvent("write", {})], 1) == user.verdict
    user.plan_goal_shift(Steady(0.0), lambda event: None)
    assert user.react([WorldEvent("write", {})], 1) == UserTurn("Actually, up to 800. Great, thanks!", end="accepted")


def test_typos_never_touch_a_stock_reply() -> None:
    user = BudgetUser(Steady(0.0))
    assert user.perturb_text(GO_AHEAD[0], np.random.default_rng(0)) == (GO_AHEAD[0], [])
    text, changes = user.perturb_text("I would like something quite central please", np.random.default_rng(0))
    assert changes and text != "I would like something quite central please"


def test_the_tool_users_are_rule_based_users() -> None:
    assert issubclass(ToolUseUser, RuleBasedUser) and issubclass(DetailUser, RuleBasedUser)
