"""`agentgym train ppo`'s options through tyro: the README's command lines parse, a bad option is
one line and exit status 2 from the real command, and tyro's report is read in either form.
(`tests/baselines/test_ppo_units.py` checks the help and each kind of bad option in process.)"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from agentgym.baselines.ppo import Args  # noqa: E402
from agentgym.cli_parser import _first_paragraph, parse_dataclass  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _agentgym(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AGENTGYM_TRACEBACK"}
    return subprocess.run([sys.executable, "-m", "agentgym.cli", *argv], capture_output=True, text=True, timeout=120,
                          env=env)


def _readme_train_lines() -> list[list[str]]:
    lines = []
    for line in (ROOT / "README.md").read_text("utf-8").splitlines():
        if m := re.search(r"agentgym train ppo (.*?)(?:\s+#.*)?$", line):
            lines.append(shlex.split(m.group(1).strip("`")))
    return lines


def test_the_readmes_train_commands_parse() -> None:
    lines = _readme_train_lines()
    assert lines, "the README shows `agentgym train ppo ...`"
    for argv in lines:
        args = parse_dataclass(Args, argv, prog="agentgym train ppo")
        assert isinstance(args, Args) and args.env, argv
    first = parse_dataclass(Args, ["--env", "AgentRL/Dialog-v0", "--difficulty", "easy", "--max-seconds", "300"],
                            prog="agentgym train ppo")
    assert (first.env, first.difficulty, first.max_seconds) == (("AgentRL/Dialog-v0",), "easy", 300.0)


def test_a_bad_option_of_the_real_command_is_one_line() -> None:
    # A check of Args' own (a ValueError in __post_init__), which tyro reports from inside its parse.
    done = _agentgym("train", "ppo", "--env", "tooluse", "--policy", "lm")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines() == [done.stderr.strip()], done.stderr
    assert done.stderr.startswith("agentgym train ppo: error: --policy lm needs --model PATH"), done.stderr


# tyro's report as a UTF-8 console draws it, and as a console of another encoding writes it.
_BOXED = """\
\u256d\u2500 Value error \u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u256e
\u2502 Error parsing --seed: invalid literal for int() \u2502
\u2502 with base 10: 'x'                           \u2502
\u2502 \u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500 \u2502
\u2502 Argument helptext:                          \u2502
\u2502     --seed INT                              \u2502
\u2570\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u256f
"""
_PLAIN = """\
 Value error
 ----------------------------------------------
  Error parsing Args: --num-envs must be at least 1, got 0
  ----------------------------------------------
  For full helptext, see p --help
"""


def test_the_first_paragraph_of_either_form_of_tyros_report() -> None:
    assert _first_paragraph(_BOXED, "Args") == "Error parsing --seed: invalid literal for int() with base 10: 'x'"
    assert _first_paragraph(_PLAIN, "Args") == "--num-envs must be at least 1, got 0"
    assert _first_paragraph("something else entirely\n", "Args") == "something else entirely"
