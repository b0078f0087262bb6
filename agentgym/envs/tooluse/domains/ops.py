"""Operations: triage an incident from metrics, logs and deploy history, file it, roll back.

The chain: find the alerting service, read its error rate (the severity), follow the error logs
from service to dependency until a service fails on its own, read its deploys, file the incident
with the cause (the last deploy before the errors began), and roll the culprit back. Traps: a
deploy of the culprit after the onset (not the cause) and a recent deploy of an innocent service.

Every instant the tools show is a UTC date and time (``YYYY-MM-DD HH:MM``) and the brief says
what time it is now, so "before the errors began" has one reading; no deploy is made at the
onset's minute. `list_incidents` and the deploy history (where a rollback shows as a deploy)
read back what the writes did, and `withdraw_incident` takes back an incident filed in error.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Annotated, Any, Literal

from agentgym.core.task import WorldEvent
from agentgym.core.tools import READ, WRITE, MaxLen, ToolError, tool
from agentgym.envs.tooluse._fast import words_named
from agentgym.envs.tooluse.base import (
    POINTED_READS,
    Detail,
    Draws,
    Effect,
    Goal,
    Gold,
    Step,
    ToolUseToolkit,
    World,
    compose_brief,
    stamp,
)
from agentgym.envs.tooluse.data import domain_split, read_json, str_list, strict
from agentgym.envs.tooluse.domains import DomainSpec, Generated, Shift, solved
from agentgym.envs.tooluse.policies import policy, policy_lines
from agentgym.envs.tooluse.review import ReviewWords, parse_review

__all__ = ["OpsToolkit", "OpsWorld", "Service", "DOMAIN", "vocab"]


@dataclass(frozen=True)
class OpsVocab:
    split: str
    role: str
    services: tuple[str, ...]
    authors: tuple[str, ...]
    faults: tuple[str, ...]
    upstream: tuple[str, ...]
    noise: tuple[str, ...]
    templates: dict[str, Any]
    review: ReviewWords


@lru_cache(maxsize=None)
def vocab() -> OpsVocab:
    """The operations vocabulary, parsed strictly from ``data/ops.json``."""
    d = strict(read_json("ops.json"), {"name", "split", "role", "services", "authors", "faults", "upstream", "noise",
                                       "templates", "review"}, "ops.json")
    t = strict(d["templates"], {"incident", "rollback", "service_inline", "sev_inline", "sev_answer",
                                "service_answer"}, "ops.json.templates")
    return OpsVocab(
        split=domain_split(d, "ops"), role=d["role"], services=str_list(d["services"], "services", 10),
        authors=str_list(d["authors"], "authors"),
        faults=str_list(d["faults"], "faults"), upstream=str_list(d["upstream"], "upstream"),
        noise=str_list(d["noise"], "noise"),
        templates={k: (tuple(v) if isinstance(v, list) else v) for k, v in t.items()},
        review=parse_review(d["review"], "ops.json.review"),
    )


_V = vocab()
Name = Annotated[str, MaxLen(40)]
Severity = Literal["sev1", "sev2", "sev3"]
_SEV = policy("ops", "severity").params
DAY = 1440
GRID_MIN = 10


def severity_of(rate: float) -> str:
    """The severity the policy gives an alerting service's error rate (in %)."""
    return "sev1" if rate >= _SEV["sev1"] else "sev2" if rate >= _SEV["sev2"] else "sev3"


@dataclass(slots=True)
class Deploy:
    version: str
    at: int  # minutes since Jan 1, 00:00 UTC
    author: str
    #: "succeeded" or "failed" (a failed deploy never ran): the hard tier's, whose rows show it;
    #: None, and not shown, elsewhere.
    status: str | None = None

    def row(self) -> dict[str, Any]:
        row = {"version": self.version, "deployed_at": stamp(self.at), "author": self.author}
        if self.status is not None:
            row["status"] = self.status
        return row


