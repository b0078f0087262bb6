"""The metrics' verdicts on one episode: what each call, fault and commitment counted for.

`agentgym.eval.judging.judge_episode` makes them from a record, with the same judgements the
aggregates pool (`agentgym.eval.headline`), so a report, an export or a viewer can show where
each metric counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple

__all__ = ["CallVerdict", "CommitmentVerdict", "EpisodeVerdict", "FaultVerdict", "ToolCounts"]


class ToolCounts(NamedTuple):
    """The counts of one episode's tool calls that tool-call accuracy pools over a run.

    Each rate is a pair of fields (`agentgym.eval.headline.TOOL_RATES`): validity is
    ``valid / attempts``, correctness ``right / judged``, efficiency ``useful / spent``, recall
    ``done / gold`` and legacy precision ``precise / scored``.

    Attributes:
        valid: valid calls the agent made (no injected fault acted on them).
        attempts: the agent's call attempts: calls no injected fault acted on, plus turn-level
            errors (an action that did not parse), each an invalid action.
        right: judged calls whose arguments were right.
        judged: valid calls that decide something (not a repeat; for a plan step, or wrong).
        useful: valid calls not injected that advance the work (succeeded, on a gold plan, not
            a repeat).
        spent: valid calls not injected.
        precise: valid calls not injected for a gold step not yet done, or of a replaced plan.
        scored: valid calls not injected, for legacy precision (0 without a gold plan).
        done: gold steps completed by a successful call (0 without a gold plan).
        gold: gold steps (0 without a gold plan).
    """

    valid: int = 0
    attempts: int = 0
    right: int = 0
    judged: int = 0
    useful: int = 0
    spent: int = 0
    precise: int = 0
    scored: int = 0
    done: int = 0
    gold: int = 0

@dataclass(frozen=True)
class CallVerdict:
    """What one call of an episode counted for in tool-call accuracy.

    Attributes:
        index: the call's index in the episode's calls (``metrics.calls``).
        turn: the agent turn it was sent in.
        name: the tool it named.
        valid: it parsed, named a tool and fit its schema.
        injected: an injected fault acted on it (left out of validity and efficiency).
        judged: it counts in correctness (it decides something).
        right: for a judged call, whether it was right (None when not judged).
        wrong_because: for a wrong call, why: ``"contradicts <constraint>"``, ``"refused (<code>)"``,
            ``"fits no step of the plan"``.
        useful: it counts as useful in efficiency (None when left out: invalid, injected, or passing on
            a value a tool returned corrupted).
        repeat: it repeats a call that already succeeded (same tool, equal arguments).
        decoy: a distractor tool.
        steps: the gold steps (indices into ``metrics.gold.calls``) it matches.
        completes: the gold step it completed (the first matching one not yet done), or None.
        carries_corrupted: its arguments carry a value a tool returned corrupted.
        retried: an injected fault stopped it and it was sent again: its retry carries the
            decision, so correctness judges that instead.
        routed: the gold steps it completed as the last of their ``or_reads`` to go through
            (another way to a step's work: every attendee's calendar for the free starts).
    """

    index: int
    turn: int
    name: str
    valid: bool
    injected: bool
    judged: bool = False
    right: bool | None = None
    wrong_because: tuple[str, ...] = ()
    useful: bool | None = None
    repeat: bool = False
    decoy: bool = False
    steps: tuple[int, ...] = ()
    completes: int | None = None
    carries_corrupted: bool = False
    retried: bool = False
    routed: tuple[int, ...] = ()


@dataclass(frozen=True)
class FaultVerdict:
    """What became of one injected fault (a noise event of a kind in `agentgym.eval.judging.FAULT_KINDS`).

    Attributes:
        index: the event's index in the episode's noise log (``metrics.noise``).
        kind: the fault kind. step: the turn it was injected at (0: at reset).
        status: ``recovered``, ``censored`` (never recovered), or why it is left out of recovery:
            ``unrecoverable``, ``unaffected`` (it hit nothing), ``superseded``.
        turn: the recovering turn (recovered faults only).
        turns: agent turns to the recovery, or to the episode's end (censored); None when left out.
        ms: the same in simulated milliseconds; None when left out or no time was charged.
    """

    index: int
    kind: str
    step: int
    status: str
    turn: int | None = None
    turns: int | None = None
    ms: float | None = None


@dataclass(frozen=True)
class CommitmentVerdict:
    """One commitment of goal consistency: a write call (one that went through, or that breaks a
    stated constraint: `agentgym.eval.judging.commits`), a proposal or the final state.

    Attributes:
        turn: the turn it was made at (the final state: the last turn).
        kind: ``write``, ``proposal`` or ``final``.
        call: the write call's index in the episode's calls (None for the others).
        consistent: it breaks no constraint stated by then.
        contradicts: the constraints it breaks.
    """

    turn: int
    kind: str
    call: int | None
    consistent: bool
    contradicts: tuple[str, ...]


@dataclass(frozen=True)
class EpisodeVerdict:
    """Everything the metrics judged of one episode, and the per-episode inputs of each metric.

    `tools` holds the numerators and denominators tool-call accuracy pools
    (`ToolCounts`),
    `consistent` / `committed` those of goal consistency. `call_log` and `noise_log` are the
    episode's calls and injections as the metrics read them (the indices of the verdicts);
    `elapsed_ms` is the simulated time at its end.
    """

    key: str | None
    success: bool
    score: float
    turns: int
    timed: bool
    tools: ToolCounts
    consistent: int
    committed: int
    calls: tuple[CallVerdict, ...]
    faults: tuple[FaultVerdict, ...]
    commitments: tuple[CommitmentVerdict, ...]
    call_log: tuple[Mapping[str, Any], ...] = ()
    noise_log: tuple[Mapping[str, Any], ...] = ()
    elapsed_ms: float = 0.0

    def count(self, name: str) -> int:
        """A field of `tools`, or ``consistent`` or ``committed``, by name."""
        if name in ("consistent", "committed"):
            return int(getattr(self, name))
        if name not in self.tools._fields:
            raise KeyError(f"no count {name!r}; known: {[*self.tools._fields, 'consistent', 'committed']}")
        return int(getattr(self.tools, name))

    def rate(self, numerator: str, denominator: str) -> float | None:
        """``count(numerator) / count(denominator)``; None when there is nothing to measure."""
        den = self.count(denominator)
        return self.count(numerator) / den if den else None
