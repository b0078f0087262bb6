"""Results in pages: what the hard tier's list tools return (`ToolUseEnv`'s card, "Hard tier").

A paged tool takes an optional `page` (1 first) and returns `PAGE_SIZE` rows of its list, with
`page`, `pages` (how many there are) and `next_page` while more follow, so an agent that reads
only the first page may miss what the later ones hold. The reference solver's plan reads each
paged list as far as a careful agent must (`paged_plan`): up to and including the page where what
the task needs is settled (`PagedList.settles`), every page when the list's whole content counts.
Tool-accuracy metrics compare an agent's calls with that plan, so an agent that stops once the
answer is settled is not marked down for the pages it rightly left unread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Callable, Mapping

from agentgym.core._fast import scalar_leaves
from agentgym.core.tools import Bounds, ToolError
from agentgym.envs.tooluse.base import Step

__all__ = ["PAGE_SIZE", "Page", "Settles", "PagedList", "NamedRow", "every_row", "first_page", "named_row", "paged",
           "paged_plan", "pages_read", "read_on"]

#: Rows per page: small enough that the hard tier's lists (3 to 6 rows) take 2 or 3 pages.
PAGE_SIZE = 2
#: A page number, as a paged tool takes it.
Page = Annotated[int, Bounds(ge=1, le=99)]
#: How far a careful agent reads a list: (every row of it, the plan's steps after the call) ->
#: the index of the last row it needs, or None when every row counts.
Settles = Callable[[list[Any], tuple[Step, ...]], int | None]


def every_row(rows: list[Any], later: tuple[Step, ...]) -> int | None:
    """The whole list counts (e.g. every approved expense of a month): every page is read."""
    return None


def first_page(rows: list[Any], later: tuple[Step, ...]) -> int | None:
    """The first page settles it (e.g. a service's error lines, which all say the same thing)."""
    return 0


@dataclass(frozen=True)
class NamedRow:
    """`named_row`'s `Settles`: the row a later call names (its `key` field), and `after` rows past it."""

    key: str = ""
    after: int = 0

    def __call__(self, rows: list[Any], later: tuple[Step, ...]) -> int | None:
        named = scalar_leaves(s.arguments for s in later)  # every plain value the later calls name
        hits = [i for i, row in enumerate(rows) if _hashable(row[self.key] if self.key else row) in named]
        return min(hits[-1] + self.after, len(rows) - 1) if hits else None


def named_row(key: str = "", after: int = 0) -> Settles:
    """The row a later call of the plan names (its `key` field; "" for a row that is a plain
    value), and `after` rows past it: in a list in time order, the next row is what shows that
    nothing later fits (the last deploy before an onset is settled by the first one after it).
    Every row counts when no later call names one (a careful agent could not have stopped)."""
    return NamedRow(key, after)


@dataclass(frozen=True)
class PagedList:
    """A paged tool's list: its result field, and how far a careful agent reads it."""

    field: str
    settles: Settles = every_row


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) else None


def paged(result: dict[str, Any], field: str, page: int) -> dict[str, Any]:
    """`result` with only page `page` of its list `field`; ToolError past the last page."""
    rows = result[field]
    pages = max(1, -(-len(rows) // PAGE_SIZE))
    if page > pages:
        raise ToolError(f"page {page} is past the last page ({pages})")
    start = (page - 1) * PAGE_SIZE
    out = {**result, field: rows[start:start + PAGE_SIZE], "page": page, "pages": pages}
    if page < pages:
        out["next_page"] = page + 1
    return out


def paged_plan(plan: tuple[Step, ...], toolkit: Any, lists: Mapping[str, PagedList]) -> tuple[Step, ...]:
    """The plan with, after each call of a paged tool (`lists`: tool -> its list), a call for
    each further page a careful agent reads of its result on the initial world (`toolkit` over
    it): up to the page where the list's `settles` says what is needed is settled."""
    out: list[Step] = []
    for k, step in enumerate(plan):
        out.append(step)
        spec = lists.get(step.name)
        if spec is None or spec.settles is first_page:  # the first page settles it: nothing more to read
            continue
        try:
            first = toolkit.invoke(step.name, dict(step.arguments))
            pages = first["pages"]
            rows = list(first[spec.field])
            for p in range(2, pages + 1) if spec.settles is not every_row else ():  # every page counts anyway
                rows += toolkit.invoke(step.name, {**step.arguments, "page": p})[spec.field]
        except ToolError:  # a call the plan makes after a write it rests on: one page is read
            continue
        last = spec.settles(rows, plan[k + 1:])
        if last is not None:
            pages = min(pages, last // PAGE_SIZE + 1)
        out += [Step(step.name, {**step.arguments, "page": p}) for p in range(2, pages + 1)]
    return tuple(out)


def pages_read(rows: int, last: int | None) -> int:
    """How many pages of a list of `rows` rows `paged_plan` reads, where `last` is the last row
    needed (None: every row counts)."""
    pages = max(1, -(-rows // PAGE_SIZE))
    return pages if last is None else min(pages, last // PAGE_SIZE + 1)


def read_on(plan: tuple[Step, ...], k: int, pages: int) -> tuple[Step, ...]:
    """`plan` with a call for each page after the first of its paged call `k`, up to `pages`,
    right after it (as `paged_plan` adds them)."""
    if pages < 2:  # the first page is all it reads: nothing to add
        return plan
    step = plan[k]
    name, arguments = step.name, step.arguments
    return plan[:k + 1] + tuple([Step(name, {**arguments, "page": p}) for p in range(2, pages + 1)]) + plan[k + 1:]
