"""The own-env example (envs/examples/own_env.py and its scripted agent) and its guide, docs/own-env.md.

The guide embeds the example and its `agentgym check` report: both must match. The example must
show what the guide promises: 0% for a random agent and 100% for an agent that solves it, every
noise kind injecting on it, every headline metric with a value under medium noise, and metrics
that move for the behaviour they name.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from agentgym.agents import make_agent
from agentgym.agents.exploits import EXPLOITS
from agentgym.cli import main
from agentgym.eval.metrics import HEADLINE, headline
from agentgym.noise.spec import PRESETS
from agentgym.testing import check_agent_env

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "envs" / "examples"
GUIDE = REPO / "docs" / "own-env.md"
ENV_ID = "own_env:MyOrg/Shop-v0"


@pytest.fixture(scope="module", autouse=True)
def examples_importable() -> Iterator[None]:
    """envs/examples/ is a folder of the repository (not a package): its modules import by name
    from it. The example's id and modules are removed afterwards, as other tests read the registry."""
    sys.path.insert(0, str(EXAMPLES))
    yield
    sys.path.remove(str(EXAMPLES))
    gym.registry.pop("MyOrg/Shop-v0", None)
    for name in ("own_env", "own_env_agent"):
        sys.modules.pop(name, None)


def _agent() -> Any:
    return importlib.import_module("own_env_agent").RefundAgent()


def _summary(info: dict[str, Any]) -> dict[str, Any]:
    """The end-of-episode summary (the one place this module reads its key)."""
    return info["episode_summary"]


def _records(agent: Any, noise: str | dict | None, seeds: range) -> list[dict[str, Any]]:
    env = gym.make(ENV_ID, **({} if noise is None else {"noise": noise}))
    records = []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        agent.reset(obs, info)
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
            done = terminated or truncated
        records.append({"key": str(seed), "metrics": _summary(info)})
    env.close()
    return records


def _between(text: str, marker: str) -> str:
    found = re.search(rf"<!-- {marker}: begin[^>]*-->\n```[a-z]*\n(.*?)```\n<!-- {marker}: end -->", text, re.S)
    assert found is not None, f"docs/own-env.md lost its {marker} block"
    return found.group(1)


def test_the_guide_embeds_the_example_as_it_is() -> None:
    assert _between(GUIDE.read_text("utf-8"), "own-env example") == (EXAMPLES / "own_env.py").read_text("utf-8")


def test_the_guide_shows_the_report_agentgym_check_gives() -> None:
    report = check_agent_env(ENV_ID, n_garbage=20, fresh_process=False)
    assert report.ok, report.render()
    assert _between(GUIDE.read_text("utf-8"), "own-env report") == report.render() + "\n"


def test_the_example_is_about_thirty_lines() -> None:
    code = [line for line in (EXAMPLES / "own_env.py").read_text("utf-8").splitlines() if line.strip()]
    assert len(code) <= 40


def test_a_random_agent_scores_0_and_the_scripted_agent_100_without_noise() -> None:
    assert all(r["metrics"]["success"] for r in _records(_agent(), None, range(40)))
    assert not any(r["metrics"]["score"] for r in _records(make_agent("random"), None, range(40)))


@pytest.mark.parametrize("name", sorted(EXPLOITS))
def test_the_never_ask_exploits_get_nothing_from_the_default_user(name: str) -> None:
    assert not any(r["metrics"]["success"] for r in _records(EXPLOITS[name](), None, range(30)))


@pytest.mark.parametrize("kind", list(PRESETS["medium"]))
def test_each_noise_kind_alone_injects_on_the_example(kind: str) -> None:
    records = _records(_agent(), {kind: PRESETS["medium"][kind]}, range(40))
    if kind == "latency":  # charged on every call; logged only when it passes the time budget
        assert all(r["metrics"]["elapsed_ms"] > 0 for r in records)
    else:
        events = [e for r in records for e in r["metrics"]["noise"] if e["kind"] == kind]
        assert events, f"{kind} never injected"
        if kind in ("tool_failure", "ambiguity", "goal_shift"):
            assert any(e["hits"] for e in events)
    assert sum(r["metrics"]["success"] for r in records) >= 38  # the scripted agent copes with each


