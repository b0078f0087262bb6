"""A cross-task session: sub-tasks of other families played one after another in one dialog.

The generator draws 2 to 4 sub-tasks of different families and domains (at most one dialog
booking, since every dialog domain shares tool names) and, when there is room, a follow-up that
returns to the earlier booking. The session's toolkit is the union of the sub-tasks' toolkits;
its user hands each message to the active sub-task's user and, when a sub-task ends, says so and
switches to the next request. Each sub-task is scored when it ends (later changes to its world
cannot undo it), a follow-up on the world it changes.

A failed sub-task costs only itself: a follow-up returns to the booking its dialog sub-task
agreed on, so when that sub-task failed there is nothing to return to and the follow-up is not
offered (``not_offered``); the session's score is the mean over the sub-tasks it offered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from sys import intern
from typing import Any, Callable

from agentgym import families
from agentgym.core.action_types import MAX_CALLS_PER_TURN
from agentgym.core.gold import plan_calls
from agentgym.core.seeding import Rng, fast_stream
from agentgym.core.task import (
    DIFFICULTIES,
    NO_THANKS,
    NoiseEvent,
    Score,
    SimulatedUser,
    Task,
    UserTurn,
    WorldEvent,
    hold_sign_off,
    signed_off,
    told,
)
from agentgym.envs.crosstask import upstream
from agentgym.envs.crosstask.comeback import ComeBack, ComeBackUser, Upstream, plan_comeback
from agentgym.envs.crosstask.followup import FollowUpUser, MoveBooking, agreed_booking, plan_move, score_move
from agentgym.envs.crosstask.series import SERIES, Series, SeriesUser, plan_series, score_series
from agentgym.envs.crosstask.toolkit import SessionToolkit
from agentgym.envs.dialog.tasks import Booking
from agentgym.users.picks import DrawnPicks, pick

__all__ = ["Segment", "SessionTask", "SessionToolkit", "SessionUser", "generate_session", "session_task", "sub_seed",
           "score_session", "FAMILIES"]


@dataclass(frozen=True)
class SubTaskParts:
    """How to make and score a sub-task of one family: its domains, and its env's parts."""

    domains: Callable[[str], Any]
    generate: Callable[[int, dict[str, Any]], Task]
    toolkit: Callable[[Task], Any]
    user: Callable[[Task, Any], SimulatedUser]
    score: Callable[[Task, Any], Score]

    @classmethod
    def of(cls, name: str) -> "SubTaskParts":
        """The parts of family `name`, from its entry in `agentgym.families`."""
        family = families.get(name)
        if family.domains is None:
            raise ValueError(f"family {name!r} names no domains, so sessions cannot mix it in")
        parts = families.load(family.env).parts
        return cls(families.load(family.domains), parts.task_generator, parts.toolkit_factory,
                   parts.user_factory, parts.scorer)


#: The families a session mixes: one dialog booking, and tool-use chains.
FAMILIES: dict[str, SubTaskParts] = {name: SubTaskParts.of(name) for name in ("dialog", "tooluse")}
FOLLOWUP_TURNS = 8
#: How the user moves to the next request (one drawn per switch), and back to the booking.
_NEXT = ("Next thing: ", "Now something different: ", "One more thing: ")
_BACK = "One more thing: "
#: Said before the next request: thanks after a sub-task that succeeded when its user has not
#: thanked the assistant yet (a terminal tool committed it in silence), and a plain move on after
#: one that failed: the user never thanks for a failure, so what it says agrees with the score.
_THANKS = "Thanks! "
_MOVE_ON = "Let's move on. "
#: A sub-user's farewell when it gives up: in a session the user stays for the next request.
_FAREWELL = re.compile(r"\s*\b(?:Goodbye|Bye)[.!]*\s*$", re.IGNORECASE)
#: A sub-user's thanks that would say the session is over, before the next request.
_ALL_NEEDED = re.compile(r"that's everything I needed")
#: What the user says of a write to another sub-task's world: a later request's, or an earlier's.
_NOT_YET = "I haven't asked for that yet."
_LEAVE_IT = "Please leave the earlier request as it was: I didn't ask to change it."
#: A sub-user's greeting: said once, at the start of the session, not at each new request.
_GREETING = re.compile(r"^(?:Hi|Hello|Hey)(?: there)?[!,.]\s*", re.IGNORECASE)


