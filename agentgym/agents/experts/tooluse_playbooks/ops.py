"""Ops: trace an incident to the service that fails on its own, name its cause, file, roll back.

As the brief says: the severity follows the current error rate of the service that alerted,
by the thresholds the policy states; a service whose error log only reports failures of a
service it calls is a victim, so the errors are followed from service to dependency (a
dependency its error lines name) until one fails on its own; the cause is that service's last
deploy before its errors began (`get_metrics` gives the instant), and a rollback goes to the
version that ran before the cause, passing the incident's id. The error rate is read twice
before a severity is filed; an incident that is not the one wanted is withdrawn.
"""

from __future__ import annotations

import re
from typing import Any

from agentgym.agents.experts.briefs import figure
from agentgym.agents.experts.casefile import CaseFile, Read
from agentgym.agents.experts.tooluse_playbooks.base import Playbook, standing
from agentgym.agents.experts.words import has_phrase, has_word, near, words_of
from agentgym.agents.turns import Call

__all__ = ["OpsPlaybook"]

_SEVERITY = re.compile(r"\bsev[123]\b")
_NAMED = (re.compile(r"\bon ([a-z]+)\b"), re.compile(r"\bthe ([a-z]+) ([A-Za-z]+)"))


def _wants_rollback(text: str) -> bool | None:
    """What a message says about rolling back: True (do it), False (don't), None (nothing)."""
    if any(has_phrase(text, p) for p in ("don't roll", "dont roll", "no rollback", "not roll", "didn't ask for a "
                                                                                               "rollback",
                                         "don't want a rollback")):
        return False
    if has_word(text, "rollback") or has_phrase(text, "roll the culprit back") or has_phrase(text, "rolled back") \
            or has_phrase(text, "please roll"):
        return True
    return None


