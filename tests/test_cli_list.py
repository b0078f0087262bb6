"""`agentgym list`: every AgentRL/* id with the first line of its card, the env-server client
marked, and ``--card`` for the whole card."""

from __future__ import annotations

import gymnasium as gym
import pytest

import agentgym
from agentgym.cli import main
from agentgym.registration import card_summary, env_class_path


def _lines(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["list", *argv])
    return code, capsys.readouterr().out


def test_every_id_is_listed_with_the_first_line_of_its_card(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _lines(capsys)
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines()}
    assert set(rows) == {i for i in gym.registry if i.startswith("AgentRL/")}
    for env_id in agentgym.ENV_IDS:
        cls = env_class_path(gym.spec(env_id))  # the family's env class, "module:Class"
        first = card_summary(gym.envs.registration.load_env_creator(cls).__doc__)
        assert first and rows[env_id].endswith(first), rows[env_id]
        assert "make_env" not in rows[env_id]
    assert "client of an env server" in rows["AgentRL/Remote-v0"]
    assert "client" not in rows["AgentRL/Dialog-v0"]


def test_the_card_flag_prints_whole_cards(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _lines(capsys, "--card", "AgentRL/ToolUse-v0")
    assert code == 0 and out.startswith("AgentRL/ToolUse-v0\n")
    for section in ("## Description", "## Reward", "## Termination", "## Version history"):
        assert section in out


def test_an_unknown_id_is_one_line_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list", "Nope/Missing-v0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Nope/Missing-v0" in captured.err


def test_the_summary_line_of_a_card() -> None:
    assert card_summary("Find a thing.\n\n## Description\nLong text.") == "Find a thing."
    assert card_summary("\n    ## Description\n    A user wants a place. More text\n    here.\n\n    ## Reward\n") \
        == "A user wants a place."
    assert card_summary(None) == "" and card_summary("## Reward\n0 or 1.") == ""
