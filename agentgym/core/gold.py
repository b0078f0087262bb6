"""Gold plans: what a call must look like to be a step of the reference solver's plan.

A family's gold lists its plan as ``calls``: ``{"name": tool, "arguments": {key: spec}}``. A call
matches a step when the names agree and every argument the step specifies matches its spec;
arguments the step leaves out are free. A spec is a plain JSON value (the argument must equal
it) or one operator object:

- ``{"any_of": [v, ...]}``: equal to one of the values;
- ``{"if_given": spec}``: the argument may be left out; when given it must match `spec`;
- ``{"at_least": x}`` / ``{"at_most": x}``: a number no smaller / no larger than `x`;
- ``{"subset_of": [v, ...]}``: a list whose every item is one of the values;
- ``{"any_order": [v, ...]}``: a list of exactly these items, each as often, in any order (the
  amounts to add up, the attendees of a meeting);
- ``{"any": true}``: present, with any value (free text such as a summary);
- ``{"words_of": "Elena Abbott"}``: a string of one or more of the value's words, in any case and
  order (a search by a full or partial name: "Abbott", "elena abbott").

Equality is JSON equality, except that a boolean never equals a number. The noise wrappers tie
each fault to the step it hits with these rules, and the metrics judge recovery and tool
accuracy with the same ones, so the two can never disagree on what a step is.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["OPERATORS", "same", "arg_matches", "call_matches", "carried_values", "carries", "contains_value", "done_steps", "mark_done",
           "leaves", "matching_steps", "plan_calls"]

#: The operator keys of an argument spec.
OPERATORS = frozenset({"any_of", "if_given", "at_least", "at_most", "subset_of", "any_order", "any", "words_of"})
_WORD = re.compile(r"[^\W_]+(?:['-][^\W_]+)*")


def same(a: Any, b: Any) -> bool:
    """JSON equality, except that a boolean is never equal to a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    return bool(a == b)


def _operator(spec: Any) -> str | None:
    # `dict`, not `Mapping`: a gold plan is JSON, and this runs for every argument of every call.
    if isinstance(spec, dict) and len(spec) == 1:
        (key,) = spec
        if key in OPERATORS:
            return key
    return None


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def arg_matches(got: Any, spec: Any) -> bool:
    """Whether a given argument value matches an argument spec (see the module docstring)."""
    op = _operator(spec)
    if op is None:
        return same(got, spec)
    want = spec[op]
    if op == "any_of":
        return any(same(got, w) for w in want)
    if op == "if_given":
        return arg_matches(got, want)
    if op == "at_least":
        return _number(got) and got >= want
    if op == "at_most":
        return _number(got) and got <= want
    if op == "subset_of":
        return isinstance(got, list) and all(any(same(g, w) for w in want) for g in got)
    if op == "any_order":
        return isinstance(got, list) and _same_items(got, want)
    if op == "words_of":
        return isinstance(got, str) and isinstance(want, str) and _words_of(got, want)
    return True  # "any"


def _same_items(got: list[Any], want: list[Any]) -> bool:
    """Whether two lists hold the same items as often each, by `same` (lists of a call are short)."""
    if len(got) != len(want):
        return False
    left = list(want)
    for g in got:
        k = next((i for i, w in enumerate(left) if same(g, w)), None)
        if k is None:
            return False
        del left[k]
    return True


def _words_of(got: str, want: str) -> bool:
    words = _WORD.findall(got.lower())
    return bool(words) and set(words) <= set(_WORD.findall(want.lower()))


def call_matches(name: str, arguments: Mapping[str, Any] | None, gold_call: Mapping[str, Any]) -> bool:
    """Whether a call matches a gold step.

    Args:
        name: the called tool.
        arguments: the call's arguments (None for a call that never parsed).
        gold_call: ``{"name", "arguments": {key: spec}}``.

    Returns:
        True when the names agree and every argument the step specifies matches its spec (an
        ``if_given`` argument may be absent); arguments the step does not specify are allowed.
    """
    if name != gold_call.get("name") or arguments is None:
        return False
    for key, spec in (gold_call.get("arguments") or {}).items():
        if key not in arguments:
            if _operator(spec) == "if_given":
                continue
            return False
        got = arguments[key]
        if type(spec) is str and type(got) is str:  # most arguments: `arg_matches` is equality
            if got != spec:
                return False
        elif not arg_matches(got, spec):
            return False
    return True


