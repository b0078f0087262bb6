"""Every user error of the `agentgym` command is one line on stderr, no traceback, exit status 2,
and leaves no records file or run folder behind. The real command runs in a process of its own, in
a fresh folder, as a user would run it: forked from a zygote that has imported the command, or a
plain ``python -m agentgym.cli`` where what the interpreter does at start-up is under test
(``AGENTGYM_TRACEBACK``)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_zygote import CliZygote, fork_available

from agentgym.bench.run import run_suite
from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs

DIALOG = "AgentRL/Dialog-v0"

#: An agent whose constructor refuses its arguments, as a trained agent without its checkpoint
#: does: the error comes from wherever the agent is built (a worker process too).
_REFUSING_AGENT = '''
class NeedsCheckpoint:
    def __init__(self, checkpoint=None):
        raise ValueError("this agent plays a trained policy: give --checkpoint PATH")

    def reset(self, obs, info):
        pass

    def act(self, obs, info):
        return "hello"
'''


def _user_env(cwd: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(cwd), os.environ.get("PYTHONPATH", "")])}
    env.pop("AGENTGYM_TRACEBACK", None)
    return env


def agentgym(cwd: Path, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentgym.cli", *argv], cwd=cwd, env=_user_env(cwd),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def forked() -> Any:
    """``agentgym ARGV`` forked from a zygote (a plain subprocess where there is no fork)."""
    if not fork_available():
        yield agentgym
        return
    with CliZygote() as zygote:
        yield lambda cwd, *argv: zygote.run(cwd, list(argv), _user_env(cwd))


def error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one line a user error prints; fails unless that is all stderr holds."""
    assert "Traceback" not in done.stderr, done.stderr
    # splitlines() also splits at carriage returns: a progress bar left on the line would show.
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("agentgym"), lines[0]
    assert done.returncode == 2, (done.returncode, done.stderr)
    return lines[0]


