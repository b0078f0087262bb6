"""Results in pages: what the hard tier's list tools return (`ToolUseEnv`'s card, "Hard tier").

A paged tool takes an optional `page` (1 first) and returns `PAGE_SIZE` rows of its list, with
`page`, `pages` (how many there are) and `next_page` while more follow, so an agent that reads
only the first page may miss what the later ones hold. The reference solver's plan reads each
paged list as far as a careful agent must (`paged_plan`): up to and including the page where what
the task needs is settled (`PagedList.settles`), every page when the list's whole content counts.
Tool-accuracy metrics compare an agent's calls with that plan, so an agent that stops once the
answer is settled is not marked down for the pages it rightly left unread. Of the pages before
that one, the plan needs only those holding a row a later call names (`PagedList.named`): the
others are optional steps (`Step.optional`), useful when read and never required, so an agent
that goes straight to the page that matters loses no recall.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Callable, Collection, Iterable, Mapping

from agentgym.core._fast import scalar_leaves
from agentgym.core.tools import Bounds, ToolError
from agentgym.envs.tooluse.base import Step

__all__ = ["PAGE_SIZE", "Page", "Settles", "PagedList", "NamedRow", "every_row", "first_page", "named_row", "named_rows",
           "page_count", "paged", "paged_plan", "page_steps", "pages_of", "pages_read", "read_on"]

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
        hits = named_rows(rows, later, self.key)
        return min(hits[-1] + self.after, len(rows) - 1) if hits else None


def named_rows(rows: list[Any], later: tuple[Step, ...], key: str) -> list[int]:
    """The rows (indices, rising) whose `key` field ("" for a row that is a plain value) a later
    call of the plan names among its arguments."""
    named = scalar_leaves(s.arguments for s in later)  # every plain value the later calls name
    return [i for i, row in enumerate(rows) if _hashable(row[key] if key else row) in named]


def named_row(key: str = "", after: int = 0) -> Settles:
    """The row a later call of the plan names (its `key` field; "" for a row that is a plain
    value), and `after` rows past it: in a list in time order, the next row is what shows that
    nothing later fits (the last deploy before an onset is settled by the first one after it).
    Every row counts when no later call names one (a careful agent could not have stopped)."""
    return NamedRow(key, after)


@dataclass(frozen=True)
class PagedList:
    """A paged tool's list: its result field, how far a careful agent reads it, and by which
    field a later call names a row (`named`; "" for a row that is a plain value, None for no
    field: a `NamedRow`'s `settles` gives its own key). A page before the settling one that holds
    no named row is an optional read."""

    field: str
    settles: Settles = every_row
    named: str | None = None

    def named_key(self) -> str | None:
        """The field by which a later call names a row of the list; None when none does."""
        if self.named is not None:
            return self.named
        return self.settles.key if isinstance(self.settles, NamedRow) else None


def page_count(rows: int) -> int:
    """How many pages `paged` makes of a list of `rows` rows (one, when it is empty)."""
    return max(1, -(-rows // PAGE_SIZE))


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool)) else None


def paged(result: dict[str, Any], field: str, page: int) -> dict[str, Any]:
    """`result` with only page `page` of its list `field`; ToolError past the last page."""
    rows = result[field]
    pages = page_count(len(rows))
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
    it): up to the page where the list's `settles` says what is needed is settled, the pages
    before it that hold no row a later call names optional (`read_on`)."""
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
        later = plan[k + 1:]
        last = spec.settles(rows, later)
        needed = None
        if last is not None:
            pages = min(pages, last // PAGE_SIZE + 1)
            key = spec.named_key()
            needed = pages_of(named_rows(rows, later, key) if key is not None else ())
        out += page_steps(step, pages, needed)
    return tuple(out)


def pages_of(rows: Iterable[int]) -> frozenset[int]:
    """The pages (1 first) that hold the rows at these indices."""
    return frozenset(i // PAGE_SIZE + 1 for i in rows)


def page_steps(step: Step, pages: int, needed: Collection[int] | None = None) -> list[Step]:
    """The calls for pages 2 to `pages` of paged call `step`. Every one is needed where `needed`
    is None (the whole list counts); otherwise the last (where what is needed is settled) and
    those in `needed` (they hold a row a later call names), the others optional: a careful agent
    may read them on its way, or see from what it has read that they hold nothing it needs."""
    name, arguments = step.name, step.arguments
    return [Step(name, {**arguments, "page": p}, optional=needed is not None and p != pages and p not in needed)
            for p in range(2, pages + 1)]


def pages_read(rows: int, last: int | None) -> int:
    """How many pages of a list of `rows` rows `paged_plan` reads, where `last` is the last row
    needed (None: every row counts)."""
    pages = page_count(rows)
    return pages if last is None else min(pages, last // PAGE_SIZE + 1)


def read_on(plan: tuple[Step, ...], k: int, rows: int, last: int | None, named: Iterable[int] = ()) -> tuple[Step, ...]:
    """`plan` with a call for each later page its paged call `k` reads of a list of `rows` rows,
    right after it, as `paged_plan` adds them: up to the page of row `last`, the last one needed
    (None: every row counts, every page is needed), the pages before it optional unless they
    hold a row of `named` (rows a later call names)."""
    pages = pages_read(rows, last)
    if pages < 2:  # the first page is all it reads: nothing to add
        return plan
    return plan[:k + 1] + tuple(page_steps(plan[k], pages, None if last is None else pages_of(named))) + plan[k + 1:]