def matching_steps(name: str, arguments: Mapping[str, Any] | None,
                   gold_calls: Sequence[Mapping[str, Any]]) -> list[int]:
    """Indexes of the gold steps a call matches, in plan order."""
    return [i for i, g in enumerate(gold_calls) if call_matches(name, arguments, g)]


def done_steps(plan: Sequence[Mapping[str, Any]], calls: Sequence[Mapping[str, Any]]) -> list[bool]:
    """Which steps of `plan` the successful `calls` (an env's call records, in order) completed:
    each successful call that no decoy answered completes the first step still open that it
    matches, and no other."""
    done = [False] * len(plan)
    mark_done(plan, calls, done)
    return done


def mark_done(plan: Sequence[Mapping[str, Any]], calls: Iterable[Mapping[str, Any]], done: list[bool]) -> None:
    """`done` (a flag per step of `plan`) carried on over `calls`, in order, as `done_steps`
    folds them: each successful call no decoy answered completes the first step still open
    that it matches."""
    # `call_matches` fails at once on another name: each call is tried only on the steps of
    # its own tool, in plan order (a plan x calls loop otherwise, run on every fault).
    steps_of: dict[Any, list[int]] = {}
    for i, step in enumerate(plan):
        steps_of.setdefault(step.get("name"), []).append(i)
    for c in calls:
        if c["valid"] and c["error"] is None and not c.get("distractor"):
            name = c["name"]
            for i in steps_of.get(name, ()):
                if not done[i] and call_matches(name, c.get("arguments"), plan[i]):
                    done[i] = True
                    break


def leaves(value: Any) -> Iterable[Any]:
    """Every plain value in a call's arguments (or a spec), lists and mappings opened."""
    if isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from leaves(v)
    else:
        yield value


def _spec_values(spec: Any) -> Iterable[Any]:
    """The concrete values a spec names (the literal, each ``any_of``, ``subset_of`` or
    ``any_order`` value, the ``words_of`` value whole)."""
    op = _operator(spec)
    if op is None:
        yield from leaves(spec)
    elif op in ("any_of", "subset_of", "any_order", "words_of"):
        yield from leaves(spec[op])
    elif op == "if_given":
        yield from _spec_values(spec[op])


def carries(gold_call: Mapping[str, Any], value: Any, *, options: bool = True) -> bool:
    """Whether a gold step's arguments consume `value`: it is a literal argument or an item of a
    list argument, or (with `options`) one of an ``any_of`` or ``subset_of``, or a ``words_of``'s
    value; bounds and ``any`` name no value."""
    return any(same(v, value) for v in carried_values(gold_call, options=options))


def carried_values(gold_call: Mapping[str, Any], *, options: bool = True) -> Iterable[Any]:
    """The values `carries` compares with: each argument spec's (`_spec_values`, or with
    `options` False `_literal_values`), in argument order."""
    for spec in (gold_call.get("arguments") or {}).values():
        yield from (_spec_values(spec) if options else _literal_values(spec))


def _literal_values(spec: Any) -> Iterable[Any]:
    """The values a spec requires: a literal's leaves (an ``any_order`` list's too), also under
    ``if_given``; no options."""
    op = _operator(spec)
    if op is None:
        yield from leaves(spec)
    elif op == "any_order":
        yield from leaves(spec[op])
    elif op == "if_given":
        yield from _literal_values(spec[op])


def contains_value(arguments: Any, value: Any) -> bool:
    """Whether `value` is one of the leaves of a call's arguments (a string, number or boolean)."""
    return any(same(v, value) for v in leaves(arguments))


def plan_calls(gold: Any) -> list[dict[str, Any]]:
    """The calls of a gold's plan, as its ``to_dict()["calls"]`` lists them (a dict gold's own
    ``"calls"``; none when it lists none). A gold that offers ``plan_calls()`` gives them without
    building the rest of its dict, which holds the same calls (`tests/envs/test_gold_plan_calls.py`
    plays every family's episodes and checks the two agree at every step)."""
    fast = getattr(gold, "plan_calls", None)
    if fast is not None:
        return fast()
    if hasattr(gold, "to_dict"):
        gold = gold.to_dict()
    calls = gold.get("calls") if isinstance(gold, dict) else None
    return list(calls or ())
