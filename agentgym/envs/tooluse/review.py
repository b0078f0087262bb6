"""What the tool-use user sees of the world after the assistant's writes, and how it says so.

The user judges the world exactly as the scorer does (`agentgym.envs.tooluse.tasks.score_world`):
it accepts only a success, so user and grader never disagree. Short of success it can name, in
words it could observe, what is missing ("I don't see the invitation sent yet") and what is
wrong with a record ("the meeting should be 45 minutes"); the words are the domain's data
(``templates.review`` in ``data/<domain>.json``), and they never give away a value the user
could not know (a total, a root cause, a free time). A record that is wrong can be put right
only if a tool of the domain undoes it (`DomainSpec.undoable`); one that cannot, or a broken
policy, leaves no way to success, and the user then says so instead of inviting a fix that the
grader would still punish.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from agentgym.envs.tooluse.base import Effect, Gold, World, WorldRecord, assign
from agentgym.envs.tooluse.data import strict

__all__ = ["ReviewWords", "Review", "parse_review", "review"]


@dataclass(frozen=True)
class ReviewWords:
    """A domain's words for what the user sees. Keys are record kinds (``missing``, ``extra``)
    or ``kind.field`` (``wrong``); ``kind.field/said`` is used instead once the user has stated
    the detail of that field itself ("I said to treat it as sev2"). ``{want}`` in a ``wrong``
    phrase is the value the user wants, and only phrases about a detail the user knows use it;
    other placeholders are fields of the record or effect and the domain's names for them."""

    wrong: Mapping[str, str]
    extra: Mapping[str, str]
    missing: Mapping[str, str]


def parse_review(raw: Any, where: str) -> ReviewWords:
    """A domain file's ``review`` block, parsed strictly."""
    d = strict(raw, {"wrong", "extra", "missing"}, where)
    for key in ("wrong", "extra", "missing"):
        block = d[key]
        if not isinstance(block, dict) or not all(isinstance(k, str) and isinstance(v, str) and v
                                                  for k, v in block.items()):
            raise ValueError(f"{where}.{key}: expected an object of non-empty strings")
    return ReviewWords(dict(d["wrong"]), dict(d["extra"]), dict(d["missing"]))


@dataclass(slots=True)
class Review:
    """The world as the user sees it against what it asked for."""

    #: Every required effect met, nothing extra, no policy broken: the scorer's success.
    success: bool
    #: Active records that are not what the user asked for, each with the reason it gives.
    wrong: list[tuple[WorldRecord, str]] = field(default_factory=list)
    #: What the user asked for and sees no record of yet, in the user's words.
    missing: list[str] = field(default_factory=list)
    #: Whether success is out of reach: a policy broken, or a wrong record no tool can undo.
    stuck: bool = False


#: ``names(world, fields) -> placeholders``: the domain's names for a record's fields (the
#: product an item id stands for).
Names = Callable[[World, Mapping[str, Any]], Mapping[str, Any]]


def review(gold: Gold, world: World, words: ReviewWords, undoable: frozenset[str], said: frozenset[str],
           names: Names | None = None) -> Review:
    """Judge `world` against `gold` as the user sees it (see the module docstring).

    Args:
        gold: the gold as it stands (after any goal shift).
        world: the episode's world.
        words: the domain's review words.
        undoable: the record kinds a tool of the domain can undo.
        said: the slots of the details the user has stated (``currency``, ``severity`` ...).
        names: the domain's names for record fields, or None.
    """
    taken, extras = assign(gold.effects, world.records)
    groups: dict[str, list[Effect]] = {}
    for e in gold.effects:
        groups.setdefault(e.slot, []).append(e)
    out = Review(success=False)
    missing: list[list[Effect]] = []
    for slot, group in groups.items():
        record = taken.get(slot)
        if record is None:
            missing.append(group)
            continue
        failing = [e for e in group if not e.holds(record)]
        if failing:
            out.wrong.append((record, _wrong_reason(record, failing, words, world, said, names)))
    for record in extras:
        # A record no slot takes may be an attempt at a slot still empty (the transfer of a
        # wrong amount): its reason is what it misses there; else it is one too many.
        group = next((g for g in missing if g[0].kind == record.kind), None)
        if group is None:
            out.wrong.append((record, _fill(words.extra.get(record.kind, ""), world, record.data, names)))
        else:
            missing.remove(group)
            out.wrong.append((record, _wrong_reason(record, group, words, world, said, names)))
    out.success = not missing and not out.wrong and not world.violations
    out.missing = [text for g in missing if (text := _fill(words.missing.get(g[0].kind, ""), world, g[0].fields,
                                                           names))]
    out.stuck = bool(world.violations) or any(r.kind not in undoable for r, _ in out.wrong)
    return out


def _wrong_reason(record: WorldRecord, failing: list[Effect], words: ReviewWords, world: World, said: frozenset[str],
                  names: Names | None) -> str:
    """The user's reason for a record that misses some effects of its slot: the first field,
    in the order the domain's words list them, whose value is not the wanted one."""
    wanted: dict[str, Any] = {}
    for e in failing:
        for k, v in e.fields.items():
            if record.data.get(k) != v:
                wanted.setdefault(k, v)
    for key, phrase in words.wrong.items():
        kind, _, rest = key.partition(".")
        name, _, variant = rest.partition("/")
        if kind != record.kind or name not in wanted or (variant and name not in said):
            continue
        if not variant and f"{key}/said" in words.wrong and name in said:
            continue  # the user's own words for a detail it stated come first
        return _fill(phrase, world, {**record.data, "want": wanted[name]}, names)
    return _fill(words.extra.get(record.kind, ""), world, record.data, names)


def _fill(phrase: str, world: World, fields: Mapping[str, Any], names: Names | None) -> str:
    if "{" not in phrase:
        return phrase
    values = dict(fields)
    if names is not None:
        values.update(names(world, fields))
    return phrase.format(**{k: _text(v) for k, v in values.items()})


def _text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)
