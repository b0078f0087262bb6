"""What the sealed track measures: known seeds buy nothing there, and ordinary agents score as in the open track.

- An agent that memorised the public episodes of a suite (opening observation -> the oracle's
  recorded actions) scores the oracle's success on the public seeds, far above the heuristic, and
  no better than the heuristic it falls back on in the sealed track (paired 95% CIs of the
  difference, on the same episodes): a template's openings repeat across tasks, their worlds do
  not, so an opening it knows there is another task, on which the memorised actions fail.
- The heuristic's and the random agent's sealed success agree with their open success within
  the 95% CIs: the sealed episodes come from the same distribution.

The default run uses the layout of core-v0 at a tenth of its seeds (the memorised agent) and
one episode per task on 100 tasks per family (the agreement: episodes of one task, under two
noise settings and two trials, are not independent draws, and the bootstrap CIs treat them as
if they were); ``-m slow`` runs core-v0 itself (the figures of benchmarks/RESULTS-sealed.md, which
``benchmarks/bench_sealed.py`` measures with the same helpers).
"""

from __future__ import annotations

from pathlib import Path

import lb_sealed_support as T
import pytest

from agentgym.bench.suites import SUITES, Suite

CORE = SUITES["core-v0"]
#: core-v0's layout (every family, no noise and medium, two trials) on 20 seeds.
SMALL = Suite(id="sealedlayout-v0", description="core-v0's layout on 20 seeds", envs=CORE.envs, noise=CORE.noise,
              n_seeds=20, trials=CORE.trials)
#: Every family, one episode per task: 300 independent episodes.
INDEPENDENT = Suite(id="sealedagree-v0", description="every family, no noise, 100 tasks each", envs=CORE.envs,
                    noise=("none",), n_seeds=100, trials=1)


def _check_memoriser(f: dict, suite: Suite) -> None:
    # Public seeds: every opening is known, and the oracle's actions replay its very episodes (the
    # open track's flaw; bar the openings two public tasks share, 6% on core-v0): far above the heuristic.
    assert f["public_hits"] == len(suite) and f["public"]["value"] >= f["oracle_public"]["value"] - 0.1
    assert f["public_vs_heuristic"]["ci"][0] > 0.2, f["public_vs_heuristic"]
    # Sealed: on the very same episodes it does no better than the heuristic it falls back on
    # (the openings it knows there belong to other tasks), and far worse than on the public seeds.
    assert f["sealed_hits"] < len(suite) // 2
    assert f["sealed_vs_heuristic"]["ci"][0] <= 0.0, f["sealed_vs_heuristic"]
    assert f["sealed"]["ci"][1] < f["public"]["ci"][0]


def test_memorised_public_episodes_buy_nothing_in_the_sealed_track(tmp_path: Path) -> None:
    oracle = T.public_records(SMALL, "oracle", tmp_path / "public")
    _check_memoriser(T.memoriser_figures(SMALL, oracle, tmp_path), SMALL)


@pytest.mark.parametrize("agent", ["heuristic", "random"])
def test_sealed_and_open_success_agree_within_their_cis(tmp_path: Path, agent: str) -> None:
    f = T.agreement_figures(INDEPENDENT, agent, tmp_path)
    assert f["overlap"], f


# ============================================================================ core-v0 (the figures)
@pytest.mark.slow
def test_core_v0_lookup_table_and_agreement(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # benchmarks/bench_sealed.py reports these figures (benchmarks/RESULTS-sealed.md).
    oracle = T.public_records(CORE, "oracle", tmp_path / "public")
    f = T.memoriser_figures(CORE, oracle, tmp_path)
    _check_memoriser(f, CORE)
    lines = [f"memoriser: {f}"]
    for agent in ("heuristic", "random"):
        g = T.agreement_figures(CORE, agent, tmp_path)
        lines.append(f"{agent}: {g}")
        assert g["overlap"], (agent, g)
    with capsys.disabled():
        print("\n" + "\n".join(lines))
