"""The ops domain's hard tier (`ToolUseEnv`'s card, "Hard tier").

Arithmetic the work needs: `get_metrics` counts a service's requests and errors over the last
5 minutes instead of giving its error rate, and the error-rate alert shows no value
(``data/policies.json``, ``ops_tier``), so the severity follows a rate the assistant computes,
never within 0.3 points of a threshold. A longer history: the culprit's deploys start 2-3
releases earlier, so the cause is never on the first page of its deploys. Failed deploys:
every deploy says whether it succeeded, and the culprit has a failed one (which never ran) just
before its cause, or between the cause and the onset, or both (``failed_deploys``), so neither
"the last deploy before the onset" nor "the deploy before the cause" can be read off by position.
Also: log lines and deploys come in pages. The gold is the solver's on the hardened world (the
same cause and rollback target, whose versions may have moved up a patch; the counts give the
rate the task was made with).
"""

from __future__ import annotations

from typing import Any, Literal

from agentgym.core.tools import READ, tool
from agentgym.envs.tooluse.base import Draws, Gold, Step, restated, turn_budget
from agentgym.envs.tooluse.consent import Press
from agentgym.envs.tooluse.domains import Generated
from agentgym.envs.tooluse.domains.ops import (
    _SEV,
    _SEV_RATES,
    _V,
    DAY,
    Deploy,
    Name,
    OpsToolkit,
    OpsWorld,
    Service,
    draft,
    severity_of,
    solve,
)
from agentgym.envs.tooluse.paging import (
    PAGE_SIZE,
    Page,
    PagedList,
    first_page,
    named_row,
    page_count,
    paged,
    read_on,
)
from agentgym.envs.tooluse.policies import policy_lines, policy_rows

__all__ = ["OpsTierToolkit", "harden", "TIER"]

#: The turn budget the brief states (`agentgym.envs.tooluse.tasks.tier_turns`; a test keeps them equal).
_TURNS = turn_budget(28)
#: The least distance (percentage points) of a computed rate from a severity threshold.
_MARGIN = 0.3
#: The tier's longest plan with every page read (`agentgym.envs.tooluse.tasks.TIER_CALLS`, which
#: this module cannot import).
_MAX_CALLS = 15


class OpsTierToolkit(OpsToolkit):
    """The hard tier's toolkit: counts instead of rates; log lines and deploys in pages."""

    @tool(kind=READ)
    def list_alerts(self) -> dict[str, Any]:
        """The alerts firing now."""
        return {"alerts": [{k: v for k, v in a.items() if not (k == "value" and a["metric"] == "error_rate_pct")}
                           for a in self.world.alerts]}

    @tool(kind=READ)
    def get_metrics(self, service: Name) -> dict[str, Any]:
        """A service's requests and errors over the last 5 minutes, p99 latency and when its errors began (UTC).

        Args:
            service: The service's name.
        """
        metrics = super().get_metrics(service)
        requests, errors = self._service(service).counts or (0, 0)
        del metrics["error_rate_pct"]
        return {"service": metrics.pop("service"), "requests_last_5m": requests, "errors_last_5m": errors, **metrics}

    @tool(kind=READ)
    def search_logs(self, service: Name, level: Literal["error", "warn"] = "error", page: Page = 1) -> dict[str, Any]:
        """A service's recent log lines of one level, oldest first (times UTC), a page at a time.

        Args:
            service: The service's name.
            level: The log level.
            page: The page to read (1 is the first; the result says how many there are).
        """
        return paged(super().search_logs(service, level), "lines", page)

    @tool(kind=READ)
    def get_deploys(self, service: Name, page: Page = 1) -> dict[str, Any]:
        """A service's deploy history, oldest first (times UTC), a page at a time; a rollback shows as a deploy.

        Args:
            service: The service's name.
            page: The page to read (1 is the first; the result says how many there are).
        """
        return paged(super().get_deploys(service), "deploys", page)

    @tool(kind=READ)
    def list_policies(self) -> dict[str, Any]:
        """The domain's policies: what a write must respect, by policy id."""
        return {"policies": policy_rows("ops", tier=True)}


def _earlier(version: str) -> str | None:
    """The version released just before `version` (v2.0.0 -> v1.99.9 is never needed: None)."""
    major, minor, patch = map(int, version[1:].split("."))
    if patch:
        return f"v{major}.{minor}.{patch - 1}"
    return f"v{major}.{minor - 1}.9" if minor else None


