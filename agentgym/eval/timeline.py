"""An episode as a timeline: what happened at each turn, and where each metric counted.

`timeline` is a pure function of one episode record (and, optionally, the texts a replay gave
back: `agentgym.eval.transcript`) to a list of `Event`, in order. Every renderer draws the same
list: `agentgym view` in a terminal (`agentgym.eval.view`), a web page in HTML. An event carries a
one-line `Event.text` a renderer can show as it is, a longer `Event.body` (a message, a tool
result, a call's arguments) to show or fold, a `tone` for colour, the metric `marks` it earned,
and its structured `data` (see `EVENT_KINDS` for each kind's).

The verdicts are the metrics' own (`agentgym.eval.metrics.judge_episode`): a call marked
incorrect here is one that correctness counts as wrong, a fault marked recovered at turn t is
one recovery counts so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from agentgym.core.protocol import parse_action
from agentgym.eval.metrics import CallVerdict, CommitmentVerdict, EpisodeVerdict, FaultVerdict, judge_episode
from agentgym.eval.records import canonical_json
from agentgym.eval.transcript import Transcript

__all__ = ["Event", "Mark", "EVENT_KINDS", "TONES", "timeline", "episode_summary"]

#: Each event kind, with what its `Event.data` holds.
EVENT_KINDS: dict[str, str] = {
    "section": "where a part of the timeline starts (a turn, the end): turn, elapsed_ms (simulated ms so far, "
               "None until charged), reward",
    "task": "the task: family, domain, difficulty, split, id, max_turns; body: the brief",
    "note": "something about the timeline itself (texts missing after a replay): reason",
    "user": "a message of the user (or of the env: an error it reports); body: the text",
    "assistant": "the agent's message text; body: the text",
    "turn_error": "the agent's turn was refused as a whole (it did not parse, was too large): code, message",
    "tool_call": "a call: id, name, arguments, valid, error, injected, kind (read/write); marks: its verdicts",
    "tool_result": "what the tool returned: id, name, error; body: the content",
    "fault": "an injection: index (in the noise log), kind, target, call, hits, detail; for a fault, status, "
             "recovered_turn, turns, ms (`agentgym.eval.metrics.FaultVerdict`), else None",
    "constraints": "constraints the user has now stated: new, known",
    "recovery": "a fault recovered at this turn: index (of the fault), kind, step, turns, ms",
    "censored": "a fault never recovered: index, kind, step, turns, ms",
    "commitment": "a proposal or the final state, judged: kind, contradicts",
    "end": "how the episode ended: outcome, success, score, turns",
    "agent_error": "the agent raised: type, message",
}
#: The tones an event or mark has: neutral information, counted for the agent, against it, a
#: fault injected (a warning), or left out of a metric.
TONES = ("info", "good", "bad", "warn", "muted")


@dataclass(frozen=True)
class Mark:
    """Where one metric counted an event.

    Attributes:
        metric: ``validity``, ``correctness``, ``efficiency``, ``recall``, ``recovery`` or
            ``goal_consistency``.
        ok: counted for the agent (True), against it (False), or left out (None).
        text: why, in a few words.
    """

    metric: str
    ok: bool | None
    text: str


@dataclass(frozen=True)
class Event:
    """One thing that happened in an episode.

    Attributes:
        turn: the agent turn it belongs to (0: before the first).
        kind: a key of `EVENT_KINDS`.
        text: one line saying what happened.
        tone: one of `TONES`.
        body: a longer text (a message, a tool result, arguments), or None.
        marks: the metrics' verdicts on it.
        data: the structured fields of its kind (`EVENT_KINDS`).
    """

    turn: int
    kind: str
    text: str
    tone: str = "info"
    body: str | None = None
    marks: tuple[Mark, ...] = ()
    data: Mapping[str, Any] = field(default_factory=dict)


def _tone(ok: bool | None) -> str:
    return "muted" if ok is None else ("good" if ok else "bad")


def _plan(rec: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    gold = (rec.get("metrics") or {}).get("gold")
    calls = gold.get("calls") if isinstance(gold, Mapping) else None
    return list(calls) if isinstance(calls, list) else []


def _step_name(plan: Sequence[Mapping[str, Any]], i: int) -> str:
    name = f" ({plan[i].get('name')})" if 0 <= i < len(plan) and plan[i].get("name") else ""
    return f"gold step {i + 1} of {len(plan)}{name}" if plan else f"gold step {i + 1}"


def _hits_text(hits: Any, plan: Sequence[Mapping[str, Any]]) -> str:
    if isinstance(hits, Mapping) and isinstance(hits.get("gold_step"), int):
        return f"hits {_step_name(plan, hits['gold_step'])}"
    if isinstance(hits, Mapping) and "constraint" in hits:
        return f"hits constraint {hits['constraint']}"
    return "hits nothing"


def _detail_text(detail: Any) -> str:
    if not isinstance(detail, Mapping):
        return ""
    if "from" in detail and "to" in detail:
        how = f"{detail['how']} " if detail.get("how") else ""
        where = f" at {detail['path']}" if detail.get("path") else ""
        return f"{how}{canonical_json(detail['from'])} -> {canonical_json(detail['to'])}{where}"
    if "description" in detail:
        return f"the user says {detail['description']!r}"
    parts = [f"{k} {canonical_json(v)}" for k, v in sorted(detail.items()) if k != "recoverable"]
    return ", ".join(parts)


def _in_turns(n: int | None) -> str:
    return "" if n is None else f"{n} turn" + ("" if n == 1 else "s")


def _ms_text(ms: float | None) -> str:
    return "" if ms is None else f", {ms:.0f} simulated ms"


def _fault_outcome(f: FaultVerdict | None) -> Mark | None:
    if f is None:
        return None
    if f.status == "recovered":
        return Mark("recovery", True, f"recovered at turn {f.turn}, after {_in_turns(f.turns)}{_ms_text(f.ms)}")
    if f.status == "censored":
        return Mark("recovery", False, f"never recovered (censored after {_in_turns(f.turns)})")
    why = {"unrecoverable": "no turn was left to act in", "unaffected": "it hit nothing the agent needed",
           "superseded": "a goal shift replaced the step it hit"}.get(f.status, f.status)
    return Mark("recovery", None, f"left out: {why}")


def _fault_event(index: int, ev: Mapping[str, Any], f: FaultVerdict | None,
                 plan: Sequence[Mapping[str, Any]]) -> Event:
    kind = str(ev.get("kind"))
    target = f" on {ev['target']}" if ev.get("target") else ""
    call = f" [{ev['call']}]" if ev.get("call") else ""
    detail = _detail_text(ev.get("detail"))
    mark = _fault_outcome(f)
    # Friction that hits nothing (a typo, a decoy tool) is not said to: it never could.
    hits = _hits_text(ev.get("hits"), plan) if f or ev.get("hits") else ""
    pieces = [f"{kind}{target}{call}", detail, hits]
    data = {"index": index, "kind": kind, "target": ev.get("target"), "call": ev.get("call"), "hits": ev.get("hits"),
            "detail": ev.get("detail"), "status": f.status if f else None,
            "recovered_turn": f.turn if f else None, "turns": f.turns if f else None, "ms": f.ms if f else None}
    return Event(int(ev.get("step", 0)), "fault", "; ".join(p for p in pieces if p), "warn",
                 marks=(mark,) if mark else (), data=data)


def _call_marks(v: CallVerdict, call: Mapping[str, Any], plan: Sequence[Mapping[str, Any]],
                commitment: CommitmentVerdict | None) -> tuple[Mark, ...]:
    if not v.valid:
        return (Mark("validity", None if v.injected else False, f"invalid call ({call.get('error') or 'invalid'})"),)
    marks = []
    if v.injected:
        marks.append(Mark("validity", None, "an injected fault acted on it: left out of validity and efficiency"))
    if v.judged:
        steps = f": fits {' or '.join(_step_name(plan, i) for i in v.steps)}" if v.steps else ""
        marks.append(Mark("correctness", True, f"right{steps}") if v.right
                     else Mark("correctness", False, "wrong: " + "; ".join(v.wrong_because)))
    else:
        why = ("a repeat of a call that already succeeded" if v.repeat else "a decoy tool" if v.decoy
               else "no plan needs it")
        marks.append(Mark("correctness", None, f"not judged: {why}"))
    if v.carries_corrupted:
        marks.append(Mark("correctness", None, "carries a value a tool returned corrupted: what the agent was told"))
    if v.useful is not None:
        if v.useful:
            marks.append(Mark("efficiency", True, "useful: it advances the gold plan"))
        else:
            why = ("a repeat" if v.repeat else f"it failed ({call.get('error')})" if call.get("error")
                   else "a decoy tool" if v.decoy else "no gold step needs it")
            marks.append(Mark("efficiency", False, f"not useful: {why}"))
    if v.completes is not None:
        marks.append(Mark("recall", True, f"completes {_step_name(plan, v.completes)}"))
    for i in v.routed:
        marks.append(Mark("recall", True, f"completes {_step_name(plan, i)} (read another way)"))
    if commitment is not None:
        broken = ", ".join(commitment.contradicts)
        marks.append(Mark("goal_consistency", commitment.consistent,
                          f"a commitment that breaks {broken}" if broken else "a commitment that breaks no stated constraint"))
    return tuple(marks)


def _call_text(call: Mapping[str, Any]) -> str:
    # A call refused before it ran (bad arguments) keeps no arguments in the record.
    args = call.get("arguments")
    return f"{call.get('name', '?')}({canonical_json(args) if args is not None else '...'})"


def _call_tone(v: CallVerdict) -> str:
    if v.injected:
        return "warn"
    if not v.valid or v.right is False:
        return "bad"
    return "info"


def _message_text(m: Mapping[str, Any]) -> str:
    content = m.get("content")
    return content if isinstance(content, str) else canonical_json(content)


def _turn_errors(step: Mapping[str, Any], action: Any) -> list[tuple[str, str]]:
    """The turn-level errors of a step, (code, message): its errors that no call of it explains,
    as the metrics count them; the message is the parser's, when the action is at hand."""
    codes = list(step.get("errors") or ())
    for c in step.get("calls") or ():
        if c.get("error") is not None and not c.get("injected") and c["error"] in codes:
            codes.remove(c["error"])
    error = parse_action(action).error if codes and action is not None else None
    return [(code, error.message if error is not None and error.code.value == code else "") for code in codes]


