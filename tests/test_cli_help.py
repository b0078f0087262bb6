"""`agentgym --help` and every subcommand's: a description each, the same agents for `run` and
`eval`, distinct server ports, no doubled percent signs; `agentgym --version`."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator

import pytest

import agentgym
from agentgym.agents import AGENTS
from agentgym.cli import build_parser


def subcommands(parser: argparse.ArgumentParser,
                path: tuple[str, ...] = ()) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield " ".join((*path, name)), sub
                yield from subcommands(sub, (*path, name))


ALL = list(subcommands(build_parser()))


def test_the_command_tree_has_what_the_docs_name() -> None:
    names = {name for name, _ in ALL}
    assert {"list", "check", "run", "eval", "bench", "report", "submit", "serve", "train", "leaderboard",
            "leaderboard serve", "leaderboard show", "leaderboard verify", "leaderboard render"} <= names
    assert "bench-agents" not in names  # folded into bench and report (CHANGELOG)


@pytest.mark.parametrize(("name", "parser"), ALL, ids=[n for n, _ in ALL])
def test_every_subcommand_says_what_it_does(name: str, parser: argparse.ArgumentParser) -> None:
    assert parser.description and len(parser.description.split()) >= 5, name
    text = parser.format_help()
    assert "%%" not in text and "%(" not in text, name  # argparse prints descriptions as they are


def test_the_top_level_help_lists_every_command_with_a_line() -> None:
    text = build_parser().format_help()
    for name, _ in ALL:
        if " " not in name:
            assert f"\n    {name}" in text or f" {name} " in text, name


def test_run_and_eval_name_the_same_agents_every_built_in_one() -> None:
    helps = {}
    for name, parser in ALL:
        if name in ("run", "eval"):
            helps[name] = next(a.help for a in parser._actions if "--agent" in a.option_strings)
    assert helps["run"] == helps["eval"]
    assert all(agent in helps["run"] for agent in AGENTS)


def test_the_two_servers_default_to_different_ports_neither_8000() -> None:
    ports = {}
    for name, parser in ALL:
        if name in ("serve", "leaderboard serve"):
            ports[name] = next(a.default for a in parser._actions if "--port" in a.option_strings)
    assert len(set(ports.values())) == 2 and 8000 not in ports.values()
    from agentgym.server.serve import ENV_SERVER_PORT, LEADERBOARD_PORT

    assert ports == {"serve": ENV_SERVER_PORT, "leaderboard serve": LEADERBOARD_PORT}


def test_version_and_help_run_as_commands() -> None:
    done = subprocess.run([sys.executable, "-m", "agentgym.cli", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == f"agentgym {agentgym.__version__}"
    done = subprocess.run([sys.executable, "-m", "agentgym.cli", "eval", "--help"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "95% CIs" in done.stdout and "%%" not in done.stdout
