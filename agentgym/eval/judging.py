"""How the metrics read and judge one episode record: its calls against the gold plan and the
user's constraints, each injected fault tied to what it hit and whether (and when) the agent
recovered, and its commitments. docs/METRICS.md states each rule; `judge_episode` returns the
verdicts, `judge_run` what the aggregates (`agentgym.eval.headline`) pool: a run's records, each
judged once, of which every metric of a report is a view.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from agentgym.core.gold import call_matches, carries, contains_value
from agentgym.eval.verdicts import CallVerdict, CommitmentVerdict, EpisodeVerdict, FaultVerdict, ToolCounts

__all__ = ["FAULT_KINDS", "LEFT_OUT", "EpisodeRecord", "JudgedEpisode", "JudgedFault", "JudgedRun", "ToolCounts",
           "commits", "is_commitment", "judge_episode", "judge_record", "judge_records", "judge_run", "succeeded"]

#: One episode's record, as `agentgym.eval.records` writes and reads it (a line of records.jsonl).
EpisodeRecord = Mapping[str, Any]
#: Noise kinds that are faults the agent has to recover from (the others only add friction).
FAULT_KINDS = ("tool_failure", "corruption", "ambiguity", "goal_shift")
#: Why a recoverable-looking fault is left out of recovery (see `agentgym.eval.metrics.recovery`).
LEFT_OUT = ("unrecoverable", "unaffected", "superseded")


@dataclass
class JudgedFault:
    """One recoverable fault of an episode and what became of it."""

    kind: str
    step: int
    #: Agent turns from the fault to its recovery, or to the episode's end (censored).
    turns: int
    #: The same in simulated milliseconds.
    ms: float
    recovered: bool
    #: The fault's index in the episode's noise log.
    event: int


@dataclass
class JudgedEpisode:
    """What the metrics need of one record, read once, with the judgements of every metric."""

    key: str | None
    success: bool
    score: float
    turns: int
    calls: list[dict[str, Any]]
    turn_errors: int
    noise: list[dict[str, Any]]
    constraints: list[dict[str, Any]]
    #: The final gold plan (None when the record has no gold), and calls of plans a goal shift
    #: replaced (right when made).
    plan: list[dict[str, Any]] | None
    superseded: list[dict[str, Any]]
    #: Reads the brief or a policy points to beyond the plan (``useful_calls``): useful when
    #: made, never required.
    pointed: list[dict[str, Any]]
    commitments: list[dict[str, Any]]
    #: Simulated ms at the end of each turn (index turn - 1), and at the end.
    elapsed: list[float]
    final_ms: float
    timed: bool
    max_turns: int
    time_budget_ms: float
    score_details: Mapping[str, Any]
    tokens: int | None
    policy_violations: int | None
    tools: ToolCounts = ToolCounts()
    faults: list[JudgedFault] = field(default_factory=list)
    #: Faults left out of recovery, as (index in the noise log, why): ``unrecoverable`` (marked
    #: so), ``unaffected`` (hitting nothing) or ``superseded`` (hitting a step a goal shift then
    #: replaced).
    left_out: list[tuple[int, str]] = field(default_factory=list)
    #: Commitments that satisfy every stated constraint, and all commitments.
    consistent: int = 0
    committed: int = 0


def judge_record(rec: EpisodeRecord, verdicts: list["CallVerdict"] | None = None) -> JudgedEpisode:
    """What the metrics need of one record, read once, with every metric's judgement of it.

    Args:
        rec: one episode record.
        verdicts: when given, each call's `CallVerdict` is appended to it (`judge_episode`).
    """
    m = rec.get("metrics") or {}
    steps = rec.get("steps") or []
    failed = rec.get("agent_error") is not None
    calls = m["calls"] if "calls" in m else [c for s in steps for c in s.get("calls", ())]
    # Step errors hold the agent's call errors and its turn-level errors (a parse error):
    # what the calls do not explain is a turn-level error, an invalid action of its own.
    call_errors = sum(1 for c in calls if c.get("error") is not None and not c.get("injected"))
    if "errors" in m:
        total_errors = sum(m["errors"].values())
    else:
        total_errors = sum(len(s.get("errors", ())) for s in steps)
    # Noise logged at reset (step 0: ambiguity) is only in the episode's log, not in any step.
    noise = m["noise"] if "noise" in m else [e for s in steps for e in s.get("noise", ())]
    gold = m.get("gold")
    plan = gold.get("calls") if isinstance(gold, Mapping) else None
    superseded = gold.get("superseded_calls") if isinstance(gold, Mapping) else None
    pointed = gold.get("useful_calls") if isinstance(gold, Mapping) else None
    turns = int(m["turns"]) if "turns" in m else len(steps)
    elapsed: list[float] = []
    last = 0.0
    for s in steps:
        last = float(s.get("elapsed_ms", last))
        elapsed.append(last)
    final_ms = float(m.get("elapsed_ms", last))
    usage = rec.get("usage")
    tokens = None
    if usage:
        tokens = int(usage.get("prompt_tokens") or 0) + int(usage.get("completion_tokens") or 0)
    details = m.get("score_details")
    violations = None
    if isinstance(m.get("policy_violations"), list):  # counted by the env (POLICY_VIOLATION calls)
        violations = len(m["policy_violations"])
    elif isinstance(details, Mapping) and "policy_violations" in details:
        violations = len(details["policy_violations"] or ())
    e = JudgedEpisode(
        key=rec.get("key"),
        success=False if failed else bool(m.get("success", False)),
        score=0.0 if failed else float(m.get("score", 0.0)),
        turns=turns,
        calls=list(calls),
        turn_errors=max(0, total_errors - call_errors),
        noise=list(noise),
        constraints=list(m.get("constraints") or ()),
        plan=list(plan) if plan is not None else None,
        superseded=list(superseded or ()),
        pointed=list(pointed or ()),
        commitments=list(m.get("commitments") or ()),
        elapsed=elapsed,
        final_ms=final_ms,
        timed=final_ms > 0,
        max_turns=int(m.get("max_turns") or max(turns, 1)),
        time_budget_ms=float(m.get("time_budget_ms") or max(final_ms, 1.0)),
        score_details=details if isinstance(details, Mapping) else {},
        tokens=tokens,
        policy_violations=violations,
    )
    _judge(e, verdicts)
    return e


def judge_records(records: Iterable[EpisodeRecord]) -> list[JudgedEpisode]:
    """Each record's `judge_record`, in order."""
    return [judge_record(r) for r in records]


