"""Rate-limited server logs (`agentgym.server.logs`): a flood of one kind of line becomes a few
lines and a count; other kinds pass on their own budget."""

from __future__ import annotations

import logging

from agentgym.server.logs import SERVER_LOGGERS, RateLimitFilter, limit_server_logs


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _record(msg: str, *args: object, name: str = "agentgym.server", level: int = logging.WARNING) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, args, None)


def test_a_flood_of_one_kind_is_cut_to_the_burst_and_counted() -> None:
    clock = _Clock()
    limit = RateLimitFilter(burst=5, window_s=60.0, clock=clock)
    passed = [r for r in (_record("dropped a connection from %s", f"10.0.0.{i % 250}") for i in range(10_000))
              if limit.filter(r)]
    assert len(passed) == 5
    other = _record("reaped %d idle sessions", 3)
    assert limit.filter(other)  # another kind has its own budget
    clock.now = 61.0
    late = _record("dropped a connection from %s", "10.0.0.1")
    assert limit.filter(late)
    assert late.getMessage() == "dropped a connection from 10.0.0.1 (9995 more like this held back)"


def test_kinds_are_told_apart_by_logger_and_level() -> None:
    limit = RateLimitFilter(burst=1, window_s=60.0, clock=_Clock())
    assert limit.filter(_record("x", name="uvicorn.error"))
    assert limit.filter(_record("x", name="asyncio"))
    assert limit.filter(_record("x", level=logging.ERROR))
    assert not limit.filter(_record("x", name="asyncio"))


def test_the_memory_of_kinds_is_bounded() -> None:
    clock = _Clock()
    limit = RateLimitFilter(burst=1, window_s=1.0, clock=clock)
    for i in range(5000):  # asyncio's messages carry reprs: every one its own kind
        clock.now = i * 0.01
        limit.filter(_record(f"Exception in callback <Handle {i}>"))
    assert limit.remembered <= 256


def test_the_filter_is_installed_once_on_every_server_logger() -> None:
    first = limit_server_logs()
    assert limit_server_logs() is first
    for name in SERVER_LOGGERS:
        assert logging.getLogger(name).filters.count(first) == 1
