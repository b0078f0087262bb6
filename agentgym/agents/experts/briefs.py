"""Reading the brief: the facts and policy figures a careful assistant takes from it.

A brief (the system message) says who the assistant is, what day or time it is, and the
domain's policies with their figures (a limit, a threshold). In a cross-task session one brief
holds a section per task area (``## Task area N: <family> / <domain>``); the part about a
domain is read from its own section, so another area's figures never leak in.
"""

from __future__ import annotations

import datetime as _dt
import re

from agentgym.agents.transcript import DATE

__all__ = ["section", "figure", "today", "now", "year"]

_AREA = re.compile(r"^## Task area \d+: (\w+) / (\w+)\s*$", re.M)


def section(brief: str, family: str, domain: str) -> str:
    """The part of `brief` about `family` / `domain`: its task-area section in a session brief,
    else the whole brief."""
    marks = list(_AREA.finditer(brief))
    for i, m in enumerate(marks):
        if (m.group(1), m.group(2)) == (family, domain):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(brief)
            return brief[m.end():end]
    return brief


def figure(text: str, pattern: str) -> float | None:
    """The number the first group of `pattern` finds in `text`, or None."""
    m = re.search(pattern, text)
    return float(m.group(1)) if m else None


def today(text: str) -> _dt.date | None:
    """The date the brief says it is ("Today is Tuesday 2025-10-07"), or None."""
    m = re.search(r"Today is (?:\w+ )?(\d{4}-\d{2}-\d{2})", text)
    return _dt.date.fromisoformat(m.group(1)) if m else None


def now(text: str) -> str | None:
    """The instant the brief says it is ("It is now 2025-09-26 14:50 UTC"), as it is written."""
    m = re.search(r"It is now (\d{4}-\d{2}-\d{2} \d{2}:\d{2})", text)
    return m.group(1) if m else None


def year(text: str) -> int | None:
    """The year the brief's dates are in ("all in 2025", "in 2025"), or None."""
    m = re.search(r"\bin (\d{4})\b", text)
    if m:
        return int(m.group(1))
    day = DATE.search(text)
    return int(day.group(0)[:4]) if day else None