@dataclass(frozen=True)
class JudgedRun:
    """A run's records, each judged once: what every metric is a view of.

    Every public metric of `agentgym.eval.metrics` takes either records or a `JudgedRun`; a
    report judges its records once (`judge_run`) and hands the same `JudgedRun` (or a `select`
    of it, for a group) to each metric it shows.

    Attributes:
        records: the records, in order.
        episodes: ``judge_record`` of each, in the same order.
    """

    records: tuple[EpisodeRecord, ...]
    episodes: tuple[JudgedEpisode, ...]

    def __post_init__(self) -> None:
        if len(self.records) != len(self.episodes):
            raise ValueError(f"{len(self.records)} records but {len(self.episodes)} judged episodes")

    def __len__(self) -> int:
        return len(self.episodes)

    def select(self, indices: Iterable[int]) -> "JudgedRun":
        """The records at `indices` (in that order) with their judgements, judged no more."""
        at = list(indices)
        return JudgedRun(tuple(self.records[i] for i in at), tuple(self.episodes[i] for i in at))


def judge_run(records: "Sequence[EpisodeRecord] | JudgedRun", *,
              on_record: Callable[[], None] | None = None) -> JudgedRun:
    """The records judged once each; a `JudgedRun` is returned as it is (judged already).

    Args:
        records: episode records, or a `JudgedRun`.
        on_record: called after each record is judged (progress).
    """
    if isinstance(records, JudgedRun):
        return records
    episodes = []
    for rec in records:
        episodes.append(judge_record(rec))
        if on_record is not None:
            on_record()
    return JudgedRun(tuple(records), tuple(episodes))


def succeeded(rec: EpisodeRecord) -> bool:
    """An episode's success, as `judge_record` reads it, without judging its calls and faults."""
    return rec.get("agent_error") is None and bool((rec.get("metrics") or {}).get("success", False))


