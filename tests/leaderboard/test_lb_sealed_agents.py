"""What the sealed track measures: known seeds buy nothing there, and ordinary agents score as in the open track.

- An agent that memorised the public episodes of a suite (opening observation -> the oracle's
  recorded actions) tops the open track, and scores exactly the heuristic it falls back on in
  the sealed track: no opening of a sealed run is one it has seen (paired 95% CI of the
  difference, on the same published seeds).
- The heuristic's and the random agent's sealed success agree with their open success within
  the 95% CIs: the sealed episodes come from the same distribution.

The default run uses the layout of core-v0 at a tenth of its seeds (the memorised agent) and
one episode per task on 100 tasks per family (the agreement: episodes of one task, under two
noise settings and two trials, are not independent draws, and the bootstrap CIs treat them as
if they were); ``-m slow`` runs core-v0 itself (the figures in docs/RELIABILITY.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lb_sealed_support as T
import numpy as np
import pytest

from agentgym.bench.run import RECORDS, run_suite
from agentgym.bench.suites import SUITES, Suite
from agentgym.eval import metrics
from agentgym.eval.records import read_records
from agentgym.eval.runner import AgentSpec, play_job
from agentgym.leaderboard.sealed.client import SealedTarget, run_sealed
from agentgym.leaderboard.sealed.config import SealedConfig
from agentgym.leaderboard.submission import decode_submission

CORE = SUITES["core-v0"]
#: core-v0's layout (every family, no noise and medium, two trials) on 20 seeds.
SMALL = Suite(id="sealedlayout-v0", description="core-v0's layout on 20 seeds", envs=CORE.envs, noise=CORE.noise,
              n_seeds=20, trials=CORE.trials)
#: Every family, one episode per task: 300 independent episodes.
INDEPENDENT = Suite(id="sealedagree-v0", description="every family, no noise, 100 tasks each", envs=CORE.envs,
                    noise=("none",), n_seeds=100, trials=1)


def _open_run(suite: Suite, agent: str, root: str) -> list[dict[str, Any]]:
    """The records of an in-process run of `suite`'s public seeds (resumed, so made once per folder)."""
    out = Path(root) / suite.id / agent.replace(":", "_")
    run_suite(suite, AgentSpec(agent), out, workers=1, progress=False, timeout_s=None)
    return list(read_records(out / RECORDS))


def _sealed_run(suite: Suite, agent: str, tmp: Path, revision: str = "r1") -> Any:
    """The published submission of a sealed run of `agent` on a board of its own."""
    with T.sealed_board(tmp / f"board-{agent.replace(':', '_')}", SealedConfig(grace_s=60),
                        suites={suite.id: suite}, ids=f"{suite.id}-{agent.split(':')[-1]}") as board:
        final = run_sealed(suite.id, AgentSpec(agent), SealedTarget(board.url, board.token(), "m", revision),
                           tmp / f"sealed-{agent.replace(':', '_')}", progress=False, concurrency=4, timeout_s=None)
    assert final["state"] == "complete", final
    return decode_submission(Path(final["records_file"]).read_bytes())


def _success(records: list[dict[str, Any]]) -> dict[str, Any]:
    return metrics.completion(records, n_boot=2000, seed=0)["success_rate"]


def _paired_ci(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> tuple[float, float, float]:
    """Mean and bootstrap 95% CI of success(a) - success(b), paired by episode key, resampling tasks."""
    wins = {r["key"]: float(bool(r["metrics"].get("success"))) for r in b}
    diff = np.array([float(bool(r["metrics"].get("success"))) - wins[r["key"]] for r in a])
    rng = np.random.default_rng(0)
    boots = [diff[rng.integers(0, len(diff), len(diff))].mean() for _ in range(2000)]
    return float(diff.mean()), float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))


def _task_difference(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> tuple[float, float, float]:
    """Success(a) - success(b) for two runs on different tasks, with a 95% CI that resamples
    tasks (env and seed: a task's noise settings and trials move together), not episodes."""
    def by_task(records: list[dict[str, Any]]) -> list[list[float]]:
        groups: dict[tuple[str, int], list[float]] = {}
        for r in records:
            groups.setdefault((r["env"]["id"], r["seed"]), []).append(float(bool(r["metrics"].get("success"))))
        return list(groups.values())

    rng = np.random.default_rng(0)
    ga, gb = by_task(a), by_task(b)

    def mean(groups: list[list[float]], pick: Any) -> float:
        chosen = [groups[i] for i in pick]
        return sum(map(sum, chosen)) / sum(map(len, chosen))

    point = mean(ga, range(len(ga))) - mean(gb, range(len(gb)))
    boots = [mean(ga, rng.integers(0, len(ga), len(ga))) - mean(gb, rng.integers(0, len(gb), len(gb)))
             for _ in range(2000)]
    return point, float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5))


