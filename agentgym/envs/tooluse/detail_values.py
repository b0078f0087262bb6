"""What the tool-use user's details pin down: the value each holds for the tools' arguments
(`detail_value`, `DETAIL_ARGS`), whether words of a message agree with a detail (`agree`), and
the details a write breaks (`contradicted`, for goal consistency)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Collection, Mapping

from agentgym.core.task import Task
from agentgym.envs.tooluse.base import Detail, World

__all__ = ["DETAIL_ARGS", "EFFECT_FIELD", "ITEM_ARGS", "YES_NO_WRITES", "agree", "contradicted", "detail_value",
           "differs", "named_record", "padded_words", "statement_words"]

#: Tool arguments that state a detail: a call whose such argument differs from the detail's value
#: contradicts it (for the goal-consistency metric).
DETAIL_ARGS: dict[str, tuple[str, ...]] = {
    "currency": ("currency", "to_currency"),
    "duration": ("duration_minutes",),
    "email": ("email",),
    "severity": ("severity",),
}

#: The effect field a tool argument stating a detail is recorded under, where the names differ.
EFFECT_FIELD = {"duration_minutes": "duration"}
#: Details that say yes or no to a write (the job's field of that name), and that write.
YES_NO_WRITES = {"rollback": "rollback", "report": "file_expense_report"}
#: Details about one item (``<slot>:<item id>``) and the write argument that states them.
ITEM_ARGS = {"variant": "new_variant"}


def agree(details: list[Detail], values: list[str]) -> bool:
    """Whether each value (lower-cased words of the domain's vocabulary) is one a detail says,
    as whole words ("l" is not said by "the XL jacket")."""
    return bool(details) and all(any(f" {v} " in statement_words(d.statement) for d in details) for v in values)


_NOT_WORD = re.compile(r"[^\w@.+'-]+|\.(?=\s|$)")


def padded_words(text: str) -> str:
    """A text's words, lower case, space-separated and padded (a whole-word test is then a
    substring test)."""
    return f" {_NOT_WORD.sub(' ', text.lower()).strip()} "


@lru_cache(maxsize=4096)
def statement_words(statement: str) -> str:
    """A statement's `padded_words`, memoised: a task's statements are few and read often (a
    message is read once, uncached)."""
    return padded_words(statement)


def differs(got: Any, value: Any) -> bool:
    """Whether a write's argument is given and other than the value a detail pins down."""
    return got is not None and got != value


def named_record(world: World, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The data of the active record a write names by its own id (``meeting_id`` of a meeting),
    or None."""
    for r in world.records:
        if r.active and r.data:
            key = next(iter(r.data))
            if key.endswith("_id") and arguments.get(key) == r.data[key]:
                return r.data
    return None


def detail_value(task: Task, d: Detail) -> Any:
    """The value a detail pins down, for the details whose tool arguments can contradict it."""
    slot, _, item = d.id.partition(":")
    if slot in ITEM_ARGS:
        arg = ITEM_ARGS[slot]
        return next((e.fields[arg] for e in task.gold.effects if e.fields.get("item_id") == item and arg in e.fields),
                    None)
    if d.id in YES_NO_WRITES:  # whether the user wants that write at all (making it breaks a no)
        return getattr(task.goal.job, d.id, None)
    if d.id not in DETAIL_ARGS:
        return None
    for effect in task.gold.effects:
        for arg in DETAIL_ARGS[d.id]:
            key = EFFECT_FIELD.get(arg, arg)
            if key in effect.fields:
                return effect.fields[key]
    if d.id == "email":
        return getattr(task.world, "email", None)
    return None


def contradicted(values: Mapping[str, Any], revealed: Collection[str], world: World,
                 acts: tuple[frozenset[str], frozenset[str]], name: str, arguments: dict[str, Any]) -> list[str]:
    """The ids of the said details (`values` of those `revealed`) a call breaks: a value it
    carries (but a conversion out of the said currency, which reads its rate), or the value of a
    record it names by its own id (`acts`: the domain's write tools, and those that undo); an
    item kept, acted on; a write the user said no to."""
    out: list[str] = []
    named: dict[str, Any] | None | bool = False  # looked up on first need
    for did, value in values.items():
        if did not in revealed:
            continue
        args = DETAIL_ARGS.get(did)
        if args is not None:
            if did == "currency" and arguments.get("from_currency") == value:
                continue  # a rate read out of the said currency (a check of it) names no other one for the work
            if named is False:
                named = _named(world, acts, name, arguments)
            for arg in args:
                got = arguments.get(arg)
                if got is None and named is not None:
                    got = named.get(EFFECT_FIELD.get(arg, arg))
                if got is not None and got != value:
                    out.append(did)
                    break
            continue
        slot, _, item = did.partition(":")
        if slot in ITEM_ARGS:
            broken = arguments.get("item_id") == item and differs(arguments.get(ITEM_ARGS[slot]), value)
        elif slot == "product":
            broken = value == "keep" and arguments.get("item_id") == item
        else:
            broken = value is False and name == YES_NO_WRITES.get(slot)
        if broken:
            out.append(did)
    return out


def _named(world: World, acts: tuple[frozenset[str], frozenset[str]], name: str,
           arguments: dict[str, Any]) -> dict[str, Any] | None:
    """The record a write (not an undo) names by its own id, or None."""
    if not world.records or name not in acts[0] or name in acts[1]:
        return None
    for key in arguments:
        if key.endswith("_id"):
            return named_record(world, arguments)
    return None