# ============================================================================ the judgements
def _ok(c: Mapping[str, Any]) -> bool:
    """A call that ran and succeeded on a real tool (not a decoy)."""
    return bool(c.get("valid")) and c.get("error") is None and not c.get("distractor")


def is_commitment(c: Mapping[str, Any]) -> bool:
    """A call that attempts a commitment: a valid write on a real tool (an injected failure too)."""
    return bool(c.get("valid")) and c.get("kind") == "write" and not c.get("distractor")


def commits(c: Mapping[str, Any]) -> bool:
    """A write call goal consistency counts: an attempted commitment that went through, or one
    that breaks a stated constraint (an attempt against what the user said, whether or not it
    went through). One that did not go through (refused by the tool, or stopped by an injected
    fault) and breaks nothing committed to nothing: counting it consistent would reward writes
    that miss the world, which is how a random agent looked consistent. A sound write stopped by
    an injected fault is counted when its retry goes through."""
    if not is_commitment(c):
        return False
    return c.get("error") is None or bool(c.get("contradicts"))


class _Plan:
    """A gold plan indexed by tool name, so a call is matched only against its own tool's steps."""

    def __init__(self, steps: Sequence[Mapping[str, Any]]) -> None:
        self.steps = steps
        self.by_name: dict[str, list[int]] = defaultdict(list)
        for i, step in enumerate(steps):
            self.by_name[step.get("name", "")].append(i)

    def matches(self, c: Mapping[str, Any]) -> list[int]:
        name, args = c.get("name", ""), c.get("arguments")
        return [i for i in self.by_name.get(name, ()) if call_matches(name, args, self.steps[i])]


def _judge(e: JudgedEpisode, verdicts: list["CallVerdict"] | None = None) -> None:
    """Fill in the episode's tool counts, faults and commitments (and each call's verdict into
    `verdicts`, when given)."""
    calls = e.calls
    plan = _Plan(e.plan or [])
    old = _Plan(e.superseded)
    corrupted = _corrupted_values(e)
    e.tools = _tool_counts(e, plan, old, _Plan(e.pointed), corrupted, verdicts)
    _recoveries(e, plan)
    writes = [c for c in calls if commits(c)]
    judged = [not c.get("contradicts") for c in writes] + [not m.get("contradicts") for m in e.commitments]
    e.consistent, e.committed = sum(judged), len(judged)


def _call_index(e: JudgedEpisode, event: Mapping[str, Any]) -> int | None:
    """The index in the episode's calls of the call a noise event acted on."""
    turn, cid = event.get("step"), event.get("call")
    for k, c in enumerate(e.calls):
        if c.get("turn") == turn and (c.get("id") == cid if cid is not None else c.get("name") == event.get("target")):
            return k
    return None


def _corrupted_values(e: JudgedEpisode) -> list[tuple[int, Any]]:
    """(index of the corrupted call, the corrupted value) of each corruption."""
    out = []
    for ev in e.noise:
        detail = ev.get("detail")
        if ev.get("kind") == "corruption" and isinstance(detail, Mapping) and "to" in detail:
            k = _call_index(e, ev)
            if k is not None:
                out.append((k, detail["to"]))
    return out


