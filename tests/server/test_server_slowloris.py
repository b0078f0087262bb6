"""S9: slowloris against a server whose descriptor limit is 1,024: 1,100 half-open sockets (silent,
trickled headers, trickled bodies, re-opened as the server drops them) while honest clients
play episodes and open fresh connections. The honest ones are served, quickly; the server's log
stays a few lines long; its descriptors come back once the attack stops.

The default run attacks for 10 s (three waves of drops and re-opens at the header timeout of 3 s);
``-m slow`` attacks for 14 s, the run whose figures docs/RELIABILITY.md reports."""

from __future__ import annotations

import http.client
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from server_support import health, open_descriptors, percentile, server_process, timed_episodes

ATTACKERS = Path(__file__).with_name("attackers.py")
DESCRIPTORS = 1024
HALF_OPEN = 1100
HEADER_TIMEOUT_S = 3.0


def _fresh_connections(url: str, until: float, out: list[float], errors: list[str]) -> None:
    """A new connection for every request: the clients the attack used to lock out."""
    host, port = url.removeprefix("http://").split(":")
    while time.monotonic() < until:
        t = time.perf_counter()
        try:
            conn = http.client.HTTPConnection(host, int(port), timeout=10)
            conn.request("GET", "/health")
            status = conn.getresponse().status
            conn.close()
            if status != 200:
                errors.append(f"fresh: status {status}")
            else:
                out.append(time.perf_counter() - t)
        except (OSError, http.client.HTTPException) as exc:
            errors.append(f"fresh: {type(exc).__name__}: {exc}")
        time.sleep(0.02)


@pytest.mark.skipif(resource.getrlimit(resource.RLIMIT_NOFILE)[1] < HALF_OPEN + 200,
                    reason="the attacker needs more descriptors than this machine's hard limit")
@pytest.mark.parametrize("attack_s", [10.0, pytest.param(14.0, marks=pytest.mark.slow)], ids=["10s", "14s"])
def test_s9_slowloris_at_a_descriptor_limit_of_1024(attack_s: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "server.log")
        # One worker: the descriptor limit and the figures are per worker process (each of a
        # multi-worker server enforces them on its own connections).
        with server_process("--workers", "1", "--header-timeout-s", str(HEADER_TIMEOUT_S), nofile=DESCRIPTORS,
                            log=log) as (url, proc):
            before = open_descriptors(proc.pid)
            host, port = url.removeprefix("http://").split(":")
            hold = HEADER_TIMEOUT_S + 10
            attack = subprocess.Popen([sys.executable, str(ATTACKERS), "slowloris", host, port, str(HALF_OPEN),
                                       str(attack_s), str(hold)], stdout=subprocess.PIPE, text=True)
            try:
                time.sleep(1.0)  # the first wave is in
                until = time.monotonic() + attack_s - 2.0
                timings: dict[str, list[float]] = {"http": [], "ws": [], "fresh": []}
                errors: list[str] = []
                clients = [threading.Thread(target=timed_episodes, args=(url, t, until, timings[t], errors))
                           for t in ("http", "ws")]
                clients.append(threading.Thread(target=_fresh_connections, args=(url, until, timings["fresh"], errors)))
                peak = 0
                for c in clients:
                    c.start()
                while any(c.is_alive() for c in clients):
                    peak = max(peak, open_descriptors(proc.pid))
                    time.sleep(0.2)
                assert attack.stdout is not None
                stats = attack.stdout.readline().strip()  # the attack is over; its sockets stay open
                recovered = _recovery_s(proc.pid, before, hold)
            finally:
                attack.kill()
                attack.wait()
            log_bytes = Path(log).stat().st_size
            lines = Path(log).read_text(errors="replace").splitlines()
            honest = timings["http"] + timings["ws"]
            figures: dict[str, Any] = {
                k: (len(v), round(1e3 * percentile(v, 0.5), 1), round(1e3 * percentile(v, 0.99), 1))
                for k, v in timings.items() if v}
            print(f"\nS9: {HALF_OPEN} half-open sockets at a descriptor limit of {DESCRIPTORS} for {attack_s:g} s "
                  f"(attacker: {stats}); honest (n, p50 ms, p99 ms): {figures}; errors {errors[:5]}; server "
                  f"descriptors peak {peak}, back to {before} {recovered:.1f} s after the attack while the attacker "
                  f"held its sockets; log {log_bytes} bytes, {len(lines)} lines")
            assert not errors
            assert len(timings["fresh"]) >= 50 and len(honest) >= 200
            assert percentile(honest, 0.99) < 0.050
            assert percentile(timings["fresh"], 0.99) < 0.5
            assert peak < DESCRIPTORS
            assert log_bytes < 64 * 1024 and not any("Too many open files" in line for line in lines)
            assert recovered < HEADER_TIMEOUT_S + 5
            assert health(url)["sessions"] == 0


def _recovery_s(pid: int, baseline: int, limit_s: float) -> float:
    """Seconds until process `pid` holds no more descriptors than `baseline` (a few of slack)."""
    start = time.monotonic()
    while open_descriptors(pid) > baseline + 4 and time.monotonic() - start < limit_s:
        time.sleep(0.1)
    return time.monotonic() - start
