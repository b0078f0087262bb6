"""The speed kernels of the tool-use tasks: each does what plain code of the family does, on reset's path.

Every kernel names the plain code it stands for and the invariant that makes the two equal;
`tests/envs/test_tooluse_fast.py` checks each against its plain version on many tasks, and
`tests/envs/test_tooluse_tier_digest.py` pins the tasks they help make. The plain code stays
where it was, as the definition; `agentgym.envs.tooluse.tasks` calls the kernels.
"""

from __future__ import annotations

from typing import Any, Mapping

from agentgym.core.tools import ToolError
from agentgym.envs.tooluse.base import Step
from agentgym.envs.tooluse.paging import PAGE_SIZE, PagedList, every_row, first_page
from agentgym.envs.tooluse.paging import paged_plan as plain_paged_plan

__all__ = ["paged_plan"]


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
    if any("page" in step.arguments for step in plan if step.name in lists):
        return plain_paged_plan(plan, toolkit, lists)
    out: list[Step] = []
    for k, step in enumerate(plan):
        out.append(step)
        spec = lists.get(step.name)
        if spec is None or spec.settles is first_page:
            continue
        try:
            rows = getattr(unpaged, step.name)(toolkit, **step.arguments)[spec.field]
        except ToolError:
            continue
        pages = max(1, -(-len(rows) // PAGE_SIZE))
        if spec.settles is every_row:  # plain code reads only the first page of a list whose every row counts
            rows = rows[:PAGE_SIZE]
        last = spec.settles(list(rows), plan[k + 1:])
        if last is not None:
            pages = min(pages, last // PAGE_SIZE + 1)
        out += [Step(step.name, {**step.arguments, "page": p}) for p in range(2, pages + 1)]
    return tuple(out)