class _Checks:
    """The repeats of a plan's read that are as useful as the read: the briefs ask to check
    again a value a write rests on, so one repeat of a read seen in an earlier turn, made before
    a later write, is that check, and each result of it that came back corrupted earns one more
    read, before a later write or after the last (the tie-break between two results that
    disagree). Any other repeat decides nothing new.

    And the read after a write that an injected fault stopped: a careful agent looks at what it
    left (`list_bookings` shows the bookings) before it tries again, so the first read that
    succeeds after it, before the next write of a later turn, is useful whatever it reads."""

    def __init__(self, calls: Sequence[Mapping[str, Any]], corrupted: list[tuple[int, Any]]) -> None:
        writes = [k for k, c in enumerate(calls) if is_commitment(c)]
        self._last_write = max(writes, default=-1)
        # The first successful read after each write an injected fault stopped, before the next
        # write of a later turn (those sent beside it went before its result was seen).
        self._after_fault: set[int] = set()
        for w in writes:
            if calls[w].get("injected") and calls[w].get("error") is not None:
                turn = calls[w].get("turn", 0)
                for k in range(w + 1, len(calls)):
                    if is_commitment(calls[k]):
                        if calls[k].get("turn", 0) > turn:
                            break
                    elif _ok(calls[k]):
                        self._after_fault.add(k)
                        break
        self._corrupted = {k for k, _ in corrupted}
        self._reads: dict[str, list[tuple[Any, int, bool]]] = defaultdict(list)  # arguments, turn, corrupted
        self._granted: dict[str, list[tuple[Any, bool]]] = defaultdict(list)

    def read(self, k: int, c: Mapping[str, Any]) -> None:
        """Note a call that succeeded."""
        self._reads[c.get("name", "")].append((c.get("arguments"), c.get("turn", 0), k in self._corrupted))

    def after_fault(self, k: int) -> bool:
        """Whether the `k`-th call is the read that tells whether a write stopped by a fault took effect."""
        return k in self._after_fault

    def grant(self, k: int, c: Mapping[str, Any]) -> bool:
        """Whether a repeat of a plan's call (the `k`-th call) is one of the useful ones: the check
        before a later write, and a read per corrupted result whenever it comes (a read-back after
        the last write that came back corrupted is read again to know what the writes left)."""
        if is_commitment(c):
            return False
        name, args, turn = c.get("name", ""), c.get("arguments"), c.get("turn", 0)
        earlier = [(t, bad) for a, t, bad in self._reads[name] if a == args]
        granted = self._granted[name]  # (arguments, granted as the check) of each repeat granted
        if k < self._last_write and any(t < turn for t, _ in earlier) and (args, True) not in granted:
            granted.append((args, True))
            return True
        if sum(a == args and not check for a, check in granted) < sum(bad for _, bad in earlier):
            granted.append((args, False))
            return True
        return False


def _most_specific(hits: list[int], steps: Sequence[Mapping[str, Any]], args: Any) -> int:
    """Of the open steps a call matches, the one whose arguments name the most of the call's: a
    read of page 5 completes the plan's page-5 step, not its first page's, which names no page and
    so matches any; the first in plan order among equals."""
    if len(hits) == 1 or not isinstance(args, Mapping):
        return hits[0]
    return max(hits, key=lambda i: (sum(key in args for key in steps[i].get("arguments") or ()), -i))


def _written_since(calls: Sequence[Mapping[str, Any]], written: list[int], c: Mapping[str, Any], k: int) -> bool:
    """Whether a write went through (`written`, in order) after the last call before `c` (call
    `k`) of the same tool with equal arguments that succeeded: the world it acts on or reads has
    changed since. A write repeated after it (its booking cancelled, a submission the world turned
    back) is a new decision, needed again where the plan has it; one sent twice running
    duplicates it. A look at what the writes left (`_looks_again`) shows something new."""
    name, args = c.get("name"), c.get("arguments")
    last = max((j for j in range(k) if _ok(calls[j]) and calls[j].get("name") == name
                and calls[j].get("arguments") == args), default=-1)
    return bool(written) and written[-1] > last


