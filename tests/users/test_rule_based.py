"""The rule-based user the families' users build on (`agentgym.users.rule_based`), with a small
user of its own: the shared reading of a message (once, for a judge and the reply), the stock picks
drawn up front or live, the goal shift's timing and
announcement, the judging after a world change, and typos that keep what they must."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from agentgym.core.seeding import Rng, fast_stream
from agentgym.core.task import NoiseEvent, UserTurn, WorldEvent, hold_sign_off, signed_off
from agentgym.envs.crosstask.followup import FollowUpUser
from agentgym.envs.dialog.user import DialogUser
from agentgym.envs.tooluse.user import ToolUseUser
from agentgym.toolenv.user import DetailUser
from agentgym.users.picks import DrawnPicks, LivePicks, pick
from agentgym.users.rule_based import RuleBasedUser, spelled_out
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
        super().__init__(READ, ["area"], DrawnPicks(rng))
        self.verdict: UserTurn | None = None

    def opening(self) -> str:
        return "Find me a flat in Riverside."

    def _respond(self, r: Reading, message: str, turn: int) -> str | UserTurn:
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
    said = user.react([WorldEvent("write", {})], 1)
    assert said == UserTurn("Actually, up to 800. Great, thanks!", end="accepted", now="Actually, up to 800.")
    # The change of mind is said at once; only the sign-off waits for the assistant's word (a
    # CrossTask playtest, seed 7029, turn 16: a held shift let the next write go against it).
    assert hold_sign_off(said) == (UserTurn("Actually, up to 800."), UserTurn("Great, thanks!", end="accepted"))
    assert hold_sign_off(user.verdict) == (None, user.verdict)


@pytest.mark.parametrize(("message", "declined"), [
    ("Filed INC-346. Would you like me to roll shipping back to v3.5.3? Yes or no?", True),
    ("done. filed INC-150 as sev3. want me to roll search back to v1.16.7?", True),
    ("All refunded. Is there anything else I can help with?", True),
    ("Booked for Saturday. Shall I also add a note for the host?", True),
    ("All done: the refund of 12.50 went through.", False),
    ("Booked. Does that look right to you?", False),
    ("Anything else?", False),
    ("All set. What currency should I use?", False),
    ("Done. May I ask what day and time you prefer?", False),
])
def test_a_sign_off_declines_an_offer_of_more_that_ends_the_report(message: str, declined: bool) -> None:
    # The user said "Perfect, that's all done. Thanks!" to "... want me to roll search back?"
    # (playtests: ToolUse 8812 T5, 8854 T4; CrossTask 8858 T13): the request is done, and a person
    # answers the question before signing off.
    held = UserTurn("Perfect, that's all done. Thanks!", end="accepted")
    said = signed_off(held, message)
    assert said.end == "accepted" and said.text.endswith(held.text)
    assert said.text.startswith("No, thanks.") is declined, said


def test_typos_never_touch_a_stock_reply() -> None:
    user = BudgetUser(Steady(0.0))
    assert user.perturb_text(GO_AHEAD[0], np.random.default_rng(0)) == (GO_AHEAD[0], [])
    text, changes = user.perturb_text("I would like something quite central please", np.random.default_rng(0))
    assert changes and text != "I would like something quite central please"


def test_every_family_user_is_a_rule_based_user() -> None:
    for user in (ToolUseUser, DetailUser, DialogUser, FollowUpUser):
        assert issubclass(user, RuleBasedUser), user


def test_drawn_picks_are_made_at_once_and_cycle() -> None:
    rng = fast_stream(5, "user")
    draws = [rng.random() for _ in range(5)]
    picks = DrawnPicks(fast_stream(5, "user"))
    assert [picks.index(3) for _ in range(5)] == [int(u * 3) for u in draws[:4] + draws[:1]]
    user = BudgetUser(Steady(0.7))
    assert [user._pick(GO_AHEAD) for _ in range(3)] == [GO_AHEAD[2]] * 3


def test_picks_drawn_up_front_or_live_pick_what_rng_integers_draws() -> None:
    """The session draws its switch leads up front and the Dialog user draws live: both pick as
    `Rng.integers(n)` would have, at the moments they draw."""
    rng = fast_stream(9, "s")
    expected = [int(rng.integers(3)) for _ in range(3)]
    drawn, live = DrawnPicks(fast_stream(9, "s"), 3), LivePicks(fast_stream(9, "s"))
    assert [drawn.index(3) for _ in range(3)] == expected == [live.index(3) for _ in range(3)]
    assert pick(drawn, ("a", "b", "c")) == "abc"[expected[0]]


@pytest.mark.parametrize("seed", [0, 9, 8861])
def test_live_picks_made_a_block_at_a_time_are_the_plain_draws(seed: int) -> None:
    """Past several blocks, with option counts of every size: each pick is what
    ``int(rng.integers(n))`` of the same stream picks, and between blocks no generator is held."""
    plain = fast_stream(seed, "user")
    sizes = [1 + (k * 7) % 13 for k in range(5 * LivePicks.BLOCK + 3)]
    expected = [int(plain.integers(n)) for n in sizes]
    live = LivePicks(fast_stream(seed, "user"))
    got = []
    for n in sizes:
        got.append(live.index(n))
        assert live._rng is None
    assert got == expected
    with pytest.raises(ValueError):
        live.index(0)


def test_live_picks_draw_at_each_pick_from_a_stream_that_may_be_shared() -> None:
    """A generator not made by `fast_stream` (no ``seed_bits``) is drawn from only when a pick is
    asked for, so another consumer of it sees the draws it always saw."""
    shared, plain = Rng(4), Rng(4)
    live = LivePicks(shared)
    assert [live.index(5), shared.random(), live.index(5)] == \
        [int(plain.integers(5)), plain.random(), int(plain.integers(5))]


def test_a_message_is_read_once_for_a_judge_and_the_reply() -> None:
    calls: list[str] = []

    def read(message: str) -> Reading:
        calls.append(message)
        return READ(message)

    user = BudgetUser(Steady(0.0))
    user._read = read
    assert user._reading("What is your budget?") is user._reading("What is your budget?")
    assert user.reply("What is your budget?", 1) == UserTurn("Up to 900.") and calls == ["What is your budget?"]



@pytest.mark.parametrize("mark", ["A)", "(a)", "1.", "2)", "-", "*"])
def test_a_list_asked_for_is_asked_whatever_marks_its_items(mark: str) -> None:
    """"To find the right place, tell me what you want on:" over "A) cuisine" ... "E) must-have
    amenities (...)": every item is a question (lettered items were read as statements, and only
    the cuisine was answered; a CrossTask playtest, seed 6800, turn 9)."""
    from agentgym.users.rule_based import spelled_out

    message = f"Now, Saturday afternoon. Tell me what you want on:\n{mark} cuisine\n{mark} must-have amenities"
    assert spelled_out(message).splitlines()[1:] == [f"{mark} cuisine?", f"{mark} must-have amenities?"]


_TABLE_OF_QUESTIONS = ("Good day! Could you please tell me what you are looking for?\n\n| Question | Options |\n"
                       "|---|---|\n| Day and time | Monday to Sunday; morning, afternoon or evening |\n"
                       "| Area | Old Town, Riverside, Harbor, Chinatown |\n| Minimum rating | e.g. 4.0 |\n"
                       "| Required amenities | vegetarian menu, outdoor seating, parking |")


def test_the_rows_of_a_table_of_questions_are_questions() -> None:
    # A formal assistant asked in a table (a playtest, CrossTask 8999 T1): the user took the rows
    # for statements and answered the day only.
    out = spelled_out(_TABLE_OF_QUESTIONS)
    assert out.splitlines()[2:] == ["Day and time (Monday to Sunday; morning, afternoon or evening)?",
                                    "Area (Old Town, Riverside, Harbor, Chinatown)?", "Minimum rating (e.g. 4.0)?",
                                    "Required amenities (vegetarian menu, outdoor seating, parking)?"]
    assert spelled_out("A few questions:\n| Question | Your answer |\n|---|---|\n| Which area? | |\n| Budget? | |") \
        == "A few questions:\nWhich area?\nBudget?"


@pytest.mark.parametrize("message", [
    "Here are the options:\n\n| Option | Venue | Price |\n|---|---|---|\n| 1 | Rose House | 40 |\n\nWhich one?",
    "Here is what I have:\n| Detail | Value |\n|---|---|\n| Area | Old Town |\n| Day | Friday |\nCorrect?",
    "I found these.\n| Question | Options |\n|---|---|\n| Area | Old Town |",  # the line above asks nothing
])
def test_a_table_of_options_or_a_recap_keeps_its_rows(message: str) -> None:
    assert spelled_out(message) == message


def test_the_user_answers_every_row_of_a_table_of_questions() -> None:
    import gymnasium as gym

    import agentgym  # noqa: F401  (registers the ids)

    env = gym.make("AgentRL/CrossTask-v0", difficulty="medium", split="train")
    env.reset(seed=8999)
    table = _TABLE_OF_QUESTIONS.replace("| Question | Options |", "| Question | Examples |")
    reply = env.step(table)[4]["messages"][-1]["content"]
    assert all(w in reply for w in ("Monday", "Chinatown", "4.0", "parking")), reply
