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
from agentgym.envs.tooluse.paging import PAGE_SIZE, PagedList, every_row, first_page
from agentgym.envs.tooluse.paging import paged_plan as plain_paged_plan

__all__ = ["paged_plan", "all_work"]


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
        pages = max(1, -(-len(rows) // PAGE_SIZE))
        if spec.settles is every_row:  # plain code reads only the first page of a list whose every row counts
            rows = rows[:PAGE_SIZE]
        last = spec.settles(list(rows), plan[k + 1:])
        if last is not None:
            pages = min(pages, last // PAGE_SIZE + 1)
        out += [Step(step.name, {**step.arguments, "page": p}) for p in range(2, pages + 1)]
    return tuple(out)


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