def _assistant_text(action: Any) -> str:
    if action is None:
        return ""
    parsed = parse_action(action)
    return parsed.content if parsed.error is None else ""


class _Builder:
    """Collects the events of one episode in order."""

    def __init__(self, rec: Mapping[str, Any], verdict: EpisodeVerdict, transcript: Transcript | None) -> None:
        self.rec, self.v, self.transcript = rec, verdict, transcript
        self.plan = _plan(rec)
        self.events: list[Event] = []
        self.faults = {f.index: f for f in verdict.faults}
        self.call_verdicts = {c.index: c for c in verdict.calls}
        self.writes = {c.call: c for c in verdict.commitments if c.call is not None}

    def add(self, event: Event) -> None:
        self.events.append(event)

    def texts(self, turn: int) -> Sequence[Mapping[str, Any]] | None:
        t = self.transcript
        if t is None:
            return None
        if turn == 0:
            return t.opening
        return t.steps[turn - 1] if turn - 1 < len(t.steps) else None

    def faults_at(self, turn: int, call: str | None) -> list[Event]:
        """The injections of `turn` into `call`; with None, those into no call of the turn."""
        ids = {c.get("id") for c in self.v.call_log if int(c.get("turn", 0)) == turn}
        out = []
        for i, ev in enumerate(self.v.noise_log):
            into = ev.get("call") if ev.get("call") in ids else None
            if int(ev.get("step", 0)) == turn and into == call:
                out.append(_fault_event(i, ev, self.faults.get(i), self.plan))
        return out

    def build(self) -> list[Event]:
        rec, m = self.rec, self.rec.get("metrics") or {}
        task = rec.get("task") or m.get("task") or {}
        opening = self.texts(0) or ()
        brief = next((_message_text(x) for x in opening if x.get("role") == "system"), None)
        bits = [str(task.get(k)) for k in ("family", "domain", "difficulty", "split") if task.get(k)]
        budget = f"; {m['max_turns']} turns at most" if m.get("max_turns") else ""
        self.section(0, "the start")
        self.add(Event(0, "task", f"{task.get('id', '?')} ({', '.join(bits)}){budget}", "info", brief,
                       data={**{k: task.get(k) for k in ("family", "domain", "difficulty", "split", "id")},
                             "max_turns": m.get("max_turns")}))
        if self.transcript is not None and self.transcript.problem:
            self.add(Event(0, "note", f"texts: {self.transcript.problem}", "muted",
                           data={"reason": self.transcript.problem}))
        for msg in opening:
            if msg.get("role") == "user":
                self.add(Event(0, "user", "user", "info", _message_text(msg)))
        self.events.extend(self.faults_at(0, None))
        self.constraints(0)
        steps = rec.get("steps") or []
        actions = rec.get("actions") or []
        for turn in range(1, len(steps) + 1):
            self.turn(turn, actions[turn - 1] if turn - 1 < len(actions) else None)
        self.ending(len(steps))
        return self.events

    def turn(self, turn: int, action: Any) -> None:
        self.section(turn, f"turn {turn}")
        text = _assistant_text(action)
        if text:
            self.add(Event(turn, "assistant", "assistant", "info", text))
        for code, message in _turn_errors((self.rec.get("steps") or [])[turn - 1], action):
            self.add(Event(turn, "turn_error", f"the turn was refused: {code}" + (f": {message}" if message else ""),
                           "bad", marks=(Mark("validity", False, f"a turn-level error ({code})"),),
                           data={"code": code, "message": message}))
        messages = list(self.texts(turn) or ())
        results = {m.get("tool_call_id"): m for m in messages if m.get("role") == "tool"}
        for k, call in enumerate(self.v.call_log):
            if int(call.get("turn", 0)) != turn:
                continue
            v = self.call_verdicts[k]
            marks = _call_marks(v, call, self.plan, self.writes.get(k))
            self.add(Event(turn, "tool_call", _call_text(call), _call_tone(v), marks=marks,
                           data={key: call.get(key) for key in ("id", "name", "arguments", "valid", "error",
                                                                "injected", "kind")}))
            self.events.extend(self.faults_at(turn, call.get("id")))
            result = results.get(call.get("id"))
            if result is not None:
                self.add(Event(turn, "tool_result", f"{call.get('name')} returned"
                               + (f" an error ({call['error']})" if call.get("error") else ""),
                               "bad" if call.get("error") else "info", _message_text(result),
                               data={"id": call.get("id"), "name": call.get("name"), "error": call.get("error")}))
        self.events.extend(self.faults_at(turn, None))
        for msg in messages:
            if msg.get("role") == "user":
                self.add(Event(turn, "user", "user", "info", _message_text(msg)))
        for c in self.v.commitments:
            if c.turn == turn and c.kind == "proposal":
                self.commitment(c.turn, "proposal", c.contradicts)
        self.constraints(turn)
        for f in self.v.faults:
            if f.status == "recovered" and f.turn == turn:
                self.add(Event(turn, "recovery", f"{self.fault_name(f)}, after {_in_turns(f.turns)}{_ms_text(f.ms)}",
                               "good", marks=(Mark("recovery", True, "a fault recovered"),),
                               data={"index": f.index, "kind": f.kind, "step": f.step, "turns": f.turns, "ms": f.ms}))

    def fault_name(self, f: FaultVerdict) -> str:
        target = self.v.noise_log[f.index].get("target")
        return f"the {f.kind}{f' on {target}' if target else ''} of turn {f.step}"

    def section(self, turn: int, title: str) -> None:
        steps = self.rec.get("steps") or []
        step = steps[turn - 1] if 0 < turn <= len(steps) else {}
        self.add(Event(turn, "section", title, "muted",
                       data={"turn": turn, "elapsed_ms": step.get("elapsed_ms"), "reward": step.get("reward")}))

    def commitment(self, turn: int, kind: str, contradicts: Sequence[str]) -> None:
        what = "a proposal" if kind == "proposal" else "the final state"
        verdict = f"breaks {', '.join(contradicts)}" if contradicts else "breaks no stated constraint"
        self.add(Event(turn, "commitment", f"{what}: {verdict}", "bad" if contradicts else "good",
                       marks=(Mark("goal_consistency", not contradicts, f"{what} {verdict}"),),
                       data={"kind": kind, "contradicts": list(contradicts)}))

    def constraints(self, turn: int) -> None:
        before: set[str] = set()
        for entry in (self.rec.get("metrics") or {}).get("constraints") or ():
            at, known = int(entry.get("turn", 0)), [str(x) for x in entry.get("known", ())]
            if at < turn:
                before = set(known)
                continue
            new = [x for x in known if x not in before]
            if at == turn and new:
                self.add(Event(turn, "constraints", "the user has now stated " + ", ".join(new), "muted",
                               data={"new": new, "known": known}))
            return

    def ending(self, last: int) -> None:
        rec, m, v = self.rec, self.rec.get("metrics") or {}, self.v
        self.section(last, "the end")
        for c in v.commitments:
            if c.kind == "final":
                self.commitment(c.turn, "final", c.contradicts)
        for f in v.faults:
            if f.status == "censored":
                self.add(Event(last, "censored", f"{self.fault_name(f)}, censored after {_in_turns(f.turns)}", "bad",
                               marks=(Mark("recovery", False, "censored at the episode's end"),),
                               data={"index": f.index, "kind": f.kind, "step": f.step, "turns": f.turns, "ms": f.ms}))
        error = rec.get("agent_error")
        if error:
            self.add(Event(last, "agent_error", f"the agent raised {error.get('type')}: {error.get('message')}", "bad",
                           data={"type": error.get("type"), "message": error.get("message")}))
        outcome = m.get("outcome") or ("agent error" if error else "not ended")
        result = "success" if v.success else "failure"
        self.add(Event(last, "end", f"{outcome}: {result}, score {v.score:.2f}, {v.turns} turns",
                       "good" if v.success else "bad",
                       data={"outcome": m.get("outcome"), "success": v.success, "score": v.score, "turns": v.turns}))


