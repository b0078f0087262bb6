"""The terminal rendering of a run: a list of its episodes, or one episode's timeline.

Both draw data made elsewhere: `agentgym.eval.timeline.episode_summary` for a list row,
`agentgym.eval.timeline.timeline` for an episode. Colour is an `Style` choice: on only when
the output is a terminal and ``NO_COLOR`` is unset (https://no-color.org), unless asked for.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence, TextIO

from agentgym.eval.timeline import Event, Mark

__all__ = ["Style", "style_for", "render_list", "render_episode", "events_json", "find_episode", "clip", "printable"]

#: Characters a terminal acts on instead of showing: C0 and C1 controls (an ESC starts a colour,
#: a cursor move, a title change) but the newline and tab, and the bidirectional overrides that
#: reorder what is shown. A record's texts come from agents, tools and files: they are shown escaped.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

_ANSI = {"good": "32", "bad": "31", "warn": "33", "muted": "2", "info": "", "user": "36", "assistant": "34",
         "head": "1"}
#: How much of a body is shown unless asked for all: (characters, lines), per event kind.
_LIMITS: dict[str, tuple[int, int]] = {"tool_result": (300, 4), "task": (240, 3), "user": (600, 8),
                                       "assistant": (600, 8)}


@dataclass(frozen=True)
class Style:
    """How to draw: with ANSI colours or not, and with Unicode symbols or ASCII ones."""

    color: bool = False
    unicode: bool = True

    def paint(self, text: str, tone: str) -> str:
        code = _ANSI.get(tone, "")
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and code and text else text

    def symbol(self, ok: bool | None) -> str:
        if self.unicode:
            return "·" if ok is None else ("✓" if ok else "✗")
        return "." if ok is None else ("+" if ok else "x")


def style_for(stream: TextIO, color: str = "auto", environ: Mapping[str, str] | None = None) -> Style:
    """The style for writing to `stream`.

    Args:
        stream: where the text goes.
        color: ``auto`` (colour when `stream` is a terminal and ``NO_COLOR`` is unset or empty),
            ``always`` or ``never``.
        environ: the environment (default: ``os.environ``).
    """
    env = os.environ if environ is None else environ
    if color == "always":
        on = True
    elif color == "never":
        on = False
    else:
        isatty = getattr(stream, "isatty", None)
        on = bool(isatty and isatty()) and not env.get("NO_COLOR")
    encoding = (getattr(stream, "encoding", None) or "ascii").lower().replace("-", "")
    return Style(color=on, unicode=encoding in ("utf8", "utf16", "utf32"))


def printable(text: str) -> str:
    """`text` with every character a terminal would act on written as an escape (``\\x1b``)."""
    return _CONTROLS.sub(lambda m: ascii(m.group())[1:-1], text)


def clip(text: str, chars: int, lines: int) -> str:
    """`text` cut to at most `chars` characters and `lines` lines, saying how much was left out."""
    kept = text.splitlines() or [""]
    cut_lines = len(kept) > lines
    out = "\n".join(kept[:lines])
    if len(out) > chars:
        out = out[:chars].rstrip()
    left = len(text) - len(out)
    if left > 0 and (cut_lines or len(out) < len(text.rstrip())):
        out += f" ... ({left} more characters)"
    return out


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def render_list(rows: Sequence[Mapping[str, Any]], style: Style, run: str) -> str:
    """The episodes of a run, one line each: number, success, score, turns, calls, faults, key.

    Args:
        rows: `agentgym.eval.timeline.episode_summary` of each episode, in the run's order.
        style: how to draw.
        run: the run's name, for the header and the hint.
    """
    if not rows:
        return f"{run}: no episodes"
    wins = sum(1 for r in rows if r["success"])
    lines = [style.paint(f"{printable(run)}: {len(rows)} episodes, {wins} succeeded", "head"),
             style.paint(f"{'#':>4}  {'ok':2}  {'score':>5}  {'turns':>5}  {'calls':>5}  {'faults':>9}  key", "muted")]
    for i, r in enumerate(rows):
        ok = style.paint(style.symbol(bool(r["success"])), "good" if r["success"] else "bad")
        faults = f"{r['recovered']}/{r['faults']}" if r["faults"] else "-"
        kinds = f" ({', '.join(r['fault_kinds'])})" if r["fault_kinds"] else ""
        error = style.paint(f"  agent error: {printable(str(r['agent_error']))}", "bad") if r.get("agent_error") else ""
        lines.append(f"{i:>4}  {ok:2}  {r['score']:5.2f}  {r['turns']:>5}  {r['tool_calls']:>5}  {faults:>9}  "
                     f"{printable(str(r['key']))}{style.paint(printable(kinds), 'muted')}{error}")
    lines.append(style.paint("faults: recovered/counted. One episode: agentgym view RUN --episode KEY "
                             "(or its #)", "muted"))
    return "\n".join(lines)


def _mark_line(mark: Mark, style: Style) -> str:
    tone = "muted" if mark.ok is None else ("good" if mark.ok else "bad")
    return style.paint(f"{style.symbol(mark.ok)} {mark.metric.replace('_', ' ')}: {printable(mark.text)}", tone)


_LABELS = {"tool_call": "call", "tool_result": "result", "fault": "FAULT", "turn_error": "error",
           "constraints": "stated", "recovery": "recovered", "censored": "never recovered",
           "commitment": "committed", "agent_error": "AGENT ERROR", "end": "end", "note": "note"}


def _section_line(e: Event, style: Style) -> str:
    ms = e.data.get("elapsed_ms")
    title = printable(e.text) + (f" ({ms:.0f} ms)" if isinstance(ms, (int, float)) else "")
    return style.paint(f"-- {title} " + "-" * max(0, 60 - len(title)), "muted")


def _event_lines(e: Event, style: Style, full: bool) -> list[str]:
    if e.kind == "section":
        return [_section_line(e, style)]
    label = _LABELS.get(e.kind, e.kind)
    body = None
    if e.body:
        body = printable(e.body if full else clip(e.body, *_LIMITS.get(e.kind, (400, 6))))
    if e.kind in ("user", "assistant"):
        head = style.paint(f"{label}:", e.kind)
        if body is not None and "\n" not in body:  # a one-line message sits beside its label
            head, body = f"{head} {body}", None
    else:
        text = printable(e.text)
        head = f"{style.paint(f'{label}:', e.tone)} {style.paint(text, e.tone if e.tone != 'info' else '')}"
    lines = [f"  {head}"]
    if body is not None:
        lines.append(_indent(body, "      "))
    lines += [f"      {_mark_line(m, style)}" for m in e.marks]
    return lines


def render_episode(key: str, events: Sequence[Event], style: Style, *, full: bool = False) -> str:
    """One episode's timeline, turn by turn.

    Args:
        key: the episode key, for the header.
        events: its `agentgym.eval.timeline.timeline`.
        style: how to draw.
        full: show bodies (tool results, messages) whole instead of clipped.
    """
    lines = [style.paint(printable(key), "head")]
    for e in events:
        lines += _event_lines(e, style, full)
    return "\n".join(lines)


def events_json(events: Sequence[Event]) -> str:
    """The timeline as JSON: a list of objects with the fields of `Event` (marks as objects)."""
    return json.dumps([dataclasses.asdict(e) for e in events], sort_keys=True, default=str)


def find_episode(records: Sequence[Mapping[str, Any]], wanted: str, run: str) -> Mapping[str, Any]:
    """The record with key `wanted`, or at that position of the run's list (a number).

    Raises:
        ValueError: no such episode (one line, with how to list them).
    """
    for rec in records:
        if rec.get("key") == wanted:
            return rec
    if wanted.isdigit() and int(wanted) < len(records):
        return records[int(wanted)]
    hint = f"`agentgym view {run}` lists them"
    raise ValueError(f"no episode {wanted!r} in {run} ({len(records)} episodes; {hint})")
