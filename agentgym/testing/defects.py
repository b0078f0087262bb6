"""Defect agents: the heuristic with one known defect each, to prove the metrics measure what they name.

A metric is valid only if it moves when, and only when, the behaviour it names changes. Each agent
here is `agentgym.agents.heuristic.HeuristicAgent` with exactly one thing changed, and `DEFECTS`
says which metric must move for it and which way (`Expect`). Two rows are the floor instead: an
agent that does nothing and the random agent, each with where every metric must land on its own
(0, or n/a where the behaviour the metric names never happened), so no metric rewards either. ``agentgym validate-metrics`` plays
each against the heuristic on the same seeds and writes the sensitivity matrix to
docs/METRICS.md; ``tests/testing/test_defects.py`` asserts its shape.

Most defects act on the heuristic's stream of actions and observations (they rewrite what it
reads, or what it sends), so the heuristic's own logic is untouched: padding, sloppy calls,
dropped constraints, a forgotten goal shift, verification. Retrying and re-reading a result whose
id does not resolve are settings of the heuristic itself (`retries`, `retry_delay`,
`recheck_ids`): the defects that lack them are the heuristic with them changed.

Every agent is deterministic given the episode: what it draws comes from a stream of the episode
seed (``info["seed"]``). The goal forgetter reads the noise log (it must know which message
announced the shift, to forget exactly that), so it is a privileged agent; no other one is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from agentgym.agents.base import Agent
from agentgym.agents.heuristic import HeuristicAgent
from agentgym.agents.strategies.dialog import DAYS, SLOTS
from agentgym.agents.transcript import EMAIL, SENTENCE_BREAK, BriefVocabulary, brief_of
from agentgym.agents.turns import Call, StepView, action_of, calls_of, decoded, is_transient, results_of
from agentgym.core.seeding import fast_stream

__all__ = [
    "NoRetry",
    "SlowRetry",
    "GoalForgetter",
    "ConstraintDropper",
    "SloppyCaller",
    "Padding",
    "CorruptionTruster",
    "Verifier",
    "Expect",
    "Defect",
    "DEFECTS",
    "CONSTRAINT_KINDS",
    "tool_kinds",
]

_ERROR = "[error "


# ============================================================================ retry settings
class NoRetry(HeuristicAgent):
    """Never sends a failed call again: a failure reaches the strategy, which goes on without it."""

    name = "no-retry"

    def __init__(self) -> None:
        super().__init__(retries=0)


class SlowRetry(HeuristicAgent):
    """Retries a failed call only after `k` turns of telling the user to hold on.

    Args:
        k: turns of waiting before each retry.
    """

    name = "slow-retry"

    def __init__(self, k: int = 1) -> None:
        super().__init__(retry_delay=k)


class CorruptionTruster(HeuristicAgent):
    """Trusts every result: when an id from one does not resolve it moves on, never reading again."""

    name = "corruption-truster"

    def __init__(self) -> None:
        super().__init__(recheck_ids=False)


# ============================================================================ stream wrappers
class _Wrapper(Agent):
    """The heuristic inside, shown rewritten observations (`_see`) and sending rewritten actions."""

    def __init__(self) -> None:
        self.inner = HeuristicAgent()

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self.inner.reset(obs, self._see(info))

    def act(self, obs: str, info: dict[str, Any]) -> str:
        return self.inner.act(obs, self._see(info))

    def _see(self, info: dict[str, Any]) -> dict[str, Any]:
        return info


def _rewrite_user(info: dict[str, Any], edit: Callable[[str], str]) -> dict[str, Any]:
    """`info` with every user message (not the env's error reports) passed through `edit`."""
    messages = info.get("messages", ())
    if not any(m.get("role") == "user" for m in messages):
        return info
    out = []
    for m in messages:
        if m.get("role") == "user" and not m.get("content", "").startswith(_ERROR):
            m = {**m, "content": edit(m["content"])}
        out.append(m)
    return {**info, "messages": out}




def _words(values: Any) -> re.Pattern[str] | None:
    """A case-insensitive pattern matching any of `values` as whole words, longest first."""
    vals = sorted({str(v) for v in values if str(v)}, key=len, reverse=True)
    if not vals:
        return None
    return re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(v) for v in vals) + r")(?![\w-])", re.IGNORECASE)