@dataclass(slots=True)
class Segment:
    """One sub-task of the session."""

    index: int
    family: str
    domain: str
    task: Task | None = None
    #: For a follow-up: the index of the dialog segment it returns to.
    refers_to: int | None = None
    #: For a come-back of the hard tier: its kind (`agentgym.envs.crosstask.comeback.ASKS`).
    ask: str | None = None
    move: MoveBooking | None = None
    #: For a dialog sub-task (or a come-back) that succeeded: the booking it ended on, which the
    #: next follow-up returns to.
    agreed: Booking | None = None
    score: Score | None = None
    #: How it ended: ``accepted``, ``gave_up``, ``committed``; ``not_offered`` for a follow-up
    #: with no agreed booking to return to; None while it has not ended.
    outcome: str | None = None

    def public(self) -> dict[str, Any]:
        return {"index": self.index, "family": self.family, "domain": self.domain}


@dataclass(slots=True)
class SessionWorld:
    """The session's state: its segments (each with its own world) and the active one."""

    segments: list[Segment]
    active: int = 0
    #: The segment whose terminal tool last went through (it committed that sub-task's outcome).
    committed: int | None = None


@dataclass(frozen=True, slots=True)
class SessionGold:
    """The gold of every sub-task; follow-ups get theirs when they start."""

    segments: tuple[Segment, ...]

    def plan_calls(self) -> list[dict[str, Any]]:
        """The calls `to_dict` lists (``"calls"``): each segment's, in order, without the rest of
        every sub-task's gold."""
        calls: list[dict[str, Any]] = []
        for s in self.segments:
            if s.family == "followup":
                if s.move is not None:
                    calls += s.move.to_dict().get("calls", [])
            else:
                assert s.task is not None
                calls += plan_calls(s.task.gold)
        return calls

    def to_dict(self) -> dict[str, Any]:
        subs, calls, superseded, useful = [], [], [], []
        for s in self.segments:
            if s.family == "followup":
                sub = s.move.to_dict() if s.move is not None else {"kind": "move_booking", "calls": []}
            else:
                assert s.task is not None
                gold = s.task.gold
                sub = gold.to_dict()
            calls += sub.get("calls", [])
            superseded += sub.get("superseded_calls", [])
            # One entry per read: each Dialog segment names `list_bookings`.
            useful += [c for c in sub.get("useful_calls", []) if c not in useful]
            subs.append({"index": s.index, "family": s.family, "domain": s.domain, "gold": sub})
        out = {"segments": subs, "calls": calls, "superseded_calls": superseded}
        if useful:
            out["useful_calls"] = useful
        return out


def sub_seed(seed: int, index: int) -> int:
    return fast_stream(seed, f"task/segment/{index}").getrandbits(62)


