"""L12: no carry-over inside a sealed run (docs/RELIABILITY.md).

A client that plays a cell without noise first, then the same suite's noisy cell, would meet the
same tasks again and could replay what worked (before: zero degradation under corruption and
typos). Each cell of a sealed run is dealt tasks of its own, in a secret order, and nothing the
client is shown (task id, labels) names a task: a client that keeps every opening it saw in the
noise-free cell recognises none of the noisy cell's, and the published records show no seed in
two cells.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import lb_sealed_support as T

from agentgym.agents.heuristic import HeuristicAgent
from agentgym.bench.suites import Suite

SUITE = Suite(id="carryover-v1", description="Dialog without noise and with corruption, as robustness-v0 deals it.",
              envs=("AgentRL/Dialog-v0",), noise=("none", "corruption=0.5"), n_seeds=6, trials=1,
              kwargs={"max_turns": 10})


def _play_cell(board: T.Board, token: str, run_id: str, cell: dict) -> list[tuple[str, str]]:
    """Every episode of `cell`, played by the heuristic; what the client could key a task on."""
    sid = T.session(board, token, run_id, cell)
    agent = HeuristicAgent()
    seen = []
    with T.ws(board, token, run_id, sid) as sock:
        while True:
            answer = T.exchange(sock, {"op": "reset"})
            if "error" in answer:
                assert answer["error"]["code"] in ("cell_done", "run_played")
                return seen
            obs, info = answer["obs"], answer["info"]
            seen.append((info["task"]["id"], obs))
            agent.reset(obs, info)
            while True:
                answer = T.exchange(sock, {"op": "step", "action": agent.act(obs, info)})
                obs, info = answer["obs"], answer["info"]
                if answer["terminated"] or answer["truncated"]:
                    break


def test_the_noisy_cell_holds_none_of_the_noise_free_cells_tasks(tmp_path: Path) -> None:
    with T.sealed_board(tmp_path, suites={SUITE.id: SUITE}) as board:
        token = board.token()
        run = T.open_run(board, token, suite=SUITE.id)
        clean, noisy = run["cells"]
        assert clean["noise"] is None and noisy["noise"] == "corruption=0.5"
        first = _play_cell(board, token, run["run_id"], clean)
        then = _play_cell(board, token, run["run_id"], noisy)
        final = T.wait_state(board, token, run["run_id"])
        body = board.store.payload(final["entry"]["id"])
    known_openings = {obs for _, obs in first}
    assert len(first) == len(then) == SUITE.n_seeds
    assert not known_openings & {obs for _, obs in then}  # the same task would open the same way
    assert all(task_id.endswith("/sealed") for task_id, _ in first + then)  # the kind of task, never which
    records = [json.loads(line) for line in gzip.decompress(body).splitlines()[1:]]
    by_cell = {noise: {r["seed"] for r in records if r["env"]["noise"] == noise} for noise in (None, "corruption=0.5")}
    assert len(by_cell[None]) == len(by_cell["corruption=0.5"]) == SUITE.n_seeds
    assert not by_cell[None] & by_cell["corruption=0.5"]
