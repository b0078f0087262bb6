"""`agentgym.errors`: which exceptions are user errors, and their one line."""

from __future__ import annotations

import sqlite3

import gymnasium as gym
import pytest

from agentgym.cli_parser import Parser, at_least, positive_float, tcp_port
from agentgym.errors import MAX_MESSAGE_CHARS, UserError, one_line, run_command, user_message


@pytest.mark.parametrize(("error", "line"), [
    (UserError("unknown agent 'x'"), "unknown agent 'x'"),
    (ValueError("bad noise spec\n  at 'x'"), "bad noise spec at 'x'"),
    (gym.error.NameNotFound("Environment `Nope` doesn't exist."), "Environment `Nope` doesn't exist."),
    (FileNotFoundError(2, "No such file or directory", "runs/x.jsonl"), "runs/x.jsonl: No such file or directory"),
    (ConnectionRefusedError(111, "Connection refused"), "[Errno 111] Connection refused"),
    (sqlite3.DatabaseError("file is not a database"), "database error: file is not a database"),
])
def test_user_errors_are_one_line(error: BaseException, line: str) -> None:
    assert user_message(error) == line


@pytest.mark.parametrize("error", [KeyError("x"), TypeError("unsupported operand"), AttributeError("y"),
                                   RuntimeError("z"), AssertionError()])
def test_bugs_are_no_user_errors(error: BaseException) -> None:
    assert user_message(error) is None


def test_a_huge_message_is_cut() -> None:
    assert len(one_line("x" * 10**6)) == MAX_MESSAGE_CHARS


def test_run_command_prints_one_line_and_returns_2(capsys: pytest.CaptureFixture[str]) -> None:
    def refuse(_: object) -> int:
        raise UserError("no records at runs/x")

    assert run_command(refuse, None) == 2
    assert capsys.readouterr().err == "agentgym: error: no records at runs/x\n"


def test_run_command_lets_a_bug_raise() -> None:
    def bug(_: object) -> int:
        return {}["missing"]  # type: ignore[no-any-return]

    with pytest.raises(KeyError):
        run_command(bug, None)


def test_tracebacks_on_request(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(_: object) -> int:
        raise UserError("x")

    monkeypatch.setenv("AGENTGYM_TRACEBACK", "1")
    with pytest.raises(UserError):
        run_command(refuse, None)


def test_ctrl_c_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    def interrupted(_: object) -> int:
        raise KeyboardInterrupt

    assert run_command(interrupted, None) == 130
    assert capsys.readouterr().err == "agentgym: interrupted\n"


def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    parser = Parser(prog="agentgym")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("eval", help="evaluate an agent")
    p.add_argument("--trials", type=at_least(1), default=1)
    p.add_argument("--timeout", type=positive_float, default=1.0)
    p.add_argument("--port", type=tcp_port, default=0)
    assert p.description == "Evaluate an agent."  # a subcommand's help is its description too
    for argv, says in ((["eval", "--trials", "0"], "argument --trials: must be at least 1, got 0"),
                       (["eval", "--timeout", "nan"], "argument --timeout: must be a number above 0"),
                       (["eval", "--timeout", "inf"], "argument --timeout: must be a number above 0"),
                       (["eval", "--port", "65536"], "argument --port: a TCP port is 0 to 65535"),
                       (["eval", "--trials", "x" * 5000], "expected an integer")):
        with pytest.raises(SystemExit) as stop:
            parser.parse_args(argv)
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err and err.startswith("agentgym eval: error: "), err
        assert len(err) < 400
