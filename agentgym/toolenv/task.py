"""What a task generator returns for an env built with `make_tool_env`: the request, the details
the user knows, the gold plan, and the goal shifts the task offers.

Each field feeds the benchmark: the gold calls are the plan that tool accuracy and recovery are
judged against (`agentgym.core.gold`), the details are the constraints goal consistency checks
commitments against, a detail stated up front is one ambiguity can blur, and a `Shift` is a goal
shift the user can make (docs/own-env.md says which field feeds which metric).
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass, replace
from typing import Any, Literal, Mapping, Sequence

from agentgym.core.gold import OPERATORS, same
from agentgym.core.task import DIFFICULTIES

__all__ = ["Detail", "Shift", "ToolTask", "GoldPlan", "gold_call", "check_json_data"]

_ID = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")
_REVEALS = ("upfront", "ask")


def check_json_data(value: Any, where: str, *, tuples: bool = False) -> None:
    """Raise TypeError unless `value` is JSON data (what tool arguments and results are), naming
    `where` and the part that is not. With `tuples`, a tuple passes as a list (a tool result is
    encoded so; a value compared with an argument must be a list, as the argument will be)."""
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TypeError(f"{where}: {value!r} is not a finite number")
        return
    if isinstance(value, list) or (tuples and isinstance(value, tuple)):
        for i, item in enumerate(value):
            check_json_data(item, f"{where}[{i}]", tuples=tuples)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: keys must be strings, got {key!r}")
            check_json_data(item, f"{where}.{key}", tuples=tuples)
        return
    raise TypeError(f"{where}: {type(value).__name__} is not JSON data (str, int, float, bool, None, list, dict)")


@dataclass(frozen=True)
class Detail:
    """One thing the user knows about the request: a constraint the agent must respect.

    Args:
        id: a name, letters, digits and ``_`` (e.g. ``"email"``). It is the constraint's id in
            the metrics and, unless `arguments` says otherwise, the tool argument that carries it.
        value: the value (JSON data), e.g. ``"ana@example.com"`` or ``25.0``.
        statement: how the user says it; ``{value}`` is replaced by the value.
        reveal: ``"upfront"`` (in the opening request) or ``"ask"`` (only when the agent asks).
        ask: words and phrases that ask about it ("email", "address"); the id's own words
            ("order_id" -> "order id") are always among them. Matched as whole words.
        arguments: the tool arguments that carry it (default: the id). A call that gives one of
            them another value contradicts the detail once the user has stated it.
        vague: what the opening says in its place when ambiguity noise blurs it (default:
            nothing, the detail is left out).
    """

    id: str
    value: Any
    statement: str
    reveal: Literal["upfront", "ask"] = "upfront"
    ask: tuple[str, ...] = ()
    arguments: tuple[str, ...] | None = None
    vague: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not _ID.fullmatch(self.id):
            raise ValueError(f"Detail id must be letters, digits and '_' starting with a letter, got {self.id!r}")
        check_json_data(self.value, f"Detail {self.id!r} value")
        if not isinstance(self.statement, str) or not self.statement.strip():
            raise ValueError(f"Detail {self.id!r}: statement must be a non-empty string")
        if self.reveal not in _REVEALS:
            raise ValueError(f"Detail {self.id!r}: reveal must be one of {_REVEALS}, got {self.reveal!r}")
        if isinstance(self.ask, str) or not all(isinstance(w, str) and w.strip() for w in self.ask):
            raise ValueError(f"Detail {self.id!r}: ask must be a tuple of non-empty strings, got {self.ask!r}")
        object.__setattr__(self, "ask", tuple(self.ask))
        if self.arguments is not None:
            if isinstance(self.arguments, str) or not all(isinstance(a, str) and a for a in self.arguments):
                raise ValueError(f"Detail {self.id!r}: arguments must be a tuple of names, got {self.arguments!r}")
            object.__setattr__(self, "arguments", tuple(self.arguments))
        if not isinstance(self.vague, str):
            raise ValueError(f"Detail {self.id!r}: vague must be a string")

    @property
    def argument_names(self) -> tuple[str, ...]:
        """The tool arguments that carry this detail."""
        return self.arguments if self.arguments is not None else (self.id,)

    @property
    def ask_phrases(self) -> tuple[str, ...]:
        """Every phrase that asks about this detail: the id's words, then `ask`."""
        own = self.id.replace("_", " ")
        return (own, *(w for w in self.ask if w.lower() != own.lower()))

    def said(self) -> str:
        """The user's statement of this detail, with its value."""
        return self.statement.replace("{value}", _shown(self.value))