def timeline(record: Mapping[str, Any], transcript: Transcript | None = None) -> list[Event]:
    """The events of one episode, in order.

    Per turn (each opened by a ``section`` event): the agent's message, a turn that did not parse, each tool call (with its metric
    marks), the faults injected into it and its result, the faults of the turn not tied to a call,
    the user's reply, a proposal, the constraints the user has now stated, and the faults
    recovered at that turn. Then the final state, the faults never recovered, an agent error and
    the end.

    Args:
        record: one episode record.
        transcript: the episode's texts (`agentgym.eval.transcript.replay_transcript`); without
            it the timeline holds what the record alone says (no tool results nor user words).

    Returns:
        The `Event` list.
    """
    return _Builder(record, judge_episode(record), transcript).build()


def episode_summary(record: Mapping[str, Any]) -> dict[str, Any]:
    """One line of an episode list: key, success, score, turns, tool calls, faults and their fate."""
    v = judge_episode(record)
    counted = [f for f in v.faults if f.status in ("recovered", "censored")]
    return {
        "key": v.key, "success": v.success, "score": v.score, "turns": v.turns, "tool_calls": len(v.call_log),
        "injections": len(v.noise_log), "faults": len(counted),
        "recovered": sum(1 for f in counted if f.status == "recovered"),
        "fault_kinds": sorted({f.kind for f in counted}),
        "agent_error": (record.get("agent_error") or {}).get("type"),
    }