class OpsPlaybook(Playbook):
    """See the module docstring."""

    domain = "ops"
    reads = frozenset({"list_alerts", "get_metrics", "search_logs", "get_dependencies", "get_deploys",
                       "list_incidents", "list_policies"})
    writes = frozenset({"file_incident", "withdraw_incident", "rollback"})

    def __init__(self, brief: str, request: str, tools: list[dict[str, Any]]) -> None:
        super().__init__(brief, request, tools)
        self.sev1 = figure(self.brief, r"sev1 at ([\d.]+)%")
        self.sev2 = figure(self.brief, r"sev2 at ([\d.]+)%")
        self.service = self._named(request)
        severity = _SEVERITY.search(request)
        self.severity = severity.group(0) if severity else None
        self.rollback = bool(_wants_rollback(request))

    @staticmethod
    def _named(text: str) -> str | None:
        """The alerting service the request names ("errors on checkout", "the cart alert")."""
        m = _NAMED[0].search(text)
        if m:
            return m.group(1)
        for m in _NAMED[1].finditer(text):
            if near(m.group(2).lower(), "alert"):
                return m.group(1)
        return None

    def hear(self, text: str) -> bool:
        changed = False
        severity = _SEVERITY.search(text)
        if severity and severity.group(0) != self.severity:
            self.severity, changed = severity.group(0), True
        rollback = _wants_rollback(text)
        if rollback is not None and rollback != self.rollback:
            self.rollback, changed = rollback, True
        return changed

    # ------------------------------------------------------------------------------- plan
    def plan(self, case: CaseFile) -> None:
        symptom = self.service
        if symptom is not None and any(case.refused(t, service=symptom) for t in ("get_metrics", "search_logs")):
            symptom = None  # no service of that name: the firing alert says which one it is
        symptom = symptom or self._alerting(case)
        if symptom is None:
            self.stop(case, "No error-rate alert is firing, so I can't tell where the errors show up.")
        metrics = Read("get_metrics", {"service": symptom}, copies=2)
        severity = self.severity
        if severity is None:
            severity = self._severity(_rate(case.get(metrics, *_hop(symptom))[0]))
        root = self._trace(case, symptom)
        deploys, root_metrics = case.get(Read("get_deploys", {"service": root}),
                                         metrics if root == symptom else Read("get_metrics", {"service": root}))
        since = root_metrics.get("errors_since_utc")
        # A rollback shows as a deploy, and a failed deploy never ran: neither is the cause nor
        # the version that ran before it.
        history = [d for d in deploys.get("deploys", [])
                   if not str(d.get("author", "")).startswith("rollback") and d.get("status") != "failed"]
        before = [i for i, d in enumerate(history) if since and d["deployed_at"] < since]
        if not before:
            self.stop(case, f"I found no deploy of {root} before its errors began at {since}.")
        cause = history[before[-1]]
        previous = history[before[-1] - 1] if before[-1] > 0 else None
        want = {"root_cause_service": root, "cause_version": cause["version"], "severity": severity,
                "summary": f"{root} {cause['version']} (deployed {cause['deployed_at']} UTC) has failed on its own "
                           f"since {since} UTC; the errors show on {symptom}."}
        # An incident that is not the one wanted (a wrong severity or cause the user points out)
        # is withdrawn; so is a second one.
        filed = standing(case, "file_incident", "withdraw_incident", "incident_id")
        keep = next((res for args, res in filed if _same_incident(args, want)), None)
        for _, res in filed:
            if res is not keep:
                self.agree(case, f"withdraw incident {res['incident_id']}, which is not the one wanted.")
                case.write("withdraw_incident", {"incident_id": res["incident_id"]})
        rolled = case.made("rollback")
        back = (f"roll {root} back to {previous['version']}, the version that ran before the cause"
                if self.rollback and previous else "")
        if keep is None:
            incident = f"I'll file a {severity} incident naming {root} {cause['version']}"
            self.confirm(case, f"the errors on {symptom} come from {root}, which fails on its own; its last deploy "
                               f"before the errors began ({since} UTC) is {cause['version']}. "
                               f"{incident}{', then ' * bool(back)}{back}.", [incident, back])
            keep = case.write("file_incident", want, Call("list_incidents", {}), lambda b: _landed(b, want))
        if not self.rollback or rolled:
            return
        if previous is None:
            self.stop(case, f"{cause['version']} is the first deploy of {root}, so there is no earlier version to "
                            "roll back to.")
        self.agree(case, back)
        args = {"service": root, "to_version": previous["version"], "incident_id": keep["incident_id"]}
        case.write("rollback", args, Call("get_deploys", {"service": root}), lambda b: _rolled(b, args))

    def _alerting(self, case: CaseFile) -> str | None:
        alerts = case.read("list_alerts").get("alerts", [])
        return next((a["service"] for a in alerts if a.get("metric") == "error_rate_pct"), None)

    def _severity(self, rate: float) -> str:
        if self.sev1 is not None and rate >= self.sev1:
            return "sev1"
        if self.sev2 is not None and rate >= self.sev2:
            return "sev2"
        return "sev3"

    def _trace(self, case: CaseFile, symptom: str) -> str:
        """The service that fails on its own: from `symptom`, follow the dependency each error
        log names, reading a service's logs and dependencies in one turn."""
        current, seen = symptom, {symptom}
        while True:
            logs, deps = case.get(*_hop(current))
            said = set(words_of(" ".join(line.split(" ERROR ", 1)[-1] for line in logs.get("lines", []))))
            blamed = [d for d in deps.get("calls", []) if d in said and d not in seen]
            if not blamed:
                return current
            current = blamed[0]
            seen.add(current)

    def summary(self) -> str:
        return "The incident is filed" + (" and the culprit is rolled back." if self.rollback else ".")


def _hop(service: str) -> tuple[Read, Read]:
    return Read("search_logs", {"service": service}), Read("get_dependencies", {"service": service})


def _same_incident(args: dict[str, Any], want: dict[str, Any]) -> bool:
    return all(args.get(k) == want[k] for k in ("root_cause_service", "cause_version", "severity"))


def _landed(back: Any, want: dict[str, Any]) -> Any:
    """The incident a read-back shows that a failed filing would have opened, or None."""
    for inc in back.get("incidents", []):
        if inc.get("status") == "open" and _same_incident(inc, want):
            return {"incident_id": inc["incident_id"], "status": "open"}
    return None


def _rolled(back: Any, args: dict[str, Any]) -> Any:
    """The rollback a read-back of the deploys shows, or None."""
    for d in back.get("deploys", []):
        if d.get("version") == args["to_version"] and args["incident_id"] in str(d.get("author", "")):
            return {"service": args["service"], "status": "rolled back", "version": args["to_version"]}
    return None


def _rate(metrics: dict[str, Any]) -> float:
    """A service's current error rate (in %): as the metrics give it, or from the counts they
    give instead (errors over requests, as the brief says)."""
    if "error_rate_pct" in metrics:
        return float(metrics["error_rate_pct"])
    requests = metrics.get("requests_last_5m") or 0
    return 100 * metrics.get("errors_last_5m", 0) / requests if requests else 0.0
