"""The default simulated user of an env built with `make_tool_env`, made from the task's details.

It opens with the request and the details it states up front, states a detail when a message
asks about it (read by the shared understanding engine, `agentgym.toolenv.reader`), leaves out
one the message sets aside, states one it has not stated yet when asked an open question, says
"go ahead" when asked to confirm, and asks to rephrase what it cannot place (a list of keywords
gets a request for a full sentence).
It never takes words as the work being done: after each write it asks the scorer whether the
task is done, and accepts exactly then, so user and grader never disagree. A write that fits no
step of the gold plan is wrong: it says so, and gives up after `PATIENCE` of them. Where the
writes are final (the default scorer, which counts every write that fits no step as an extra
effect), one wrong write leaves no way to success, so the user says so and leaves at once rather
than invite a fix the score would still punish.

Noise support, from the task's own fields: ambiguity leaves an up-front detail out of the opening
(it is stated when asked); a goal shift (`ToolTask.shifts`) is announced at the first reply from
its planned turn on, when the assistant asks to confirm, or on seeing the first write, whichever
comes first; typos land only on a message that carries something the agent needs (never a stock
reply) and never touch a detail's value (an e-mail address stays one).
"""

from __future__ import annotations

from typing import Any, Callable

from agentgym.core.gold import call_matches, same
from agentgym.core.task import NoiseEvent, Score, Task, UserTurn
from agentgym.toolenv.reader import reader_for
from agentgym.toolenv.task import Detail, GoldPlan, Shift, ToolTask
from agentgym.users import stock
from agentgym.users.picks import DrawnPicks
from agentgym.users.rule_based import RuleBasedUser, shift_event
from agentgym.users.understanding import Reading, Understanding

__all__ = ["DetailUser", "PATIENCE"]

#: Writes that fit no step of the gold plan after which the user gives up.
PATIENCE = 2

_NOT_DONE = ("I don't see that done yet. Please take care of it with your tools.",
             "It doesn't look done on my side yet.")
_WRONG = "Hmm, that's not what I asked for."
#: Replies that carry nothing the agent needs (typos never touch them).
_STOCK = frozenset({*stock.GO_AHEAD, stock.CONFIRMED, stock.EVERYTHING, stock.REPHRASE, stock.KEYWORDS,
                    *stock.ACCEPT, _WRONG, stock.GIVE_UP, stock.EMPTY, f"{_WRONG} {stock.GIVE_UP}",
                    f"{_WRONG} {stock.CANNOT_UNDO}"})


