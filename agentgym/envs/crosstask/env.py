"""`AgentRL/CrossTask-v0`: one session that switches between tasks and returns to earlier ones."""

from __future__ import annotations

from typing import Any, Callable

from agentgym.core.env import AgentEnv, EnvParts
from agentgym.core.task import Score, SimulatedUser, Task
from agentgym.envs.crosstask.commitments import JUDGE
from agentgym.envs.crosstask.session import make_session_toolkit, make_session_user, score_session
from agentgym.envs.crosstask.tier import generate

__all__ = ["CrossTaskEnv"]


class CrossTaskEnv(AgentEnv):
    """One session that switches between dialog and tool-use tasks and comes back to earlier ones.

    ## Description
    One session, 2 to 4 sub-tasks drawn from different families and domains: a Dialog-v0
    booking and ToolUse-v0 chains (finance, calendar, order support; operations on the test
    split). The user switches when a sub-task ends ("Next thing: ...", after a failure "Let's
    move on. Next thing: ...") and may come back to the booking without naming it ("One more
    thing: could you move the cafe we booked earlier to Thursday evening?"), so the agent
    must carry context across switches without being told to. Each sub-task keeps its own
    generated world, gold and rule-based user.

    The follow-up's user sees its own bookings, as a person sees the confirmations: a write that
    goes wrong (the wrong place or time, the new booking cancelled) it answers at once, and what
    is still missing it says when the assistant next speaks, so the move may be made in either
    order (it hints at no step on a tool's word), and it ends the sub-task when, and only when, the
    move is done (the old booking cancelled, the same place booked at the new time, nothing
    else booked), or gives up after two bookings of the wrong place or time. As in the other
    families, a user hears that a request is done from the assistant: after the write that
    completes it the user says nothing, and it thanks the assistant and moves on at the
    assistant's next message.

    ## Observation
    Text and `info["messages"]` as in the other families (a step's messages open with the env's
    reading of the assistant's turn). The system brief holds every sub-task's brief. Each step's
    `info["segment"]` is the active sub-task (`index`, `family`, `domain`) and
    `info["segment_switch"]` lists the switches made in that step (which ended, with its
    outcome and success, and which started), so trainers can split episodes by task family.

    ## Actions and tools
    Every sub-task's tools, available throughout the session (their names never clash: a
    session holds at most one dialog booking). Tool calls as in the other families.

    ## Reward
    At the end, the mean of the scores of the sub-tasks the session offered, each taken when
    that sub-task ended (a follow-up on the world it changed). Success only when every one of
    them succeeded. A failed sub-task costs only itself: a follow-up returns to the booking its
    dialog sub-task agreed on, so when that sub-task failed the follow-up is not offered, and
    it counts neither as a second failure nor as a success. `info["episode_summary"]["subtasks"]`
    lists each sub-task's score, success, outcome and whether it was `offered` (one not offered
    has outcome ``not_offered`` and no score).

    ## Termination
    Terminated when the last sub-task offered ends (the episode's outcome is that sub-task's);
    a sub-task the user gives up on ends there, and the session goes on with the next. The
    user's verdict on a sub-task is always its score's: it accepts one only when it succeeded,
    and never thanks for one that failed. Truncated at the turn budget (the sum of the
    sub-tasks' budgets).
    A Gymnasium `TimeLimit` around the env (`gym.make(id, max_episode_steps=N)`) truncates at
    step N in its own `step`; ask `env.unwrapped.episode_summary()` for the summary then
    (`max_turns` sets the env's own budget).

    ## Difficulty
    The session's difficulty is every sub-task's difficulty. An explicit `hard` is the hard tier
    (below).

    ## Hard tier
    An explicit `difficulty="hard"` makes the hard tier (`agentgym.envs.crosstask.tier`): longer
    sessions whose later requests depend on what earlier ones found or decided. A drawn
    difficulty (`difficulty=None`, what `core-v0` and training use), `easy` and `medium` keep
    today's sessions, unchanged; a task of the tier says so in its card (`info["task"]["tier"]
    == "hard"`), and its brief adds a rule: later requests may build on earlier ones, so work
    out what they mean from what was said and returned before, and check a new time or place
    with the tools before booking it.

    * 4 to 7 sub-tasks: one dialog booking, every tool-use domain of the split (train: finance,
      calendar, orders; test: operations), and 1 to 3 come-backs to the booking, with other
      work between the booking and its first come-back (a series after a late need's place adds
      one when none was drawn). Sub-tasks keep their families'
      generators at the hard level (no family tier), so the difficulty is the session's.
    * Come-backs that change an earlier result, stated only in terms of the booking as it stands
      and of earlier results (`agentgym.envs.crosstask.comeback`): "the evening of the same
      day"; "the next day after it on which the place is open at that same time of day"
      (`check_availability` tells which); "the best-rated place of the same setting (rooftop) in
      the same area (or: in the same area; the kind is the booked place's, named) that costs at
      most N, still has everything else I asked for and is open at the same time" (`get_details` of the booked place, `search`,
      `check_availability`); on train, after a finance request, the budget is instead "what's
      left of the team's A CUR trip allowance once the reimbursement you paid (or: the expense total you
      worked out) earlier is taken out, counting 1 CUR as R EUR" (the rate stated when CUR is
      not EUR; what is left lies well inside two place prices, so "at most" has one reading),
      and, with a calendar request before it too, "... and is open on the day of the meeting you
      set up for me, in the evening as the booking we have" when a place fits then: one link that needs the
      booking, the finance amount and the meeting's date at once; a new budget comes after the
      other come-backs and every tool-use request. On train, after a calendar request, possibly
      "the day of the meeting you set up for me, in the morning as the booking we have" (the weekday of the
      date that request gave); and, as the session's last come-back, a late need the booked
      place lacks and the user never stated: "the best-rated place of the same setting (rooftop)
      in the same area (or: in the same area) that lists "X" among its amenities, still has
      everything else I asked for (including the budget: at most 200 EUR, where an earlier
      come-back set one) and is open at the same time, or cancel it if there is none" (`search` with
      the amenity, `check_availability`; when nothing has it and is open then, the gold is the
      cancellation alone). A new place keeps every need the user stated for the booking
      (category, area, price, rating, amenities, as the dialog left them) and a budget an
      earlier come-back set, but what the come-back itself changes; when no place would, the
      come-back gives up as few needs as it must (one, else two) and names them ("... still has
      everything else I asked for, though it no longer needs to have wifi or be rated at least 4.0,
      and is open ..."), and a need
      given up stays given up for the come-backs after it. The agent must remember which booking
      it made, what the user needed and what the earlier requests came to, work the target out
      (no tool does the arithmetic), book it and cancel the old one (in either order), or only
      cancel. The user repeats these words when asked what it wants, answers an either/or from
      its rule (cancel instead? only if nothing fits, for a late need, else no; keep it as it
      is? no, and why; do my other needs still hold? yes, naming them and what it gives up) and
      never names the new place or time; a booking of the wrong one is refused in them and costs
      patience (two end the sub-task).
    * A series is the last come-back drawn for 60% of sessions, in place of a late need, or a
      same-day come-back when no span has one answer a day (`agentgym.envs.crosstask.series`):
      "I'm staying on for a few more days. Could you also book a stay for each of the next N
      days after it (or, arriving earlier: each of the N days before it; or: every day after it
      up to and including the day of the meeting you set up for me), in the evening as the booking we have, one booking a day: the same stay on each of those
      days it's open then; on a day it isn't, the best-rated stay of the same type (hotel) in the
      same area (or: in the same area) that costs no more than the one we booked and is open then
      (for those days the rest of what I asked for doesn't matter); and no booking on a day when
      none is? Keep the booking we have as it is." N is 2 to 5 within the week. Each day is its
      own decision (`check_availability` of the booked place; else `search` in its area, and
      kind when asked, at most its price, and `check_availability` down the ratings; else no
      booking), and the sub-task succeeds only when the active bookings are exactly the kept one
      and one per day that has a place. The gold has one answer a day (a unique best rating);
      the generator prefers spans with the most days at another place, then with none. Its user
      names no day or place, repeats the rule when asked or told it is done while a day is
      missing, answers an either/or (keep the booking? yes; cancel? no; other needs? they hold
      for the kept booking only), acknowledges a right booking and refuses one it did not ask
      for in the rule's words (two end the sub-task).
    * Turn budget: 70% of the sub-tasks' own budgets (a series counting as two follow-ups),
      rounded up, about 1.5 times the expert's turns with noise off; the brief states it ("The
      session has at most N turns in all").
    * Links: each come-back's gold is computed by the reference solver when it starts, from the
      booking as the previous sub-task on that booking left it (the dialog's agreed booking, or
      the previous come-back's move), from the needs its user stated and from the earlier
      sub-tasks' gold (the finance amount, the meeting's date), so a slip in an earlier request
      carries over; it is unique (one time; one best-rated place, or none). A come-back never
      sends the booking back to a place and time it stood at before in the session. A booking
      that allows no come-back of the drawn kind gets the next kind that it allows, else a plain
      move to a named time it has not stood at. A come-back whose upstream failed is not
      offered: the failure costs only its own sub-task.

    ## Splits
    Each sub-task follows its family's split: `train` draws from cafes, restaurants, stays,
    finance, calendar and orders; `test` from coworking, event venues and operations (test
    sessions hold 2 or 3 sub-tasks, since the test split has one tool-use domain).

    ## Noise
    Every `agentgym.noise` kind composes with it, as a Gymnasium wrapper around the env
    (`gym.make(id, noise="...")` adds them and `env.spec.additional_wrappers` lists them); each acts
    only in its own `reset` and `step`, so `env.unwrapped` is the env without noise. Ambiguity blurs
    the first request, a goal shift changes the first sub-task that offers one, in its family's
    terms (a booking's time, a payout currency, a meeting's length ...), logged with the sub-task's
    index before its target (``"0:currency"``). Each sub-task's user understands and judges as in
    its own family (`agentgym.envs.dialog.user`, `agentgym.envs.tooluse.user`), and makes typos
    as there: only where a message carries something, never inside a value the agent must copy;
    a message that switches to a new request gets them only in that request. A corrupted value
    of a result stays inside the ranges its sub-task's brief states (`SessionToolkit.value_ranges`).

    ## Registered ids
    `AgentRL/CrossTask-v0`.

    ## Version history
    * v0: initial release.
    """

    family = "crosstask"

    parts = EnvParts(generate, make_session_toolkit, make_session_user, score_session, judge=JUDGE)

    def __init__(
        self,
        *,
        difficulty: str | None = None,
        split: str = "train",
        max_turns: int | None = None,
        render_mode: str | None = None,
        task_generator: Callable[[int, dict[str, Any]], Task] | None = None,
        toolkit_factory: Callable[[Task], Any] | None = None,
        user_factory: Callable[[Task, Any], SimulatedUser] | None = None,
        scorer: Callable[[Task, Any], Score] | None = None,
    ) -> None:
        # No `domain`: a session draws its sub-tasks' domains itself.
        super().__init__(task_generator=task_generator, toolkit_factory=toolkit_factory, user_factory=user_factory,
                         scorer=scorer, difficulty=difficulty, split=split, max_turns=max_turns,
                         render_mode=render_mode)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = super().reset(seed=seed, options=options)
        info["segment"] = self._user.active.public()
        return obs, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        # The segment an action was taken in: the one active before the step.
        before = self._user.active if self._task is not None and not self._done else None
        obs, reward, terminated, truncated, info = super().step(action)
        info["segment"] = before.public() if before is not None else None
        info["segment_switch"] = self._user.drain_boundaries()
        return obs, reward, terminated, truncated, info

    def _episode_summary(self, score: Score, outcome: str) -> dict[str, Any]:
        # Every summary has the sub-tasks at its top level, also one a wrapper's end asks for.
        summary = super()._episode_summary(score, outcome)
        summary["subtasks"] = summary["score_details"]["subtasks"]
        return summary
