"""The catalogue in envs/: its files equal what `agentgym.catalogue` generates, each serve.toml
starts a server for its id, and each own-env example plays, is solved by its agent and passes
its contract checks."""

from __future__ import annotations

import importlib
import json
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from agentgym import ENV_IDS
from agentgym.agents import make_agent
from agentgym.catalogue import catalogue_files, folder_name, main, serve_argv, stale_files
from agentgym.cli_parser import Parser
from agentgym.registration import spec_card
from agentgym.server.commands import add_serve_arguments
from agentgym.server.config import ServerConfig
from agentgym.server.serve import ServerThread
from agentgym.testing import check_agent_env

REPO = Path(__file__).resolve().parents[1]
CATALOGUE = REPO / "envs"
EXAMPLES = CATALOGUE / "examples"
SCRIPTS = sorted(p.stem for p in EXAMPLES.glob("*.py") if not p.stem.endswith("_agent"))


def test_the_catalogue_is_what_the_registry_generates() -> None:
    assert stale_files(CATALOGUE) == [], "run: python -m agentgym.catalogue --write"
    assert {p.parent.name for p in catalogue_files(CATALOGUE)} == {"envs", *map(folder_name, ENV_IDS)}
    assert not (CATALOGUE / "__init__.py").exists()  # a folder of files, not a package


def test_the_check_names_a_stale_file_and_an_unknown_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(tmp_path), "--write"]) == 0
    assert main(["--root", str(tmp_path)]) == 0
    card = tmp_path / folder_name(ENV_IDS[0]) / "README.md"
    card.write_text(card.read_text("utf-8") + "edited by hand\n", "utf-8")
    (tmp_path / "MyOrg-Gone-v0").mkdir()
    assert main(["--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert f"{card}: out of date" in err and "MyOrg-Gone-v0: no registered id has this folder" in err


def test_each_card_is_its_env_docstring() -> None:
    for env_id in ENV_IDS:
        card = (CATALOGUE / folder_name(env_id) / "README.md").read_text("utf-8")
        doc = spec_card(gym.spec(env_id))
        assert card.splitlines()[1] == f"# {env_id}"
        for heading in ("## Description", "## Observation", "## Noise", "## Version history"):
            assert heading in card and heading in doc


def _serve_options(path: Path) -> Any:
    parser = Parser(prog="agentgym serve")
    add_serve_arguments(parser)
    return parser.parse_args(serve_argv(path))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_each_serve_toml_serves_its_id(env_id: str) -> None:
    args = _serve_options(CATALOGUE / folder_name(env_id))
    assert args.env_ids == [env_id] and args.host == "127.0.0.1"
    config = ServerConfig(**{f.name: getattr(args, f.name) for f in fields(ServerConfig)})
    # The listed host, on a free port (0) rather than the configured one, which may be taken.
    with ServerThread(config, env_ids=args.env_ids, host=args.host) as server:
        with urllib.request.urlopen(f"{server.url}/envs", timeout=10) as reply:
            served = [e["id"] for e in json.load(reply)["envs"]]
        env = gym.make("AgentRL/Remote-v0", url=server.url, env_id=env_id)
        obs, info = env.reset(seed=0)
        _, _, terminated, truncated, _ = env.step("Hello!")
        env.close()
    assert served == [env_id] and obs and info["seed"] == 0 and not terminated


def test_serve_toml_is_read_strictly(tmp_path: Path) -> None:
    path = tmp_path / "serve.toml"
    path.write_text('[serve]\nenv = ["A/B-v0", "C/D-v0"]\nport = 9\nlog_level = "debug"\n')
    assert serve_argv(tmp_path) == ["--env", "A/B-v0", "--env", "C/D-v0", "--port", "9", "--log-level", "debug"]
    for bad in ('[serve]\nport = 9\n[other]\nx = 1\n', 'port = 9\n', '[serve]\nenv = [{a = 1}]\n',
                '[serve]\nprint_openapi = false\n', "[serve\n"):
        path.write_text(bad)
        with pytest.raises(ValueError):
            serve_argv(path)
    path.write_text("[serve]\nno_such_option = 1\n")
    with pytest.raises(SystemExit):  # agentgym serve's own parser refuses it
        _serve_options(path)


@pytest.fixture()
def example(request: pytest.FixtureRequest) -> Iterator[tuple[list[str], Any]]:
    """An own-env example imported by name from envs/examples/, the ids it registered and its
    scripted agent; the ids and modules are removed afterwards (other tests read the registry)."""
    name = request.param
    before = set(gym.registry)
    sys.path.insert(0, str(EXAMPLES))
    try:
        importlib.import_module(name)
        agent_module = importlib.import_module(f"{name}_agent")
        yield sorted(set(gym.registry) - before), getattr(agent_module, agent_module.__all__[0])
    finally:
        sys.path.remove(str(EXAMPLES))
        for env_id in set(gym.registry) - before:
            gym.registry.pop(env_id)
        for module in (name, f"{name}_agent"):
            sys.modules.pop(module, None)


def _successes(env_id: str, agent: Any, seeds: range) -> list[bool]:
    env = gym.make(env_id)
    out = []
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        agent.reset(obs, info)
        for _ in range(50):
            obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
            if terminated or truncated:
                break
        out.append(bool(info["episode_summary"]["success"]))
    env.close()
    return out


@pytest.mark.parametrize("example", SCRIPTS, indirect=True)
def test_each_own_env_example_is_solved_by_its_agent_and_passes_its_checks(example: tuple[list[str], Any]) -> None:
    ids, agent_class = example
    assert ids, "the example registers no id"
    for env_id in ids:
        assert all(_successes(env_id, agent_class(), range(8)))
        assert not any(_successes(env_id, make_agent("random"), range(8)))
        report = check_agent_env(env_id, n_garbage=10, fresh_process=False)
        assert report.ok, report.render()


def test_the_catalogue_lists_every_example() -> None:
    index = (CATALOGUE / "README.md").read_text("utf-8")
    assert SCRIPTS and all(f"examples/{name}.py" in index for name in SCRIPTS)
