"""Tests for agentgym.eval.view: colour only where it belongs, clipped bodies, the list and one episode."""

from __future__ import annotations

import copy
import io
import json

import pytest
from played import played

from agentgym.eval.timeline import episode_summary, timeline
from agentgym.eval.transcript import replay_transcript
from agentgym.eval.view import (
    Style,
    clip,
    events_json,
    find_episode,
    printable,
    render_episode,
    render_list,
    style_for,
)


class _Terminal(io.StringIO):
    encoding = "utf-8"

    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color() -> None:
    assert style_for(_Terminal(), environ={}).color
    assert not style_for(_Terminal(), environ={"NO_COLOR": "1"}).color
    assert style_for(_Terminal(), environ={"NO_COLOR": ""}).color  # set but empty: no opinion
    assert not style_for(io.StringIO(), environ={}).color  # a pipe or a file
    assert style_for(io.StringIO(), "always", environ={"NO_COLOR": "1"}).color
    assert not style_for(_Terminal(), "never", environ={}).color


def test_ascii_symbols_where_the_stream_cannot_encode_others() -> None:
    ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    style = style_for(ascii_out, environ={})
    assert not style.unicode and style.symbol(True) == "+" and style.symbol(False) == "x"
    assert style_for(_Terminal(), environ={}).symbol(True) == "✓"


def test_clip_says_how_much_it_left_out() -> None:
    assert clip("short", 10, 2) == "short"
    assert clip("x" * 50, 10, 2) == "x" * 10 + " ... (40 more characters)"
    assert clip("a\nb\nc\nd", 100, 2) == "a\nb ... (4 more characters)"


def test_texts_that_would_drive_the_terminal_are_shown_escaped() -> None:
    assert printable("ok\n\tfine é ✓") == "ok\n\tfine é ✓"
    assert printable("\x1b]0;owned\x07red\x1b[31m\u202eevil\x9b") == "\\x1b]0;owned\\x07red\\x1b[31m\\u202eevil\\x9b"
    rec = copy.deepcopy(played("AgentRL/Dialog-v0", 1)[0])
    rec["actions"][0] = "hello \x1b[2J\x1b]0;title\x07 there"
    rec["key"] = rec["key"] + "\x1b[31m"
    events = timeline(rec)
    for style in (Style(color=False), Style(color=True)):
        shown = render_episode(rec["key"], events, style)
        assert "\x1b[2J" not in shown and "\x1b]0" not in shown and "\x07" not in shown
        assert "hello \\x1b[2J\\x1b]0;title\\x07 there" in shown
    listed = render_list([episode_summary(rec)], Style(color=False), "r")
    assert "\x1b" not in listed and "\\x1b[31m" in listed


def test_an_episode_renders_turn_by_turn_without_escapes_when_plain() -> None:
    rec = played("AgentRL/Dialog-v0", 1)[0]
    events = timeline(rec, replay_transcript(rec))
    plain = render_episode(rec["key"], events, Style(color=False))
    assert "\x1b[" not in plain and plain.splitlines()[0] == rec["key"]
    assert "-- the start" in plain and "-- turn 1 " in plain and "-- the end" in plain
    first_call = rec["metrics"]["calls"][0]
    assert f"call: {first_call['name']}(" in plain and "result: " in plain and "user: " in plain
    assert plain.count("FAULT: ") == len(rec["metrics"]["noise"])
    coloured = render_episode(rec["key"], events, Style(color=True))
    assert "\x1b[" in coloured and coloured.replace("\x1b[0m", "").count("\x1b[") > 10
    long_result = max((e.body for e in events if e.kind == "tool_result"), key=len)  # a search's results
    assert len(long_result) > 300 and long_result not in plain
    assert long_result in render_episode(rec["key"], events, Style(), full=True)


def test_the_list_has_a_line_per_episode() -> None:
    records = played("AgentRL/Dialog-v0", 3)
    text = render_list([episode_summary(r) for r in records], Style(), "runs/x")
    lines = text.splitlines()
    assert lines[0].startswith("runs/x: 3 episodes") and len(lines) == 2 + 3 + 1
    for i, rec in enumerate(records):
        assert lines[2 + i].split()[0] == str(i) and rec["key"] in lines[2 + i]
    assert render_list([], Style(), "runs/x") == "runs/x: no episodes"


def test_an_episode_is_found_by_key_or_number_and_else_one_line() -> None:
    records = played("AgentRL/Dialog-v0", 3)
    assert find_episode(records, records[2]["key"], "r") is records[2]
    assert find_episode(records, "1", "r") is records[1]
    with pytest.raises(ValueError, match=r"^no episode 'nope' in runs/x \(3 episodes; `agentgym view runs/x` lists"):
        find_episode(records, "nope", "runs/x")
    with pytest.raises(ValueError):
        find_episode(records, "7", "runs/x")


def test_the_timeline_as_json_keeps_every_field() -> None:
    rec = played("AgentRL/ToolUse-v0", 1)[0]
    events = timeline(rec)
    data = json.loads(events_json(events))
    assert [d["kind"] for d in data] == [e.kind for e in events]
    assert set(data[0]) == {"turn", "kind", "text", "tone", "body", "marks", "data"}
    marked = next(d for d in data if d["marks"])
    assert set(marked["marks"][0]) == {"metric", "ok", "text"}
