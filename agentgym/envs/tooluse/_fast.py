"""The speed kernels of the tool-use tasks: each does what plain code of the family does, on reset's path.

Every kernel names the plain code it stands for and the invariant that makes the two equal;
`tests/envs/test_tooluse_fast.py` checks each against its plain version on many tasks, and
`tests/envs/test_tooluse_tier_digest.py` pins the tasks they help make. The plain code stays
where it was, as the definition; `agentgym.envs.tooluse.tasks` calls the kernels.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from agentgym.core.tools import ToolError
from agentgym.envs.tooluse.base import DAY_MINUTES, Step
from agentgym.envs.tooluse.paging import (
    PAGE_SIZE,
    NamedRow,
    PagedList,
    every_row,
    first_page,
    named_rows,
    page_count,
    page_steps,
    pages_of,
)
from agentgym.envs.tooluse.paging import paged_plan as plain_paged_plan

__all__ = ["paged_plan", "named_last", "all_work", "words_named"]


def paged_plan(plan: tuple[Step, ...], toolkit: Any, unpaged: type, lists: Mapping[str, PagedList]
               ) -> tuple[Step, ...]:
    """`paging.paged_plan(plan, toolkit, lists)`, each paged list built once.

    Plain code invokes a paged tool once per page, and each call builds the tool's whole list to
    slice one page from it. Here the list is built once, by the tool of `unpaged` (the toolkit's
    base class) on the same world. Invariant: every paged tool of a tier toolkit is
    ``paged(super().<tool>(**arguments), field, page)`` with `unpaged` its direct base, so page
    `p` of the tool is the `p`-th slice of `PAGE_SIZE` rows of that list, the page count is
    paging's of the list's length, and the base tool raises the ToolError the first page would.
    A plan whose paged call already names a page is left to the plain code.
    """
    out: list[Step] = []
    for k, step in enumerate(plan):
        out.append(step)
        spec = lists.get(step.name)
        if spec is None:
            continue
        if "page" in step.arguments:  # the reads so far changed nothing: the plain code does it all
            return plain_paged_plan(plan, toolkit, lists)
        if spec.settles is first_page:
            continue
        try:
            rows = getattr(unpaged, step.name)(toolkit, **step.arguments)[spec.field]
        except ToolError:
            continue
        pages = page_count(len(rows))
        settles = spec.settles
        if settles is every_row:  # every row counts: every page is read
            last = None
        elif type(settles) is NamedRow:
            last = named_last(rows, plan[k + 1:], settles)
        else:
            last = settles(list(rows), plan[k + 1:])
        needed = None
        if last is not None:
            pages = min(pages, last // PAGE_SIZE + 1)
            key = spec.named_key()
            # Only a page between the first and the last can be optional: with two, none is.
            needed = pages_of(named_rows(list(rows), plan[k + 1:], key)) if pages > 2 and key is not None else ()
        out += page_steps(step, pages, needed)
    return tuple(out)


_SCALAR = (str, int, float, bool)
#: The plain types themselves: most values a plan names, told apart by one look-up.
_PLAIN = frozenset(_SCALAR)


def named_last(rows: Sequence[Any], later: tuple[Step, ...], settles: NamedRow) -> int | None:
    """``settles(list(rows), later)`` for a `paging.NamedRow`.

    Plain code gathers every plain value the later calls name into a set (`scalar_leaves`),
    then looks each row's value up in it. Here the rows' plain values index their rows (the last
    row of each value), and the walk of the later calls' arguments looks each plain value it
    meets up there (an exact plain type first: no such value is a dict or a list), stopping
    once the last row is named. Invariant: the walk opens the same
    dicts and lists as `scalar_leaves` and tests the same plain values, by the same equality as
    a set's (a dict's); a row whose value is not plain is named by nothing, as `_hashable`
    makes it None, which no plain value equals; and the highest row named is the plain code's
    ``hits[-1]``, so no walk past it changes the result.
    """
    key, top = settles.key, len(rows) - 1
    where: dict[Any, int] = {}
    for i, row in enumerate(rows):
        value = row[key] if key else row
        if isinstance(value, _SCALAR):
            where[value] = i
    best = -1
    stack = [value for step in later for value in step.arguments.values()]
    while stack:
        value = stack.pop()
        if type(value) in _PLAIN or not isinstance(value, (dict, list)) and isinstance(value, _SCALAR):
            i = where.get(value, -1)
            if i > best:
                best = i
                if best == top:
                    break
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return min(best + settles.after, top) if best >= 0 else None


def all_work(people: Sequence[Any], duration: int, work_min: int) -> Callable[[int], bool]:
    """``lambda start: all(p.works(start, duration) for p in people)`` for calendar `Person`s
    whose working day lasts `work_min` minutes.

    Plain code calls `Person.works` per person and start, recomputing each person's bounds.
    Here each person's bounds are computed once. Invariant: `works` holds when the local start
    ``(start + offset * 60) % DAY_MINUTES`` lies in ``[start_h * 60, start_h * 60 + work_min -
    duration]`` (integers, so the two comparisons of `works` are these two), and a person's
    offset and hours do not change while the predicate is used.
    """
    bounds = tuple((p.offset * 60, p.start_h * 60, p.start_h * 60 + work_min - duration) for p in people)

    def works(start: int) -> bool:
        for shift, first, last in bounds:
            if not first <= (start + shift) % DAY_MINUTES <= last:
                return False
        return True

    return works


#: The letters of the ops logs' words (``[a-z]``).
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")


def words_named(text: str, names: Sequence[str]) -> list[str]:
    """``[n for n in names if n in set(re.findall(r"[a-z]+", text))]``: the names that are
    words of `text` (`agentgym.envs.tooluse.domains.ops.solve`, which reads whom a log blames).

    Plain code splits the whole text into its runs of a-z letters (a regular expression, whose
    matching costs more than the rest of the solver) to look each name up among them. Here each
    name is searched for where it stands alone. Invariant: `findall` of ``[a-z]+`` gives each
    longest run of a-z letters (a greedy match begins where the last one ended, at a character
    that is no a-z letter), so a name is among them exactly when it is made of a-z letters only
    and occurs with no a-z letter right before or after it.
    """
    out = []
    end = len(text)
    for name in names:
        if not (name.isascii() and name.isalpha() and name.islower()):  # not a run of a-z letters
            continue
        size, at = len(name), text.find(name)
        while at >= 0:
            if (at == 0 or text[at - 1] not in _LOWER) and (at + size == end or text[at + size] not in _LOWER):
                out.append(name)
                break
            at = text.find(name, at + 1)
    return out