@dataclass(slots=True)
class Service:
    name: str
    calls: tuple[str, ...]
    error_rate: float
    p99_ms: int
    errors_since: int | None  # minutes since Jan 1
    logs: dict[str, list[str]]  # level -> lines, each starting with its UTC date and time
    deploys: list[Deploy]  # oldest first
    #: Requests and errors of the last 5 minutes, whose ratio is `error_rate`: what the hard
    #: tier's metrics show instead of the rate (`ops_tier`); None elsewhere.
    counts: tuple[int, int] | None = None


class OpsWorld(World):
    """Services with metrics, logs, dependencies and deploy history, and the open alerts."""

    __slots__ = ("now", "services", "alerts", "incidents")

    def __init__(self, id_base: int, now: int, services: dict[str, Service], alerts: list[dict[str, Any]]) -> None:
        super().__init__(id_base)
        self.now = now  # minutes since Jan 1, 00:00 UTC
        self.services = services
        self.alerts = alerts
        self.incidents: dict[str, str] = {}  # open incident id -> root-cause service


class OpsToolkit(ToolUseToolkit):
    """Observability and incident tools over an `OpsWorld`."""

    world: OpsWorld
    domain = "ops"

    def _service(self, name: str) -> Service:
        svc = self.world.services.get(name)
        if svc is None:
            raise ToolError(f"no service '{name}'; services: {', '.join(self.world.services)}")
        return svc

    @tool(kind=READ)
    def list_alerts(self) -> dict[str, Any]:
        """The alerts firing now."""
        return {"alerts": self.world.alerts}

    @tool(kind=READ)
    def get_metrics(self, service: Name) -> dict[str, Any]:
        """A service's current error rate, p99 latency and when its errors began (UTC).

        Args:
            service: The service's name.
        """
        s = self._service(service)
        since = None if s.errors_since is None else stamp(s.errors_since)
        return {"service": s.name, "error_rate_pct": s.error_rate, "p99_latency_ms": s.p99_ms,
                "errors_since_utc": since}

    @tool(kind=READ)
    def search_logs(self, service: Name, level: Literal["error", "warn"] = "error") -> dict[str, Any]:
        """A service's recent log lines of one level, oldest first (times UTC).

        Args:
            service: The service's name.
            level: The log level.
        """
        return {"service": service, "level": level, "lines": self._service(service).logs.get(level, [])}

    @tool(kind=READ)
    def get_dependencies(self, service: Name) -> dict[str, Any]:
        """The services a service calls.

        Args:
            service: The service's name.
        """
        return {"service": service, "calls": list(self._service(service).calls)}

    @tool(kind=READ)
    def get_deploys(self, service: Name) -> dict[str, Any]:
        """A service's deploy history, oldest first (times UTC); a rollback shows as a deploy.

        Args:
            service: The service's name.
        """
        s = self._service(service)
        rows = [d.row() for d in s.deploys]
        at = stamp(self.world.now)
        # Where deploys carry a status (the hard tier), a rollback's does too: it ran.
        status = {"status": "succeeded"} if any(d.status is not None for d in s.deploys) else {}
        rows += [{"version": r.data["to_version"], "deployed_at": at, "author": f"rollback ({r.data['incident_id']})",
                  **status}
                 for r in self.world.records if r.kind == "rollback" and r.active and r.data["service"] == s.name]
        return {"service": service, "deploys": rows}

    @tool(kind=READ)
    def list_incidents(self) -> dict[str, Any]:
        """The incidents you filed in this session, oldest first, with their status."""
        return {"incidents": [{"incident_id": r.data["incident_id"], "root_cause_service": r.data["service"],
                               "cause_version": r.data["version"], "severity": r.data["severity"],
                               "status": "open" if r.active else "withdrawn"}
                              for r in self.world.records if r.kind == "incident"]}

    @tool(kind=WRITE)
    def file_incident(self, root_cause_service: Name, cause_version: Annotated[str, MaxLen(20)], severity: Severity,
                      summary: Annotated[str, MaxLen(500)]) -> dict[str, Any]:
        """File an incident naming the root-cause service and the deploy that caused it.

        Args:
            root_cause_service: The service whose own failure caused the incident.
            cause_version: The version whose deploy caused it.
            severity: The incident's severity.
            summary: A one-line summary.
        """
        s = self._service(root_cause_service)
        if not any(d.version == cause_version for d in s.deploys):
            raise ToolError(f"{s.name} has no deploy '{cause_version}'")
        iid = self.world.new_id("INC")
        self.world.incidents[iid] = s.name
        self.world.add("incident", {"incident_id": iid, "service": s.name, "version": cause_version,
                                    "severity": severity})
        return {"incident_id": iid, "status": "open"}

    @tool(kind=WRITE)
    def withdraw_incident(self, incident_id: Annotated[str, MaxLen(20)]) -> dict[str, Any]:
        """Withdraw an open incident you filed in error; it no longer counts as filed.

        Args:
            incident_id: The incident's id, from file_incident.
        """
        for r in self.world.records:
            if r.kind == "incident" and r.active and r.data["incident_id"] == incident_id:
                r.active = False
                self.world.incidents.pop(incident_id, None)
                self.world.events.append(WorldEvent("withdrawn", {"incident_id": incident_id}))
                return {"incident_id": incident_id, "status": "withdrawn"}
        raise ToolError(f"no open incident of yours with id '{incident_id}'")

    @tool(kind=WRITE)
    def rollback(self, service: Name, to_version: Annotated[str, MaxLen(20)], incident_id: Annotated[str, MaxLen(20)]
                 ) -> dict[str, Any]:
        """Roll a service back to an earlier version.

        Args:
            service: The service to roll back.
            to_version: The earlier version to run.
            incident_id: The open incident that names this service as the root cause.
        """
        s = self._service(service)
        if any(d.version == to_version and d.status == "failed" for d in s.deploys):
            # The hard tier's deploys have a status (elsewhere None): a failed one never ran.
            raise self.violation("failed_deploys", f"{to_version} of {s.name} failed and never ran")
        versions = [d.version for d in s.deploys]
        if to_version not in versions[:-1]:
            raise ToolError(f"{to_version!r} is not an earlier version of {s.name}")
        if self.world.incidents.get(incident_id) != s.name:
            raise self.violation("rollback_needs_incident",
                                 f"no open incident of yours names {s.name} as the root cause ({incident_id!r})")
        self.world.add("rollback", {"service": s.name, "to_version": to_version, "incident_id": incident_id})
        return {"service": s.name, "status": "rolled back", "version": to_version}


