"""Sealed runs over loopback: the whole protocol, tokens, quotas, resume, incomplete runs, and the
env server's limits (S2, S3, S4, S7) for the sessions the board hosts (docs/RELIABILITY.md L8, S-rows)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import lb_sealed_support as T
import lb_support as S
import pytest

from agentgym.agents.heuristic import HeuristicAgent
from agentgym.eval.runner import AgentSpec
from agentgym.leaderboard.board import board_dict, build_board
from agentgym.leaderboard.sealed.client import PrivilegedAgent, SealedTarget, run_sealed
from agentgym.leaderboard.sealed.config import SealedConfig
from agentgym.leaderboard.sealed.seeds import run_seeds
from agentgym.leaderboard.service import receive
from agentgym.leaderboard.submission import Rejected, decode_submission
from agentgym.leaderboard.tokens import TokenBook
from agentgym.leaderboard.verify import verify_submission

HERE = Path(__file__).parent


@pytest.fixture
def board(tmp_path: Path) -> Iterator[T.Board]:
    with T.sealed_board(tmp_path) as b:
        yield b


def _run(board: T.Board, token: str, agent: str, out: Path, **kw: Any) -> dict[str, Any]:
    target = SealedTarget(board.url, token, kw.pop("model", "m"), kw.pop("revision", "r1"))
    return run_sealed(kw.pop("suite", S.SUITE.id), AgentSpec(agent), target, out, progress=False,
                      concurrency=kw.pop("concurrency", 4), **kw)


def _published(path: str) -> Any:
    return decode_submission(Path(path).read_bytes())


# ============================================================================ the whole run
def test_a_sealed_run_is_played_stored_in_its_track_and_published(board: T.Board, tmp_path: Path) -> None:
    token = board.token()
    final = _run(board, token, "heuristic", tmp_path / "out")
    assert final["state"] == "complete" and final["entry"]["episodes"] == len(S.SUITE)
    entry = board.store.get(final["entry"]["id"])
    assert entry is not None and entry.track == "sealed" and not entry.reference and entry.organisation == "tests"
    sub = _published(final["records_file"])
    run_id = final["run_id"]
    assert sub.manifest.sealed is not None and sub.manifest.sealed.run_id == run_id
    assert sub.manifest.sealed.seeds == run_seeds(T.SECRET, run_id, S.SUITE)  # HMAC(secret, run id, task)
    assert {r["seed"] for r in sub.records} == set(sub.manifest.sealed.seeds)
    assert all(r["agent"] == {"name": "heuristic", "config": HeuristicAgent().config(), "privileged": False}
               for r in sub.records)
    again = verify_submission(sub, T.REGISTRY, workers=1)  # anyone can replay them
    assert again.summary["success"] == entry.summary["success"]
    # The board shows it in the sealed track, linked to its records.
    sections = board_dict(build_board(board.store.entries(), T.REGISTRY))["suites"]
    assert [(s["track"], [r["id"] for r in s["rows"]]) for s in sections] == [("sealed", [entry.id])]
    status, page, _ = T.http(board.url, "GET", "/leaderboard")
    assert status == 200 and f'href="/submissions/{entry.id}/records"' in page.decode()
    status, body, headers = T.http(board.url, "GET", f"/submissions/{entry.id}/records")
    assert status == 200 and headers["content-type"] == "application/gzip" and body == Path(
        final["records_file"]).read_bytes()
    # Published records cannot enter the open track, and the same identity has one sealed entry.
    with pytest.raises(Rejected) as refused:
        receive(body, board.store, suites=T.REGISTRY)
    assert refused.value.code == "sealed_upload"
    status, answer, _ = T.http(board.url, "POST", "/sealed/runs", {"suite": S.SUITE.id, "agent": "heuristic",
                                                                   "agent_config": HeuristicAgent().config(),
                                                                   "model": "m", "revision": "r1"}, token)
    assert status == 409 and answer["error"]["code"] == "already_sealed"


def test_a_sealed_run_of_a_suite_with_a_difficulty_plays_and_replays_that_tier(board: T.Board, tmp_path: Path) -> None:
    final = _run(board, board.token(), "heuristic", tmp_path / "out", suite=S.HARD_SUITE.id)
    assert final["state"] == "complete" and final["entry"]["episodes"] == len(S.HARD_SUITE)
    sub = _published(final["records_file"])
    assert {(r["env"]["kwargs"]["difficulty"], r["task"]["difficulty"]) for r in sub.records} == {("hard", "hard")}
    entry = board.store.get(final["entry"]["id"])
    assert entry is not None and verify_submission(sub, T.REGISTRY, workers=1).summary["success"] == entry.summary["success"]
    sections = build_board(board.store.entries(), T.REGISTRY)
    assert [(s.track, s.suite) for s in sections] == [("sealed", S.HARD_SUITE.id)]


def test_the_client_sees_no_seed_and_nothing_the_harness_hides(board: T.Board, tmp_path: Path) -> None:
    T.RecordingAgent.seen, T.RecordingAgent.binds = [], 0
    final = _run(board, board.token(), "lb_sealed_support:RecordingAgent", tmp_path / "out")
    seeds = _published(final["records_file"]).manifest.sealed.seeds
    assert T.RecordingAgent.binds == 0 and len(T.RecordingAgent.seen) > len(S.SUITE)
    hidden = {"seed", "noise", "episode", "gold", "goal", "world"}

    def keys(value: Any) -> set[str]:
        if isinstance(value, dict):
            return set(value) | {k for v in value.values() for k in keys(v)}
        if isinstance(value, list):
            return {k for v in value for k in keys(v)}
        assert value is None or isinstance(value, (str, int, float, bool)), type(value)  # JSON data, no objects
        return set()

    for obs, info in T.RecordingAgent.seen:
        text = obs + json.dumps(info)
        assert not any(str(s) in text for s in seeds)
        assert not keys(info) & hidden, keys(info) & hidden


# ============================================================================ tokens and quotas
def test_a_wrong_or_missing_token_gets_401(board: T.Board) -> None:
    token = board.token()
    run = T.open_run(board, token)
    sid = T.session(board, token, run["run_id"], run["cells"][0])
    revoked = board.token()
    TokenBook(board.store).revoke(TokenBook(board.store).authenticate(revoked).id)
    prefix = f"/sealed/runs/{run['run_id']}"
    routes = [("POST", "/sealed/runs", {"suite": S.SUITE.id, "agent": "a", "model": "m", "revision": "r"}),
              ("GET", prefix, None), ("POST", f"{prefix}/sessions", {"env_id": "AgentRL/Dialog-v0"}),
              ("POST", f"{prefix}/sessions/{sid}/reset", {}), ("POST", f"{prefix}/sessions/{sid}/step", {"action": "hi"}),
              ("POST", f"{prefix}/sessions/{sid}/fail", {"type": "x", "message": "y", "traceback": ""}),
              ("DELETE", f"{prefix}/sessions/{sid}", None)]
    for method, path, body in routes:
        for wrong in (None, "agt_wrong", revoked, "agt_" + "A" * 43):
            status, answer, headers = T.http(board.url, method, path, body, wrong)
            assert status == 401, (method, path, wrong, answer)
            assert answer["error"]["code"] == "unauthorized" and headers.get("www-authenticate") == "Bearer"
    from websockets.exceptions import ConnectionClosed

    for wrong in (None, "agt_wrong"):
        with T.ws(board, wrong, run["run_id"], sid) as sock:
            with pytest.raises(ConnectionClosed) as closed:
                T.exchange(sock, {"op": "reset"})
            assert closed.value.rcvd.code == 4401
    # Another token's run is not there for it (404), and the session is still the owner's.
    other = board.token("other")
    status, answer, _ = T.http(board.url, "GET", prefix, token=other)
    assert status == 404
    status, answer, _ = T.http(board.url, "POST", f"{prefix}/sessions/{sid}/reset", {}, other)
    assert status == 404
    status, answer, _ = T.http(board.url, "POST", f"{prefix}/sessions/{sid}/reset", {}, token)
    assert status == 200 and answer["info"]["sealed"]["turn"] == 0


def _played_and_lost(board: T.Board, token: str, revision: str) -> None:
    """A run that played an episode and lost it (its session deleted): closed incomplete, counted."""
    run = T.open_run(board, token, revision=revision)
    sid = T.session(board, token, run["run_id"], run["cells"][0])
    assert T.http(board.url, "POST", f"/sealed/runs/{run['run_id']}/sessions/{sid}/reset", None, token)[0] == 200
    T.http(board.url, "DELETE", f"/sealed/runs/{run['run_id']}/sessions/{sid}", None, token)
    assert T.wait_state(board, token, run["run_id"])["state"] == "incomplete"


def test_a_spent_quota_gets_429(board: T.Board) -> None:
    token, other = board.token(quota=2), board.token("other", quota=1)
    _played_and_lost(board, token, "a")
    _played_and_lost(board, token, "b")
    status, answer, headers = T.http(board.url, "POST", "/sealed/runs", {"suite": S.SUITE.id, "agent": "heuristic",
                                                                         "model": "m", "revision": "c"}, token)
    assert status == 429 and answer["error"]["code"] == "quota_spent"
    assert 86_000 <= int(headers["retry-after"]) <= 86_401
    T.open_run(board, other, revision="c")  # quotas are per token


def test_opening_rules(board: T.Board) -> None:
    token = board.token()
    cases = [({"suite": "nope-v0"}, 422, "unknown_suite"), ({"suite": S.OLD_SUITE.id}, 422, "unknown_suite"),
             ({"organisation": "someone else"}, 403, "wrong_organisation"), ({"extra": 1}, 422, "invalid_request"),
             ({"agent_config": [1]}, 422, "invalid_request"), ({"model": "a\u202eb"}, 422, "invalid_request")]
    for change, want, code in cases:
        body = {"suite": S.SUITE.id, "agent": "heuristic", "model": "m", "revision": "r", **change}
        status, answer, _ = T.http(board.url, "POST", "/sealed/runs", body, token)
        assert (status, answer["error"]["code"]) == (want, code), change
    T.open_run(board, token, revision="same")
    status, answer, _ = T.http(board.url, "POST", "/sealed/runs", {"suite": S.SUITE.id, "agent": "heuristic",
                                                                   "model": "m", "revision": "same"}, board.token())
    assert status == 409 and answer["error"]["code"] == "run_in_play"


# ============================================================================ sessions and episodes
def test_sealed_sessions_take_the_boards_seed_and_cells_only(board: T.Board) -> None:
    token = board.token()
    run = T.open_run(board, token)
    run_id, cell = run["run_id"], run["cells"][0]
    prefix = f"/sealed/runs/{run_id}/sessions"
    sid = T.session(board, token, run_id, cell)
    for body, code in (({"seed": 5}, "sealed_reset"), ({"options": {"trial": 1}}, "sealed_reset")):
        status, answer, _ = T.http(board.url, "POST", f"{prefix}/{sid}/reset", body, token)
        assert (status, answer["error"]["code"]) == (422, code)
    status, answer, _ = T.http(board.url, "POST", f"{prefix}/{sid}/step", {"action": "hi"}, token)
    assert (status, answer["error"]["code"]) == (409, "reset_needed")
    # A session is made on one of the run's cells, with the env server's allow-list (S7) first.
    for body, want in (({"env_id": cell["env_id"], "kwargs": {}, "noise": cell["noise"]}, "not_in_run"),
                       ({"env_id": "AgentRL/ToolUse-v0", "kwargs": cell["kwargs"]}, "not_in_run"),
                       ({"env_id": cell["env_id"], "kwargs": {**cell["kwargs"], "scorer": "x"}}, "invalid_request"),
                       ({"env_id": cell["env_id"], "kwargs": {**cell["kwargs"], "max_turns": 10**9}}, "invalid_request")):
        status, answer, _ = T.http(board.url, "POST", prefix, body, token)
        assert status == 422 and answer["error"]["code"] in (want, "invalid_env_args"), (body, answer)
    # Every episode of the cell, in the board's order, then cell_done; an episode's label is its
    # place in that order and its task's id carries no index: nothing ties a task's trials together.
    played = []
    while True:
        status, answer, _ = T.http(board.url, "POST", f"{prefix}/{sid}/reset", None, token)
        if status == 409:
            assert answer["error"]["code"] == "cell_done"
            break
        sealed = answer["info"]["sealed"]
        assert set(sealed) == {"label", "episodes", "turn"} and answer["info"]["task"]["id"].endswith("/sealed")
        played.append((sealed["label"], answer["info"]["trial"]))
        done = False
        while not done:
            status, step, _ = T.http(board.url, "POST", f"{prefix}/{sid}/step", {"action": "hello?"}, token)
            assert status == 200 and step["reward"] == 0.0
            done = step["terminated"] or step["truncated"]
    assert len(played) == cell["episodes"] == S.SUITE.n_seeds * S.SUITE.trials
    assert len({label for label, _ in played}) == len(played)
    assert sorted(trial for _, trial in played) == sorted(list(range(S.SUITE.trials)) * S.SUITE.n_seeds)
    assert [trial for _, trial in played] != sorted(trial for _, trial in played)  # not in the suite's order


def test_an_agent_error_is_the_episodes_record(board: T.Board, tmp_path: Path) -> None:
    final = _run(board, board.token(), "lb_sealed_support:RaisingAgent", tmp_path / "out")
    records = _published(final["records_file"]).records
    assert final["state"] == "complete" and final["entry"]["summary"]["success"]["value"] == 0.0
    assert all(r["agent_error"]["type"] == "RuntimeError" and len(r["actions"]) == 1 for r in records)


# ============================================================================ resume
def test_a_dropped_socket_resumes_the_episode_where_it_stopped(board: T.Board) -> None:
    from websockets.exceptions import ConnectionClosed

    token = board.token()
    run = T.open_run(board, token)
    run_id = run["run_id"]
    sid = T.session(board, token, run_id, run["cells"][0])
    sent = ["Hello, what do you need?", "Could you tell me more?"]
    with T.ws(board, token, run_id, sid) as sock:
        first = T.exchange(sock, {"op": "reset"})
        answers = [T.exchange(sock, {"op": "step", "action": a}) for a in sent]
    # Gone without finishing: the session and its episode wait for a new socket.
    with T.ws(board, token, run_id, sid) as sock:
        again = T.exchange(sock, {"op": "reset"})
        sealed = again["info"]["sealed"]
        assert sealed["resumed"] and sealed["label"] == first["info"]["sealed"]["label"]
        assert sealed["turn"] == 2 and sealed["actions"] == sent
        assert sealed["history"] == [first, *answers] and again["obs"] == answers[-1]["obs"]
        # A second socket takes the session over; the first is told so.
        with T.ws(board, token, run_id, sid) as newer:
            with pytest.raises(ConnectionClosed) as closed:
                sock.recv(timeout=10)
            assert closed.value.rcvd.code == 4411
            assert T.exchange(newer, {"op": "reset"})["info"]["sealed"]["turn"] == 2
            step = T.exchange(newer, {"op": "step", "action": "Thanks"})
            assert step["info"]["turn"] == 3  # the episode went on: never restarted


def test_a_killed_client_run_again_finishes_the_same_run(board: T.Board, tmp_path: Path) -> None:
    token = board.token()
    out = tmp_path / "out"
    env = {**os.environ, "AGENTGYM_TOKEN": token, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get(
        "PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "agentgym.cli", "bench", S.SUITE.id, "--agent", "lb_sealed_support:SlowHeuristic",
           "--sealed", board.url, "--model", "m", "--revision", "r1", "--out", str(out), "--concurrency", "3"]
    # The suite is the tests' own: the child knows it through the board only (it never makes an env).
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run_id = None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (out / "sealed.json").exists():
            run_id = json.loads((out / "sealed.json").read_text())["run_id"]
            status = T.http(board.url, "GET", f"/sealed/runs/{run_id}", token=token)[1]
            if status.get("done", 0) >= 4 and status.get("in_play", 0) >= 1:
                break
        time.sleep(0.02)
    proc.kill()
    proc.wait(10)
    assert run_id is not None
    before = T.http(board.url, "GET", f"/sealed/runs/{run_id}", token=token)[1]
    assert before["state"] == "open" and before["in_play"] >= 1, before
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "resuming sealed run" in done.stderr
    final = T.wait_state(board, token, run_id)
    assert final["state"] == "complete"
    sub = _published(str(next(out.glob("sealed-*.agentgym.gz"))))
    # The resumed episodes went on from where they were: the run is action for action what an
    # uninterrupted heuristic plays on the same (published) seeds.
    from agentgym.eval.runner import play_job

    for job, rec in zip(S.SUITE.jobs(sub.manifest.sealed.seeds), sub.records):
        assert rec["key"] == job.key
        assert rec["actions"] == play_job(job, AgentSpec("heuristic"))["actions"], job.key


def test_a_run_idle_past_its_grace_period_closes_incomplete_and_is_never_ranked(tmp_path: Path) -> None:
    with T.sealed_board(tmp_path, SealedConfig(grace_s=0.6)) as board:
        token = board.token()
        run = T.open_run(board, token)
        sid = T.session(board, token, run["run_id"], run["cells"][0])
        T.http(board.url, "POST", f"/sealed/runs/{run['run_id']}/sessions/{sid}/reset", None, token)
        other = board.token("others")
        idle = T.open_run(board, other, revision="r2")  # opened, never played
        t0 = time.monotonic()
        final = T.wait_state(board, token, run["run_id"], timeout_s=10)
        waited = time.monotonic() - t0
        assert final["state"] == "incomplete" and final["entry"] is None and waited < 0.6 + 5
        assert T.wait_state(board, other, idle["run_id"], timeout_s=10)["state"] == "incomplete"
        assert board.store.count() == 0 and not list(board.host.book.records_dir.iterdir())
        assert board.host.sessions.live == 0  # reaped with it (S3)
        status, answer, _ = T.http(board.url, "POST", f"/sealed/runs/{run['run_id']}/sessions/{sid}/step",
                                   {"action": "hi"}, token)
        assert status in (404, 401) or answer["error"]["code"] == "unknown_session"


def test_a_board_restart_closes_the_runs_it_held(tmp_path: Path) -> None:
    with T.sealed_board(tmp_path) as board:
        token = board.token()
        run = T.open_run(board, token)
    with T.sealed_board(tmp_path, ids="after") as board:
        final = T.wait_state(board, token, run["run_id"])
        assert final["state"] == "incomplete" and "restarted" in final["reason"]


# ============================================================================ privileged agents (L8)
def test_privileged_agents_are_refused_before_anything_is_opened(board: T.Board, tmp_path: Path) -> None:
    token = board.token()
    with pytest.raises(PrivilegedAgent, match="privileged"):
        _run(board, token, "oracle", tmp_path / "out")
    cmd = [sys.executable, "-m", "agentgym.cli", "bench", S.SUITE.id, "--agent", "oracle", "--sealed", board.url,
           "--model", "m", "--revision", "r"]
    done = subprocess.run(cmd, env={**os.environ, "AGENTGYM_TOKEN": token}, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "privileged" in done.stderr and "Traceback" not in done.stderr
    with board.store.connect() as conn:
        assert conn.execute("SELECT COUNT(*) FROM sealed_runs").fetchone()[0] == 0


def test_the_oracle_relabelled_gets_no_env_and_no_success(board: T.Board, tmp_path: Path) -> None:
    # A client that lies about privilege still only ever gets observations: the oracle's reads
    # of the env have nothing to read, and every episode is an agent error.
    final = _run(board, board.token(), "lb_sealed_support:RelabelledOracle", tmp_path / "out")
    records = _published(final["records_file"]).records
    assert final["entry"]["summary"]["success"]["value"] == 0.0
    assert {r["agent_error"]["message"] for r in records} == {
        "the oracle needs the env: the runner must call bind(env.unwrapped) after reset"}


def test_oracle_records_relabelled_reach_only_the_open_track(board: T.Board) -> None:
    recs = S.records("oracle")
    for r in recs:
        r["agent"]["privileged"] = False
    # The replay cannot tell (its numbers are the actions'), so it is stored: in the open track.
    receipt = receive(S.body_for(recs, model="honest/really"), board.store, suites=T.REGISTRY, workers=1)
    assert receipt.status == "ranked" and receipt.entry.track == "open"
    tracks = {s["track"] for s in board_dict(build_board(board.store.entries(), T.REGISTRY))["suites"]}
    assert tracks == {"open"}


# ============================================================================ the env server's limits
def test_the_session_cap_holds_over_every_run(tmp_path: Path) -> None:
    with T.sealed_board(tmp_path, SealedConfig(max_sessions=3, sessions_per_run=2)) as board:
        token, second = board.token(), board.token("second")
        a, b = T.open_run(board, token, revision="a"), T.open_run(board, second, revision="b")
        for run in (a, a):
            T.session(board, token, run["run_id"], run["cells"][0])
        status, answer, headers = T.http(board.url, "POST", f"/sealed/runs/{a['run_id']}/sessions",
                                         {"env_id": "AgentRL/Dialog-v0", "kwargs": a["cells"][0]["kwargs"]}, token)
        assert (status, answer["error"]["code"]) == (429, "too_many_sessions") and "retry-after" in headers
        T.session(board, second, b["run_id"], b["cells"][0])
        cell = b["cells"][1]
        status, answer, headers = T.http(board.url, "POST", f"/sealed/runs/{b['run_id']}/sessions",
                                         {"env_id": cell["env_id"], "kwargs": cell["kwargs"], "noise": cell["noise"]},
                                         second)
        assert status == 429 and "retry-after" in headers
        health = T.http(board.url, "GET", f"/sealed/runs/{a['run_id']}/health", token=token)[1]
        assert health["sessions"] == health["peak_sessions"] == 3 == health["max_sessions"]


def test_bodies_and_messages_over_the_limit_are_refused(board: T.Board) -> None:
    from websockets.exceptions import ConnectionClosed

    token = board.token()
    run = T.open_run(board, token)
    sid = T.session(board, token, run["run_id"], run["cells"][0])
    big = {"env_id": "x" * (2 << 20)}
    status, answer, _ = T.http(board.url, "POST", f"/sealed/runs/{run['run_id']}/sessions", big, token)
    assert status == 413
    status, answer, _ = T.http(board.url, "POST", "/sealed/runs", {"suite": "x" * (1 << 17)}, token)
    assert status == 413
    with T.ws(board, token, run["run_id"], sid) as sock:
        T.exchange(sock, {"op": "reset"})
        with pytest.raises(ConnectionClosed) as closed:
            T.exchange(sock, {"op": "step", "action": "x" * (2 << 20)})
        # The board closes with 1009; a client still writing the oversized frame may see the
        # connection drop before that close frame reaches it (no frame received, never another code).
        assert closed.value.rcvd is None or closed.value.rcvd.code == 1009
    with T.ws(board, token, run["run_id"], sid) as sock:  # the session (and its episode) outlive it
        assert T.exchange(sock, {"op": "reset"})["info"]["sealed"]["resumed"]