def _tool_counts(e: JudgedEpisode, plan: _Plan, old: _Plan, pointed: _Plan, corrupted: list[tuple[int, Any]],
                 verdicts: list["CallVerdict"] | None = None) -> ToolCounts:
    """The episode's `ToolCounts`, and, into `verdicts` when given, what each call counted for."""
    valid = attempts = right = judged = useful = spent = precise = scored = 0
    done = [False] * len(plan.steps)
    # Steps another set of reads can do (`or_reads`: every attendee's calendar for the free
    # starts), with which of those reads went through.
    routes = {i: (_Plan(step["or_reads"]), set()) for i, step in enumerate(plan.steps) if step.get("or_reads")}
    seen = _seen_turns(e.calls, pointed)
    succeeded: dict[str, list[Any]] = defaultdict(list)
    checks = _Checks(e.calls, corrupted)
    plan_tools = set(plan.by_name) | set(old.by_name)
    written: list[int] = []  # the writes that went through, in order
    # A call an injected fault stopped and that was sent again: its retry carries the decision.
    retried = {k for k, c in enumerate(e.calls) if c.get("injected") and c.get("error") is not None and any(
        d.get("valid") and d.get("name") == c.get("name") and d.get("arguments") == c.get("arguments")
        for d in e.calls[k + 1:])}
    wrote = False  # whether a write of the plan (or of one it replaced) was sent before the call at hand
    # The last write of the plan sent: a look that the work is not done already guards a write to come.
    last_write = max((k for k, c in enumerate(e.calls) if c.get("valid") and is_commitment(c)
                      and not c.get("distractor") and (plan.matches(c) or old.matches(c))), default=-1)
    for k, c in enumerate(e.calls):
        injected = bool(c.get("injected"))
        if not injected:
            attempts += 1
            valid += bool(c.get("valid"))
        if not c.get("valid"):
            if verdicts is not None:
                verdicts.append(CallVerdict(k, int(c.get("turn", 0)), str(c.get("name", "")), False, injected))
            continue
        name, args, error = c.get("name", ""), c.get("arguments"), c.get("error")
        decoy = bool(c.get("distractor"))
        hits = [] if decoy else plan.matches(c)
        on_plan = bool(hits) or (not decoy and bool(old.matches(c)))
        repeat = any(a == args for a in succeeded[name])
        # A decision is judged once: a call an injected fault stopped is judged at its retry, and
        # a write repeated after other writes (a booking made anew after its cancel) is a new one.
        rewrite = repeat and is_commitment(c) and _written_since(e.calls, written, c, k)
        decided = (repeat and not rewrite) or k in retried
        # What a tool returned corrupted, the agent was told: passing it on is not its mistake.
        told_wrong = any(k > j and contains_value(args, bad) for j, bad in corrupted)
        refused = off_plan = is_judged = False
        wrong = False
        if not decided:  # a repeat decides nothing new: neither right nor wrong
            refused = error is not None and not injected and not told_wrong
            wrong = bool(c.get("contradicts")) or refused
            if e.plan is None:
                is_judged = True
            else:
                # A write of a plan tool that fits none of the plan's steps has wrong arguments. A
                # read decides nothing: one the plan does not need (a padding read, a careful look
                # at another record) is efficiency's business, not this one's.
                off_plan = is_commitment(c) and name in plan_tools and not on_plan and not told_wrong
                wrong = wrong or off_plan
                is_judged = wrong or on_plan
            if is_judged:
                judged += 1
                right += not wrong
        open_hits = [i for i in hits if not done[i]]
        # A repeat the plan needs again (a booking made anew after it was cancelled) completes a
        # step still open, as the first call did.
        # A read the brief or a policy points to counts as a plan's read does, and so does the
        # read after a write a fault stopped (neither is a step the plan needs).
        needed = on_plan or (not decoy and not is_commitment(c) and _pointed_to(pointed, c, wrote, k < last_write, seen))
        is_useful = error is None and (
            (needed and (not repeat or bool(open_hits) or (rewrite and bool(hits)) or checks.grant(k, c)
                         or _looks_again(e.calls, written, pointed, c, k)))
            or checks.after_fault(k))
        if not injected:
            scored += 1
            # Legacy precision: a call for a gold step not yet done, or of an abandoned plan.
            precise += bool(open_hits) or bool(not decoy and old.matches(c))
            # A call that passes on what a tool returned corrupted is the noise's doing, not a
            # waste of the agent's: left out of efficiency, as it is of correctness's blame.
            if not told_wrong:
                spent += 1
                useful += is_useful
        completes = None
        routed: tuple[int, ...] = ()
        if _ok(c):
            succeeded[name].append(args)
            checks.read(k, c)
            if is_commitment(c):
                written.append(k)
            if open_hits:
                completes = _most_specific(open_hits, plan.steps, args)
                done[completes] = True
            elif routes:
                routed = _routed(routes, done, c)
        if verdicts is not None:
            why = tuple(f"contradicts {x}" for x in c.get("contradicts") or ()) if is_judged and wrong else ()
            if is_judged and refused:
                why += (f"refused ({error})",)
            if is_judged and off_plan:
                why += ("fits no step of the plan",)
            verdicts.append(CallVerdict(k, int(c.get("turn", 0)), name, True, injected, is_judged,
                                        (not wrong) if is_judged else None, why,
                                        None if injected or told_wrong else is_useful, repeat, decoy, tuple(hits),
                                        completes,
                                        told_wrong, k in retried, routed))
        wrote = wrote or (on_plan and is_commitment(c))
    attempts += e.turn_errors
    if e.plan is None:
        return ToolCounts(valid, attempts, right, judged, useful, spent)
    return ToolCounts(valid, attempts, right, judged, useful, spent, precise, scored, sum(done), len(done))


