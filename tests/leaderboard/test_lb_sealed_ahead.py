"""A large sealed run is replayed while it plays (`agentgym.leaderboard.sealed.ahead`): its verdicts come
from the board's replay process, a mismatch found there rejects the run, and records the process
never got are replayed at the end."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import lb_sealed_support as T
import lb_support as S
from agentgym.agents.heuristic import HeuristicAgent
from agentgym.eval.runner import AgentSpec, play_job
from agentgym.leaderboard.sealed import ahead
from agentgym.leaderboard.sealed.ahead import ReplayAhead
from agentgym.leaderboard.sealed.config import SealedConfig
from agentgym.leaderboard.submission import Rejected, decode_submission
from agentgym.leaderboard.verify import verify_submission

SUITE = S.MIXED_SUITE


def _play_every_cell(board: T.Board, token: str, run: dict[str, Any]) -> None:
    """The heuristic on every episode of `run`, one WebSocket session per cell."""
    agent = HeuristicAgent()
    for cell in run["cells"]:
        sid = T.session(board, token, run["run_id"], cell)
        with T.ws(board, token, run["run_id"], sid) as sock:
            while True:
                answer = T.exchange(sock, {"op": "reset"})
                if "error" in answer:
                    assert answer["error"]["code"] in ("cell_done", "run_played"), answer
                    break
                agent.reset(answer["obs"], answer["info"])
                while not (answer.get("terminated") or answer.get("truncated")):
                    answer = T.exchange(sock, {"op": "step", "action": agent.act(answer["obs"], answer["info"])})


def test_a_run_replayed_ahead_takes_its_verdicts_from_the_replay_process(tmp_path: Path) -> None:
    with T.sealed_board(tmp_path, SealedConfig(grace_s=30, replay_ahead_from=1), suites={SUITE.id: SUITE}) as board:
        token = board.token()
        opened = T.open_run(board, token, suite=SUITE.id)
        run = board.host.book.live(opened["run_id"])
        assert run is not None and run.ahead is not None
        _play_every_cell(board, token, opened)
        final = T.wait_state(board, token, opened["run_id"])
        assert final["state"] == "complete", final
        assert run.ahead.replayed_here == 0  # every verdict was made while the run played
        status, body, _ = T.http(board.url, "GET", final["entry"]["records_url"])
        assert status == 200
        entry = board.store.get(final["entry"]["id"])
    again = verify_submission(decode_submission(body), {SUITE.id: SUITE}, workers=1)
    assert again.summary == entry.summary


def test_small_runs_are_replayed_when_they_end(tmp_path: Path) -> None:
    with T.sealed_board(tmp_path, suites={SUITE.id: SUITE}) as board:
        opened = T.open_run(board, board.token(), suite=SUITE.id)
        assert len(SUITE) < SealedConfig().replay_ahead_from
        assert board.host.book.live(opened["run_id"]).ahead is None


def _pairs() -> list[tuple[Any, dict[str, Any]]]:
    return [(job, play_job(job, AgentSpec("heuristic"))) for job in SUITE.jobs()]


def test_a_mismatch_found_ahead_rejects_the_run() -> None:
    pairs = _pairs()
    job, rec = pairs[3]
    forged = copy.deepcopy(rec)
    forged["steps"][0]["obs_sha256"] = "0" * 64  # as if the board's env had not been deterministic
    pairs[3] = (job, forged)
    replays = ReplayAhead()
    for job_, rec_ in pairs:
        replays.add(job_, rec_)
    with pytest.raises(Rejected) as rejected:
        replays.replayer()(pairs)
    assert rejected.value.code == "replay_mismatch" and rejected.value.episode == job.key
    assert replays.replayed_here == 0


def test_records_left_out_while_the_process_lags_are_replayed_at_the_end(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ahead, "MAX_WAITING_BATCHES", 0)  # the replay process never catches up
    pairs = _pairs()
    replays = ReplayAhead()
    for job, rec in pairs:
        replays.add(job, rec)
    metrics = replays.replayer()(pairs)
    assert replays.replayed_here == len(pairs)
    assert json.dumps(metrics, sort_keys=True) == json.dumps([rec["metrics"] for _, rec in pairs], sort_keys=True)
