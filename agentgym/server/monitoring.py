"""Prometheus metrics of the env server and the leaderboard, served at ``GET /metrics``.

Each app counts in a `CollectorRegistry` of its own, never prometheus_client's process-global
one, so several servers in one process (tests, a board hosting sealed sessions) never mix
their counts. Every label takes values from a fixed set (the env's error codes, the server's
own error codes, close and drop reasons, verification outcomes): a client's input never becomes
a label, so the number of series stays bounded whatever is sent.

What the servers count anyway (live sessions, the connection guard's drops, sealed runs) is read
when ``/metrics`` is scraped, through collectors; so are the step path's counts, kept in plain
ints (`ServerMetrics`).
"""

from __future__ import annotations

import re
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric

from agentgym.core.protocol import ErrorCode

if TYPE_CHECKING:
    from agentgym.server.connections import ConnectionGuard
    from agentgym.server.sessions import SessionStore

__all__ = ["BoardMetrics", "Monitor", "ServerMetrics", "STEP_ERROR_CODES", "VERIFICATION_OUTCOMES",
           "metrics_response", "read_metrics", "watch_connections"]

#: The agent's error codes a step may report in ``info["errors"]``; anything else counts as ``other``.
STEP_ERROR_CODES = (*(c.value for c in ErrorCode), "other")
#: How a verification ended. Open track: ``accepted`` (a new entry), ``duplicate`` (the entry
#: itself, sent again), ``copy`` (another's run), ``rejected`` (the replay or the checks refused
#: it), ``malformed``, ``too_large``, ``busy``, ``unverifiable``. Sealed track: ``accepted`` or
#: ``rejected``.
VERIFICATION_OUTCOMES = ("accepted", "duplicate", "copy", "rejected", "malformed", "too_large", "busy",
                         "unverifiable")
TRACKS = ("open", "sealed")
TRANSPORTS = ("http", "ws")

#: Step latency buckets, seconds: from a loopback step's latency up to the default step timeout.
STEP_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                10.0, 30.0)
#: Verification buckets, seconds: a small suite replays in a second, the largest in minutes.
VERIFICATION_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)

#: The server's error codes are identifiers written in its code (``unknown_session``,
#: ``body_too_large`` ...); one that is not, or codes past this many, count as ``other``, so no
#: bug can ever grow the label set without bound.
_ERROR_CODE = re.compile(r"[a-z][a-z0-9_]{0,39}")
_MAX_ERROR_CODES = 64


class Monitor:
    """A registry of one app's metrics, and the connection guard of the server that runs it.

    Args:
        registry: where to count (default: a new registry of this app's own).
    """

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self._guard: ConnectionGuard | None = None

    def watch(self, guard: ConnectionGuard) -> None:
        """Report `guard`'s open connections and drops too (once; the server that runs the app calls it)."""
        if self._guard is None:
            self._guard = guard
            self.registry.register(_ConnectionsCollector(guard))

    def exposition(self) -> bytes:
        """Every metric of the registry, in Prometheus' text format."""
        return generate_latest(self.registry)