# ------------------------------------------------------------------------------- generation

def _designs() -> dict[str, list[tuple[int, int, int, int]]]:
    """(list_alerts, get_metrics, hops, rollback) combinations per difficulty."""
    out: dict[str, list[tuple[int, int, int, int]]] = {}
    for diff, (lo, hi), min_hops in (("easy", (3, 4), 0), ("medium", (5, 6), 1), ("hard", (7, 8), 2)):
        out[diff] = [(a, m, h, r) for a in (0, 1) for m in (0, 1) for h in range(min_hops, 5) for r in (0, 1)
                     if lo <= a + m + h + 3 + r <= hi and not (diff == "easy" and r) and not (diff == "hard" and not r)]
    return out


_DESIGNS = _designs()
_KNOBS = {"easy": {"late": 0.1, "decoy": 0.3, "extra_alert": 0.0, "services": (6, 7)},
          "medium": {"late": 0.4, "decoy": 0.5, "extra_alert": 0.3, "services": (7, 8)},
          "hard": {"late": 0.7, "decoy": 0.7, "extra_alert": 0.6, "services": (8, 10)}}
_SEV_RATES = {"sev1": (25.0, 60.0), "sev2": (5.0, 24.0), "sev3": (1.0, 4.8)}


@dataclass(slots=True)
class Request:
    chain: tuple[str, ...]  # symptom first, root cause last
    named: bool
    severity_given: bool
    rollback: bool
    severity: str


