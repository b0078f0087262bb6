"""Noise on tool calls: failures, corrupted results and simulated latency.

Each wrapper acts at one point of a tool call (`agentgym.core.hooks`) while its own step runs,
and draws only from the episode's stream for its kind (`AgentEnv.noise_rng`), so it never shifts
the task, the user or another wrapper's draws. With ``keyed`` (the spec's ``draws=call``) it
draws for each call from bits keyed on that call instead (`AgentEnv.call_uniform`,
`agentgym.core.call_draws`): the same call meets the same fault whatever else the agent calls,
so agents that make the same calls meet the same faults. The stream is the default: keying
costs every call a hash.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from collections.abc import Sequence
from typing import Any

import gymnasium as gym

from agentgym.core._fast import carried_by
from agentgym.core.env import AgentEnv, Progress
from agentgym.core.hooks import Intercept
from agentgym.core.protocol import ErrorCode, ToolCall
from agentgym.core.render import error_text
from agentgym.core.tools import ToolKind, ToolSpec
from agentgym.noise._common import NoiseWrapper, check_keyed, check_ms, check_rate, recoverable_at

__all__ = ["ToolFailure", "FAILURE_MODES", "Corruption", "perturbable_leaves", "Latency"]

#: What the agent reads for each failure mode: the texts real services send. They never say
#: the failure was injected (an agent must not be told); the call record and the log do.
FAILURE_MODES: dict[str, str] = {
    "error": "{tool}: upstream service error (503 Service Unavailable); the service is temporarily unavailable",
    "timeout": "{tool}: the request timed out after 30 s without a response",
    "rate_limit": "{tool}: 429 Too Many Requests: rate limit exceeded, retry after 2 s",
}
_TOOL_ERROR = ErrorCode.TOOL_ERROR.value


def _names(label: str, values: Any) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Sequence) or not values:
        raise ValueError(f"{label} must be a non-empty list of names, got {values!r}")
    out = list(values)
    if not all(isinstance(v, str) and v for v in out) or len(set(out)) != len(out):
        raise ValueError(f"{label} must hold distinct non-empty strings, got {values!r}")
    return out


class ToolFailure(NoiseWrapper):
    """A valid tool call fails, with probability `rate`, before the tool runs.

    The agent sees a realistic ``[error TOOL_ERROR] ...`` text for a server error, a timeout or a
    rate limit. Whatever the mode, a failed call never reached the tool: the world is untouched,
    so the effect of a write whose call failed (a timeout included) is never in doubt. An agent
    need not take that on trust: each family's read tools show what its writes did (the bookings,
    the transfers, the incidents, an order's returns), and a retry may succeed without ever
    doubling an effect. The call record is marked ``injected`` (metrics never blame the agent
    for it) and the log gets ``{"mode", "recoverable"}``; a failure on the episode's last turn is
    unrecoverable.

    Args:
        env: an agentgym env (any stack over an `AgentEnv`).
        rate: the chance that one valid call fails, in [0, 1].
        modes: the failure modes to draw from, uniformly (see `FAILURE_MODES`).
        tools: only calls to these tools can fail (None: every tool, distractors included).
    """

    def __init__(
        self,
        env: gym.Env,
        rate: float,
        modes: Sequence[str] = ("error", "timeout", "rate_limit"),
        tools: Sequence[str] | None = None,
        keyed: bool = False,
    ) -> None:
        super().__init__(env, **self.check(rate=rate, modes=modes, tools=tools, keyed=keyed))

    @classmethod
    def check(cls, rate: Any, modes: Any = ("error", "timeout", "rate_limit"), tools: Any = None,
              keyed: Any = False) -> dict[str, Any]:
        modes = _names("ToolFailure modes", modes)
        unknown = [m for m in modes if m not in FAILURE_MODES]
        if unknown:
            raise ValueError(f"unknown ToolFailure modes {unknown}; known: {list(FAILURE_MODES)}")
        # Lists, not tuples: the recorded arguments must survive the spec's JSON round trip.
        return {"rate": check_rate("ToolFailure rate", rate), "modes": modes,
                "tools": None if tools is None else _names("ToolFailure tools", tools), **check_keyed(keyed)}

    def _configure(self, rate: float, modes: list[str], tools: list[str] | None, keyed: bool = False) -> None:
        self._rate = rate
        self._modes = tuple(modes)
        self._tools = None if tools is None else frozenset(tools)
        self._keyed = keyed

    def before_call(self, env: AgentEnv, call: ToolCall, turn: int) -> Intercept | None:
        if self._tools is not None and call.name not in self._tools:
            return None
        rng = self._strikes(env, "tool_failure", call, self._rate)
        if rng is None:
            return None
        mode = self._modes[int(rng.random() * len(self._modes))]
        step = env.gold_step_for(call.name, call.arguments)
        env.log_noise("tool_failure", call.name, {"mode": mode, "recoverable": recoverable_at(env, turn)},
                      hits=None if step is None else {"gold_step": step})
        return Intercept(error_text(_TOOL_ERROR, FAILURE_MODES[mode].format(tool=call.name)), error=_TOOL_ERROR,
                         injected=True)


# ------------------------------------------------------------------------------ corruption

#: Pagination and echo fields are bookkeeping, not data: corrupting them is not plausible (and a
#: page number that equals a value the work uses would draw the tier's aimed corruption onto it).
_BOOKKEEPING = frozenset({"page", "pages", "next_page", "per_page", "page_size", "limit", "offset"})
_ID = re.compile(r"^(.*?[A-Za-z_\-])(\d+)$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
#: Where a leaf sits in a tool result: the keys and indices from the top (not a file path).
LeafPath = tuple[Any, ...]
_MISSING = object()
_INF = float("inf")
_CONTAINERS = (dict, list, tuple)


def _id_like(key: Any, value: str) -> bool:
    return isinstance(key, str) and (key == "id" or key.endswith(("_id", "Id"))) and _ID.match(value) is not None


def perturbable_leaves(value: Any, echo: dict[str, Any] | None = None) -> list[LeafPath]:
    """Paths of the leaves of a tool result that `Corruption` may change, in document order.

    Numbers, booleans, id-like strings (under a key ``id`` or ``*_id``, ending in digits) and
    ISO dates; never pagination fields, nor a top-level field that echoes the call's argument.
    """
    out: list[LeafPath] = []
    if isinstance(value, _CONTAINERS):
        _collect(value, (), None, echo, out)
    elif _perturbable(None, value):
        out.append(())
    return out


def _collect(container: Any, path: LeafPath, key: Any, echo: dict[str, Any] | None, out: list[LeafPath]) -> None:
    """Append to `out` the paths of the perturbable leaves in `container` (at `path`, under the
    dict key `key`; `echo` given for the top level only), depth first in document order.

    A path is built only for a leaf that qualifies or a container to enter: a read result is
    mostly strings that never qualify (names, categories), and it is walked on every corruption.
    """
    if isinstance(container, dict):
        for k, x in container.items():
            if k in _BOOKKEEPING or (echo is not None and echo.get(k, _MISSING) == x):
                continue
            if isinstance(x, _CONTAINERS):
                _collect(x, (*path, k), k, None, out)
            elif _perturbable(k, x):
                out.append((*path, k))
    else:
        for i, x in enumerate(container):
            if isinstance(x, _CONTAINERS):
                _collect(x, (*path, i), key, None, out)
            elif _perturbable(key, x):
                out.append((*path, i))


def _perturbable(key: Any, v: Any) -> bool:
    """Whether a leaf (under the dict key `key`) is one `Corruption` may change."""
    if isinstance(v, str):
        return _id_like(key, v) or _DATE.match(v) is not None
    return isinstance(v, (int, float)) and v == v and abs(v) != _INF  # finite numbers and booleans


def _get(value: Any, path: LeafPath) -> Any:
    for k in path:
        value = value[k]
    return value


def _replace(value: Any, path: LeafPath, new: Any) -> Any:
    """A copy of `value` with the leaf at `path` replaced; only the containers on the path are
    copied (results are fresh, but may share parts with the world)."""
    if not path:
        return new
    head = path[0]
    out: Any = dict(value) if isinstance(value, dict) else list(value)
    out[head] = _replace(value[head], path[1:], new)
    return out


def _decimals(x: float) -> int:
    text = repr(x)
    return min(3, len(text.split(".", 1)[1])) if "." in text and "e" not in text else 0


#: A number's bounds where no record beside it and no family says more: a share stays a share.
_PCT = (0.0, 100.0)


def _siblings(result: Any, path: LeafPath, old: Any) -> list[Any]:
    """The values beside the leaf at `path` that another record of the same list holds under the
    same key (or the other items of a list of plain values), of the leaf's own type, that differ
    from it: values the data really has, so one of them is always in range and plausible."""
    if not path:
        return []
    kind = type(old)
    if isinstance(path[-1], int):
        items = _get(result, path[:-1])
        values = [x for i, x in enumerate(items) if i != path[-1]]
    elif len(path) >= 2 and isinstance(path[-2], int):
        items, key = _get(result, path[:-2]), path[-1]
        values = [x[key] for i, x in enumerate(items) if i != path[-2] and isinstance(x, dict) and key in x]
    else:
        return []
    out: list[Any] = []
    for v in values:
        if type(v) is kind and v != old and v not in out and (kind is not str or _DATE.match(v)):
            out.append(v)
    return out


def _perturb(old: Any, rng: Any, siblings: Sequence[Any] = (), bounds: tuple[float, float] | None = None
             ) -> tuple[Any, str]:
    """A plausible wrong value for one leaf, inside the range the data has, and how it was made
    (for the log).

    A value another record beside it holds (`siblings`) is taken first: a mix-up of two records,
    in range by construction. Otherwise a boolean flips, an id gains a digit (it no longer
    resolves), a date moves 1-6 days inside its month, and a number moves by 10-40% inside
    `bounds` (the family's range for its key; else a share stays within 0-100 and a number that
    is not negative stays so).
    """
    if siblings:
        return siblings[int(rng.random() * len(siblings))], "mixed up with another record's value"
    if isinstance(old, bool):
        return (not old), "flipped"
    if isinstance(old, (int, float)):
        return _number(old, rng, bounds)
    if _DATE.match(old):
        return _date(old, rng)
    m = _ID.match(old)
    assert m is not None
    prefix, digits = m.groups()
    # One digit more than the family's ids have: it looks like any other id (a newer one) and,
    # as ids of one kind share a width, it resolves to nothing.
    return f"{prefix}{int(1 + 9 * rng.random())}{digits}", "id that does not resolve"


def _number(old: int | float, rng: Any, bounds: tuple[float, float] | None) -> tuple[Any, str]:
    up = rng.random() < 0.5
    factor = 1.0 + (0.1 + 0.3 * rng.random()) * (1 if up else -1)
    lo, hi = bounds if bounds is not None else (0.0 if old >= 0 else -_INF, _INF)
    places = 0 if isinstance(old, int) else _decimals(old)
    step = 1 if isinstance(old, int) else 10 ** -places
    new = old * factor if old else (step if up else -step)
    new = min(max(new, lo), hi)
    if round(new, places) == old:  # clamped back onto the value, or too small to show: one step the other way
        new = old + (step if new <= old and old + step <= hi else -step)
        new = min(max(new, lo), hi)
    new = int(round(new)) if isinstance(old, int) else float(round(new, places))
    if not old:
        return new, "moved off zero"
    # A nudge of a step or two reads as a factor of 1.00: the log then says what it moved by.
    factor = f"{new / old:.2f}"
    return new, f"scaled by {factor}" if factor != "1.00" else f"moved by {new - old:+.{places}f}"


def _date(old: str, rng: Any) -> tuple[str, str]:
    try:
        day = _dt.date.fromisoformat(old)
    except ValueError:  # not a real date after all (e.g. 2024-13-40): leave the text, change a digit
        return old[:-1] + str((int(old[-1]) + 5) % 10), "changed a digit"
    days = 1 + int(6 * rng.random())
    for sign in ((1, -1) if rng.random() < 0.5 else (-1, 1)):
        moved = day + _dt.timedelta(days=sign * days)
        if moved.month == day.month:
            return moved.isoformat(), f"shifted {sign * days:+d} days"
    return old[:-1] + str((int(old[-1]) + 5) % 10), "changed a digit"


def _path_text(path: LeafPath) -> str:
    out = ""
    for k in path:
        out += f"[{k}]" if isinstance(k, int) else (f".{k}" if out else str(k))
    return out or "$"


class Corruption(NoiseWrapper):
    """A read tool's result comes back plausibly wrong, with probability `rate` per result.

    One leaf changes (see `perturbable_leaves`), and its new value stays inside the range the data
    has, so it is plausible and never breaks a range the brief states:

    * a value that another record of the same list holds under the same key (a rating, a price, a
      date, an amount of another row) is mixed up with one of those;
    * otherwise a number moves by 10-40% inside the family's range for its key (a toolkit's
      ``value_ranges``, ``{key: (low, high)}``; else a ``*_pct`` share stays within 0-100 and a
      number that is not negative stays so), a boolean flips, a date moves 1-6 days inside its
      month, and an id gains a digit.

    How a careful agent catches each, by the means every family gives it: a re-read of the same
    tool, which draws afresh, and a call (a tool with equal arguments) is corrupted at most once an
    episode, so two reads that agree are the truth and, where they differ, a third settles it
    (a flipped boolean or a mixed-up value never repeats); a cross-check with
    another tool that shows the same fact (``get_details`` against ``search``, an alert's value
    against ``get_metrics``, ``get_order`` against ``list_orders``); a result at odds with
    itself or the brief (a converted amount that is not the amount times the rate, an approval
    limit other than the brief's); and an id that does not resolve fails when used. On a task of
    the hard tier (``task.extra["tier"] == "hard"``) the leaf is one a step of the gold plan still
    to do consumes, where the result holds one (`_aimed`): the fault lands on what the work rests
    on, so the tier's noise tests the check and not the luck of the draw. Write tools
    are never corrupted and the world is never changed. The log gets ``{"path", "from", "to",
    "how", "recoverable"}``; a corruption on the last turn is unrecoverable.

    Args:
        env: an agentgym env.
        rate: the chance that one successful read result is corrupted, in [0, 1].
    """

    def __init__(self, env: gym.Env, rate: float, keyed: bool = False) -> None:
        super().__init__(env, **self.check(rate=rate, keyed=keyed))

    @classmethod
    def check(cls, rate: Any, keyed: Any = False) -> dict[str, Any]:
        return {"rate": check_rate("Corruption rate", rate), **check_keyed(keyed)}

    def _configure(self, rate: float, keyed: bool = False) -> None:
        self._rate = rate
        self._keyed = keyed
        self._corrupted: set[str] = set()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        self._corrupted = set()
        return super().reset(seed=seed, options=options)

    def after_call(self, env: AgentEnv, call: ToolCall, spec: ToolSpec, turn: int, result: Any) -> Any:
        if spec.kind is not ToolKind.READ:
            return result
        rng = self._strikes(env, "corruption", call, self._rate)
        if rng is None:
            return result
        leaves = list(perturbable_leaves(result, call.arguments))
        if not leaves:
            return result
        # A call corrupted once answers truly from then on: a re-read is a means of recovery only
        # where the same wrong answer cannot come back.
        key = json.dumps([call.name, call.arguments], sort_keys=True, default=str)
        if key in self._corrupted:
            return result
        self._corrupted.add(key)
        # The plan and its done steps, worked out once for the aim and the step hit (nothing
        # between them changes either).
        progress = env.gold_progress()
        if env.task.extra.get("tier") == "hard":
            leaves = _aimed(env, result, leaves, progress)
        path = leaves[int(rng.random() * len(leaves))]
        old = _get(result, path)
        key = next((k for k in reversed(path) if isinstance(k, str)), None)
        new, how = _perturb(old, rng, _siblings(result, path, old), _bounds(env, key, old))
        env.log_noise("corruption", call.name, {"path": _path_text(path), "from": old, "to": new, "how": how,
                                                "recoverable": recoverable_at(env, turn)},
                      hits=_corruption_hits(env, call, old, progress))
        return _replace(result, path, new)


def _aimed(env: AgentEnv, result: Any, leaves: list[LeafPath], progress: Progress | None = None) -> list[LeafPath]:
    """The leaves a corruption of the hard tier picks from: those whose value a step of the gold
    plan still to do consumes (an id, an amount, a date the work copies), where the result holds
    any; else every leaf. So a fault there lands on what the work rests on, and only a check of
    it (the brief's "check again a result that a decision rests on") keeps the work right.
    `progress`: `AgentEnv.gold_progress`, where the caller has it."""
    # ``any(carries(step, leaf) for step in to_do)``, the plan's values gathered once for every leaf.
    carried = carried_by(env.gold_steps_to_do(progress=progress))
    consumed = [path for path in leaves if carried(_get(result, path))]
    return consumed or leaves


def _bounds(env: AgentEnv, key: str | None, old: Any) -> tuple[float, float] | None:
    """The range a number under `key` keeps to: the family's (its toolkit's ``value_ranges``),
    else 0-100 for a ``*_pct`` share; None for other leaves and other numbers."""
    if key is None or isinstance(old, bool) or not isinstance(old, (int, float)):
        return None
    ranges = getattr(env.toolkit, "value_ranges", None)
    if ranges and key in ranges:
        lo, hi = ranges[key]
        return float(lo), float(hi)
    return _PCT if key.endswith("_pct") else None


def _corruption_hits(env: AgentEnv, call: ToolCall, true_value: Any, progress: Progress) -> dict[str, Any] | None:
    """The gold step a corrupted read result hits: the first step still to do (other than the
    read's own) that consumes the value the corruption replaced. Only a read the plan itself
    makes counts, and not a repeat of a read that already succeeded: the agent holds that data
    already, so its corrupted copy takes nothing from it (a re-read that ignores its result
    cannot collect recoveries)."""
    if not env.matches_gold(call.name, call.arguments, progress=progress) or \
            env.repeats_success(call.name, call.arguments):
        return None
    step = env.gold_step_consuming(true_value, besides=env.gold_step_for(call.name, call.arguments, progress=progress),
                                   progress=progress)
    return None if step is None else {"gold_step": step}


# ------------------------------------------------------------------------------ latency


class Latency(NoiseWrapper):
    """Every tool call takes simulated time, charged against the task's time budget.

    Each valid call draws an exponential time with mean `mean_ms` and charges it
    (`AgentEnv.charge_time`; nothing sleeps), also a call that then fails. The running total is
    in every step's ``info["elapsed_ms"]``; an episode whose total passes ``task.time_budget_ms``
    is truncated with outcome ``time_budget``. The charges are not faults and are not logged one
    by one (that would cost every call a log entry); the charge that passes the budget is, and
    is logged as ``{"ms", "elapsed_ms", "budget_ms", "recoverable": False}``.

    Args:
        env: an agentgym env.
        mean_ms: the mean simulated time of one call, in milliseconds (>= 0).
    """

    def __init__(self, env: gym.Env, mean_ms: float, keyed: bool = False) -> None:
        super().__init__(env, **self.check(mean_ms=mean_ms, keyed=keyed))

    @classmethod
    def check(cls, mean_ms: Any, keyed: Any = False) -> dict[str, Any]:
        return {"mean_ms": check_ms("Latency mean_ms", mean_ms), **check_keyed(keyed)}

    def _configure(self, mean_ms: float, keyed: bool = False) -> None:
        self._mean_ms = mean_ms
        self._keyed = keyed

    def before_call(self, env: AgentEnv, call: ToolCall, turn: int) -> None:
        if not self._mean_ms:
            return None
        before = env.elapsed_ms
        u = env.call_uniform("latency", call) if self._keyed else (self._stream or self._first_draw("latency")).random()
        env.charge_time(-self._mean_ms * math.log(1.0 - u))  # exponential, by inverse transform as `Rng.exponential`
        budget = env.task.time_budget_ms
        if before <= budget < env.elapsed_ms:
            step = env.gold_step_for(call.name, call.arguments)
            env.log_noise("latency", call.name, {"ms": round(env.elapsed_ms - before, 3), "elapsed_ms": env.elapsed_ms,
                                                 "budget_ms": budget, "recoverable": False},
                          hits=None if step is None else {"gold_step": step})
        return None