def generate_session(seed: int, options: dict[str, Any]) -> Task:
    """Generate the cross-task session of `seed` (deterministic in seed and options)."""
    rng: Rng = fast_stream(seed, "task")
    split = options.get("split", "train")
    u_difficulty, u_count = rng.random(), rng.random()
    difficulty = options.get("difficulty") or DIFFICULTIES[min(int(u_difficulty * 3), 2)]
    if options.get("domain") is not None:
        raise ValueError("CrossTask-v0 draws its sub-tasks' domains itself; `domain` is not an option")
    dialog_domain = rng.choice(list(FAMILIES["dialog"].domains(split)))
    tool_domains = list(FAMILIES["tooluse"].domains(split))
    rng.shuffle(tool_domains)
    fresh = [("dialog", dialog_domain)] + [("tooluse", d) for d in tool_domains]
    n = 2 + min(int(u_count * 3), 2)  # 2 to 4 sub-tasks
    # A follow-up to the booking fills a session the split's domains cannot, and joins half the
    # longer ones; it always comes last, so other work lies between it and the booking.
    followup = n > len(fresh) or (n >= 3 and rng.random() < 0.5)
    picked = fresh[: n - 1 if followup else n]
    if ("dialog", dialog_domain) not in picked:
        picked[-1] = ("dialog", dialog_domain)
    rng.shuffle(picked)
    segments: list[Segment] = []
    for i, (family, domain) in enumerate(picked):
        options_i = {"split": split, "domain": domain, "difficulty": difficulty}
        # A session's hard sub-tasks are the drawn kind, not their families' hard tiers.
        if family in ("dialog", "tooluse"):
            options_i["tier"] = False
        sub = FAMILIES[family].generate(sub_seed(seed, i), options_i)
        segments.append(Segment(i, family, domain, task=sub))
    if followup:
        ref = next(s.index for s in segments if s.family == "dialog")
        segments.append(Segment(len(segments), "followup", dialog_domain, refers_to=ref))
    return session_task(seed, split, difficulty, segments)


#: What every session's brief opens with.
_PREAMBLE = ("You are an assistant helping one user with several requests in one session. The user "
             "moves from one request to the next and may come back to earlier ones; remember what "
             "you did. All tools of every area are available throughout, and several calls per turn are "
             "allowed. Each area's rules and dates are its own (where an area says what day it is, that is "
             "the day for its request), and a tool that ends a task ends only its own area's request.\n\n")


class SessionTask(Task):
    """A session's `Task`, whose brief is kept as its parts and joined when read.

    The brief holds every sub-task's brief (about 5 KB in all) and is read once, at reset; kept
    joined, it would be a second copy of strings the sub-tasks keep anyway, a twelfth of what a
    live env holds. `brief_parts` are those strings and the few between them; assigning `brief`
    (as `dataclasses.replace` does) keeps the string given as the one part.
    """

    brief_parts: tuple[str, ...] = ()

    @property  # type: ignore[override]
    def brief(self) -> str:
        return "".join(self.brief_parts)

    @brief.setter
    def brief(self, value: str) -> None:
        self.brief_parts = (value,)