def _history(d: Draws, before: int, n: int) -> list[Deploy]:
    """`n` deploys over the weeks up to a week before `before`, oldest first, patch by patch."""
    rnd, authors = d.random, _V.authors
    major, minor, patch = 1 + int(rnd() * 4), int(rnd() * 21), int(rnd() * 10)
    t = before - DAY * (8 + int(rnd() * 23))
    out = []
    for _ in range(n):
        out.append(Deploy(f"v{major}.{minor}.{patch}", t, authors[int(rnd() * len(authors))]))
        patch += 1
        t += DAY + int(rnd() * 2 * DAY)
    return out


def _next(d: Draws, deploys: list[Deploy], at: int) -> Deploy:
    """The deploy after the last of `deploys`, at `at`."""
    major, minor, patch = deploys[-1].version[1:].split(".")
    return Deploy(f"v{major}.{minor}.{int(patch) + 1}", at, d.pick(_V.authors))


def _make_world(d: Draws, difficulty: str) -> tuple[OpsWorld, Request, tuple[str, ...]]:
    knobs = _KNOBS[difficulty]
    rnd = d.random
    a, m, hops, r = d.pick(_DESIGNS[difficulty])
    names = d.sample(_V.services, d.between(*knobs["services"]))
    chain = names[: hops + 1]
    root = chain[-1]
    day = d.between(60, 300)
    now = day * DAY + 14 * 60 + GRID_MIN * int(rnd() * 6)
    onset = day * DAY + 9 * 60 + int(rnd() * 240)
    severity = d.pick(("sev1", "sev2", "sev3"))
    services: dict[str, Service] = {}
    traps: list[str] = []
    for i, name in enumerate(names):
        logs: dict[str, list[str]] = {"error": [], "warn": []}
        if rnd() < 0.6:
            logs["warn"].append(f"{stamp(onset - int(rnd() * 300))} WARN {d.pick(_V.noise)}")
        if i <= hops:
            since = onset + 2 * (hops - i)  # errors spread upstream from the root
            lo_rate, hi_rate = _SEV_RATES[severity] if i == 0 else (5.0, 60.0)
            rate = round(lo_rate + (hi_rate - lo_rate) * rnd(), 1)
            if name == root:
                message = d.pick(_V.faults)
                calls: tuple[str, ...] = ()
            else:
                message = d.pick(_V.upstream).format(dep=chain[i + 1])
                calls = (chain[i + 1],)
            t = since
            for _ in range(2 + int(rnd() * 2)):
                logs["error"].append(f"{stamp(t)} ERROR {message}")
                t += 1 + int(rnd() * 4)
            services[name] = Service(name, calls, rate, 900 + int(rnd() * 400), since, logs,
                                     _history(d, onset, 1 + int(rnd() * 2)))
        else:
            if rnd() < 0.3:  # an old, unrelated error long before the incident
                logs["error"].append(f"{stamp(onset - 400 - int(rnd() * 200))} ERROR {d.pick(_V.faults)}")
            services[name] = Service(name, (), round(0.8 * rnd(), 1), 80 + int(rnd() * 320), None, logs,
                                     _history(d, onset, 1))
    # Healthy dependencies of the services on the error path: calls the logs do not blame.
    for name in names[hops + 1:]:
        if rnd() < 0.5:
            services[d.pick(chain)].calls += (name,)
    # The cause: a deploy of the root shortly before the onset (its predecessor is the rollback target).
    rd = services[root].deploys
    rd.append(_next(d, rd, onset - d.between(3, 40)))
    if rnd() < knobs["late"]:  # a later deploy of the culprit (an attempted hotfix) that is not the cause
        rd.append(_next(d, rd, onset + d.between(10, 60)))
        traps.append("deploy_after_onset")
    if rnd() < knobs["decoy"]:  # an innocent service deployed shortly before the onset
        innocent = services[d.pick(chain[:-1] or names[hops + 1:])]
        innocent.deploys.append(_next(d, innocent.deploys, onset - d.between(5, 60)))
        traps.append("innocent_recent_deploy")
    symptom = services[chain[0]]
    alerts = [{"alert_id": f"AL-{d.between(100, 999)}", "service": symptom.name, "metric": "error_rate_pct",
               "value": symptom.error_rate, "since_utc": stamp(onset + 2 * hops + 1)}]
    if rnd() < knobs["extra_alert"] and len(names) > hops + 1:
        alerts.append({"alert_id": f"AL-{d.between(100, 999)}", "service": d.pick(names[hops + 1:]),
                       "metric": "disk_usage_pct", "value": float(d.between(85, 97)),
                       "since_utc": stamp(now - d.between(30, 300))})
        if rnd() < 0.5:
            alerts.reverse()
    world = OpsWorld(d.between(100, 899), now, services, alerts)
    return world, Request(tuple(chain), not a, not m, bool(r), severity_of(symptom.error_rate)), tuple(traps)


