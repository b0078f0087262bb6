"""The ops domain's hard tier (`ToolUseEnv`'s card, "Hard tier").

Arithmetic the work needs: `get_metrics` counts a service's requests and errors over the last
5 minutes instead of giving its error rate, and the error-rate alert shows no value
(``data/policies.json``, ``ops_tier``), so the severity follows a rate the assistant computes,
never within 0.3 points of a threshold. A longer history: the culprit's deploys start 2-3
releases earlier, so the cause is never on the first page of its deploys. Also: log lines and
deploys come in pages. The gold is unchanged (the counts give the rate the task was made with).
"""

from __future__ import annotations

from typing import Any, Literal

from agentgym.core.tools import READ, tool
from agentgym.envs.tooluse.base import Draws, Gold
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
    severity_of,
)
from agentgym.envs.tooluse.paging import Page, PagedList, first_page, named_row, paged
from agentgym.envs.tooluse.policies import policy_lines, policy_rows

__all__ = ["OpsTierToolkit", "harden", "TIER"]

#: The least distance (percentage points) of a computed rate from a severity threshold.
_MARGIN = 0.3


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
        return {"policies": policy_rows("ops") + policy_rows("ops_tier")}


def _earlier(version: str) -> str | None:
    """The version released just before `version` (v2.0.0 -> v1.99.9 is never needed: None)."""
    major, minor, patch = (int(x) for x in version[1:].split("."))
    if patch:
        return f"v{major}.{minor}.{patch - 1}"
    return f"v{major}.{minor - 1}.9" if minor else None


def harden(d: Draws, gen: Generated) -> Generated:
    """The hard tier of an ops task: the longer history, and counts for every service's rate
    (the alerting one's severity kept, away from the thresholds); the gold is unchanged (the
    cause and the rollback target are the same deploys, the severity the same)."""
    world, req = gen.world, gen.goal.job
    assert isinstance(world, OpsWorld)
    deploys = world.services[req.chain[-1]].deploys
    for _ in range(d.between(2, 3)):
        version = _earlier(deploys[0].version)
        if version is None:
            break
        deploys.insert(0, Deploy(version, deploys[0].at - DAY - d.below(2 * DAY), d.pick(_V.authors)))
    symptom = world.services[req.chain[0]]
    for service in world.services.values():
        while True:
            requests = d.between(1500, 9000)
            errors = round(service.error_rate * requests / 100)
            rate = errors * 100 / requests
            if service is not symptom or (severity_of(rate) == req.severity and all(
                    abs(rate - cut) >= _MARGIN for cut in _SEV.values())):
                break
            low, high = _SEV_RATES[req.severity]  # near a threshold: another rate of the same band
            service.error_rate = round(low + _MARGIN + (high - low - 2 * _MARGIN) * d.random(), 1)
        service.counts, service.error_rate = (requests, errors), rate
    rules = policy_lines("ops")
    gen.brief = gen.brief.replace(rules, f"{rules}\n{policy_lines('ops_tier')}")
    gold = gen.gold
    gen.gold = Gold(gold.kind, gold.plan, gold.effects, (*gold.traps, "long_history", "rate_from_counts"),
                    gold.superseded)
    return gen


#: What `load_domains` adds to the ops domain's spec.
TIER: dict[str, Any] = {
    "hard_toolkit": OpsTierToolkit,
    # A service's error lines all say the same thing (its own fault, or the upstream it waits on);
    # deploys are oldest first: the cause is settled by the first deploy after it (or the end).
    "paged": {"search_logs": PagedList("lines", first_page),
              "get_deploys": PagedList("deploys", named_row("version", after=1))},
    "harden": harden,
}