def _routed(routes: dict[int, tuple[_Plan, set[int]]], done: list[bool], c: Mapping[str, Any]) -> tuple[int, ...]:
    """Marks the reads of `routes` (per step: its ``or_reads``, indexed, and which went through)
    that the call `c`, which went through, matches; the open steps whose reads have now all gone
    through are done (in `done`), and returned."""
    completed = []
    for i, (reads, made) in routes.items():
        if done[i]:
            continue
        made.update(reads.matches(c))
        if len(made) == len(reads.steps):
            done[i] = True
            completed.append(i)
    return tuple(completed)


def _looks_again(calls: Sequence[Mapping[str, Any]], written: list[int], pointed: _Plan, c: Mapping[str, Any],
                 k: int) -> bool:
    """Whether `c`, a repeat of a read that succeeded, is a look at what the writes left (a gold
    read marked ``after_plan_write``, `list_bookings`) made after a write went through since it
    last did: the bookings changed, so it shows something new (a session's later requests book
    and cancel again)."""
    return any(pointed.steps[i].get("after_plan_write") for i in pointed.matches(c)) \
        and _written_since(calls, written, c, k)


def _pointed_to(pointed: _Plan, c: Mapping[str, Any], wrote: bool, guards: bool = False,
                seen: Mapping[int, float] | None = None) -> bool:
    """Whether `c` is a read the gold points to (``useful_calls``): one marked ``after_plan_write``
    (a look at what the writes left, `list_bookings`) only once a write of the plan was sent
    before it (`wrote`): before, it shows nothing the task wrote; unless it is marked
    ``before_plan_write`` too and a write of the plan follows it (`guards`: a list that write adds
    to, read to see the work is not done already; with no write to come it guards nothing). One
    marked ``until_seen`` (a check past "the next day it is open") only when sent no later than
    the turn whose read of that answer first went through (`seen`: per such step, that turn): sent
    beside it, the agent could not know the answer yet."""
    steps = pointed.steps
    return any((wrote or not steps[i].get("after_plan_write") or (guards and steps[i].get("before_plan_write")))
               and (seen is None or i not in seen or int(c.get("turn", 0)) <= seen[i])
               for i in pointed.matches(c))


def _seen_turns(calls: Sequence[Mapping[str, Any]], pointed: _Plan) -> dict[int, float]:
    """Per gold read marked ``until_seen``, the turn of the first call that went through matching
    what it waits for (infinity where none did)."""
    out: dict[int, float] = {}
    for i, step in enumerate(pointed.steps):
        answer = step.get("until_seen")
        if answer:
            out[i] = min((int(c.get("turn", 0)) for c in calls
                          if _ok(c) and call_matches(c.get("name", ""), c.get("arguments"), answer)), default=float("inf"))
    return out


def _recoverable(event: Mapping[str, Any]) -> bool:
    detail = event.get("detail")
    if event.get("recoverable") is False:
        return False
    return not (isinstance(detail, Mapping) and detail.get("recoverable") is False)