class ServerMetrics(Monitor):
    """The env server's metrics: sessions, resets and steps, step latency, errors.

    Resets, steps, the agent's errors and the step latency are plain counts kept on the event
    loop (every step is answered there) and handed to prometheus_client when scraped: its
    `Counter` and `Histogram` take a lock per call, which would cost the step path several
    times what the counting itself costs.

    Args:
        store: the app's sessions (read when scraped).
        registry: where to count (default: a new registry of the app's own).
    """

    def __init__(self, store: SessionStore, registry: CollectorRegistry | None = None) -> None:
        super().__init__(registry)
        r = self.registry
        r.register(_SessionsCollector(store))
        self.resets = dict.fromkeys(TRANSPORTS, 0)
        self.steps = dict.fromkeys(TRANSPORTS, 0)
        self.step_error_counts = dict.fromkeys(STEP_ERROR_CODES, 0)
        #: Steps by latency bucket (`STEP_BUCKETS`, then +Inf), not cumulative, and their seconds in all.
        self.latency_buckets = [0] * (len(STEP_BUCKETS) + 1)
        self.latency_sum = 0.0
        r.register(_StepsCollector(self))
        self._error_family = Counter("agentgym_errors", "Requests and WebSocket messages answered with an error, by "
                                     "its code (body_too_large and too_many_sessions are the guards' refusals)",
                                     ["code"], registry=r)
        self._errors: dict[str, Any] = {}

    def reset(self, transport: str) -> None:
        """A reset was answered over `transport` (``http`` or ``ws``)."""
        self.resets[transport] += 1

    def stepped(self, answer: Any, started: float, transport: str) -> None:
        """A step was answered over `transport`; `started` is its `time.perf_counter()` at the start.

        The agent's errors are read from the answer's ``info["errors"]`` when the host answered
        a dict; a host that answers with encoded bytes reports them with `step_errors`.
        """
        seconds = time.perf_counter() - started
        self.latency_buckets[bisect_left(STEP_BUCKETS, seconds)] += 1
        self.latency_sum += seconds
        self.steps[transport] += 1
        if type(answer) is dict:
            info = answer.get("info")
            if type(info) is dict and info.get("errors"):
                self.step_errors(info["errors"])

    def step_errors(self, codes: Any) -> None:
        """Count the agent's errors of one step (its ``info["errors"]``, a list of error codes)."""
        if not isinstance(codes, list):
            return
        counts = self.step_error_counts
        for code in codes:
            key = code if type(code) is str and code in counts else "other"
            counts[key] += 1

    def error(self, code: str) -> None:
        """A request or message was answered with the error `code`."""
        counter = self._errors.get(code)
        if counter is None:
            if len(self._errors) >= _MAX_ERROR_CODES or not isinstance(code, str) or not _ERROR_CODE.fullmatch(code):
                counter = self._error_family.labels("other")  # not kept per code: the dict stays bounded too
            else:
                counter = self._errors[code] = self._error_family.labels(code)
        counter.inc()


class BoardMetrics(Monitor):
    """The leaderboard's metrics: verifications by track and outcome, their durations, refused
    requests and sealed runs. With the sealed track, its sessions' `ServerMetrics` count in the
    same registry.

    Args:
        registry: where to count (default: a new registry of the board's own).
    """

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        super().__init__(registry)
        r = self.registry
        verifications = Counter("agentgym_board_verifications", "Submissions answered (open track) and sealed runs "
                                "verified (sealed track), by outcome", ["track", "outcome"], registry=r)
        self._verifications = {(t, o): verifications.labels(t, o) for t in TRACKS for o in VERIFICATION_OUTCOMES
                               if t == "open" or o in ("accepted", "rejected")}
        durations = Histogram("agentgym_board_verification_seconds", "Seconds a verification took, for those "
                              "that ended accepted or rejected (decode, replay and store)", ["track"], registry=r,
                              buckets=VERIFICATION_BUCKETS)
        self._durations = {t: durations.labels(t) for t in TRACKS}
        self._refused = Counter("agentgym_board_refused", "Requests the board refused before a verification (the "
                                "body's size and the bodies held at once), and unknown entries, by code", ["code"],
                                registry=r)

    def verified(self, track: str, outcome: str, seconds: float) -> None:
        """A verification on `track` ended with `outcome` after `seconds`."""
        self._verifications[track, outcome].inc()
        if outcome in ("accepted", "rejected"):
            self._durations[track].observe(seconds)

    def refused(self, code: str) -> None:
        """A request was refused with `code` (one of the board's own codes)."""
        self._refused.labels(code).inc()

    def watch_sealed(self, live: Callable[[], Mapping[str, int]], record: Callable[[], Mapping[str, int]]) -> None:
        """Report the sealed runs: `live` counts those in memory by phase (``playing``,
        ``verifying``), `record` the board's runs by state (``open``, ``complete`` ...)."""
        self.registry.register(_SealedCollector(live, record))


def metrics_response(monitor: Monitor) -> Any:
    """The ``GET /metrics`` answer: the registry in Prometheus' text format."""
    from starlette.responses import Response

    return Response(monitor.exposition(), media_type=CONTENT_TYPE_LATEST)


def watch_connections(app: Any, guard: ConnectionGuard) -> None:
    """Have `app`'s metrics (its ``state.metrics``, if it has any) report `guard`'s connections."""
    monitor = getattr(getattr(app, "state", None), "metrics", None)
    if isinstance(monitor, Monitor):
        monitor.watch(guard)


