"""The instrument of `make perf` measures what it says: a replay is the played episode, a changed
episode is caught, the lm-mix agent is deterministic, the options and the tables come out right.

    benchmarks/peers/.venv/bin/python -m pytest -o addopts= benchmarks/test_perf_instrument.py -q
    .venv/bin/python -m pytest benchmarks/test_perf_instrument.py -q   # the table tests skip: no tabulate

Quick (a few episodes per id); the table tests need ``tabulate`` (the perf venv has it) and skip
without it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from perf import episodes, real_episodes, targets, tiers
from perf.config import PerfConfig, parse_args
from perf.lm_mix import LmMixAgent, load_phrasings, parse_phrasing
from perf.real_episodes import CellReplay, ReplayMismatch
from perf.tables import md_table

SEEDS = range(3)


def _cell(env_id: str, agent: str = "lm-mix", noise: str = "medium") -> episodes.Cell:
    return episodes.Cell(env_id, noise, "hard", "test", agent)


def test_replay_is_the_played_episode(env_id: str) -> None:
    """Every step of the played episodes replays to the same observations, kinds and end, each timed."""
    cell = _cell(env_id)
    recs = episodes.play_cell(cell, SEEDS)
    replay = CellReplay(cell, recs)
    replay.block(len(recs))
    assert len(replay.resets) == len(recs)
    assert [k for _i, k, _t in replay.steps] == [k for r in recs for k in r.kinds]
    assert all(t > 0 for _i, _k, t in replay.steps)


def test_replay_catches_another_episode(env_id: str) -> None:
    """A recording that is not what the env returns fails loudly instead of timing another episode."""
    cell = _cell(env_id, "heuristic", "off")
    rec = episodes.play_cell(cell, [0])[0]
    other_digest = dataclasses.replace(rec, digest="0" * 64)
    cut_short = dataclasses.replace(rec, actions=rec.actions[:-1], kinds=rec.kinds[:-1])
    for bad in (other_digest, cut_short):
        with pytest.raises(ReplayMismatch):
            CellReplay(cell, [bad]).replay(bad)


def test_lm_mix_is_deterministic_and_speaks_the_corpus() -> None:
    cell = _cell("AgentRL/Dialog-v0", noise="off")
    first, again = episodes.play_cell(cell, SEEDS), episodes.play_cell(cell, SEEDS)
    assert [r.actions for r in first] == [r.actions for r in again]
    heuristic = episodes.play_cell(dataclasses.replace(cell, agent="heuristic"), SEEDS)
    corpus = {p.text for p in load_phrasings()}
    sent = [a for r in first for a, k in zip(r.actions, r.kinds) if k == "message"]
    assert any(any(text in a for text in corpus) for a in sent)
    assert [r.actions for r in first] != [r.actions for r in heuristic]


def test_lm_mix_agent_reads_the_segment_family() -> None:
    agent = LmMixAgent()
    agent.reset("", {"seed": 1, "task": {"family": "crosstask", "domain": "x", "id": "t"}, "messages": [],
                     "tools": [], "segment": {"family": "dialog", "domain": "cafes"}})
    dialog = {p.text for p in load_phrasings() if p.family == "dialog"}
    texts = [agent.phrase("Hello?", "dialog", "cafes") for _ in range(40)]
    assert any(t != "Hello?" and any(d in t for d in dialog) for t in texts)


def test_phrasings_are_strict_about_used_fields_only() -> None:
    raw = {"id": "x/1", "family": "dialog", "domains": [], "style": "polite", "asks": ["area"], "excludes": [],
           "text": "Which part of town suits your {noun}?", "added_later": 1}
    assert parse_phrasing(raw, "t").text == "Which part of town suits your place?"
    assert parse_phrasing({**raw, "asks": []}, "t") is None  # a negative asks for nothing
    assert parse_phrasing({**raw, "text": "Hi {name}"}, "t") is None
    with pytest.raises(ValueError, match="missing field 'style'"):
        parse_phrasing({k: v for k, v in raw.items() if k != "style"}, "t")
    with pytest.raises(ValueError, match="asks must be a list of strings"):
        parse_phrasing({**raw, "asks": "area"}, "t")


def test_recordings_round_trip(tmp_path: Path) -> None:
    rec = episodes.Recordings({_cell("AgentRL/ToolUse-v0"): episodes.play_cell(_cell("AgentRL/ToolUse-v0"), [0])}, 1.5)
    rec.save(tmp_path / "r.json")
    assert episodes.Recordings.load(tmp_path / "r.json") == rec


def test_episodes_of_an_id_take_the_cells_in_turn() -> None:
    a, b = _cell("AgentRL/ToolUse-v0", "heuristic"), _cell("AgentRL/ToolUse-v0", "expert")
    rec = episodes.Recordings({c: [episodes.Recording(s, [], [], "") for s in range(2)] for c in (a, b)})
    assert [(c.agent, r.seed) for c, r in rec.of("AgentRL/ToolUse-v0", "medium")] == [
        ("heuristic", 0), ("expert", 0), ("heuristic", 1), ("expert", 1)]


def test_options_derive_from_the_config() -> None:
    cfg = parse_args(["--quick", "--episodes", "3", "--out", "/tmp/x.md"], "")
    assert cfg.quick and cfg.episodes == 3 and cfg.rounds == PerfConfig().quick_preset().rounds
    assert cfg.out == Path("/tmp/x.md")
    with pytest.raises(ValueError, match="unknown parts"):
        PerfConfig(skip="time,nope").skipped()


def test_tables_render() -> None:
    pytest.importorskip("tabulate")
    lines = md_table([{"name": "a|b", "median us": "1,234", "x floor": "12.5x"}])
    assert lines[0].split("|")[1].strip() == "name"
    assert lines[1].startswith("|:") and lines[1].endswith(":|")  # text left, numbers right
    assert r"a\|b" in lines[2]


def test_real_episode_section_renders() -> None:
    pytest.importorskip("tabulate")
    cell = _cell("AgentRL/ToolUse-v0", "heuristic")
    recs = episodes.Recordings({cell: episodes.play_cell(cell, SEEDS)}, 0.1)
    result = real_episodes.run(recs, episode_block=2, block=20, reset_block=2, first_steps=2, log=lambda *a: None)
    assert result["episodes"] == len(SEEDS)
    text = "\n".join(real_episodes.section(result, ["heuristic"]))
    assert "AgentRL/ToolUse-v0" in text and "### Per cell" in text
    assert len(real_episodes.target_rows(result)) == 3


def _tier(difficulty: str, noise: str, reset_us: float, step_us: float) -> dict[str, object]:
    def q(us: float) -> dict[str, float]:
        return {"n": 10, "median": us, "p90": 2 * us, "p99": 3 * us}
    return {"env_id": "AgentRL/ToolUse-v0", "noise": noise, "difficulty": difficulty, "reset": q(reset_us),
            "step": q(step_us)}


def test_the_hard_tier_is_judged_against_the_easy_one() -> None:
    pytest.importorskip("tabulate")
    ts = [_tier("easy", "off", 100, 10), _tier("hard", "off", 150, 30), _tier("medium", "off", 900, 90),
          _tier("easy", "medium", 100, 10), _tier("hard", "medium", 200, 20)]
    rows = tiers.comparisons(ts)
    assert [(r["noise"], r["reset_x"], r["step_x"]) for r in rows] == [("medium", 2.0, 2.0), ("off", 1.5, 3.0)]
    reset, step = tiers.target_rows(ts)
    assert reset["result"] == "pass" and "2/2 within" in reset["figure"]
    assert step["result"].startswith("**MISS**") and "worst 3.00x" in step["figure"] and "1/2 within" in step["figure"]
    text = "\n".join(tiers.section(ts))
    assert "| AgentRL/ToolUse-v0 | off " in text and "3.00x" in text and "300.0" in text  # hard reset p90, us
    assert tiers.target_rows([t for t in ts if t["difficulty"] != "easy"]) == []  # one tier: nothing to judge
    assert targets.TIER_X == 2.0


def test_real_episodes_compare_the_tiers_they_played() -> None:
    pytest.importorskip("tabulate")
    cells = [episodes.Cell("AgentRL/ToolUse-v0", "off", d, "test", "heuristic") for d in ("easy", "hard")]
    recs = episodes.Recordings({c: episodes.play_cell(c, SEEDS) for c in cells}, 0.1)
    result = real_episodes.run(recs, episode_block=2, block=20, reset_block=2, first_steps=2, log=lambda *a: None)
    assert [(t["difficulty"], t["reset"]["n"]) for t in result["tiers"]] == [("easy", 3), ("hard", 3)]
    text = "\n".join(real_episodes.section(result, ["heuristic"]))
    assert "### The hard tier beside the easy one" in text and "hard step median us" in text
    assert len(real_episodes.target_rows(result)) == 5


def test_the_kept_playtests_replay_timed_in_two_passes() -> None:
    from perf import transcripts

    result = transcripts.child_transcripts(str(transcripts.PLAYTESTS), block=20, limit=4)
    assert result["episodes"] == 4 and result["floor"]["n"] >= 20
    for pass_ in transcripts.PASSES:
        every = [r for r in result["steps"] if r["pass"] == pass_ and r["kind"] == "every"]
        parts = [r for r in result["steps"] if r["pass"] == pass_ and r["kind"] != "every"]
        assert every and sum(r["step"]["n"] for r in every) == sum(r["step"]["n"] for r in parts)
    # Both passes replay the same turns: the same steps, of the same kinds.
    counts = {(r["env_id"], r["kind"], r["pass"]): r["step"]["n"] for r in result["steps"]}
    assert all(counts[(e, k, "first")] == counts[(e, k, "memoised")] for e, k, _p in counts)
    pytest.importorskip("tabulate")
    assert "## Language-model transcripts" in "\n".join(transcripts.section(result))
    assert len(transcripts.target_rows(result)) == 1