# ------------------------------------------------------------------------ constraint dropper
#: The constraint kinds a `ConstraintDropper` can drop: the dialog's (category, area, price,
#: rating, amenity, time) and the tool-use request details (currency, duration, email, severity).
CONSTRAINT_KINDS = ("category", "area", "price", "rating", "amenity", "time", "currency", "duration", "email",
                    "severity")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_PRICE_CUE = re.compile(r"budget|price|spend|cost|pay|cheap|expensive|afford|at most|up to|above|under",
                        re.IGNORECASE)
_RATING_CUE = re.compile(r"rat(?:ed|ing)|stars?", re.IGNORECASE)
_DURATION = re.compile(r"\b\d+(?:-|\s)?(?:minutes?|mins?|hours?|h)\b", re.IGNORECASE)
_SEVERITY = re.compile(r"\bsev\s*[123]\b", re.IGNORECASE)
_CURRENCIES = re.compile(r"Currencies: ([A-Z]{3}(?:, [A-Z]{3})*)")


class ConstraintDropper(_Wrapper):
    """Never hears one kind of constraint: it is cut out of every user message before the heuristic
    reads it (the value, or for a budget or a rating the number), so its commitments ignore it.

    Args:
        kind: one of `CONSTRAINT_KINDS`.
    """

    name = "constraint-dropper"

    def __init__(self, kind: str = "area") -> None:
        if kind not in CONSTRAINT_KINDS:
            raise ValueError(f"kind must be one of {CONSTRAINT_KINDS}, got {kind!r}")
        super().__init__()
        self.kind = kind
        self._cut: Callable[[str], str] = lambda text: text

    def config(self) -> dict[str, Any]:
        return {"kind": self.kind}

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        brief = brief_of(info.get("messages", ()))
        self._cut = _cutter(self.kind, brief)
        super().reset(obs, info)

    def _see(self, info: dict[str, Any]) -> dict[str, Any]:
        return _rewrite_user(info, self._cut)


def _cutter(kind: str, brief: str) -> Callable[[str], str]:
    """The edit that removes statements of `kind` from a user message (the brief gives the vocabulary)."""
    vocab = BriefVocabulary.of(brief).lists()
    if kind in ("category", "area", "amenity"):
        pattern = _words(vocab[kind])
    elif kind == "time":
        pattern = _words(DAYS + SLOTS)
    elif kind == "currency":
        found = _CURRENCIES.search(brief)
        pattern = _words(found.group(1).split(", ") if found else ())
    elif kind == "duration":
        pattern = _DURATION
    elif kind == "email":
        pattern = EMAIL
    elif kind == "severity":
        pattern = _SEVERITY
    else:  # price, rating: the numbers of the sentences that state one
        cue = _PRICE_CUE if kind == "price" else _RATING_CUE
        other = _RATING_CUE if kind == "price" else _PRICE_CUE

        def cut_numbers(text: str) -> str:
            parts = SENTENCE_BREAK.split(text)
            return " ".join(_NUMBER.sub("", p) if cue.search(p) and not other.search(p) else p for p in parts)
        return cut_numbers
    if pattern is None:
        return lambda text: text
    return lambda text: pattern.sub("", text)


# ------------------------------------------------------------------------ goal forgetter
class GoalForgetter(_Wrapper):
    """Forgets a goal shift. ``passive``: the sentences that announce or restate the new value never
    reach the heuristic, so it goes on as if nothing changed. ``active``: the new value is replaced
    by the old one wherever the user says it, so the heuristic acts on the old goal again.

    It finds the shift in the noise log (``info["noise"]``, kind ``goal_shift``, whose detail holds
    ``from`` and ``to``): a privileged agent.

    Args:
        mode: ``active`` or ``passive``.
    """

    name = "goal-forgetter"
    privileged = True

    def __init__(self, mode: str = "passive") -> None:
        if mode not in ("active", "passive"):
            raise ValueError(f"mode must be 'active' or 'passive', got {mode!r}")
        super().__init__()
        self.mode = mode
        self._pairs: list[tuple[str, str]] = []

    def config(self) -> dict[str, Any]:
        return {"mode": self.mode}

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._pairs = []
        super().reset(obs, info)

    def _see(self, info: dict[str, Any]) -> dict[str, Any]:
        for event in info.get("noise", ()):
            detail = event.get("detail")
            if event.get("kind") == "goal_shift" and isinstance(detail, dict):
                old, new = detail.get("from"), detail.get("to")
                olds, news = (old, new) if isinstance(new, list) and isinstance(old, list) else ([old], [new])
                self._pairs += [(str(n), str(o)) for n, o in zip(news, olds) if n != o and n is not None]
        if not self._pairs:
            return info
        pattern = _words(n for n, _ in self._pairs)
        assert pattern is not None
        if self.mode == "active":
            back = {n.lower(): o for n, o in self._pairs}

            def revert(text: str) -> str:
                return pattern.sub(lambda m: _same_case(m.group(0), back[m.group(0).lower()]), text)
            return _rewrite_user(info, revert)

        def ignore(text: str) -> str:
            kept = [s for s in SENTENCE_BREAK.split(text) if not pattern.search(s) and "instead" not in s.lower()
                    and "change the booking" not in s.lower()]
            return " ".join(kept) or "Okay."
        return _rewrite_user(info, ignore)

    def bind(self, env: Any) -> None:
        """Privileged for the noise log only: the env itself is never read."""