# -------------------------------------------------------------------------- collectors (read when scraped)
def _by_label(family: type[CounterMetricFamily] | type[GaugeMetricFamily], name: str, doc: str, label: str,
              counts: Mapping[str, float], known: Iterable[str] = ()) -> Metric:
    """A family with one sample per value of `label`: each of `known` (0 if not counted yet) and
    each counted one. `counts` is copied first: the event loop may go on counting meanwhile."""
    counts = dict(counts)
    metric = family(name, doc, labels=[label])
    for key in sorted({*known, *counts}):
        metric.add_metric([key], counts.get(key, 0))
    return metric


class _SessionsCollector:
    def __init__(self, store: SessionStore) -> None:
        self.store = store

    def collect(self) -> Iterator[Metric]:
        from agentgym.server.sessions import CLOSE_REASONS

        store = self.store
        yield GaugeMetricFamily("agentgym_sessions_live", "Sessions open now", value=store.live)
        yield GaugeMetricFamily("agentgym_sessions_max", "The session cap (a create past it gets 429)",
                                value=store.config.max_sessions)
        yield CounterMetricFamily("agentgym_sessions_opened", "Sessions opened", value=store.opened)
        yield _by_label(CounterMetricFamily, "agentgym_sessions_closed", "Sessions closed, by why (closed: DELETE or "
                        "the host; idle: the reaper)", "reason", store.closed_by, CLOSE_REASONS)


class _StepsCollector:
    def __init__(self, metrics: ServerMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        m = self.metrics
        yield _by_label(CounterMetricFamily, "agentgym_resets", "Resets answered with an episode's start, by "
                        "transport", "transport", m.resets)
        yield _by_label(CounterMetricFamily, "agentgym_steps", "Steps answered with the env's turn, by transport",
                        "transport", m.steps)
        yield _by_label(CounterMetricFamily, "agentgym_step_errors", "The agent's errors in answered steps, by the "
                        "env's error code (info['errors']; a code that is not one of agentgym's counts as 'other')",
                        "code", m.step_error_counts)
        counts, total = list(m.latency_buckets), m.latency_sum  # copied first: the loop goes on counting
        cumulative, buckets = 0, []
        for bound, n in zip((*map(str, STEP_BUCKETS), "+Inf"), counts):
            cumulative += n
            buckets.append((bound, cumulative))
        yield HistogramMetricFamily("agentgym_step_seconds", "Seconds from a step request read to its answer encoded "
                                    "(the env call, its thread hand-off and the JSON)", buckets=buckets,
                                    sum_value=total)


class _ConnectionsCollector:
    def __init__(self, guard: ConnectionGuard) -> None:
        self.guard = guard

    def collect(self) -> Iterator[Metric]:
        from agentgym.server.connections import DROP_REASONS

        guard = self.guard
        yield GaugeMetricFamily("agentgym_connections_open", "Client connections open now", value=guard.live)
        yield GaugeMetricFamily("agentgym_connections_max", "The connection limit", value=guard.max_connections)
        yield _by_label(CounterMetricFamily, "agentgym_connections_dropped", "Connections the connection guard "
                        "refused or dropped, by why", "reason", guard.dropped, DROP_REASONS)


class _SealedCollector:
    def __init__(self, live: Callable[[], Mapping[str, int]], record: Callable[[], Mapping[str, int]]) -> None:
        self.live, self.record = live, record

    def collect(self) -> Iterator[Metric]:
        yield _by_label(GaugeMetricFamily, "agentgym_board_sealed_runs_live", "Sealed runs in memory now, by phase "
                        "(playing their episodes, or being verified)", "phase", self.live())
        yield _by_label(GaugeMetricFamily, "agentgym_board_sealed_runs", "Sealed runs on the board's record, by "
                        "state (open, or how it ended: complete, incomplete, rejected)", "state", self.record())


# -------------------------------------------------------------------------- reading an exposition back
def read_metrics(text: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """The samples of a ``/metrics`` exposition: sample name -> {its labels, sorted: value}.

    For a check or a test that reads what a server says, e.g.
    ``read_metrics(text)["agentgym_steps_total"][(("transport", "ws"),)]``.
    """
    from prometheus_client.parser import text_string_to_metric_families

    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out
