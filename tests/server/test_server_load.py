"""S6: sustained load over loopback against a server in its own process: error rate, memory,
and sessions draining at the end. ~10 s in the default run; the 2-minute run is `slow`."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from server_support import health, honest_episodes, rss_growth, rss_of, server_process

CLIENTS = 8


@pytest.mark.parametrize(("duration_s", "env_calls"), [
    pytest.param(6.0, "thread", id="6s"),
    pytest.param(120.0, "thread", id="2min-thread", marks=pytest.mark.slow),
    pytest.param(120.0, "inline", id="2min-inline", marks=pytest.mark.slow),
])
def test_s6_sustained_load(duration_s: float, env_calls: str) -> None:
    with server_process("--max-sessions", "64", "--env-calls", env_calls) as (url, proc):
        tally: dict[str, Any] = {"calls": 0, "errors": 0, "episodes": 0, "examples": []}
        lock = threading.Lock()
        start = time.monotonic()
        deadline = start + duration_s
        threads = [threading.Thread(target=honest_episodes, args=(url, i, deadline, tally, lock))
                   for i in range(CLIENTS)]
        for t in threads:
            t.start()
        samples: list[tuple[float, int]] = []
        while any(t.is_alive() for t in threads):
            samples.append((time.monotonic() - start, rss_of(proc.pid)))
            time.sleep(0.25)
        for t in threads:
            t.join()
        baseline, final, growth = rss_growth(samples, duration_s)
        h = health(url)
        rate = tally["errors"] / max(1, tally["calls"])
        print(f"\nS6 ({duration_s:g} s, {CLIENTS} clients, env calls {env_calls}): {tally['calls']} calls, "
              f"{tally['episodes']} episodes, {tally['calls'] / duration_s:.0f} calls/s, {tally['errors']} errors "
              f"({rate:.3%}); server RSS {baseline / 2**20:.1f} -> {final / 2**20:.1f} MiB ({growth:+.2%}); "
              f"sessions at the end {h['sessions']}, peak {h['peak_sessions']}")
        assert tally["calls"] > 0 and rate < 0.001, tally["examples"]
        assert growth < 0.05
        assert h["sessions"] == 0 and h["peak_sessions"] <= 64