def _same_case(like: str, text: str) -> str:
    return text.capitalize() if like[:1].isupper() else text


# ------------------------------------------------------------------------ call rewriting
@lru_cache(maxsize=1)
def tool_kinds() -> dict[str, str]:
    """``read`` or ``write`` per tool name of every built-in family (public: the tools' own specs)."""
    from agentgym.envs.dialog.tools import DialogToolkit
    from agentgym.envs.tooluse.domains import load_domains

    out: dict[str, str] = {}
    for cls in (DialogToolkit, *(d.toolkit for d in load_domains().values())):
        for name, spec in cls.tool_specs().items():
            out[name] = spec.kind.value
    return out


class _CallRewriter(Agent):
    """The heuristic inside; each of its tool turns is sent as `_send` makes it, and the heuristic
    sees its own calls answered as `_settle` decides (the default: as they came)."""

    def __init__(self) -> None:
        self.inner = HeuristicAgent()
        self._view: StepView | None = None
        self._sent: list[int] = []
        self._turn = 0

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._view, self._sent, self._turn = None, [], 0
        self._start(info)
        self.inner.reset(obs, info)

    def _start(self, info: dict[str, Any]) -> None:
        """Per-episode state, from the reset info."""

    def act(self, obs: str, info: dict[str, Any]) -> str:
        self._turn += 1
        if self._view is not None:
            view, sent = self._view, self._sent
            redo = self._settle(view, sent, info)
            if redo:
                self._sent = [slot for slot, _ in redo]
                return action_of([call for _, call in redo])
            info = view.info()
            self._view = None
        self._observe(info)
        action = self.inner.act(obs, info)
        calls = calls_of(action)
        if not calls:
            return action
        out, self._sent = self._send(calls)
        self._view = StepView(calls)
        return out

    def _observe(self, info: dict[str, Any]) -> None:
        """Learn from what the heuristic is about to see."""

    def _send(self, calls: list[Call]) -> tuple[str, list[int]]:
        """The action that carries the heuristic's `calls`, and the slot each of its calls fills
        (-1 for a call of the wrapper's own, whose result the heuristic never sees)."""
        return action_of(calls), list(range(len(calls)))

    def _settle(self, view: StepView, sent: list[int], info: dict[str, Any]) -> list[tuple[int, Call]]:
        """Take in the env's answer to `sent`; return the calls to send again (slot, call), if any."""
        view.absorb(_own(info, sent), [s for s in sent if s >= 0])
        return []


def _own(info: dict[str, Any], sent: list[int]) -> dict[str, Any]:
    """`info` without the tool messages and records of the wrapper's own calls (slot -1)."""
    if all(s >= 0 for s in sent):
        return info
    tools = results_of(info)
    drop = {tools[i].get("tool_call_id") for i, s in enumerate(sent) if s < 0 and i < len(tools)}
    return {**info, "messages": [m for m in info.get("messages", ()) if m.get("role") != "tool"
                                 or m.get("tool_call_id") not in drop],
            "calls": [r for r in info.get("calls", ()) if r.get("id") not in drop]}


