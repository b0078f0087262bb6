"""S6: sustained load over loopback against a server in its own process: error rate, memory,
and sessions draining at the end. ~10 s in the default run; the 2-minute run is `slow`."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from server_support import health, rss_of, server_process

from agentgym.agents import make_agent
from agentgym.server.app import default_env_ids
from agentgym.server.client import RemoteEnv

CLIENTS = 8


def _client(url: str, index: int, deadline: float, tally: dict[str, Any], lock: threading.Lock) -> None:
    """Open a session, play one or two heuristic episodes, close it; again until the deadline."""
    ids = default_env_ids()
    agent = make_agent("heuristic")
    calls = errors = episodes = 0
    examples: list[str] = []
    n = 0
    while time.monotonic() < deadline:
        n += 1
        env = None
        try:
            env = RemoteEnv(url, ids[n % len(ids)], transport=("http", "ws")[(index + n) % 2],
                            noise="tool_failure=0.2" if n % 3 == 0 else None)
            calls += 1
            for k in range(1 + n % 2):
                obs, info = env.reset(seed=index * 100_000 + n * 10 + k)
                calls += 1
                agent.reset(obs, info)
                done = False
                while not done:
                    obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
                    calls += 1
                    done = terminated or truncated
                episodes += 1
        except Exception as exc:  # noqa: BLE001 (every failure is counted and shown, none is hidden)
            errors += 1
            if len(examples) < 5:
                examples.append(f"{type(exc).__name__}: {exc}")
        finally:
            if env is not None:
                env.close()
                calls += 1
    with lock:
        tally["calls"] += calls
        tally["errors"] += errors
        tally["episodes"] += episodes
        tally["examples"] += examples


@pytest.mark.parametrize(("duration_s", "env_calls"), [
    pytest.param(10.0, "thread", id="10s"),
    pytest.param(120.0, "thread", id="2min-thread", marks=pytest.mark.slow),
    pytest.param(120.0, "inline", id="2min-inline", marks=pytest.mark.slow),
])
def test_s6_sustained_load(duration_s: float, env_calls: str) -> None:
    with server_process("--max-sessions", "64", "--env-calls", env_calls) as (url, proc):
        tally: dict[str, Any] = {"calls": 0, "errors": 0, "episodes": 0, "examples": []}
        lock = threading.Lock()
        start = time.monotonic()
        deadline = start + duration_s
        threads = [threading.Thread(target=_client, args=(url, i, deadline, tally, lock)) for i in range(CLIENTS)]
        for t in threads:
            t.start()
        samples: list[tuple[float, int]] = []
        while any(t.is_alive() for t in threads):
            samples.append((time.monotonic() - start, rss_of(proc.pid)))
            time.sleep(0.25)
        for t in threads:
            t.join()
        # Memory after warm-up (the first 30% of the run) against its last quarter.
        warm = [rss for t, rss in samples if 0.3 * duration_s <= t <= 0.4 * duration_s]
        late = [rss for t, rss in samples if t >= 0.75 * duration_s]
        baseline, final = max(warm), max(late)
        growth = (final - baseline) / baseline
        h = health(url)
        rate = tally["errors"] / max(1, tally["calls"])
        print(f"\nS6 ({duration_s:g} s, {CLIENTS} clients, env calls {env_calls}): {tally['calls']} calls, "
              f"{tally['episodes']} episodes, {tally['calls'] / duration_s:.0f} calls/s, {tally['errors']} errors "
              f"({rate:.3%}); server RSS {baseline / 2**20:.1f} -> {final / 2**20:.1f} MiB ({growth:+.2%}); "
              f"sessions at the end {h['sessions']}, peak {h['peak_sessions']}")
        assert tally["calls"] > 0 and rate < 0.001, tally["examples"]
        assert growth < 0.05
        assert h["sessions"] == 0 and h["peak_sessions"] <= 64