def _recoveries(e: JudgedEpisode, plan: _Plan) -> None:
    """Judge every fault of the episode: recovered at which turn, censored, or left out."""
    for index, ev in enumerate(e.noise):
        kind = ev.get("kind")
        if kind not in FAULT_KINDS:
            continue
        if not _recoverable(ev):
            e.left_out.append((index, "unrecoverable"))
            continue
        hits = ev.get("hits")
        if not isinstance(hits, Mapping):
            e.left_out.append((index, "unaffected"))
            continue
        step = int(ev.get("step", 0))
        if kind == "tool_failure":
            turn = _tool_failure_recovery(e, ev, hits, plan)
        elif kind == "corruption":
            turn = _corruption_recovery(e, ev, hits, plan)
        elif kind == "ambiguity":
            turn = _ambiguity_recovery(e, ev, hits)
        else:
            turn = _goal_shift_recovery(e, ev, plan)
        if turn == "superseded" or turn == "unaffected":
            e.left_out.append((index, turn))
            continue
        at_ms = float(ev.get("at_ms", 0.0))
        if turn is None:
            e.faults.append(JudgedFault(kind, step, max(0, e.turns - step), max(0.0, e.final_ms - at_ms), False, index))
        else:
            t = int(turn)
            end_ms = e.elapsed[t - 1] if 0 < t <= len(e.elapsed) else e.final_ms
            e.faults.append(JudgedFault(kind, step, max(0, t - step), max(0.0, end_ms - at_ms), True, index))


def _hit_step(hits: Mapping[str, Any], plan: _Plan) -> Mapping[str, Any] | None:
    i = hits.get("gold_step")
    return plan.steps[i] if isinstance(i, int) and 0 <= i < len(plan.steps) else None


def _tool_failure_recovery(e: JudgedEpisode, ev: Mapping[str, Any], hits: Mapping[str, Any],
                           plan: _Plan) -> int | str | None:
    """The turn of the first later successful call that completes the step the failure hit."""
    k = _call_index(e, ev)
    step = _hit_step(hits, plan)
    if k is None or step is None:
        return "superseded"
    failed = e.calls[k]
    if not call_matches(failed.get("name", ""), failed.get("arguments"), step):
        return "superseded"  # a goal shift replaced the step the failed call was for
    for c in e.calls[k + 1:]:
        if _ok(c) and call_matches(c.get("name", ""), c.get("arguments"), step):
            return int(c["turn"])
    return None


def _corruption_recovery(e: JudgedEpisode, ev: Mapping[str, Any], hits: Mapping[str, Any],
                         plan: _Plan) -> int | str | None:
    """The turn the agent held the true value, when it then used it and never the corrupted one.

    A value the hit step takes as one option of several (``any_of``: a gold place among others)
    hits the agent only if it later uses the true or the corrupted value; else the corruption is
    unaffected. Unrecovered when the corrupted value reaches a later successful call or the final state.
    Otherwise recovered when a later successful call completes the hit step carrying the true
    value, at the turn of the first clean successful re-read of the corrupted call before it
    (a re-read in the same turn counts: zero turns), else at the completing call's turn.
    """
    k = _call_index(e, ev)
    step = _hit_step(hits, plan)
    detail = ev.get("detail")
    if k is None or step is None or not isinstance(detail, Mapping):
        return "superseded"
    true, bad = detail.get("from"), detail.get("to")
    if not carries(step, true):
        return "superseded"  # a goal shift replaced the step that consumed the value
    later = e.calls[k + 1:]
    if not carries(step, true, options=False) and not any(
            contains_value(c.get("arguments"), true) or contains_value(c.get("arguments"), bad)
            for c in later if c.get("valid")):
        # One option of several (a gold place among others) that the agent never came to: the
        # corruption took nothing from it, so there is nothing to recover.
        return "unaffected"
    details = {key: v for key, v in e.score_details.items() if key != "met"}
    if any(_ok(c) and contains_value(c.get("arguments"), bad) for c in later) or contains_value(details, bad):
        return None
    done = next((j for j, c in enumerate(later) if _ok(c) and call_matches(c.get("name", ""), c.get("arguments"), step)
                 and contains_value(c.get("arguments"), true)), None)
    if done is None:
        return None
    source = e.calls[k]
    corrupted_calls = {(x.get("step"), x.get("call")) for x in e.noise if x.get("kind") == "corruption"}
    for c in later[:done]:
        if (_ok(c) and c.get("name") == source.get("name") and c.get("arguments") == source.get("arguments")
                and (c.get("turn"), c.get("id")) not in corrupted_calls):
            return int(c["turn"])
    return int(later[done]["turn"])


