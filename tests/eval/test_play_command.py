"""`agentgym play`: what it shows during an episode (never the goal), and after it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentgym.cli import main
from agentgym.eval.episode import ended_summary
from agentgym.eval.play_command import read_actions, tool_accounting, tool_lines


def _play(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(["play", *argv]) == 0
    return capsys.readouterr().out


def test_a_file_that_ends_first_leaves_the_episode_open_and_shows_no_goal(tmp_path, capsys):
    actions = tmp_path / "turns.txt"
    actions.write_text("What day and time, which area, and what budget?\n\n")
    out = _play(capsys, "AgentRL/Dialog-v0", "--seed", "903", "--split", "test", "--actions", str(actions))
    assert "tools:" in out and "search(" in out and "[system]" in out and "--- turn 1 ---" in out
    assert "the episode goes on after 1 turns" in out
    assert "gold" not in out and "reveal" not in out and "late" not in out.split("--- turn 1 ---")[1]


def test_the_end_shows_the_verdict_and_the_gold(tmp_path, capsys):
    actions = tmp_path / "turns.jsonl"
    lines = [json.dumps({"role": "assistant", "content": "Hello?"})] + [json.dumps("Okay.")] * 40
    actions.write_text("\n".join(lines) + "\n")
    out = _play(capsys, "AgentRL/Dialog-v0", "--seed", "1", "--actions", str(actions))
    assert "=== episode over: FAILURE" in out and "gold:" in out and '"items"' in out
    assert "turns of the file were not played" in out


def test_the_end_shows_what_each_call_counted_for(tmp_path, capsys):
    # The oracle's own turns: every rate full, nothing wrong, no gold step left undone. Then a
    # booking of the wrong place: it is named as wrong, with why, and the gold's book undone.
    import gymnasium as gym

    from agentgym.agents import make_agent
    from agentgym.eval.episode import run_episode

    env = gym.make("AgentRL/Dialog-v0", difficulty="easy")
    played = run_episode(env, make_agent("oracle"), 5)
    actions = tmp_path / "turns.jsonl"
    actions.write_text("".join(json.dumps(a) + "\n" for a in played.actions))
    out = _play(capsys, "AgentRL/Dialog-v0", "--seed", "5", "--difficulty", "easy", "--actions", str(actions))
    line = next(x for x in out.splitlines() if x.startswith("tool calls"))
    assert "correctness" in line and "recall" in line and "wrong:" not in out and "not done" not in out
    book = json.loads(next(a for a in played.actions if "\"book\"" in a))
    other = next(p.id for p in env.unwrapped.task.world.places if p.id != book["arguments"]["item_id"])
    wrong = [a for a in played.actions if "\"book\"" not in a][:2]
    wrong.append(json.dumps({**book, "arguments": {**book["arguments"], "item_id": other}}))
    env.reset(seed=5)
    for action in wrong + ["Okay."] * 40:
        *_, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    lines = tool_accounting(ended_summary(env, info))
    assert any(x.startswith("  wrong: turn 3 book(") for x in lines), lines
    assert any(x.startswith("  gold step not done:") and '"book"' in x for x in lines), lines


def test_tail_prints_only_the_last_turn(tmp_path, capsys):
    actions = tmp_path / "turns.txt"
    actions.write_text('Hi there\n{"name": "search", "arguments": {}}\n')
    out = _play(capsys, "AgentRL/Dialog-v0", "--seed", "2", "--actions", str(actions), "--tail")
    assert "--- turn 2 ---" in out and "--- turn 1 ---" not in out and "tools:" not in out


def test_bad_input_is_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("3\n")
    assert main(["play", "AgentRL/Dialog-v0", "--actions", str(bad)]) == 2
    assert "a turn is a JSON string, object or list" in capsys.readouterr().err
    assert main(["play", "AgentRL/Dialog-v0", "--actions", str(tmp_path / "missing.txt")]) == 2
    assert main(["play", "AgentRL/Nope-v0"]) == 2


def test_a_jsonl_call_or_list_of_calls_plays_as_the_same_line_of_a_text_file(tmp_path, capsys):
    calls = [{"name": "search", "arguments": {}}, {"name": "search", "arguments": {"area": "north"}}]
    as_text, as_json = tmp_path / "turns.txt", tmp_path / "turns.jsonl"
    as_text.write_text("Hi there\n" + json.dumps(calls) + "\n" + json.dumps(calls[1]) + "\n")
    as_json.write_text(json.dumps("Hi there") + "\n" + json.dumps(calls) + "\n" + json.dumps(calls[1]) + "\n")
    assert read_actions(as_json) == read_actions(as_text)
    shown = [_play(capsys, "AgentRL/Dialog-v0", "--seed", "2", "--actions", str(f)) for f in (as_text, as_json)]
    assert shown[0] == shown[1].replace("turns.jsonl", "turns.txt") and "--- turn 3 ---" in shown[0]


def test_read_actions_and_tool_lines(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("one\n\n  \ntwo {\"x\": 1}\n")
    assert read_actions(f) == ["one", 'two {"x": 1}']
    schema = {"type": "function", "function": {"name": "book", "description": "Book it.", "parameters": {
        "type": "object", "required": ["item_id"], "properties": {
            "item_id": {"type": "string"}, "slot": {"type": ["string", "null"], "enum": ["morning", None]}}}}}
    assert tool_lines([schema]) == ['  book(item_id: string, [slot: "morning"]): Book it.']


def test_the_accounting_says_why_a_call_was_not_useful():
    from test_metrics import call, make_record

    rec = make_record([call(1, "search"), call(1, "get_details", arguments={"item_id": "a"}), call(2, "check"),
                       call(3, "check"), call(4, "check"), call(5, "book")], success=True)
    lines = tool_accounting(rec["metrics"])
    assert lines[0].endswith("efficiency 4/6, recall 3/3"), lines
    assert "  not efficient (no step of the plan): turn 1 get_details(a)" in lines, lines
    assert any(x.startswith("  not efficient (a repeat: one check") and x.endswith(": turn 4 check(a, mon)") for x in lines), lines
    # The label says when a check counts: a check sent beside its read was charged with no word of
    # the turn (CrossTask 9269 T10, ToolUse 9280 T5).
    assert any("sent in a later turn than the read and before a write" in x for x in lines), lines
    # Correctness leaves out the read and the repeats, each under why (a useful read of the plan's
    # was listed as "a read no plan needs": Dialog 8729 T4, 8732 T5; a check that showed a place full
    # is no "read that decides nothing": CrossTask 9127 T27).
    assert ("  not judged for correctness: a read that is no step of the plan (correctness judges the plan's steps "
            "and the writes; efficiency judges this read): turn 1 get_details(a); a repeat of an earlier call (same tool and arguments): "
            "turn 3 check(a, mon), turn 4 check(a, mon)") in lines, lines


def test_a_repeat_of_a_read_that_never_counted_is_no_step_of_the_plan():
    # Dialog 7265 T9, CrossTask 7260 T22: a re-read of a read no plan needs was labelled "a repeat:
    # one check of a read before a write counts", a rule for a plan's reads only.
    from test_metrics import call, make_record

    details = {"item_id": "z"}
    rec = make_record([call(1, "search"), call(1, "get_details", arguments=details), call(2, "check"),
                       call(3, "get_details", arguments=details), call(4, "book")], success=True)
    lines = tool_accounting(rec["metrics"])
    assert "  not efficient (no step of the plan): turn 1 get_details(z), turn 3 get_details(z)" in lines, lines
    assert not any(x.startswith("  not efficient (a repeat") for x in lines), lines


def test_the_accounting_names_the_calls_an_injected_fault_acted_on():
    # "validity 23/23" for 24 calls, with nothing to say which one was left out (Dialog 8718 T6,
    # CrossTask 8711, ToolUse 8712): the player names it, and each call by its argument values
    # (four checks of one place told apart by their days: CrossTask 8722 T39).
    from test_metrics import call, make_record

    rec = make_record([call(1, "search"), call(2, "check", error="503", injected=True), call(3, "check"),
                       call(3, "check", arguments={"item_id": "a", "day": "tue"}, index=1), call(4, "book")], success=True)
    lines = tool_accounting(rec["metrics"])
    assert lines[0].startswith("tool calls (docs/METRICS.md): validity 4/4"), lines
    assert "  left out of validity and efficiency (an injected failure stopped them; a read whose result was corrupted counts as the read it was): turn 2 check(a, mon)" in lines, lines
    assert any("turn 3 check(a, tue)" in x for x in lines), lines


def test_the_accounting_names_the_calls_left_out_for_passing_on_a_corrupted_value():
    # "validity 58/58, efficiency 57/57" with nothing to say which call efficiency left out: a
    # check of an id that a corrupted search result gave (Dialog playtest 8753 T4).
    import gymnasium as gym

    turns = Path(__file__).resolve().parents[2] / "benchmarks" / "playtests" / "turns" / "dialog-8753-test.jsonl"
    env = gym.make("AgentRL/Dialog-v0", split="test", difficulty="hard", noise="medium")
    env.reset(seed=8753)
    for line in turns.read_text().splitlines():
        action = json.loads(line)
        *_, terminated, truncated, info = env.step(action if isinstance(action, str) else json.dumps(action))
    assert terminated or truncated
    lines = tool_accounting(ended_summary(env, info))
    assert lines[0].startswith("tool calls (docs/METRICS.md): validity 58/58") and "efficiency 57/57" in lines[0], lines
    assert "  left out of efficiency (they pass on a value a tool returned corrupted): turn 4 check_availability(" \
           "venue_5016, thursday, evening)" in lines, lines


def test_a_call_is_named_by_its_list_arguments_too():
    # "turn 4 search(University Quarter, 3.5)" named two searches of one turn that differed only
    # in their amenities, one a repeat and one stopped by a fault (Dialog playtest 8809 T4).
    from test_metrics import call, make_record

    one = {"area": "University Quarter", "min_rating": 3.5, "amenities": ["fast wifi"]}
    two = {"area": "University Quarter", "min_rating": 3.5, "amenities": ["fast wifi", "monitors"]}
    rec = make_record([call(1, "search", arguments=one), call(2, "search", arguments=one),
                       call(2, "search", arguments=two, index=1, error="503", injected=True), call(3, "check"),
                       call(4, "book")], success=True)
    lines = tool_accounting(rec["metrics"])
    assert any("turn 2 search(University Quarter, 3.5, [fast wifi, monitors])" in x for x in lines), lines
    assert any("turn 2 search(University Quarter, 3.5, [fast wifi])" in x for x in lines), lines


def test_a_long_list_argument_is_cut_between_its_items():
    # "get_free_slots([P-197, P-208, P-219, P-230, P-241, P-25], ...)" named a call that passed
    # P-252 (CrossTask playtest 8879 T4).
    from test_metrics import call, make_record

    people = ["P-197", "P-208", "P-219", "P-230", "P-241", "P-252", "P-263", "P-274"]
    rec = make_record([call(1, "get_free_slots", arguments={"people": people, "date": "2025-11-18"}),
                       call(2, "get_free_slots", arguments={"people": people, "date": "2025-11-18"})], success=True)
    lines = "\n".join(tool_accounting(rec["metrics"]))
    assert "get_free_slots([P-197, P-208, P-219, P-230, P-241, P-252, ...], 2025-11-18)" in lines, lines
    assert "P-25]" not in lines and "P-25," not in lines


def test_a_call_a_fault_stopped_is_listed_as_retried_only_where_it_was_sent_again():
    # "stopped by an injected fault (its retry is judged)" named a read a fault stopped and that
    # was never sent again (ToolUse playtest 8832 T2), beside a search stopped and not retried that
    # correctness judged (Dialog 8830 T3): a call sent again is judged at its retry; one never sent
    # again is listed under why else it is not judged.
    from test_metrics import call, make_record

    other = {"item_id": "b", "day": "tue"}
    rec = make_record([call(1, "search"), call(2, "check", error="503", injected=True), call(3, "check"),
                       call(3, "check", arguments=other, error="timeout", injected=True, index=1), call(4, "book")],
                      success=True)
    lines = tool_accounting(rec["metrics"])
    unjudged = next(x for x in lines if x.startswith("  not judged for correctness:"))
    assert "stopped by an injected fault (its retry is judged): turn 2 check(a, mon)" in unjudged, lines
    assert "turn 3 check(b, tue)" not in unjudged.split("stopped by an injected fault")[1].split(";")[0], lines
    # Nor is it "judged by efficiency": a call a fault stopped is left out there too (ToolUse 9215 T2).
    assert ("stopped by an injected fault (correctness judges the plan's steps and the writes; efficiency leaves out "
            "what a fault stopped): turn 3 check(b, tue)") in unjudged, lines


def test_a_stopped_call_that_repeats_one_already_judged_is_listed_as_a_repeat():
    # Dialog playtest 9080 T3-T5: a check that succeeded, sent again and stopped by a fault, then
    # sent a third time. The stopped one was listed as "stopped by an injected fault (its retry is
    # judged)" and its retry as "a repeat": the first check is the one judged.
    from test_metrics import call, make_record

    rec = make_record([call(1, "search"), call(2, "check"), call(3, "check", error="429", injected=True),
                       call(4, "check"), call(5, "book")], success=True)
    lines = tool_accounting(rec["metrics"])
    unjudged = next(x for x in lines if x.startswith("  not judged for correctness:"))
    assert "stopped by an injected fault" not in unjudged, lines
    assert "a repeat of an earlier call (same tool and arguments): turn 3 check(a, mon), turn 4 check(a, mon)" in unjudged, lines
