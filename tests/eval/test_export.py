"""Tests for agentgym.eval.export: fixed typed columns, null never 0, sums that are the run's metrics,
and files that pandas, pyarrow and `datasets` read back as written."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from played import every_family, played
from test_metrics import BK, TF, call, fault, make_record

from agentgym.eval import export
from agentgym.eval.export import EPISODE_COLUMNS, NOISE_COLUMNS, PANDAS_DTYPES, STEP_COLUMNS, TABLES
from agentgym.eval.metrics import headline

ROOT = Path(__file__).resolve().parents[2]


def _frame(records: list[dict], table: str = "episodes") -> pd.DataFrame:
    return export.frame(export.tables(records, "run")[table], TABLES[table])


def test_every_table_has_unique_columns_with_a_known_type_and_a_doc() -> None:
    for columns in TABLES.values():
        names = [c.name for c in columns]
        assert len(names) == len(set(names))
        assert all(c.type in PANDAS_DTYPES and c.doc for c in columns)
    assert [c.name for c in STEP_COLUMNS][:3] == ["run", "key", "turn"]
    assert [c.name for c in NOISE_COLUMNS][:3] == ["run", "key", "index"]


def test_docs_list_every_column_as_the_code_defines_it() -> None:
    text = (ROOT / "docs" / "export.md").read_text(encoding="utf-8")
    section = text.split(export.DOCS_BEGIN)[1].split(export.DOCS_END)[0].strip()
    assert section == export.columns_markdown(), (
        "docs/export.md's column tables are stale: run .venv/bin/python -c \"from agentgym.eval.export import "
        "write_column_docs; write_column_docs('docs/export.md')\"")


def test_dtypes_are_the_documented_ones_whatever_the_data() -> None:
    for records in (every_family(2), []):
        for name, columns in TABLES.items():
            df = _frame(records, name)
            assert list(df.columns) == [c.name for c in columns]
            assert {c.name: str(df[c.name].dtype) for c in columns} == {c.name: PANDAS_DTYPES[c.type] for c in columns}


def test_nothing_to_measure_is_null_and_counts_stay_zero() -> None:
    quiet = make_record([], turns=2)  # no call, no fault, no commitment, no simulated time
    row = _frame([quiet]).iloc[0]
    for rate, counts in (("validity", ("validity_valid", "validity_attempts")),
                         ("correctness", ("correctness_right", "correctness_judged")),
                         ("efficiency", ("efficiency_useful", "efficiency_calls")),
                         ("recovery_share", ("faults", "faults_recovered")),
                         ("goal_consistency", ("commitments", "commitments_consistent"))):
        assert row[rate] is pd.NA, rate
        assert all(row[c] == 0 for c in counts), rate
    # The gold plan is there to measure against: no step done is 0, not null; without a plan, null.
    assert row["recall"] == 0.0 and row["recall_gold"] == 3 and row["recall_done"] == 0
    planless = _frame([make_record([], turns=1, gold=None)]).iloc[0]
    assert planless["recall"] is pd.NA and planless["recall_gold"] == 0 and planless["precision"] is pd.NA
    assert list(row["recovery_turns"]) == [] and row["recovery_ms"] is None and row["recovery_turns_mean"] is pd.NA
    assert row["agent_error"] is pd.NA and row["errors_total"] == 0 and row["noise_total"] == 0
    assert row["elapsed_ms"] == 0.0 and row["tool_calls"] == 0


def test_zero_is_zero_and_lists_hold_each_fault() -> None:
    rec = make_record([call(2, "search", error="TOOL_ERROR", injected=True), call(4, "search"),
                       call(5, "book", contradicts=("time",), error="TOOL_ERROR", injected=True)],
                      turns=6, parse_errors=(1,), elapsed=[0, 50, 60, 70, 80, 90],
                      noise=[fault("tool_failure", 2, "search", hits=TF, at_ms=50.0),
                             fault("tool_failure", 5, "book", hits=BK, at_ms=80.0)])
    row = _frame([rec]).iloc[0]
    assert row["validity"] == 0.5 and row["validity_attempts"] == 2  # the search and the parse error
    assert row["goal_consistency"] == 0.0 and row["commitments"] == 1 and list(row["constraints_broken"]) == ["time"]
    assert row["faults"] == 2 and row["recovery_share"] == 0.5
    assert list(row["recovery_turns"]) == [2] and list(row["censored_turns"]) == [1]
    assert list(row["recovery_ms"]) == [20.0] and list(row["censored_ms"]) == [10.0]
    assert row["recovered_tool_failure"] == 1 and row["faults_tool_failure"] == 2 and row["noise_tool_failure"] == 2
    assert row["errors_parse_error"] == 1 and row["errors_total"] == 1 and row["errors_tool_error"] == 0
    assert row["calls_injected"] == 2


def test_an_agent_error_row_is_a_failure_with_what_it_did() -> None:
    rec = make_record([call(1, "search")], success=True, with_metrics=False,
                      agent_error={"type": "RuntimeError", "message": "the agent broke"},
                      usage={"prompt_tokens": 7, "completion_tokens": 3})
    row = _frame([rec]).iloc[0]
    assert row["agent_error"] == "RuntimeError: the agent broke" and row["agent_error_type"] == "RuntimeError"
    assert not row["success"] and row["score"] == 0.0 and row["tool_calls"] == 1 and row["turns"] == 1
    assert row["outcome"] is pd.NA and row["max_turns"] is pd.NA and row["time_budget_ms"] is pd.NA
    assert row["prompt_tokens"] == 7 and row["completion_tokens"] == 3


def test_pooled_sums_of_the_table_are_the_runs_metrics() -> None:
    records = every_family()
    df = _frame(records)
    h = headline(records)
    assert len(df) == len(records) and not df.duplicated(["agent", "key"]).any()
    for metric, num, den in (("validity", "validity_valid", "validity_attempts"),
                             ("tool_correctness", "correctness_right", "correctness_judged"),
                             ("tool_efficiency", "efficiency_useful", "efficiency_calls"),
                             ("tool_recall", "recall_done", "recall_gold"),
                             ("recovery_share", "faults_recovered", "faults")):
        assert df[num].sum() / df[den].sum() == pytest.approx(h[metric]["value"]), metric
        assert df[den].sum() == h[metric]["n"], metric
    assert df["goal_consistency"].mean() == pytest.approx(h["goal_consistency"]["value"])  # NA skipped
    assert df["goal_consistency"].notna().sum() == h["committed"]
    assert df["success"].mean() == pytest.approx(h["success"]["value"])
    assert (df["faults_recovered"].sum(), df["faults_censored"].sum()) == (h["recovered"], h["censored"])
    assert df["recovery_turns"].map(len).sum() == h["recovered"] and df["censored_turns"].map(len).sum() == h["censored"]
    # Every noise kind was injected somewhere (latency logs only the charge that passes the time
    # budget), and the noise table holds each injection once.
    noise = _frame(records, "noise")
    assert len(noise) == df["noise_total"].sum()
    assert all(df[f"noise_{kind}"].sum() > 0 for kind in ("tool_failure", "corruption", "ambiguity", "goal_shift",
                                                           "distractors", "typos"))
    counted = noise[noise["status"].isin(["recovered", "censored"])]
    assert len(counted) == df["faults"].sum() and noise.loc[~noise["is_fault"], "status"].isna().all()
    steps = _frame(records, "steps")
    assert len(steps) == df["turns"].sum() and steps["calls"].sum() == df["tool_calls"].sum()


def test_parquet_round_trips_types_and_nulls(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    records = every_family(2) + [make_record([], turns=1, seed=99)]
    rows = export.tables(records, "run")["episodes"]
    out = export.write_table(rows, EPISODE_COLUMNS, tmp_path / "e.parquet", "parquet")
    back = pd.read_parquet(out)
    want = export.frame(rows, EPISODE_COLUMNS)
    assert list(back.dtypes.astype(str)) == list(want.dtypes.astype(str))
    for c in EPISODE_COLUMNS:
        if c.type.startswith("list["):
            assert [None if v is None else list(v) for v in back[c.name]] == [
                None if v is None else list(v) for v in want[c.name]], c.name
        else:
            pd.testing.assert_series_equal(back[c.name], want[c.name], check_names=False)
    schema = pq.read_schema(out)
    assert str(schema.field("censored_turns").type) == "list<element: int64>"  # typed even when every list is empty
    assert str(schema.field("validity").type) == "double" and str(schema.field("success").type) == "bool"
    assert back["validity"].isna().iloc[-1] and back["validity_attempts"].iloc[-1] == 0


def test_csv_holds_nulls_as_empty_cells_and_lists_as_json(tmp_path: Path) -> None:
    records = list(played("AgentRL/Dialog-v0", 2)) + [make_record([], turns=1, seed=99)]
    out = export.write_table(export.tables(records, "run")["episodes"], EPISODE_COLUMNS, tmp_path / "e.csv", "csv")
    back = pd.read_csv(out)
    assert list(back.columns) == [c.name for c in EPISODE_COLUMNS]
    assert math.isnan(back["validity"].iloc[-1]) and back["validity_attempts"].iloc[-1] == 0
    assert json.loads(back["recovery_turns"].iloc[-1]) == [] and json.loads(back["constraints_broken"].iloc[0]) is not None
    with pytest.raises(ValueError, match="unknown format"):
        export.write_table([], EPISODE_COLUMNS, tmp_path / "e.x", "xlsx")


def _dataset(tmp_path: Path) -> tuple[Path, dict[str, list[dict]]]:
    pytest.importorskip("pyarrow")
    records = every_family(2)
    tables = export.tables(records, "run")
    return export.write_dataset(tables, tmp_path / "ds", ["run"]), tables


def test_the_datasets_folder_reads_back_with_pandas(tmp_path: Path) -> None:
    folder, tables = _dataset(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "episodes.parquet", "noise.parquet", "steps.parquet"]
    for name, rows in tables.items():
        back = pd.read_parquet(folder / f"{name}.parquet")
        assert list(back.columns) == [c.name for c in TABLES[name]] and len(back) == len(rows)
    card = (folder / "README.md").read_text()
    assert card.startswith("---\nconfigs:\n") and "config_name: steps\n  data_files: steps.parquet" in card


def test_the_datasets_folder_loads_with_datasets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    datasets = pytest.importorskip("datasets", reason="datasets is not installed (it comes with the TRL requirements)")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder, tables = _dataset(tmp_path)
    cache = str(tmp_path / "cache")
    episodes = datasets.load_dataset("parquet", data_files=str(folder / "episodes.parquet"), split="train",
                                     cache_dir=cache)
    assert episodes.num_rows == len(tables["episodes"]) and episodes.column_names == [c.name for c in EPISODE_COLUMNS]
    assert str(episodes.features["success"].dtype) == "bool" and str(episodes.features["validity"].dtype) == "float64"
    steps = datasets.load_dataset(str(folder), "steps", split="train", cache_dir=cache)
    assert steps.num_rows == len(tables["steps"]) and steps[0]["turn"] == 1
    noise = datasets.Dataset.from_parquet(str(folder / "noise.parquet"), cache_dir=cache)
    assert noise.num_rows == len(tables["noise"])
    assert sum(e["validity_attempts"] for e in episodes) == sum(r["validity_attempts"] for r in tables["episodes"])


def test_step_rows_carry_the_replayed_messages_when_given() -> None:
    rec = played("AgentRL/Dialog-v0", 1)[0]
    said = [[{"role": "user", "content": f"turn {i + 1}"}] for i in range(len(rec["steps"]))]
    rows = export.step_rows(rec, "run", said)
    assert json.loads(rows[0]["messages"]) == said[0] and rows[0]["action"] == rec["actions"][0]
    assert all(r["messages"] is None for r in export.step_rows(rec, "run"))