def _overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(a["ci"][0] <= b["ci"][1] and b["ci"][0] <= a["ci"][1])


def _lookup_figures(suite: Suite, oracle: list[dict[str, Any]], tmp: Path) -> dict[str, Any]:
    T.LookupAgent.table = T.memorise(suite, oracle)
    T.LookupAgent.hits = 0
    opened = _open_run(suite, "lb_sealed_support:LookupAgent", str(tmp / "open"))
    open_hits = T.LookupAgent.hits
    T.LookupAgent.hits = 0
    published = _sealed_run(suite, "lb_sealed_support:LookupAgent", tmp)
    sealed, sealed_hits = published.records, T.LookupAgent.hits
    # The heuristic on the very same episodes: the published seeds make them anyone's to play.
    jobs = suite.jobs(published.manifest.sealed.seeds)
    by_key = {r["key"]: r for r in sealed}
    assert [j.key for j in jobs] == [r["key"] for r in sealed]
    heuristic_there = [{**by_key[j.key], "metrics": play_job(j, AgentSpec("heuristic"))["metrics"]} for j in jobs]
    return {"open": _success(opened), "open_hits": open_hits, "sealed": _success(sealed), "sealed_hits": sealed_hits,
            "heuristic_there": _success(heuristic_there), "paired": _paired_ci(sealed, heuristic_there),
            "episodes": len(sealed)}


def test_memorised_public_episodes_buy_nothing_in_the_sealed_track(tmp_path: Path) -> None:
    oracle = _open_run(SMALL, "oracle", str(tmp_path / "open"))
    heuristic = _success(_open_run(SMALL, "heuristic", str(tmp_path / "open")))
    f = _lookup_figures(SMALL, oracle, tmp_path)
    # Public seeds: every opening is known, and the oracle's actions win (the open track's flaw).
    assert f["open_hits"] == len(SMALL) and f["open"]["value"] >= 0.95 > heuristic["ci"][1]
    # Sealed: the openings it knows are few (a template's openings repeat, their worlds do not), and
    # on the very same episodes it does no better than the heuristic it falls back on.
    assert f["sealed_hits"] <= len(SMALL) // 10
    mean, lo, hi = f["paired"]
    assert lo <= 0.0, f["paired"]
    assert f["sealed"]["value"] < f["open"]["value"] and f["sealed"]["ci"][1] < f["open"]["ci"][0]


@pytest.mark.parametrize("agent", ["heuristic", "random"])
def test_sealed_and_open_success_agree_within_their_cis(tmp_path: Path, agent: str) -> None:
    opened = _success(_open_run(INDEPENDENT, agent, str(tmp_path / "open")))
    sealed = _success(_sealed_run(INDEPENDENT, agent, tmp_path).records)
    assert _overlap(opened, sealed), (opened, sealed)


# ============================================================================ core-v0 (the figures)
@pytest.mark.slow
def test_core_v0_lookup_table_and_agreement(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    published = Path(__file__).resolve().parents[2] / "leaderboard" / "submissions" / "oracle.agentgym.gz"
    oracle = decode_submission(published.read_bytes()).records
    f = _lookup_figures(CORE, oracle, tmp_path)
    assert f["paired"][1] <= 0.0 and f["open"]["value"] >= 0.95
    lines = [f"lookup: open {f['open']}, {f['open_hits']} hits; sealed {f['sealed']}, {f['sealed_hits']} hits; "
             f"heuristic on the same sealed episodes {f['heuristic_there']}; paired difference {f['paired']}"]
    for agent in ("heuristic", "random"):
        open_records = _open_run(CORE, agent, str(tmp_path / "open"))
        sealed_records = _sealed_run(CORE, agent, tmp_path).records
        opened, sealed = _success(open_records), _success(sealed_records)
        lines.append(f"{agent}: open {opened}, sealed {sealed}, difference by task "
                     f"{_task_difference(sealed_records, open_records)}")
        assert _overlap(opened, sealed), (agent, opened, sealed)
    with capsys.disabled():
        print("\n" + "\n".join(lines))