def _ambiguity_recovery(e: JudgedEpisode, ev: Mapping[str, Any], hits: Mapping[str, Any]) -> int | None:
    """The turn the blurred detail became known, if no commitment was made before it (or in the
    same turn: a booking the user answered with the detail was made without it) and the first
    commitment after it honours it: a detail obtained and never used recovers nothing, so an
    agent that never commits never recovers."""
    target, step = hits.get("constraint", ev.get("target")), int(ev.get("step", 0))
    known = next((int(p.get("turn", 0)) for p in e.constraints
                  if int(p.get("turn", 0)) >= step and target in p.get("known", ())), None)
    if known is None:
        return None
    attempts = [int(c["turn"]) for c in e.calls if is_commitment(c)]
    proposals = [m for m in e.commitments if m.get("kind") == "proposal"]
    attempts += [int(m["turn"]) for m in proposals]
    if attempts and min(attempts) <= known:
        return None  # the detail was committed on before it was obtained: a guess, not a recovery
    # A use is a commitment that happened: a write that went through, or a proposal; the first
    # one decides.
    uses = [(int(c["turn"]), c.get("contradicts")) for c in e.calls if is_commitment(c) and c.get("error") is None]
    uses += [(int(m["turn"]), m.get("contradicts")) for m in proposals]
    if not uses:
        return None
    _, broken = min(uses, key=lambda u: u[0])
    return None if target in (broken or ()) else known


def _goal_shift_recovery(e: JudgedEpisode, ev: Mapping[str, Any], plan: _Plan) -> int | None:
    """The turn of the first successful write after the shift that contradicts nothing stated and
    acts on the new goal: its arguments carry the new value (every one, for a value of several
    parts such as a day and a slot), or it is a step of the new gold plan. A cancel carries no
    value and is no step of the new plan: alone, it is not a recovery. The write must call a tool
    of the plan the shift replaced (when the record lists it): in a session, another sub-task's
    write acts on nothing the shift changed, however well it fits that sub-task's plan."""
    step = int(ev.get("step", 0))
    detail = ev.get("detail")
    new = detail.get("to") if isinstance(detail, Mapping) else None
    parts = [v for v in (new if isinstance(new, list) else [new]) if v is not None and not isinstance(v, (dict, list))]
    shifted = {s.get("name") for s in e.superseded}
    for c in e.calls:
        if int(c.get("turn", 0)) <= step or not _ok(c) or c.get("kind") != "write" or c.get("contradicts"):
            continue
        if shifted and c.get("name") not in shifted:
            continue
        args = c.get("arguments")
        if (parts and all(contains_value(args, v) for v in parts)) or plan.matches(c):
            return int(c["turn"])
    return None


def judge_episode(record: EpisodeRecord) -> EpisodeVerdict:
    """The metrics' verdicts on one episode: each call, each fault and each commitment.

    The same judgements the aggregates (`headline`) pool, call by call, so a report, an export
    or a viewer can show where each metric counted.

    Args:
        record: one episode record.

    Returns:
        The episode's `EpisodeVerdict`.
    """
    calls: list[CallVerdict] = []
    e = judge_record(record, calls)
    faults = [FaultVerdict(f.event, f.kind, f.step, "recovered" if f.recovered else "censored",
                           f.step + f.turns if f.recovered else None, f.turns, f.ms if e.timed else None)
              for f in e.faults]
    faults += [FaultVerdict(i, str(e.noise[i].get("kind")), int(e.noise[i].get("step", 0)), why)
               for i, why in e.left_out]
    faults.sort(key=lambda f: f.index)
    commitments = [CommitmentVerdict(int(c.get("turn", 0)), "write", k, not c.get("contradicts"),
                                     tuple(c.get("contradicts") or ()))
                   for k, c in enumerate(e.calls) if commits(c)]
    commitments += [CommitmentVerdict(int(m.get("turn", 0)), str(m.get("kind")), None, not m.get("contradicts"),
                                      tuple(m.get("contradicts") or ())) for m in e.commitments]
    commitments.sort(key=lambda c: c.turn)
    return EpisodeVerdict(e.key, e.success, e.score, e.turns, e.timed, e.tools, e.consistent, e.committed,
                          tuple(calls), tuple(faults), tuple(commitments), tuple(e.calls), tuple(e.noise), e.final_ms)
