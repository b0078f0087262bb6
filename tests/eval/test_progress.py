"""Progress: a bar on a terminal, sparse plain lines elsewhere, nothing for short work or an error."""

from __future__ import annotations

import io

import pytest

from agentgym.eval import progress
from agentgym.eval.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_short_job_off_a_terminal_prints_nothing() -> None:
    log = io.StringIO()
    with Progress(100, desc="heuristic", stream=log) as bar:
        for _ in range(100):
            bar.update(success=1.0)
    assert log.getvalue() == ""


def test_a_long_job_off_a_terminal_prints_lines_then_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "LINE_INTERVAL_S", 0.0)
    log = io.StringIO()
    with Progress(3, desc="report: metrics", unit="record", stream=log) as bar:
        for _ in range(3):
            bar.update(success=0.5)
    lines = log.getvalue().splitlines()
    assert lines[0].startswith("report: metrics: 1/3 record, success 50.0% (")
    assert lines[-1].startswith("report: metrics: 3/3 record, success 50.0% (done in ")
    assert "\r" not in log.getvalue()  # plain lines, no redraws in a log


def test_an_error_ends_without_a_closing_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "LINE_INTERVAL_S", 0.0)
    log = io.StringIO()
    with pytest.raises(RuntimeError):
        with Progress(3, desc="x", stream=log) as bar:
            bar.update()
            raise RuntimeError
    assert "done in" not in log.getvalue()


def test_a_terminal_gets_a_bar_that_is_gone_at_the_end() -> None:
    tty = Terminal()
    with Progress(5, desc="heuristic", stream=tty) as bar:
        for _ in range(5):
            bar.update(success=0.8)
    shown = tty.getvalue()
    assert "heuristic" in shown and "\r" in shown
    assert shown.split("\r")[-1].strip() == ""  # cleared: the terminal shows what comes next alone


def test_disabled_is_silent_anywhere() -> None:
    tty = Terminal()
    with Progress(5, stream=tty, enabled=False) as bar:
        bar.update(5)
    assert tty.getvalue() == ""