class Padding(_CallRewriter):
    """Adds `n` useless reads to every tool turn (reads no plan needs: the policies list, or the
    details of a place already seen); the heuristic never sees their results.

    Args:
        n: useless reads per tool turn.
    """

    name = "padding"

    def __init__(self, n: int = 2) -> None:
        super().__init__()
        self.n = n
        self._tools: set[str] = set()
        self._seen: list[str] = []

    def config(self) -> dict[str, Any]:
        return {"n": self.n}

    def _start(self, info: dict[str, Any]) -> None:
        self._tools = {t["function"]["name"] for t in info.get("tools", ())}
        self._seen = []

    def _observe(self, info: dict[str, Any]) -> None:
        for msg in results_of(info):
            if msg.get("name") == "search":
                result = decoded(msg)
                if isinstance(result, dict):
                    self._seen += [r["id"] for r in result.get("results", ()) if isinstance(r, dict) and "id" in r]

    def _useless(self) -> list[Call]:
        if "list_policies" in self._tools:
            return [Call("list_policies", {})] * self.n
        if "get_details" in self._tools and self._seen:
            return [Call("get_details", {"item_id": self._seen[(self._turn + i) % len(self._seen)]})
                    for i in range(self.n)]
        return []

    def _send(self, calls: list[Call]) -> tuple[str, list[int]]:
        pads = self._useless()
        ids = [f"own_{self._turn}_{i}" for i in range(len(calls))] + [f"pad_{self._turn}_{i}" for i in range(len(pads))]
        return action_of(calls + pads, ids), list(range(len(calls))) + [-1] * len(pads)


class SloppyCaller(_CallRewriter):
    """Garbles each call with probability `p` (an argument's name or type is wrong, or one is
    added) and, told the arguments are invalid, sends it right the turn after.

    Args:
        p: the chance that one call is garbled.
    """

    name = "sloppy-caller"

    def __init__(self, p: float = 0.3) -> None:
        super().__init__()
        self.p = p
        self._rng: Any = None
        self._fix: dict[int, Call] = {}

    def config(self) -> dict[str, Any]:
        return {"p": self.p}

    def _start(self, info: dict[str, Any]) -> None:
        self._rng = fast_stream(int(info.get("seed", 0)), "defect/sloppy-caller")
        self._fix = {}

    def _send(self, calls: list[Call]) -> tuple[str, list[int]]:
        out = []
        self._fix = {}
        for i, call in enumerate(calls):
            if self._rng.random() < self.p:
                self._fix[i] = call
                call = _garble(call, self._rng)
            out.append(call)
        return action_of(out), list(range(len(calls)))

    def _settle(self, view: StepView, sent: list[int], info: dict[str, Any]) -> list[tuple[int, Call]]:
        view.absorb(info, sent)
        redo = [(i, self._fix.pop(i)) for i in sent if i in self._fix and view.slots[i] is not None
                and str(view.slots[i][0].get("content", "")).startswith("[error INVALID_ARGS]")]
        for i, _ in redo:
            view.slots[i] = None
        return redo


def _garble(call: Call, rng: Any) -> Call:
    """The call with one mistake a sloppy caller makes: a misspelt argument name, an argument of
    the wrong type, or an argument the tool does not take."""
    args = dict(call.arguments or {})
    if not args:
        return Call(call.name, {"verbose": True})
    key = sorted(args)[int(rng.random() * len(args))]
    if rng.random() < 0.5:
        args[key.replace("_", "") + "Id" if key.endswith("id") else key + "_"] = args.pop(key)
    else:
        value = args[key]
        args[key] = str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
    return Call(call.name, args)


class Verifier(_CallRewriter):
    """Verifies every read: sends it twice in the same turn and, when the two results disagree (or
    one failed), reads again until two agree; the heuristic sees the agreed result. Writes go once.
    """

    name = "verifier"

    #: Reads of one call at most (then the last result stands).
    MAX_READS = 5

    def __init__(self) -> None:
        super().__init__()
        self._got: dict[int, list[tuple[dict[str, Any], dict[str, Any] | None]]] = {}

    def _send(self, calls: list[Call]) -> tuple[str, list[int]]:
        kinds = tool_kinds()
        self._got = {}
        out, slots = [], []
        for i, call in enumerate(calls):
            copies = 2 if kinds.get(call.name) == "read" else 1
            out += [call] * copies
            slots += [i] * copies
        return action_of(out, [f"v{self._turn}_{j}" for j in range(len(out))]), slots

    def _settle(self, view: StepView, sent: list[int], info: dict[str, Any]) -> list[tuple[int, Call]]:
        tools = results_of(info)
        records = {r.get("id"): r for r in info.get("calls", ())}
        for slot, msg in zip(sent, tools):
            self._got.setdefault(slot, []).append((msg, records.get(msg.get("tool_call_id"))))
        view.absorb({**info, "messages": [m for m in info.get("messages", ()) if m.get("role") != "tool"],
                     "calls": []}, [])
        redo = []
        kinds = tool_kinds()
        for slot in sorted(set(sent)):
            got = self._got.get(slot, [])
            if not got:
                continue
            agreed = _agreed(got) if kinds.get(view.calls[slot].name) == "read" else got[-1]
            if agreed is None and len(got) < self.MAX_READS:
                redo.append((slot, view.calls[slot]))
            else:
                view.slots[slot] = agreed or got[-1]
        return redo