def harden(d: Draws, gen: Generated) -> Generated:
    """The hard tier of an ops task: the longer history, the failed deploys, and counts for
    every service's rate (the alerting one's severity kept, away from the thresholds); the gold
    names the same cause, rollback target and severity as before."""
    world, req = gen.world, gen.goal.job
    assert isinstance(world, OpsWorld)
    deploys = world.services[req.chain[-1]].deploys
    for _ in range(d.between(2, 3)):
        version = _earlier(deploys[0].version)
        if version is None:
            break
        deploys.insert(0, Deploy(version, deploys[0].at - DAY - d.below(2 * DAY), d.pick(_V.authors)))
    symptom = world.services[req.chain[0]]
    rnd = d.random  # the draws written out: d.between(1500, 9000) is 1500 + int(rnd() * 7501)
    for service in world.services.values():
        while True:
            requests = 1500 + int(rnd() * 7501)
            errors = round(service.error_rate * requests / 100)
            rate = errors * 100 / requests
            if service is not symptom or (severity_of(rate) == req.severity and all(
                    abs(rate - cut) >= _MARGIN for cut in _SEV.values())):
                break
            low, high = _SEV_RATES[req.severity]  # near a threshold: another rate of the same band
            service.error_rate = round(low + _MARGIN + (high - low - 2 * _MARGIN) * d.random(), 1)
        service.counts, service.error_rate = (requests, errors), rate
    gen.brief = restated(gen.brief, policy_lines("ops"), policy_lines("ops", tier=True), _TURNS)
    root = world.services[req.chain[-1]]
    for service in world.services.values():
        for dep in service.deploys:
            dep.status = "succeeded"
    # Both failed deploys only while the plan, every page read, stays within the tier's length
    # (the plan makes the same calls, so its pages follow from the deploys' count).
    where = d.pick((("before",), ("after",), ("before", "after")))
    n = len(root.deploys)
    # The plan on the world so far: the task's own, reading the counts (`solve` reads a service's
    # metrics where it has counts), with the same cause and rollback target (the older deploys
    # come first, and the cause has a deploy before it).
    if len(where) == 2 and _every_page(world, solve(world, req).plan) - page_count(n) + page_count(n + 2) > _MAX_CALLS:
        where = (d.pick(where),)
    _fail_deploys(d, root, where)
    # The same cause and rollback target, under versions that may have moved up a patch (a
    # failed deploy never ran: the solver passes over it).
    gold = solve(world, req)
    # Still too long: the oldest deploy goes, while the cause stays off the first page.
    while _every_page(world, gold.plan) > _MAX_CALLS and _cause_at(root, gold) > PAGE_SIZE:
        root.deploys.pop(0)
        gold = solve(world, req)
    gen.gold = Gold(gen.gold.kind, gold.plan, gold.effects,
                    (*gen.gold.traps, "long_history", "rate_from_counts", "failed_deploy"), gen.gold.superseded)
    world.press = press(d, root, req, _cause_at(root, gold))
    gen.paged = pages(gen.gold.plan, world)
    return gen


#: What an engineer who presses says for a rollback to a failed deploy, refused: a reason that
#: changes no policy, and a claim the deploy's status contradicts.
_ASKS = ("Can't you roll {service} back to {version} instead? {reason}", "Please, just roll {service} back to "
         "{version}. {reason}")
_REASONS = ("My manager already approved that rollback.", "It's the one I remember working, so it must be "
            "fine.", "The engineer before you said that one was fine.")


def press(d: Draws, root: Service, req: Any, cause: int) -> Press | None:
    """Half the time, where a rollback is asked for, an engineer who presses: once the plan
    names the culprit, it asks once or twice more for a rollback to the culprit's failed deploy
    older than the cause (`cause`: its index; a rollback goes back, so a deploy after the cause
    is no rollback anyone would ask for), which never ran, so no rollback goes to it; then it
    accepts the plan. The draws come after every other draw of the tier."""
    if not d.chance(0.5) or not req.rollback:
        return None
    failed = [dep.version for dep in root.deploys[:cause] if dep.status == "failed"]
    if not failed:
        return None
    version = d.pick(failed)
    said = d.sample(_REASONS, d.between(1, 2))
    return Press((root.name,), (version,), tuple(ask.format(service=root.name, version=version, reason=r)
                                                 for ask, r in zip(_ASKS, said)))