def session_task(seed: int, split: str, difficulty: str, segments: list[Segment], tier: str | None = None,
                 rule: str = "", turns_share: float | None = None) -> Task:
    """The session task of `segments` (their sub-tasks generated, follow-ups still to plan); a
    task of a `tier` says so in its card, and its brief adds `rule`. With `turns_share` the turn
    budget is that share of the sub-tasks' (rounded up), and the brief states it."""
    # A series (several bookings, one a day) takes the turns of two follow-ups.
    followups = sum(s.family == "followup" for s in segments) + sum(s.ask == SERIES for s in segments)
    max_turns = sum(s.task.max_turns for s in segments if s.task is not None) + FOLLOWUP_TURNS * followups
    if turns_share is not None:
        max_turns = -(-max_turns * round(turns_share * 100) // 100)
    if "no longer wants" not in rule:  # the tiers' rule says so in its own words
        rule = ("When the user changes an earlier booking, a booking they no longer want is cancelled, not left "
                "standing." + rule)
    rule += (f" The session has at most {max_turns} turns in all (a turn is one message or one set of "
             f"up to {MAX_CALLS_PER_TURN} tool calls); after that it ends where it stands.")
    # Areas are numbered as listed: a follow-up has no brief of its own, and a gap in the numbers
    # would tell the agent how many come-backs the session holds. The sub-tasks' briefs are
    # parts of the brief as they are (`SessionTask`), not copied into one string.
    parts = [_PREAMBLE, rule + "\n\n" if rule else ""]
    for k, s in enumerate([s for s in segments if s.task is not None]):
        parts += ["\n\n" if k else "", f"## Task area {k + 1}: {s.family} / {s.domain}\n", s.task.brief]
    world = SessionWorld(segments)
    task = SessionTask(
        family="crosstask",
        domain="+".join(f"{s.family}:{s.domain}" for s in segments),
        difficulty=difficulty,
        split=split,
        seed=seed,
        task_id=f"crosstask/{len(segments)}/{difficulty}/{seed}",
        brief="",
        world=world,
        goal=None,
        gold=SessionGold(tuple(segments)),
        max_turns=max_turns,
    )
    task.brief_parts = tuple(parts)
    if tier is not None:
        task.extra["tier"] = tier
    return task


def make_session_toolkit(task: Task) -> SessionToolkit:
    session: SessionWorld = task.world
    toolkits = {s.index: FAMILIES[s.family].toolkit(s.task) for s in session.segments if s.task is not None}
    return SessionToolkit(session, toolkits)


def _asked_before(segments: list[Segment], seg: Segment, move: ComeBack) -> bool:
    """Whether the come-back just before `seg` on the same booking asked the same change in the
    same words."""
    earlier = [s for s in segments[:seg.index] if s.family == "followup" and s.refers_to == seg.refers_to]
    last = earlier[-1].move if earlier else None
    return isinstance(last, ComeBack) and last.ask == move.ask and last.wanted == move.wanted


class SessionUser(SimulatedUser):
    """The user of a session: one sub-task's user at a time, and the switches between them.

    It reads no message itself: each goes to the active sub-task's rule-based user
    (`agentgym.users.rule_based`), which gives the stock replies, keeps what it stated and makes
    the typos. Of the rule-based user's parts it shares the picks: the leads of its switches are
    drawn when it is made (`DrawnPicks`).
    """

    def __init__(self, task: Task, rng: Rng) -> None:
        self._task = task
        self.session: SessionWorld = task.world
        # `rng` only picks the lead of each switch, at most one per segment after the first:
        # drawn now, as a rule-based user's picks are (`DrawnPicks`), so the env does not keep a
        # whole generator alive for a few draws; there are as many as switches, used in order.
        self._leads = DrawnPicks(rng, len(self.session.segments) - 1)
        self.users: dict[int, SimulatedUser] = {}
        for s in self.session.segments:
            if s.task is not None:
                self.users[s.index] = FAMILIES[s.family].user(s.task, fast_stream(task.seed, f"user/segment/{s.index}"))
        self._pending_switch: list[dict[str, Any]] = []
        #: The session turn at which the active sub-task opened: its user counts turns from there,
        #: as it would alone (a late need's due turn, whether a change of mind leaves turns enough).
        self._opened_at = 0
        #: The request the user opened last, after a switch (typos land only in it).
        self._opened: str | None = None
        # `known_constraints` of the sub-users when last asked, and its prefixed form.
        self._known_of_users: list[list[str]] = []
        self._known: list[str] = []
        #: A sub-task's user's word that its request is done, held until the assistant next
        #: speaks (`agentgym.core.task.hold_sign_off`, as `AgentEnv` holds the last).
        self._held: UserTurn | None = None

    # ------------------------------------------------------------------ the active sub-task
    @property
    def active(self) -> Segment | None:
        """The sub-task the user is on now (None once the session is over)."""
        i = self.session.active
        return self.session.segments[i] if i < len(self.session.segments) else None

    @property
    def awaiting_report(self) -> bool:
        """Whether the active sub-task's user is satisfied and waits to hear so."""
        return self._held is not None

    def user_of(self, index: int) -> SimulatedUser | None:
        return self.users.get(index)

    def drain_boundaries(self) -> list[dict[str, Any]]:
        """Sub-task switches since the last call (for the step info)."""
        out, self._pending_switch = self._pending_switch, []
        return out

    def _finish(self, outcome: str, turn: int, said: str = "") -> UserTurn:
        """Close the active sub-task with `outcome` (its user's last words: `said`); open the next
        one it offers, or end the session. Returns what the user says after `said`."""
        seg = self.active
        assert seg is not None
        self._held = None  # the word held was this sub-task's
        seg.outcome = outcome
        seg.score = _segment_score(self.session, seg)
        success = seg.score.success
        if seg.family == "dialog" and success:
            assert seg.task is not None
            seg.agreed = agreed_booking(seg.task.world)
        elif seg.ask is not None and success:
            seg.agreed = agreed_booking(_world_of(self.session, seg))
        ended = seg.public() | {"outcome": outcome, "success": success}
        opening: str | None = None
        while opening is None:
            self.session.active += 1
            nxt = self.active
            if nxt is None:
                break
            opening = self._open(nxt)
            if opening is None:
                # Nothing to come back to: the booking sub-task failed, which it alone pays for.
                nxt.outcome = "not_offered"
        boundary = {"turn": turn, "ended": ended, "started": nxt.public() if nxt is not None else None}
        self._pending_switch.append(boundary)
        thanked = "thank" in said.lower()
        if nxt is None:
            if success:
                closing = "That's everything for today." if thanked else "That's everything for today, thank you!"
            else:
                closing = "" if _FAREWELL.search(said) else "That's all for today."
            return UserTurn(closing, end=outcome)
        lead = ("" if thanked else _THANKS) if success else _MOVE_ON
        phrase = pick(self._leads, _NEXT)
        self._opened, self._opened_at = opening, turn
        # Coming back to the booking is not "something different".
        return UserTurn(lead + (_BACK if nxt.family == "followup" else phrase) + opening)

    def _open(self, seg: Segment) -> str | None:
        if seg.family != "followup":
            opening = _GREETING.sub("", self.users[seg.index].opening())
            return opening[:1].upper() + opening[1:]
        agreed = _upstream(self.session, seg).agreed
        if agreed is None:
            return None
        world = _world_of(self.session, seg)
        rng = fast_stream(self._task.seed, f"user/segment/{seg.index}")
        if seg.ask is not None:
            segments = self.session.segments
            up = Upstream(upstream.meeting_day(segments, seg.index), upstream.spent(segments, seg.index),
                          upstream.visited(segments, seg.index, seg.refers_to),
                          upstream.held_needs(segments, seg.refers_to),
                          upstream.in_force(segments, seg.index, seg.refers_to),
                          upstream.given_up(segments, seg.index, seg.refers_to))
            # A series that no span allows falls back to a come-back that moves the booking.
            move = (plan_series(world, agreed, rng, up) if seg.ask == SERIES else None) or \
                plan_comeback(world, agreed, "same_day" if seg.ask == SERIES else seg.ask, rng, up)
            if isinstance(move, ComeBack) and _asked_before(segments, seg, move):
                # The same change again, in the same words, reads as a repeat: a person says "again".
                move = replace(move, why=move.why.replace("Plans changed", "Plans changed again", 1))
        else:
            move = plan_move(world, agreed, rng)
        if move is None:
            return None
        seg.move = move
        self.users[seg.index] = (SeriesUser(world, move) if isinstance(move, Series) else
                                 ComeBackUser(world, move) if isinstance(move, ComeBack) else FollowUpUser(world, move))
        return self.users[seg.index].opening()

    def _close(self, said: UserTurn, turn: int) -> UserTurn:
        """The active sub-task's user ended it with `said`: close it, and say what comes next."""
        assert said.end is not None
        nxt = self._finish(said.end, turn, said.text)
        text = said.text
        if nxt.end is None:
            text = _ALL_NEEDED.sub("that's done", _FAREWELL.sub("", text))
            if text.startswith(NO_THANKS):
                # The offer of more (`agentgym.core.task.signed_off`) is answered by the next
                # request: "No, thanks. ... One more thing:" read as two minds, and "Nothing more
                # on that one, thanks." before the thanks of the request done as two sign-offs.
                text = text[len(NO_THANKS):].lstrip()
        return UserTurn(" ".join(t for t in (text, nxt.text) if t), end=nxt.end)

    # ------------------------------------------------------------------ SimulatedUser
    def opening(self) -> str:
        first = self.session.segments[0]
        return self.users[first.index].opening()

    def reply(self, message: str, turn: int) -> UserTurn:
        session = self.session  # `active`, inlined on the step path
        if session.active >= len(session.segments):
            return UserTurn("We're all done, thanks!")
        held = self._held
        if held is not None and told(message):
            self._held = None
            return self._close(signed_off(held, message), turn)
        said = self.users[session.segments[session.active].index].reply(message, turn - self._opened_at)
        return said if said.end is None else self._close(said, turn)

    def react(self, events: list[WorldEvent], turn: int) -> UserTurn | None:
        seg = self.active
        if seg is None:
            return None
        # The active sub-task's user reacts to its world (a follow-up's is the booking's); a write
        # to another sub-task's world gets a word from the user too, who did not ask for it.
        world_index = seg.refers_to if seg.family == "followup" else seg.index
        mine = [e for e in events if e.data.get("segment") == world_index]
        # A tool-use sub-task's write a policy refused leaves no event, yet ends that sub-task.
        reacts = bool(mine) or not events and seg.family == "tooluse"
        said = self.users[seg.index].react(mine, turn - self._opened_at) if reacts else None
        if reacts:
            said, self._held = hold_sign_off(said)
        if said is not None and said.end is not None:
            return self._close(said, turn)
        if len(mine) == len(events):
            return said
        later = any(e.data.get("segment", -1) > seg.index for e in events)
        note = _NOT_YET if later else _LEAVE_IT
        return UserTurn(note if said is None else f"{said.text} {note}")

    def on_commit(self, turn: int) -> UserTurn | None:
        seg = self.active
        committed, self.session.committed = self.session.committed, None
        if seg is None:
            return None  # the committing sub-task's user closed the last one in `react` this turn
        if committed != seg.index:
            # Another sub-task's terminal tool (an answer submitted before it was asked for, or
            # after it ended) commits nothing the user is waiting for; or the committing
            # sub-task's user closed it in `react` this turn and the next one is active now.
            # Either way the session goes on.
            return UserTurn("")
        follow = self.users[seg.index].on_commit(turn - self._opened_at)
        if follow is not None and follow.end is None:
            return follow
        # The request is done, but the user has not heard what it came to (a figure submitted in
        # a turn of calls alone): its thanks and the next request wait for the assistant's word,
        # as after a write (`hold_sign_off`), and close the sub-task then (`_close`).
        self._held = UserTurn(follow.text if follow is not None else "", end="committed")
        return UserTurn("")

    def perturb_text(self, text: str, rng: Any) -> tuple[str, list[str]]:
        """Typos as the active sub-task's user makes them (never inside a value it must copy,
        nor in a stock reply). A message that switches to a new request gets them only in that
        request: the last sub-task's closing words and the switch phrase carry nothing."""
        seg = self.active
        if seg is None:
            return text, []
        user = self.users[seg.index]
        opened = self._opened
        if opened is not None and text.endswith(opened) and len(text) > len(opened):
            new, changes = user.perturb_text(opened, rng)
            return text[: len(text) - len(opened)] + new, changes
        return user.perturb_text(text, rng)

    def known_constraints(self) -> list[str]:
        # The env asks after every step, and the sub-users' lists seldom change: the prefixed
        # list is rebuilt only when one did (compared by value, since a sub-user may edit its
        # list in place). `users` only grows, at the end, so positions stay aligned. The ids are
        # few ("0:time", "1:currency" ...) and every live env keeps its list (and the env a copy
        # per change): interned, each is one string in the process, not one per env.
        known = [u.known_constraints() for u in self.users.values()]
        if known != self._known_of_users:
            self._known_of_users = [list(k) for k in known]
            self._known = [intern(f"{i}:{c}") for i, k in zip(self.users, known) for c in k]
        return self._known

    def contradictions(self, name: str, arguments: dict[str, Any]) -> list[str]:
        seg = self.active
        if seg is None:
            return []
        return [f"{seg.index}:{c}" for c in self.users[seg.index].contradictions(name, arguments)]

    def proposed_call(self, message: str) -> tuple[str, dict[str, Any]] | None:
        # The active sub-task's user reads the message (`reply` hands it the same text).
        session = self.session  # `active`, inlined on the step path
        if session.active >= len(session.segments):
            return None
        return self.users[session.segments[session.active].index].proposed_call(message)

    def blur(self, rng: Any) -> NoiseEvent | None:
        first = self.session.segments[0]
        event = self.users[first.index].blur(rng)
        return None if event is None else NoiseEvent(f"{first.index}:{event.target}", event.detail, event.recoverable)

    def plan_goal_shift(self, rng: Any, fire: Callable[[NoiseEvent], None]) -> bool:
        # The first sub-task whose user offers a shift gets it (in its own terms: a booking's
        # time, a payout currency, a meeting's length ...); its target is prefixed with the
        # sub-task's index, as its constraints are.
        for s in self.session.segments:
            if s.task is not None:
                def fire_in(event: NoiseEvent, index: int = s.index) -> None:
                    fire(NoiseEvent(f"{index}:{event.target}", event.detail, event.recoverable))

                if self.users[s.index].plan_goal_shift(rng, fire_in):
                    return True
        return False


def _world_of(session: SessionWorld, seg: Segment) -> Any:
    """The dialog world a follow-up returns to."""
    ref = session.segments[seg.refers_to]
    assert ref.task is not None
    return ref.task.world


def _upstream(session: SessionWorld, seg: Segment) -> Segment:
    """The sub-task whose booking a follow-up returns to: the latest earlier one on its world
    (its dialog sub-task, or on the hard tier the come-back before it)."""
    return [s for s in session.segments[: seg.index]
            if s.index == seg.refers_to or (s.family == "followup" and s.refers_to == seg.refers_to)][-1]


def _segment_score(session: SessionWorld, seg: Segment) -> Score:
    if seg.family == "followup":
        if seg.move is None:
            return Score(0.0, False, {"reason": "no booking to return to"})
        ref = session.segments[seg.refers_to]
        assert ref.task is not None
        if isinstance(seg.move, Series):
            return score_series(ref.task.world, seg.move)
        return score_move(ref.task.world, seg.move)
    assert seg.task is not None
    return FAMILIES[seg.family].score(seg.task, None)


def _offered(session: SessionWorld, seg: Segment) -> bool:
    """Whether the session asks for `seg`: a follow-up only when its booking sub-task agreed on a
    booking (one the session never reached, when that sub-task had by then)."""
    if seg.outcome == "not_offered":
        return False
    if seg.family != "followup" or seg.move is not None:
        return True
    return _upstream(session, seg).agreed is not None


def make_session_user(task: Task, rng: Rng) -> SessionUser:
    return SessionUser(task, rng)


def score_session(task: Task, toolkit: Any) -> Score:
    """The mean of the scores of the sub-tasks the session offered (each taken when it ended, or
    now if it never did); success only when every one of them succeeded. A follow-up it did not
    offer is listed with ``offered`` False and no score."""
    session: SessionWorld = task.world
    subs, violations = [], []
    for seg in session.segments:
        if not _offered(session, seg):
            subs.append({**seg.public(), "offered": False, "score": None, "success": None,
                         "outcome": "not_offered"})
            continue
        score = seg.score if seg.score is not None else _segment_score(session, seg)
        violations += list(score.details.get("policy_violations", ()))
        subs.append({**seg.public(), "offered": True, "score": score.score, "success": score.success,
                     "outcome": seg.outcome or "unfinished"})
    offered = [s for s in subs if s["offered"]]
    mean = sum(s["score"] for s in offered) / len(offered)
    return Score(round(mean, 6), all(s["success"] for s in offered),
                 {"subtasks": subs, "policy_violations": violations})
