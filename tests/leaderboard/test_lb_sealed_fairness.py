"""L10: one token cannot hold the whole sealed track (docs/RELIABILITY.md).

A token plays one run at a time and its runs hold at most `sessions_per_token` sessions; an
episode in play ends as an agent error past `max_episode_s`; a run whose sessions are refused for
want of room is not idle, and one that closes before it had a single episode spends no quota.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import lb_sealed_support as T
import lb_support as S

from agentgym.leaderboard.sealed.config import SealedConfig
from agentgym.leaderboard.tokens import TokenBook


def _open_session(board: T.Board, token: str, run: dict) -> tuple[int, dict]:
    cell = run["cells"][0]
    status, answer, _ = T.http(board.url, "POST", f"/sealed/runs/{run['run_id']}/sessions",
                               {"env_id": cell["env_id"], "kwargs": cell["kwargs"], "noise": cell["noise"]}, token)
    return status, answer


def test_a_token_plays_one_run_at_a_time(tmp_path: Path) -> None:
    with T.sealed_board(tmp_path) as board:
        token = board.token()
        first = T.open_run(board, token)
        status, answer, _ = T.http(board.url, "POST", "/sealed/runs", {"suite": S.SUITE.id, "agent": "heuristic",
                                                                       "model": "m", "revision": "r2"}, token)
        assert status == 409 and answer["error"]["code"] == "token_has_run" and first["run_id"] in \
            answer["error"]["message"]
        assert T.open_run(board, board.token(), revision="r3")  # another token's run opens


def test_a_tokens_sessions_are_capped(tmp_path: Path) -> None:
    config = SealedConfig(grace_s=30.0, sessions_per_run=4, sessions_per_token=3, max_sessions=8)
    with T.sealed_board(tmp_path, config) as board:
        token = board.token()
        run = T.open_run(board, token)
        assert [_open_session(board, token, run)[0] for _ in range(3)] == [201] * 3
        status, answer = _open_session(board, token, run)
        assert status == 429 and "a token's runs hold at most 3" in answer["error"]["message"]


def test_a_run_waiting_for_room_is_not_idle_and_one_never_played_spends_no_quota(tmp_path: Path) -> None:
    """Token A holds every session of the track; token B's run is refused sessions for longer than
    the grace period, and stays open while it asks; once A's sessions close, B's open. A run of
    B's that closes before it had an episode leaves B's quota of one unspent."""
    config = SealedConfig(grace_s=1.0, sessions_per_run=4, sessions_per_token=4, max_sessions=4)
    with T.sealed_board(tmp_path, config) as board:
        a, b = board.token("a"), TokenBook(board.store).add("b", 1)[1]
        run_a = T.open_run(board, a)
        held = [_open_session(board, a, run_a)[1]["session_id"] for _ in range(4)]
        run_b = T.open_run(board, b, revision="b1")
        deadline = time.monotonic() + 3.0  # three grace periods
        while time.monotonic() < deadline:
            status, answer = _open_session(board, b, run_b)
            assert status == 429 and answer["error"]["code"] == "too_many_sessions"
            # A keeps its sessions alive too (a request each, well inside the grace period).
            for sid in held:
                T.http(board.url, "POST", f"/sealed/runs/{run_a['run_id']}/sessions/{sid}/reset", None, a)
            time.sleep(0.1)
        assert T.http(board.url, "GET", f"/sealed/runs/{run_b['run_id']}", token=b)[1]["state"] == "open"
        # A's run ends (its sessions closed with episodes in play: incomplete): room for B.
        for sid in held:
            T.http(board.url, "DELETE", f"/sealed/runs/{run_a['run_id']}/sessions/{sid}", None, a)
        assert _open_session(board, b, run_b)[0] == 201
    # B's run, never played, closes at its grace period: B's quota of one is still there.
    with T.sealed_board(tmp_path / "again", config) as board:
        b = TokenBook(board.store).add("b", 1)[1]
        run = T.open_run(board, b)
        state = T.wait_state(board, b, run["run_id"], timeout_s=20)
        assert state["state"] == "incomplete"
        assert T.open_run(board, b, revision="r2")["run_id"] != run["run_id"]


def test_an_episode_past_its_time_limit_ends_as_an_agent_error(tmp_path: Path) -> None:
    config = SealedConfig(grace_s=30.0, max_episode_s=0.5)
    with T.sealed_board(tmp_path, config) as board:
        token = board.token()
        run = T.open_run(board, token)
        status, opened = _open_session(board, token, run)
        prefix = f"/sealed/runs/{run['run_id']}/sessions/{opened['session_id']}"
        assert T.http(board.url, "POST", f"{prefix}/reset", None, token)[0] == 200
        deadline = time.monotonic() + 10
        while T.http(board.url, "GET", f"/sealed/runs/{run['run_id']}", token=token)[1]["done"] == 0:
            assert time.monotonic() < deadline, "the episode was never timed out"
            time.sleep(0.1)
        status, answer, _ = T.http(board.url, "POST", f"{prefix}/step", {"action": "hello"}, token)
        assert status == 409 and answer["error"]["code"] == "reset_needed"
        records = (tmp_path / "board.sqlite.sealed" / f"{run['run_id']}.jsonl").read_text().splitlines()
        assert json.loads(records[0])["agent_error"]["type"] == "EpisodeTimeout"
