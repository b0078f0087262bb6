"""The soak: honest and hostile clients at once against both servers, the env server (``agentgym
serve``) and the leaderboard (``agentgym leaderboard serve``), each in its own process. Hostile:
bodies over the cap (declared and chunked), bad JSON, compression bombs, forbidden kwargs, wrong
types, WebSockets that never read, silent sockets, clients that vanish mid-body and mid-episode.
Honest: heuristic episodes over HTTP and WebSocket, and readers of the board. Asserted: no 5xx
to anyone, no honest failure, RSS growth under 5%, sessions and connections drained at the end.
~20 s in the default run; the 2-minute run is `slow`.

Both servers run with ``MALLOC_ARENA_MAX=2``, so that RSS follows live memory: with glibc's
default of eight arenas per core, the board's RSS swings by several MiB as its worker threads
parse hostile bodies and keep the freed pages in their arenas, which would hide a leak as
well as fake one."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_support import (
    board_process,
    health,
    honest_episodes,
    open_descriptors,
    rss_growth,
    rss_of,
    server_process,
)

ATTACKERS = Path(__file__).with_name("attackers.py")
HONEST_ENV_CLIENTS = 4
IDLE_TIMEOUT_S = 3.0
HEADER_TIMEOUT_S = 2.0
MAX_BODY = 256 * 1024
#: See the module docstring.
MALLOC = {"MALLOC_ARENA_MAX": "2"}


def _board_reader(url: str, deadline: float, statuses: dict[int, int], errors: list[str]) -> None:
    """An honest reader of the board: its pages, its JSON, an entry that is not there."""
    paths = ("/leaderboard", "/leaderboard.json", "/submissions/1", "/")
    with httpx.Client(base_url=url, timeout=30, follow_redirects=False) as client:
        k = 0
        while time.monotonic() < deadline:
            try:
                status = client.get(paths[k % len(paths)]).status_code
                statuses[status] = statuses.get(status, 0) + 1
            except httpx.HTTPError as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
            k += 1
            time.sleep(0.02)


def _server_errors(statuses: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    return {kind: {s: n for s, n in by.items() if s.isdigit() and int(s) >= 500} for kind, by in statuses.items()
            if any(s.isdigit() and int(s) >= 500 for s in by)}


@pytest.mark.parametrize("duration_s", [pytest.param(10.0, id="10s"),
                                        pytest.param(120.0, id="2min", marks=pytest.mark.slow)])
def test_soak_honest_and_hostile_clients_against_both_servers(duration_s: float) -> None:
    with tempfile.TemporaryDirectory() as tmp, \
            server_process("--workers", "1", "--idle-timeout-s", str(IDLE_TIMEOUT_S), "--header-timeout-s", str(HEADER_TIMEOUT_S),
                           "--send-timeout-s", "2", "--max-body-bytes", str(MAX_BODY),
                           log=os.path.join(tmp, "env.log"), env=MALLOC) as (env_url, env_proc), \
            board_process(os.path.join(tmp, "board.sqlite"), log=os.path.join(tmp, "board.log"),
                          env=MALLOC) as (board_url, board_proc):
        fds = {"env": open_descriptors(env_proc.pid), "board": open_descriptors(board_proc.pid)}
        start = time.monotonic()
        deadline = start + duration_s
        hostile = [subprocess.Popen([sys.executable, str(ATTACKERS), *args], stdout=subprocess.PIPE, text=True)
                   for args in (("env", *env_url.removeprefix("http://").split(":"), str(duration_s), str(MAX_BODY)),
                                ("board", *board_url.removeprefix("http://").split(":"), str(duration_s)))]
        tally: dict[str, Any] = {"calls": 0, "errors": 0, "episodes": 0, "examples": []}
        lock = threading.Lock()
        board_statuses: dict[int, int] = {}
        board_errors: list[str] = []
        honest = [threading.Thread(target=honest_episodes, args=(env_url, i, deadline, tally, lock))
                  for i in range(HONEST_ENV_CLIENTS)]
        honest.append(threading.Thread(target=_board_reader, args=(board_url, deadline, board_statuses, board_errors)))
        for t in honest:
            t.start()
        samples: dict[str, list[tuple[float, int]]] = {"env": [], "board": []}
        while any(t.is_alive() for t in honest):
            now = time.monotonic() - start
            samples["env"].append((now, rss_of(env_proc.pid)))
            samples["board"].append((now, rss_of(board_proc.pid)))
            time.sleep(0.25)
        attacks = [json.loads(p.communicate(timeout=60)[0].strip().splitlines()[-1]) for p in hostile]

        # The end: sessions reaped, connections let go.
        drained = time.monotonic()
        while health(env_url)["sessions"] and time.monotonic() - drained < IDLE_TIMEOUT_S + 5:
            time.sleep(0.1)
        drain_s = time.monotonic() - drained
        sessions = health(env_url)["sessions"]
        back = time.monotonic()
        while (open_descriptors(env_proc.pid) > fds["env"] + 4 or open_descriptors(board_proc.pid) > fds["board"] + 4) \
                and time.monotonic() - back < 10 + 5:
            time.sleep(0.1)
        fds_after = {"env": open_descriptors(env_proc.pid), "board": open_descriptors(board_proc.pid)}

        # Medians over wide windows (the board's RSS moves by a few MiB with each hostile body), the
        # first after the warm-up: the first minutes import and cache what the first episodes need.
        growth = {name: rss_growth(s, duration_s, statistics.median, warm=(0.4, 0.6)) for name, s in samples.items()}
        hostile_acts = {name: sum(sum(by.values()) for by in a.values()) for name, a in zip(("env", "board"), attacks)}
        rate = tally["errors"] / max(1, tally["calls"])
        print(f"\nsoak ({duration_s:g} s): env server: {tally['calls']} honest calls, {tally['episodes']} episodes, "
              f"{tally['errors']} errors ({rate:.3%}), {hostile_acts['env']} hostile acts "
              f"{attacks[0]}; board: {sum(board_statuses.values())} honest reads {board_statuses}, "
              f"{hostile_acts['board']} hostile acts {attacks[1]}; RSS "
              + ", ".join(f"{n} {b / 2**20:.1f} -> {f / 2**20:.1f} MiB ({g:+.2%})" for n, (b, f, g) in growth.items())
              + f"; sessions drained in {drain_s:.1f} s to {sessions}; descriptors {fds} -> {fds_after}")
        assert not _server_errors(attacks[0]) and not _server_errors(attacks[1])
        assert not [s for s in board_statuses if s >= 500]
        assert tally["calls"] > 0 and tally["errors"] == 0, tally["examples"]
        assert not board_errors and sum(board_statuses.values()) > 0, board_errors[:5]
        # The promise (< 5%) is the 2-minute run's: in 20 s on a loaded machine the board is still
        # warming up (+7% seen at a load average of 10), so the short run catches gross growth only.
        limit = 0.05 if duration_s >= 60 else 0.15
        assert all(g < limit for _, _, g in growth.values()), growth
        assert sessions == 0
        assert fds_after["env"] <= fds["env"] + 4 and fds_after["board"] <= fds["board"] + 4