def _agreed(got: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """A result two reads agree on (failures that a retry may clear never count), or None."""
    seen: dict[str, int] = {}
    for msg, rec in got:
        if is_transient(msg):
            continue
        content = str(msg.get("content", ""))
        seen[content] = seen.get(content, 0) + 1
        if seen[content] >= 2:
            return msg, rec
    return None


# ============================================================================ the catalogue
@dataclass(frozen=True)
class Expect:
    """What a defect must do to a metric, against the heuristic on the same episodes, or where
    the metric must land on its own.

    `direction` is ``down`` or ``up`` (the paired difference's interval lies wholly on that side of
    0) or ``not_up`` / ``not_down`` (it must not lie wholly above / below 0); or, for the agent's
    own value, ``n/a`` (nothing to measure: the behaviour the metric names never happened) or
    ``at_most`` (at most `bound`, and not n/a). `families` limits it to the families where the
    defect has something to act on (the fault or the constraint).
    """

    metric: str
    direction: str
    families: tuple[str, ...] = ("dialog", "tooluse", "crosstask")
    bound: float | None = None

    def holds(self, cmp: dict[str, Any], significance: str) -> bool:
        """Whether a `compare` output (this agent as run A) meets it; `significance` is the
        paired difference's side of 0 (``up``, ``down`` or ``none``)."""
        if self.direction == "n/a":
            return cmp["a"][self.metric]["value"] is None
        if self.direction == "at_most":
            value = cmp["a"][self.metric]["value"]
            return value is not None and self.bound is not None and value <= self.bound
        if cmp["diff"][self.metric]["value"] is None and self.direction in ("down", "up"):
            return False
        return {"down": significance == "down", "up": significance == "up", "not_up": significance != "up",
                "not_down": significance != "down"}[self.direction]

    def describe(self) -> str:
        """The expectation in words, as the matrix lists it."""
        if self.direction == "at_most":
            shown = f"{self.bound:.0%}" if self.metric not in _PLAIN else f"{self.bound:g}"
            return f"{self.metric} at most {shown}"
        return f"{self.metric} {self.direction.replace('_', ' ')}"


@dataclass(frozen=True)
class Defect:
    """One row of the sensitivity matrix: a defect agent and what it must do to the metrics.

    `needs` names the fault kind the defect acts on: in a family where the heuristic met none
    (a family whose user never shifts its goal), the defect has nothing to act on and its
    expectations are not asked of that family.
    """

    name: str
    agent: str
    kwargs: tuple[tuple[str, Any], ...]
    summary: str
    expect: tuple[Expect, ...]
    needs: str | None = None


_ALL = ("dialog", "tooluse", "crosstask")
#: Metrics shown as plain numbers, not shares.
_PLAIN = ("score", "recovery_median", "recovery_rmst", "recovery_median_ms")
# The families whose plans consume many values read from tools. A dialog plan consumes only place
# ids (availability, prices and ratings are read, never passed on), so few dialog corruptions hit
# a step: too few for a small run to resolve a difference (the matrix shows their n).
_DATA_FLOWS = ("tooluse", "crosstask")
_NOT_GAMED = (Expect("recovery_share", "not_up"), Expect("goal_consistency", "not_up"),
              Expect("tool_correctness", "not_up"))


def _path(cls: type) -> str:
    return f"{__name__}:{cls.__name__}"


#: Booking constraints whose dropping seldom changes a commitment in a session, where the booking
#: is one sub-task of several: the heuristic books the best-rated place that fits first, so a
#: rating it never hears rarely matters, and a budget it never hears it asks for again rather than
#: guess (its cost shows in efficiency and success, not in what it commits to). CrossTask,
#: validate-metrics' noise: 2 of 300 sessions break the dropped rating, 2 the dropped price, too few
#: to resolve; there they must still never raise consistency. Dialog resolves both.
_BOOKING_DROPPED = {kind: (Expect("goal_consistency", "down", ("dialog",)),
                           Expect("goal_consistency", "not_up", ("crosstask",))) for kind in ("price", "rating")}


def _dropper(kind: str, expect: tuple[Expect, ...], why: str = "") -> Defect:
    return Defect(f"constraint-dropper-{kind}", _path(ConstraintDropper), (("kind", kind),),
                  f"never hears the {kind} the user states{why}", expect)


#: Every defect of the matrix, in row order.
DEFECTS: tuple[Defect, ...] = (
    Defect("no-retry", _path(NoRetry), (), "never sends a failed call again",
           (Expect("recovery_share:tool_failure", "down"), Expect("recovery_share", "down"))),
    *(Defect(f"slow-retry-{k}", _path(SlowRetry), (("k", k),), f"waits {k} turn{'s' * (k > 1)} before each retry",
             (Expect("recovery_median:tool_failure", "up"), Expect("recovery_rmst:tool_failure", "not_down")))
      for k in (1, 2, 4)),
    Defect("goal-forgetter-active", _path(GoalForgetter), (("mode", "active"),),
           "after a goal shift, acts on the old value again",
           (Expect("goal_consistency", "down"), Expect("recovery_share:goal_shift", "down")), needs="goal_shift"),
    Defect("goal-forgetter-passive", _path(GoalForgetter), (("mode", "passive"),),
           "ignores a goal shift",
           (Expect("goal_consistency", "down"), Expect("recovery_share:goal_shift", "down")), needs="goal_shift"),
    *(_dropper(k, _BOOKING_DROPPED.get(k, (Expect("goal_consistency", "down", ("dialog", "crosstask")),)))
      for k in ("category", "area", "price", "rating", "amenity", "time")),
    _dropper("currency", (Expect("goal_consistency", "down", ("tooluse",)),)),
    _dropper("duration", (Expect("goal_consistency", "down", ("tooluse",)),)),
    _dropper("email", (Expect("tool_correctness", "down", ("tooluse",)),),
             " (a look-up key, not a commitment: it shows in the calls that look the customer up)"),
    _dropper("severity", (), " (the heuristic derives it from the error rate by the brief's thresholds, so it "
             "loses nothing: no metric should move)"),
    *(Defect(f"sloppy-caller-{p}", _path(SloppyCaller), (("p", p),),
             f"garbles {p:.0%} of its calls, then sends them right", (Expect("validity", "down"),))
      for p in (0.1, 0.3)),
    *(Defect(f"padding-{n}", _path(Padding), (("n", n),), f"adds {n} useless read{'s' * (n > 1)} to every tool turn",
             (Expect("tool_efficiency", "down"), *_NOT_GAMED)) for n in (1, 3)),
    Defect("corruption-truster", _path(CorruptionTruster), (), "never reads a result again, even when an id "
           "from it does not resolve", (Expect("recovery_share:corruption", "down", _DATA_FLOWS),)),
    # Its re-reads are never judged wrong (a repeat decides nothing); its correctness as a whole
    # may still fall, as it gets further into chains whose traps the heuristic falls into.
    Defect("verifier", _path(Verifier), (), "reads every result twice and again until two agree",
           (Expect("recovery_share:corruption", "up", _DATA_FLOWS), Expect("tool_efficiency", "down"))),
    # The floor: an agent that does nothing and one that acts at random must land where they
    # belong on every metric, at 0 or n/a, so that no metric rewards doing nothing.
    Defect("do-nothing", "agentgym.agents.trivial:ConstantAgent", (), "says \"OK.\" every turn",
           (*(Expect(m, "at_most", bound=0.0) for m in ("success", "score", "tool_recall", "recovery_share")),
            *(Expect(m, "n/a") for m in ("validity", "tool_correctness", "tool_efficiency", "recovery_median",
                                         "goal_consistency")))),
    # Its calls are schema-valid by construction (arguments drawn from the schemas), so validity
    # is not asked of it: validity checks form, correctness and efficiency what a call does. What
    # it scores at all is chance: a read the plan makes (a search without filters), sent again
    # after a failure, or an answer submitted before the user stated anything it could break
    # (train's finance quotes).
    Defect("random", "random", (), "random messages and schema-valid calls with random arguments",
           (Expect("success", "at_most", bound=0.01), Expect("score", "at_most", bound=0.05),
            *(Expect(m, "at_most", bound=0.1) for m in ("tool_correctness", "tool_efficiency")),
            Expect("tool_recall", "at_most", bound=0.15),
            Expect("recovery_share", "at_most", bound=0.15), Expect("recovery_median", "n/a"),
            Expect("goal_consistency", "at_most", bound=0.25))),
)