class DetailUser(RuleBasedUser):
    """The simulated user of one episode of a built env (see the module docstring).

    Args:
        task: the episode's task; ``task.goal`` is the `ToolTask`, ``task.gold`` its `GoldPlan`.
        rng: the episode's user stream (it draws only from it).
        score: the episode's scorer, ``task -> Score``: the user accepts once it says success.
        writes_are_final: whether a write that fits no gold step rules success out for good (the
            default scorer's rule); the user then leaves at the first such write.
    """

    STOCK = _STOCK

    def __init__(self, task: Task, rng: Any, score: Callable[[Task], Score], writes_are_final: bool = False) -> None:
        self._task = task
        self._final = writes_are_final
        self._goal: ToolTask = task.goal
        self._score = score
        super().__init__(_reader(self._goal).read, [d.id for d in self._goal.details if d.reveal == "upfront"],
                         DrawnPicks(rng))
        self._blurred: str | None = None
        self._wrong = 0
        self._seen = 0

    # -------------------------------------------------------------- helpers
    def _state(self, d: Detail) -> str:
        self._reveal(d.id)
        return d.said()

    # -------------------------------------------------------------- SimulatedUser
    def opening(self) -> str:
        parts = [self._goal.request.strip()]
        for d in self._goal.details:
            if d.reveal != "upfront":
                continue
            if d.id == self._blurred:
                if d.vague:
                    parts.append(d.vague)
            else:
                parts.append(d.said())
        return " ".join(parts)

    def _respond(self, r: Reading, message: str, turn: int) -> str:
        if r.asked:
            return " ".join(self._state(self._goal.detail(did)) for did in r.asked)
        if r.open:
            hidden = [d for d in self._goal.details if d.id not in self._revealed and d.id not in r.excluded]
            return self._state(hidden[0]) if hidden else stock.EVERYTHING
        if r.confirm:
            return stock.CONFIRMED
        if r.question:
            return stock.REPHRASE
        if "done" in r.said:
            return self._pick(_NOT_DONE)
        return self._pick(stock.GO_AHEAD)

    def _with_shift(self, text: str, said: str, confirm: bool) -> str:
        # Asked to confirm, the user answers with the change instead of a yes.
        return said if confirm else f"{text} {said}"

    def _judge(self) -> UserTurn | None:
        if self._score(self._task).success:
            return UserTurn(self._pick(stock.ACCEPT), end="accepted")
        # The writes made since the last look (a plain-function toolkit logs them; a Toolkit
        # subclass's world is its own, and only the scorer judges it).
        writes = self._task.extra.get("writes", ())
        new, self._seen = writes[self._seen:], len(writes)
        plan = self._task.gold.calls
        wrong = sum(1 for w in new if not any(call_matches(w["name"], w["arguments"], step) for step in plan))
        if not wrong:
            return None
        self._wrong += wrong
        if self._final:
            return UserTurn(f"{_WRONG} {stock.CANNOT_UNDO}", end="gave_up")
        if self._wrong >= PATIENCE:
            return UserTurn(f"{_WRONG} {stock.GIVE_UP}", end="gave_up")
        return UserTurn(_WRONG)

    def contradictions(self, name: str, arguments: dict[str, Any]) -> list[str]:
        out: list[str] = []
        for d in self._goal.details:
            if d.id in self._revealed and any(a in arguments and not same(arguments[a], d.value)
                                              for a in d.argument_names):
                out.append(d.id)
        return out

    # -------------------------------------------------------------- noise support
    def blur(self, rng: Any) -> NoiseEvent | None:
        """Ambiguity: the opening leaves out one up-front detail, which the user states when asked."""
        options = [d for d in self._goal.details if d.reveal == "upfront"]
        if not options:
            return None
        d = options[int(rng.random() * len(options))]
        self._blurred = d.id
        self._revealed.remove(d.id)
        return NoiseEvent(target=d.id, detail=f"the request leaves out the {d.id.replace('_', ' ')}")

    def plan_goal_shift(self, rng: Any, fire: Callable[[NoiseEvent], None]) -> bool:
        """Goal shift: one of the task's `shifts`, announced from turn 2, 3 or 4 on."""
        options = [s for s in self._goal.shifts if not same(s.to, self._goal.value(s.detail))]
        if not options:
            return False
        return self._plan_shift(options[int(rng.random() * len(options))], rng, fire)

    def _fire_shift(self, turn: int) -> str:
        shift: Shift
        shift, fire = self._take_shift()
        old_goal, old_gold = self._goal, self._task.gold
        old = old_goal.detail(shift.detail)
        new_goal = old_goal.shifted(shift)
        self._goal = self._task.goal = new_goal
        self._task.gold = GoldPlan(tuple(new_goal.gold_calls), (*old_gold.superseded, *old_gold.calls))
        self._reveal(shift.detail)
        # A write already made with the old value stays made (nothing is known to undo it): then
        # no agent can satisfy the new goal. Otherwise two turns are needed, to look up and write.
        writes = self._task.extra.get("writes", ())
        stuck = any(shift.detail in self.contradictions(w["name"], w["arguments"]) for w in writes)
        recoverable = not stuck and turn + 2 <= self._task.max_turns
        # Writes the change made unwanted were right when made: not the assistant's wrong writes.
        self._seen = len(writes)
        fire(shift_event(shift.detail, old.value, shift.to, recoverable))
        return shift.announce or f"Actually, I've changed my mind. {new_goal.detail(shift.detail).said()}"

    def _kept_values(self) -> list[str]:
        """Every detail's value, longest first (typos keep it as it is)."""
        return sorted({str(v) for d in self._goal.details for v in _leaves(d.value) if isinstance(v, str) and v},
                      key=len, reverse=True)


def _leaves(value: Any) -> list[Any]:
    return [x for item in value for x in _leaves(item)] if isinstance(value, list) else [value]


def _reader(goal: ToolTask) -> Understanding:
    return reader_for(tuple((d.id, d.ask_phrases) for d in goal.details))