def test_every_metric_has_a_value_under_medium_noise_and_the_scripted_agent_recovers() -> None:
    records = _records(_agent(), "medium", range(120))
    h = headline(records, by_kind=True, n_boot=200)
    missing = [key for key, _, _ in HEADLINE if h[key]["value"] is None]
    assert not missing, f"n/a under medium noise: {missing}"
    assert h["success"]["value"] == 1.0 and h["recovery_share"]["value"] == 1.0
    for kind in ("tool_failure", "ambiguity", "goal_shift"):
        assert h[f"recovery_share:{kind}"]["n"] > 0, kind
    assert h["goal_consistency"]["value"] == 1.0 and h["goal_consistency"]["n"] == 120


class _ForgetsShifts:
    """The scripted agent, but it keeps the first amount it heard (ignores a goal shift)."""

    def __init__(self) -> None:
        self._inner = _agent()
        self._amount: float | None = None

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._inner.reset(obs, info)
        self._amount = None

    def act(self, obs: str, info: dict[str, Any]) -> str:
        action = self._inner.act(obs, info)
        if action.startswith("{"):
            call = json.loads(action)
            if call["name"] == "refund":
                self._amount = self._amount if self._amount is not None else call["arguments"]["amount"]
                call["arguments"]["amount"] = self._amount
                return json.dumps(call)
        elif action.startswith("Shall I") and self._amount is None:
            self._amount = float(re.search(r"refund (\S+) euros", action).group(1))  # type: ignore[union-attr]
        return action


def test_the_metrics_move_for_the_behaviour_they_name_on_the_example() -> None:
    shifts = {"goal_shift": 1.0}
    good = headline(_records(_agent(), shifts, range(30)), by_kind=True, n_boot=200)
    forgetful = headline(_records(_ForgetsShifts(), shifts, range(30)), by_kind=True, n_boot=200)
    assert good["recovery_share:goal_shift"]["value"] == 1.0
    assert forgetful["recovery_share:goal_shift"]["value"] == 0.0
    assert forgetful["goal_consistency"]["value"] < good["goal_consistency"]["value"] == 1.0
    assert forgetful["success"]["value"] < good["success"]["value"]
    # Without the retry layer the refund desk does not send a failed refund again.
    bare = importlib.import_module("own_env_agent").RefundPolicy()
    failures = {"tool_failure": 0.3}
    careful = headline(_records(_agent(), failures, range(60)), by_kind=True, n_boot=200)
    careless = headline(_records(bare, failures, range(60)), by_kind=True, n_boot=200)
    assert careless["recovery_share:tool_failure"]["value"] < careful["recovery_share:tool_failure"]["value"]


def test_the_command_takes_the_example_as_module_and_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(EXAMPLES)
    out = tmp_path / "records.jsonl"
    assert main(["eval", ENV_ID, "--agent", "own_env_agent:RefundAgent", "--episodes", "6",
                 "--noise", "medium", "--workers", "1", "--out", str(out), "--json"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["success"] == 1.0 and line["n"] == 6
    assert main(["check", ENV_ID]) == 0
    assert "tool accuracy     ok" in capsys.readouterr().out
    suite = tmp_path / "shop.toml"
    suite.write_text(f'[suite]\nid = "shop-smoke"\nenvs = ["{ENV_ID}"]\nnoise = ["none", "medium"]\nn_seeds = 2\n')
    assert main(["bench", str(suite), "--agent", "random", "--workers", "1", "--out", str(tmp_path / "bench"),
                 "--no-report"]) == 0
    assert len((tmp_path / "bench" / "records.jsonl").read_text().splitlines()) == 4
    assert main(["eval", "own_env:MyOrg/Nope-v0", "--episodes", "1"]) == 2
    assert "did not register it" in capsys.readouterr().err
