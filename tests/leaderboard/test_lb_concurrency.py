"""Honest submissions verified at the same time are each replayed on envs of their own (docs/RELIABILITY.md, L6).

Replay steps stateful envs; two verifications that step one instance interleave their episodes
and reject each other. These tests run verifications at once for real (threads, and a live
server on loopback) and count false rejections; each is bounded in time.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import lb_support as S
import pytest

from agentgym.bench.suites import Suite
from agentgym.leaderboard.submission import SubmissionError, decode_submission
from agentgym.leaderboard.verify import _ENVS, replay_episode, verify_submission

N_CONCURRENT = 20
THREADS = 4
TIME_LIMIT_S = 120.0


def test_l6_concurrent_verifications_have_no_false_rejects() -> None:
    # Every family at once (Dialog, ToolUse and CrossTask envs each replayed by four threads).
    subs = [decode_submission(S.body_for(S.records(*run, suite_id=S.MIXED_SUITE.id), suite=S.MIXED_SUITE.id))
            for run in S.AGENTS]

    def verify(i: int) -> str | None:
        try:
            verify_submission(subs[i % len(subs)], S.REGISTRY, workers=1)
        except SubmissionError as exc:
            return str(exc)
        return None

    t0 = time.monotonic()
    with ThreadPoolExecutor(THREADS) as pool:
        verdicts = list(pool.map(verify, range(N_CONCURRENT)))
    elapsed = time.monotonic() - t0
    false_rejects = [v for v in verdicts if v is not None]
    print(f"\nL6: {len(false_rejects)} false rejects of {N_CONCURRENT} honest verifications on {THREADS} threads "
          f"({len(S.MIXED_SUITE)} episodes each, {elapsed:.1f} s)")
    assert not false_rejects, false_rejects[:3]
    assert elapsed < TIME_LIMIT_S


def test_env_pool_lends_each_env_to_one_replay_at_a_time() -> None:
    # Kwargs no other test uses: the pool is the process's, and this counts the envs of one key.
    suite = Suite(id="lbpool-v1", description="", envs=("AgentRL/Dialog-v0",), noise=("none",), n_seeds=1, trials=1,
                  kwargs={"max_turns": 7})
    job = suite.jobs()[0]
    holders: dict[int, int] = {}
    overlaps = []
    lock = threading.Lock()

    def hold(_: int) -> int:
        with _ENVS.lend(job) as (env, _spec):
            with lock:
                holders[id(env)] = holders.get(id(env), 0) + 1
                if holders[id(env)] > 1:
                    overlaps.append(id(env))
            time.sleep(0.01)
            with lock:
                holders[id(env)] -= 1
            return id(env)

    with ThreadPoolExecutor(8) as pool:
        lent = list(pool.map(hold, range(64)))
    assert not overlaps
    assert len(set(lent)) <= 8  # returned envs are lent again, never more than were in use at once
    # A replay after all that (an env lent many times) still matches its record.
    first = S.SUITE.jobs()[0]
    metrics, mismatch = replay_episode(first, S.by_key(S.records("heuristic"))[first.key])
    assert mismatch is None and metrics


# ============================================================================ over HTTP
@pytest.fixture
def live_board(tmp_path: Path) -> Iterator[str]:
    from agentgym.leaderboard.server import create_app

    app = create_app(tmp_path / "board.sqlite", suites=S.REGISTRY, workers=1, max_pending=N_CONCURRENT)
    with S.serving(app) as url:
        yield url


def _post(url: str, body: bytes) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(url + "/submissions", data=body, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=TIME_LIMIT_S) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_l6_concurrent_submissions_over_http(live_board: str) -> None:
    bodies = [S.body_for(S.records(*run), model=f"model-{i}") for i, run in enumerate(S.distinct_runs(N_CONCURRENT))]
    start = threading.Barrier(N_CONCURRENT)

    def submit(body: bytes) -> tuple[int, dict[str, Any]]:
        start.wait(timeout=30)
        return _post(live_board, body)

    t0 = time.monotonic()
    with ThreadPoolExecutor(N_CONCURRENT) as pool:
        answers = list(pool.map(submit, bodies))
    elapsed = time.monotonic() - t0
    refused = [(status, a.get("error"), a.get("message")) for status, a in answers if status != 201]
    print(f"\nL6: {len(refused)} of {N_CONCURRENT} concurrent honest submissions refused over HTTP ({elapsed:.1f} s)")
    assert not refused, refused[:3]
    with urllib.request.urlopen(live_board + "/leaderboard.json", timeout=10) as r:
        board = json.loads(r.read())
    assert sum(len(s["rows"]) for s in board["suites"]) == N_CONCURRENT
    assert elapsed < TIME_LIMIT_S
