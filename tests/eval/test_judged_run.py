"""One judging per report: a run's records are judged once (`judge_run`), and every public metric,
the summary table and the report are views of that one judging, equal to what the records give."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import pytest
from played import every_family, played, write_run

from agentgym.eval import judging, metrics
from agentgym.eval.headline import METRICS, REPORT_TABLES, TOOL_RATES
from agentgym.eval.judging import JudgedRun, ToolCounts, judge_run
from agentgym.eval.report import write_report


class JudgeSpy:
    """Counts the records `agentgym.eval.judging.judge_record` judges; the real function runs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.keys: Counter[str] = Counter()
        real = judging.judge_record

        def counting(rec: Any, verdicts: Any = None) -> judging.JudgedEpisode:
            self.keys[rec.get("key")] += 1
            return real(rec, verdicts)

        monkeypatch.setattr(judging, "judge_record", counting)


@pytest.fixture
def judge_spy(monkeypatch: pytest.MonkeyPatch) -> JudgeSpy:
    return JudgeSpy(monkeypatch)


def _canonical(x: Any) -> str:
    return json.dumps(x, sort_keys=True, default=str)


VIEWS: dict[str, Callable[[Any], Any]] = {
    "completion": metrics.completion,
    "tool_accuracy": metrics.tool_accuracy,
    "recovery": metrics.recovery,
    "goal_consistency": metrics.goal_consistency,
    "efficiency": metrics.efficiency,
    "headline": lambda r: metrics.headline(r, by_kind=True, n_boot=200),
    "reliability": lambda r: metrics.reliability(r, ks=(1, 2), n_boot=200),
    "pass_hat_k": lambda r: metrics.pass_hat_k(r, 1),
    "pass_at_k": lambda r: metrics.pass_at_k(r, 1),
    "summarise": lambda r: metrics.summarise(r, group_by=("env", "noise"), n_boot=200).to_json(),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_a_metric_of_a_judged_run_is_that_of_its_records_and_judges_nothing_again(
        name: str, judge_spy: JudgeSpy) -> None:
    records = every_family(3)
    run = judge_run(records)
    assert sum(judge_spy.keys.values()) == len(records)
    judge_spy.keys.clear()
    from_run = VIEWS[name](run)
    assert not judge_spy.keys, f"{name} judged {sum(judge_spy.keys.values())} records of a judged run again"
    assert _canonical(from_run) == _canonical(VIEWS[name](records))


def test_compare_and_paired_comparison_take_judged_runs(judge_spy: JudgeSpy) -> None:
    a, b = played("AgentRL/Dialog-v0", 4), played("AgentRL/Dialog-v0", 4, agent="random")
    want = _canonical(metrics.compare(a, b, n_boot=200))
    run_a, run_b = judge_run(a), judge_run(b)
    judge_spy.keys.clear()
    assert _canonical(metrics.compare(run_a, run_b, n_boot=200)) == want
    assert _canonical(metrics.compare(run_a, b, n_boot=200)) == want  # mixed: only b is judged
    assert sum(judge_spy.keys.values()) == len(b)
    judge_spy.keys.clear()
    for metric in ("success", "score", "turns", "tool_calls"):
        paired = metrics.paired_comparison(run_a, run_b, metric, n_boot=200)
        assert _canonical(paired) == _canonical(metrics.paired_comparison(a, b, metric, n_boot=200))
    assert sum(judge_spy.keys.values()) == 4 * 2 * len(a)  # only the record-given calls judged


def test_select_keeps_the_judgements_in_order() -> None:
    records = played("AgentRL/ToolUse-v0", 4)
    run = judge_run(records)
    part = run.select([2, 0])
    assert part.records == (records[2], records[0]) and part.episodes == (run.episodes[2], run.episodes[0])
    assert judge_run(run) is run
    with pytest.raises(ValueError, match="2 records but 1 judged"):
        JudgedRun(tuple(records[:2]), run.episodes[:1])


def test_a_report_judges_each_record_once(tmp_path: Path, judge_spy: JudgeSpy) -> None:
    records = every_family(3)
    write_report([write_run(tmp_path / "run", records)], tmp_path / "report", show=False, progress=False)
    assert sum(judge_spy.keys.values()) == len(records), "a record was judged more than once"
    assert set(judge_spy.keys) == {r["key"] for r in records}


def test_the_tool_counts_are_one_named_type() -> None:
    v = metrics.judge_episode(played("AgentRL/ToolUse-v0", 1)[0])
    assert isinstance(v.tools, ToolCounts)
    assert v.tools == judging.judge_record(played("AgentRL/ToolUse-v0", 1)[0]).tools
    # Every rate reads two named counts, and the episode's rate is their quotient.
    for key, (numerator, denominator) in TOOL_RATES.items():
        assert {numerator, denominator} <= set(ToolCounts._fields), key
        den = getattr(v.tools, denominator)
        assert v.rate(numerator, denominator) == (getattr(v.tools, numerator) / den if den else None)
    with pytest.raises(KeyError, match="no count 'actions'"):
        v.rate("valid", "actions")


def test_the_report_tables_and_the_summary_follow_the_metrics_table() -> None:
    keys = [m.key for m in METRICS]
    assert [k for k, _, _ in metrics.HEADLINE] == keys
    assert [k for _, cols in REPORT_TABLES for k, _, _ in cols] == [m.key for m in METRICS if m.table]
    frame = metrics.summarise(played("AgentRL/Dialog-v0", 2), n_boot=50)
    assert all(k in frame.columns and f"{k}_n" in frame.columns for k in keys)