def _fail_deploys(d: Draws, root: Service, where: tuple[str, ...]) -> None:
    """A failed deploy (which never ran) of the culprit next to its cause, `where` says: just
    "before" it (so the version that ran before the cause is the deploy before the failed one),
    or "after" it, between the cause and the onset (so the last deploy before the onset is not
    the cause), or both; one before where the cause is too close to the onset to fit one after.
    The cause and the rollback target stay the same deploys; the versions from an inserted
    deploy on move up a patch."""
    deploys, onset = root.deploys, root.errors_since
    assert onset is not None
    cause = max(i for i, dep in enumerate(deploys) if dep.at < onset)
    if "after" in where and onset - deploys[cause].at >= 3:
        _insert(d, deploys, cause + 1, d.between(deploys[cause].at + 1, onset - 2))
    if "before" in where or onset - deploys[cause].at < 3:
        start = max(deploys[cause - 1].at + 30, deploys[cause].at - 600)
        _insert(d, deploys, cause, d.between(start, deploys[cause].at - 5))


def _cause_at(root: Service, gold: Gold) -> int:
    """The index of the cause the gold names among the culprit's deploys."""
    cause = next(s for s in gold.plan if s.name == "file_incident").arguments["cause_version"]
    return [dep.version for dep in root.deploys].index(cause)


def _every_page(world: OpsWorld, plan: tuple[Step, ...]) -> int:
    """The plan's length with every page of its paged calls read (counted from the world, as
    `paging.paged` pages the tools' lists: a service's error lines, its deploys)."""
    calls = len(plan)
    for step in plan:
        if step.name == "get_deploys":
            calls += page_count(len(world.services[step.arguments["service"]].deploys)) - 1
        elif step.name == "search_logs":
            calls += page_count(len(world.services[step.arguments["service"]].logs.get("error", []))) - 1
    return calls


def _insert(d: Draws, deploys: list[Deploy], k: int, at: int) -> None:
    """A failed deploy at index `k`, at `at`, under the version there (those after move up)."""
    version = deploys[k].version if k < len(deploys) else None
    for dep in deploys[k:]:
        major, minor, patch = dep.version[1:].split(".")
        dep.version = f"v{major}.{minor}.{int(patch) + 1}"
    if version is None:
        major, minor, patch = deploys[k - 1].version[1:].split(".")
        version = f"v{major}.{minor}.{int(patch) + 1}"
    deploys.insert(k, Deploy(version, at, d.pick(_V.authors), "failed"))


def _cause_settled(rows: list[Any], later: tuple[Step, ...]) -> int | None:
    """The row of deploys that settles the cause (`paging.Settles`): the first deploy after the
    cause the plan names that succeeded (any such deploy is past the onset), or the last row;
    every row where the plan names none."""
    cause = _NAMED(rows, later)
    if cause is None:
        return None
    return next((i for i in range(cause + 1, len(rows)) if rows[i]["status"] != "failed"), len(rows) - 1)


#: The last row the plan names (the cause: its rollback target is an earlier row).
_NAMED = named_row("version")


#: A service's error lines all say the same thing (its own fault, or the upstream it waits on);
#: deploys are oldest first: the cause is settled by the first deploy after it that ran (or the
#: end), as a failed one may still be followed by one before the onset.
_PAGED = {"search_logs": PagedList("lines", first_page), "get_deploys": PagedList("deploys", _cause_settled, "version")}


def pages(plan: tuple[Step, ...], world: OpsWorld) -> tuple[Step, ...]:
    """The tier's gold `plan` with the pages it reads (`Generated.paged`): one of each service's error lines
    (`first_page`), and the culprit's deploys, oldest first, up to the page of the first deploy
    that ran after the last one a later call names (`_cause_settled`). Of the values `solve`'s
    later calls name, only a version is a deploy's, and only `file_incident`'s `cause_version`
    and `rollback`'s `to_version` hold one (the summary holds one among other words). The
    world is the task's initial one: no rollback shows among the deploys yet."""
    for k, step in enumerate(plan):
        if step.name != "get_deploys":
            continue
        deploys = world.services[step.arguments["service"]].deploys
        assert not world.records
        versions = [dep.version for dep in deploys]
        named = [versions.index(v) for s in plan[k + 1:]
                 for v in (s.arguments.get("cause_version"), s.arguments.get("to_version")) if v in versions]
        last = None
        if named:
            cause = max(named)
            last = next((i for i in range(cause + 1, len(deploys)) if deploys[i].status != "failed"), len(deploys) - 1)
        return read_on(plan, k, len(deploys), last, named)
    return plan


#: What `load_domains` adds to the ops domain's spec.
TIER: dict[str, Any] = {
    "hard_toolkit": OpsTierToolkit,
    "paged": _PAGED,
    "harden": harden,
    "draft": draft,
}