def solve(world: OpsWorld, req: Request) -> Gold:
    """The reference solver: follow the logs to the failing service and read its deploy history."""
    plan: list[Step] = []
    if not req.named:
        plan.append(Step("list_alerts", {}))
    symptom = world.services[req.chain[0]]
    # The severity comes from the symptom's metrics unless the request states it; in the hard
    # tier (counts for every service) it follows the counts, whatever the request says.
    if not req.severity_given or symptom.counts is not None:
        plan.append(Step("get_metrics", {"service": symptom.name}))
    severity = severity_of(symptom.error_rate)
    # Follow the error logs: an upstream failure names the next service; an own fault ends the walk.
    current = symptom
    while True:
        plan.append(Step("search_logs", {"service": current.name}))
        # The words of the joined messages (`_fast.words_named`): a space never joins two words.
        named = words_named(" ".join(line.split(" ERROR ", 1)[1] for line in current.logs["error"]), current.calls)
        if not named:
            break
        current = world.services[named[0]]
    root = current
    assert root.name == req.chain[-1], (root.name, req.chain)
    plan.append(Step("get_deploys", {"service": root.name}))
    onset = root.errors_since
    assert onset is not None and all(dep.at != onset for dep in root.deploys), "a deploy at the onset has two readings"
    ran = [dep for dep in root.deploys if dep.status != "failed"]  # a failed deploy never ran
    cause_i = max(i for i, dep in enumerate(ran) if dep.at < onset)
    cause, previous = ran[cause_i].version, ran[cause_i - 1].version
    iid = world.predict_id("INC")
    plan.append(Step("file_incident", {"root_cause_service": root.name, "cause_version": cause, "severity": severity,
                                       "summary": f"{root.name} {cause} caused errors seen on {symptom.name}"},
                     {"incident_id": iid}))
    effects = [Effect("root_cause", "incident", "incident", {"service": root.name, "version": cause},
                      f"incident naming {root.name} {cause} as the cause"),
               Effect("severity", "incident", "incident", {"severity": severity}, f"incident filed as {severity}")]
    if req.rollback:
        plan.append(Step("rollback", {"service": root.name, "to_version": previous, "incident_id": iid}))
        effects.append(Effect("rollback", "rollback", "rollback", {"service": root.name, "to_version": previous},
                              f"{root.name} rolled back to {previous}"))
    return Gold("incident", tuple(plan), tuple(effects))


def _pointed_reads(plan: tuple[Step, ...]) -> list[dict[str, Any]]:
    """The reads the policies point to (`POINTED_READS`): the severity follows the rate of "the
    one with the error-rate alert" (list_alerts names it) and the cause the root's
    errors_since_utc, "get_metrics gives" each; the plan reads the onset off the root's error log
    instead, which says the same, and the alert's service off the request when it names it. And,
    for every service the error logs lead through, its metrics and its dependencies: the brief
    calls a service "whose error log only reports failures of a service it calls" a victim, so
    what it calls is how a careful agent confirms each hop (ToolUse 9467, 9484; CrossTask 9465,
    9477, 9487), and the root's show that it fails on its own (CrossTask 8735 T12, ToolUse 8714)."""
    walked = list(dict.fromkeys(s.arguments["service"] for s in plan if s.name in ("search_logs", "get_deploys")))
    return [{"name": "list_alerts", "arguments": {}},
            *({"name": "get_metrics", "arguments": {"service": name}} for name in walked),
            *({"name": "get_dependencies", "arguments": {"service": name}} for name in walked)]