def files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with good and bad inputs: a records file, a bench run, files of the wrong kind."""
    root = tmp_path_factory.mktemp("inputs")
    run_jobs([EpisodeJob(DIALOG, seed=s) for s in range(2)], AgentSpec("heuristic"), root / "good.jsonl", workers=1,
             progress=False)
    first = json.loads((root / "good.jsonl").read_text().splitlines()[0])
    (root / "v1.jsonl").write_text(json.dumps({**first, "schema_version": 1}) + "\n")
    (root / "other.jsonl").write_text('{"a": 1}\n')
    (root / "partial.jsonl").write_text('{"schema_version": 2, "key": "x"}\n')
    (root / "garbage.jsonl").write_text("garbage\n")
    (root / "empty.jsonl").write_text("")
    (root / "a_file").write_text("x")
    (root / "not_a_db.sqlite").write_text("this is a text file, not a SQLite database\n" * 20)
    (root / "refusing.py").write_text(_REFUSING_AGENT)
    suite_file = '[suite]\nid = "{id}"\nenvs = ["{env}"]\nnoise = ["none"]\nn_seeds = 2\n'
    (root / "unknown_env.toml").write_text(suite_file.format(id="mine-v1", env="AgentRL/Nope-v0"))
    suite = root / "tiny.toml"
    suite.write_text(suite_file.format(id="tiny-v1", env=DIALOG))
    run_suite(str(suite), AgentSpec("heuristic"), root / "bench_run", workers=1, progress=False)
    (root / "submissions").mkdir()
    return root


@pytest.fixture()
def here(inputs: Path, tmp_path: Path) -> Path:
    """A fresh working folder holding copies of the input files and links to the input folders
    (a records writer refuses a link, so what a command may write to must be a file)."""
    import shutil

    for item in inputs.iterdir():
        if item.is_dir():
            (tmp_path / item.name).symlink_to(item)
        else:
            shutil.copy(item, tmp_path / item.name)
    return tmp_path


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: (argv, a part of the line). The episodes are few: each error comes before the first one.
CASES = [
    # unknown envs, agents and suites
    (["eval", "AgentRL/Nope-v0", "--episodes", "2"], "unknown environment 'AgentRL/Nope-v0'"),
    (["eval", "AgentRL/Dialog-v9", "--episodes", "2"], "unknown environment 'AgentRL/Dialog-v9'"),
    (["run", "AgentRL/Nope-v0", "--episodes", "2"], "unknown environment"),
    (["check", "AgentRL/Nope-v0"], "unknown environment"),
    (["bench", "unknown_env.toml"], "unknown environment 'AgentRL/Nope-v0'"),
    (["eval", DIALOG, "--agent", "nope", "--episodes", "2"], "unknown agent 'nope'"),
    (["run", DIALOG, "--agent", "nope", "--episodes", "2"], "unknown agent 'nope'"),
    (["bench", "smoke-v0", "--agent", "nope"], "unknown agent 'nope'"),
    (["eval", DIALOG, "--agent", "no_such_module:Agent", "--episodes", "2"], "cannot load agent"),
    (["bench", "nope-v0"], "unknown suite 'nope-v0'"),
    # the ppo agent without its checkpoint, and agent arguments it does not take
    (["eval", DIALOG, "--agent", "ppo", "--episodes", "2"], "--checkpoint PATH"),
    (["run", DIALOG, "--agent", "ppo", "--episodes", "2"], "--checkpoint PATH"),
    (["bench", "smoke-v0", "--agent", "ppo"], "--checkpoint PATH"),
    (["eval", DIALOG, "--agent-arg", "colour=blue", "--episodes", "2"], "takes no argument 'colour'"),
    (["eval", DIALOG, "--agent-arg", "colour", "--episodes", "2"], "must look like key=value"),
    # an agent whose constructor refuses, in this process and in workers
    (["eval", DIALOG, "--agent", "refusing:NeedsCheckpoint", "--episodes", "4", "--workers", "1"], "--checkpoint PATH"),
    (["eval", DIALOG, "--agent", "refusing:NeedsCheckpoint", "--episodes", "4", "--workers", "2"], "--checkpoint PATH"),
    (["bench", "tiny.toml", "--agent", "refusing:NeedsCheckpoint", "--workers", "2"], "--checkpoint PATH"),
    # option values
    (["eval", DIALOG, "--episodes", "0"], "argument --episodes: must be at least 1, got 0"),
    (["eval", DIALOG, "--trials", "0"], "argument --trials: must be at least 1"),
    (["eval", DIALOG, "--seed", "-1"], "argument --seed: must be at least 0"),
    (["eval", DIALOG, "--workers", "0"], "argument --workers"),
    (["eval", DIALOG, "--timeout", "0"], "argument --timeout: must be a number above 0"),
    (["eval", DIALOG, "--episodes", "many"], "argument --episodes: expected an integer"),
    (["run", DIALOG, "--episodes", "-3"], "argument --episodes"),
    (["eval", DIALOG, "--noise", "bogus", "--episodes", "2"], "unknown noise kind 'bogus'"),
    (["eval", DIALOG, "--noise", "tool_failure=2", "--episodes", "2"], "rate must be a number in [0, 1]"),
    (["eval", DIALOG, "--domain", "nowhere", "--episodes", "2"], "domain 'nowhere'"),
    (["eval", DIALOG, "--difficulty", "extreme"], "argument --difficulty: invalid choice"),
    (["serve", "--port", "70000"], "argument --port: a TCP port is 0 to 65535"),
    (["leaderboard", "serve", "--port", "-1"], "argument --port"),
    (["submit", "bench_run", "--to", "http://127.0.0.1:1", "--model", "m", "--revision", "r", "--timeout", "0"],
     "argument --timeout"),
    (["validate-metrics", "--seeds", "0"], "argument --seeds: must be at least 1"),
    (["check-users", "--pool", "0"], "--pool must be at least 1"),
    (["serve", "--max-sessions", "0"], "max_sessions must be a positive int"),
    (["serve", "--env", "AgentRL/Nope-v0"], "cannot serve unregistered ids"),
    ([], "the following arguments are required: COMMAND"),
    (["list", "--bogus"], "agentgym list: error: unrecognized arguments: --bogus (see `agentgym list --help`)"),
    (["evaluate"], "invalid choice: 'evaluate'"),
    (["leaderboard", "render"], "the following arguments are required: --out"),
    # files that are missing, of another kind or of another schema
    (["report", "nothing_here"], "no run at nothing_here"),
    (["report", "other.jsonl"], "not a schema-2 record"),
    (["report", "v1.jsonl"], "a schema-1 record (written by an older agentgym)"),
    (["report", "partial.jsonl"], "not an episode record"),
    (["report", "garbage.jsonl"], "garbage.jsonl:1: not a valid record line"),
    (["report", "empty.jsonl"], "no records in empty.jsonl"),
    (["report", "good.jsonl", "--out", "a_file"], "--out a_file is a file"),
    (["eval", DIALOG, "--episodes", "2", "--out", "partial.jsonl"], "not an episode record"),
    (["eval", DIALOG, "--episodes", "2", "--out", "a_file"], "a_file:1 is not a record"),
    (["leaderboard", "verify", "missing.agentgym.gz"], "missing.agentgym.gz: No such file or directory"),
    (["leaderboard", "show", "--db", "missing.sqlite"], "no leaderboard database at missing.sqlite"),
    (["leaderboard", "show", "--db", "not_a_db.sqlite"], "database error: file is not a database"),
    (["submit", "bench_run", "--db", "not_a_db.sqlite", "--model", "m", "--revision", "r"], "file is not a database"),
    (["leaderboard", "render", "--out", "board"], "no submissions folder at board/submissions"),
    (["submit", "good.jsonl", "--db", "board.sqlite", "--model", "m", "--revision", "r"], "not a bench run folder"),
    (["submit", "bench_run", "--model", "m", "--revision", "r"], "say where the submission goes"),
    (["validate-metrics", "--seeds", "2"], "no doc at docs/METRICS.md to write the matrix into"),
]


@pytest.mark.parametrize(("argv", "says"), CASES, ids=[" ".join(a)[:70] or "(nothing)" for a, _ in CASES])
def test_a_user_error_is_one_line_and_leaves_nothing_behind(here: Path, forked: Any, argv: list[str],
                                                            says: str) -> None:
    before = files(here)
    line = error_line(forked(here, *argv))
    assert says in line, line
    assert files(here) == before, files(here) - before


@pytest.mark.parametrize("command", [["eval", DIALOG, "--episodes", "2", "--workers", "2"], ["bench", "tiny.toml"]])
def test_an_env_server_that_is_not_there_is_one_line(here: Path, forked: Any, command: list[str]) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    line = error_line(forked(here, *command, "--remote", url))
    assert "cannot reach the env server" in line and url in line
    assert not (here / "runs").exists()


def test_a_leaderboard_that_is_not_there_is_one_line(here: Path, forked: Any) -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    line = error_line(forked(here, "submit", "bench_run", "--to", url, "--model", "m", "--revision", "r",
                               "--timeout", "5"))
    assert line.startswith(f"agentgym: error: cannot reach the leaderboard at {url}: ")


@pytest.mark.parametrize("command", [["serve"], ["leaderboard", "serve", "--db", "board.sqlite"]])
def test_a_port_in_use_is_one_line(here: Path, forked: Any, command: list[str]) -> None:
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = error_line(forked(here, *command, "--port", str(port)))
    assert f"port {port} on 127.0.0.1 is in use" in line and "--port" in line


def test_render_without_a_database_says_the_board_is_empty(here: Path, forked: Any) -> None:
    (here / "board").mkdir()
    done = forked(here, "leaderboard", "render", "--out", ".", "--from", "submissions")
    assert done.returncode == 0, done.stderr
    assert "the board is empty: no submissions in submissions" in done.stdout
    assert (here / "LEADERBOARD.md").exists()


def test_report_of_a_records_file_writes_beside_it(here: Path, forked: Any) -> None:
    done = forked(here, "report", "good.jsonl")
    assert done.returncode == 0, done.stderr
    assert (here / "good-report" / "report.md").exists() and (here / "good-report" / "metrics.png").exists()
    assert "Traceback" not in done.stderr


def test_tracebacks_are_there_on_request(here: Path) -> None:
    env = {**os.environ, "AGENTGYM_TRACEBACK": "1"}
    done = subprocess.run([sys.executable, "-m", "agentgym.cli", "eval", "AgentRL/Nope-v0"], cwd=here, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "Traceback" in done.stderr and "UserError" in done.stderr