def _shown(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ", ".join(_shown(v) for v in value)
    return str(value)


@dataclass(frozen=True)
class Shift:
    """A goal shift the task offers: mid-dialog the user changes detail `detail` to `to`.

    The gold follows: every gold-call argument that carries the detail (its `arguments`) with the
    old value as a literal gets the new one; the old plan is kept for the metrics (its calls were
    right when made). The scorer sees the new value through `ToolTask.value`.

    Args:
        detail: the id of the detail that changes.
        to: its new value.
        announce: what the user says (default: "Actually, I've changed my mind. " and the
            detail's statement with the new value).
    """

    detail: str
    to: Any
    announce: str = ""

    def __post_init__(self) -> None:
        check_json_data(self.to, f"Shift of {self.detail!r} to")
        if not isinstance(self.announce, str):
            raise ValueError("Shift announce must be a string")


def gold_call(name: str, **arguments: Any) -> dict[str, Any]:
    """A step of the gold plan: ``gold_call("refund", order_id="ord-1042", amount=25.0)``.

    An argument is a literal (the call must give that value) or one spec of `agentgym.core.gold`
    (``{"any_of": [...]}``, ``{"if_given": ...}``, ``{"at_least": x}``, ``{"at_most": x}``,
    ``{"subset_of": [...]}``, ``{"any_order": [...]}``, ``{"any": True}``, ``{"words_of": "..."}``);
    arguments left out are free.
    """
    return {"name": name, "arguments": dict(arguments)}


def _gold_step(step: Any, i: int) -> dict[str, Any]:
    where = f"gold_calls[{i}]"
    if isinstance(step, Mapping):
        unknown = set(step) - {"name", "arguments"}
        if unknown or "name" not in step:
            raise ValueError(f"{where}: a gold call is {{'name', 'arguments'}}, got keys {sorted(step)}")
        name, arguments = step["name"], step.get("arguments") or {}
    elif isinstance(step, tuple) and len(step) == 2:
        name, arguments = step
    else:
        raise ValueError(f"{where}: a gold call is gold_call(name, **arguments) or (name, arguments), got {step!r}")
    if not isinstance(name, str) or not name:
        raise ValueError(f"{where}: the tool name must be a non-empty string, got {name!r}")
    if not isinstance(arguments, Mapping):
        raise ValueError(f"{where}: arguments must be a dict, got {type(arguments).__name__}")
    check_json_data(dict(arguments), f"{where}.arguments")
    return {"name": name, "arguments": dict(arguments)}


@dataclass(frozen=True)
class ToolTask:
    """One task of an env built with `make_tool_env`, as its task generator returns it.

    Args:
        request: what the user asks for, in words, without the details ("I'd like a refund.").
            The opening is the request followed by the statements of the up-front details.
        gold_calls: the reference plan, in order: each `gold_call(name, **arguments)`. Tool
            accuracy, recovery and the fault-to-gold ties are judged against it.
        details: what the user knows (the constraints), stated up front or when asked.
        world: the state the tools act on (handed to each tool that takes a ``world`` first
            parameter, and to the scorer); made fresh per episode.
        shifts: goal shifts the task offers (goal_shift noise picks one).
        domain: a name for the task's domain (in the public task card).
        difficulty: ``easy``, ``medium`` or ``hard`` (in the public task card).
        max_turns: the turn budget.
    """

    request: str
    gold_calls: Sequence[Any]
    details: Sequence[Detail] = ()
    world: Any = None
    shifts: Sequence[Shift] = ()
    domain: str = "default"
    difficulty: str = "medium"
    max_turns: int = 12

    def __post_init__(self) -> None:
        if not isinstance(self.request, str) or not self.request.strip():
            raise ValueError("ToolTask request must be a non-empty string")
        if isinstance(self.gold_calls, (str, Mapping)):
            raise ValueError("ToolTask gold_calls must be a list of gold_call(...) steps")
        object.__setattr__(self, "gold_calls", tuple(_gold_step(s, i) for i, s in enumerate(self.gold_calls)))
        details = tuple(self.details)
        if not all(isinstance(d, Detail) for d in details):
            raise ValueError("ToolTask details must be Detail objects")
        ids = [d.id for d in details]
        if len(set(ids)) != len(ids):
            raise ValueError(f"ToolTask details repeat an id: {ids}")
        object.__setattr__(self, "details", details)
        shifts = tuple(self.shifts)
        for s in shifts:
            if not isinstance(s, Shift):
                raise ValueError("ToolTask shifts must be Shift objects")
            if s.detail not in ids:
                raise ValueError(f"Shift of {s.detail!r}: no detail has that id (details: {ids})")
        object.__setattr__(self, "shifts", shifts)
        if not isinstance(self.domain, str) or not self.domain:
            raise ValueError("ToolTask domain must be a non-empty string")
        if self.difficulty not in DIFFICULTIES:
            raise ValueError(f"ToolTask difficulty must be one of {DIFFICULTIES}, got {self.difficulty!r}")
        if isinstance(self.max_turns, bool) or not isinstance(self.max_turns, int) or self.max_turns < 1:
            raise ValueError(f"ToolTask max_turns must be a positive int, got {self.max_turns!r}")

    def detail(self, detail_id: str) -> Detail:
        """The detail `detail_id` as it stands now (after any goal shift); KeyError if none."""
        for d in self.details:
            if d.id == detail_id:
                return d
        raise KeyError(f"no detail {detail_id!r} (details: {[d.id for d in self.details]})")

    def value(self, detail_id: str) -> Any:
        """The current value of detail `detail_id`: what the user wants now."""
        return self.detail(detail_id).value

    def shifted(self, shift: Shift) -> "ToolTask":
        """This task after `shift`: the detail's new value (stated up front from now on) and the
        gold calls that carried the old value carrying the new one."""
        old = self.detail(shift.detail)
        new = replace(old, value=shift.to, reveal="upfront")
        names = old.argument_names
        calls = []
        for step in self.gold_calls:
            arguments = {k: (shift.to if k in names and _is_literal(v) and same(v, old.value) else v)
                         for k, v in step["arguments"].items()}
            calls.append({"name": step["name"], "arguments": arguments})
        return replace(self, details=tuple(new if d.id == old.id else d for d in self.details), gold_calls=calls,
                       shifts=())


def _is_literal(spec: Any) -> bool:
    return not (isinstance(spec, dict) and len(spec) == 1 and next(iter(spec)) in OPERATORS)


@dataclass(frozen=True)
class GoldPlan:
    """The episode's gold as the env reports it: the plan now, and the calls of plans a goal
    shift replaced (right when made), as the metrics read them."""

    calls: tuple[dict[str, Any], ...]
    superseded: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"calls": [_copy_step(s) for s in self.calls],
                "superseded_calls": [_copy_step(s) for s in self.superseded]}


def _copy_step(step: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": step["name"], "arguments": copy.deepcopy(dict(step["arguments"]))}