POINTED_READS["incident"] = _pointed_reads


def _brief(now: int) -> str:
    return compose_brief(
        _V.role,
        "Triage production problems with the tools, step by step, and record what you find.",
        [f"It is now {stamp(now)} UTC; every time the tools show is a UTC date and time (YYYY-MM-DD HH:MM). "
         "A service whose error log only reports failures of a service it calls is a victim, not the root cause; "
         "the root cause fails on its own."],
        policy_lines("ops"),
    )


#: How the user states that it wants a rollback: to the version before the cause, which is not
#: "the previous version" when a hotfix came after the cause.
_ROLLBACK_SAID = "Yes, roll the culprit back to the version that ran before the bad deploy."
_NO_ROLLBACK_SAID = "No rollback, please; just file the incident."


def generate(d: Draws, difficulty: str) -> Generated:
    """An incident-triage task: the world, the user's request, and the reference solver's gold."""
    return solved(draft(d, difficulty), solve)


def draft(d: Draws, difficulty: str) -> Generated:
    """`generate`'s task but for its gold's plan and effects (left empty): what the hard tier
    starts from, which solves its own world. The solver makes no draw and changes nothing in
    the world, so every draw and everything else is generate's; its gold's kind is "incident"."""
    world, req, traps = _make_world(d, difficulty)
    t = _V.templates
    symptom = req.chain[0]
    service = d.pick(t["service_inline"]).format(service=symptom) if req.named else ""
    sev = t["sev_inline"].format(severity=req.severity) if req.severity_given else ""
    template = d.pick(t["incident"])
    text = template.format(service=service, sev=sev)
    blurred = {"severity": template.format(service=service, sev="")} if sev else {}
    if req.rollback:
        text += t["rollback"]
        blurred = {k: v + t["rollback"] for k, v in blurred.items()}
    details = [Detail("service", "service", d.pick(t["service_answer"]).format(service=symptom),
                      "upfront" if req.named else "ask")]
    if req.severity_given:
        details.append(Detail("severity", "severity", d.pick(t["sev_answer"]).format(severity=req.severity),
                              "upfront"))
    # Asked whether to roll back, a user who did not ask for it says no (rather than "I don't know").
    details.append(Detail("rollback", "rollback", _ROLLBACK_SAID if req.rollback else _NO_ROLLBACK_SAID,
                          "upfront" if req.rollback else "ask"))
    gold = Gold("incident", (), (), traps)
    return Generated(world, Goal("incident", text, tuple(details), blurred, job=req), gold, _brief(world.now))


def shifts(world: OpsWorld, req: Request) -> list[Shift]:
    """Goal shifts the task offers: the user changes their mind about rolling the culprit back."""
    if req.rollback:
        return [Shift("rollback", "rollback", True, False, "Actually, don't roll anything back; just file the incident.",
                      _NO_ROLLBACK_SAID, solve(world, replace(req, rollback=False)))]
    return [Shift("rollback", "rollback", False, True,
                  "Also, once the incident is filed, please roll the culprit back to the version that ran before the "
                  "bad deploy.", _ROLLBACK_SAID, solve(world, replace(req, rollback=True)))]


DOMAIN = DomainSpec(
    name="ops",
    split=_V.split,
    toolkit=OpsToolkit,
    generate=generate,
    description="find the root-cause service and deploy of an incident, file it, roll back",
    vocabulary={"service": _V.services, "severity": ("sev1", "sev2", "sev3")},
    shifts=shifts,
    undo={"incident": ("withdraw_incident", "incident_id")},
    review=_V.review,
    # The hard tier's parts live in `ops_tier`, which `load_domains` adds to this spec.
)
