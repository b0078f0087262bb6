"""Results in pages: what the hard tier's list tools return (`ToolUseEnv`'s card, "Hard tier").

A paged tool takes an optional `page` (1 first) and returns `PAGE_SIZE` rows of its list, with
`page`, `pages` (how many there are) and `next_page` while more follow, so an agent that reads
only the first page misses what the later ones hold. The reference solver's plan reads every page
of each paged call it makes (`paged_plan`): a careful agent cannot know which page holds what it
needs before it has read them all.
"""

from __future__ import annotations

from typing import Annotated, Any, Mapping

from agentgym.core.tools import Bounds, ToolError
from agentgym.envs.tooluse.base import Step

__all__ = ["PAGE_SIZE", "Page", "paged", "paged_plan"]

#: Rows per page: small enough that the hard tier's lists (3 to 6 rows) take 2 or 3 pages.
PAGE_SIZE = 2
#: A page number, as a paged tool takes it.
Page = Annotated[int, Bounds(ge=1, le=99)]


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


def paged_plan(plan: tuple[Step, ...], toolkit: Any, fields: Mapping[str, str]) -> tuple[Step, ...]:
    """The plan with, after each call of a paged tool (`fields`: tool -> its list field), a call
    for each further page its result has on the initial world (`toolkit` over it)."""
    out: list[Step] = []
    for step in plan:
        out.append(step)
        if step.name not in fields:
            continue
        try:
            pages = toolkit.invoke(step.name, dict(step.arguments))["pages"]
        except ToolError:  # a call the plan makes after a write it rests on: one page is read
            pages = 1
        out += [Step(step.name, {**step.arguments, "page": p}) for p in range(2, pages + 1)]
    return tuple(out)
