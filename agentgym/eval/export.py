"""Flat tables of a run's episodes, for pandas, Parquet, CSV and Hugging Face `datasets`.

Three tables, each with a fixed set of typed columns (`EPISODE_COLUMNS`, `STEP_COLUMNS`,
`NOISE_COLUMNS`), so two exports of different runs always concatenate, a column never changes
type with the data, and "nothing to measure" is a null, never 0 (docs/export.md lists every
column):

- ``episodes``: one row per episode: identity (run, agent, env, noise, task, seed, trial, key),
  completion, the per-episode inputs and value of every metric (the numerators and
  denominators `agentgym.eval.metrics` pools), errors by code, injections by kind, times.
- ``steps``: one row per agent turn: the action sent, its calls, errors, injections and reward.
- ``noise``: one row per injection, with what it hit and what became of it.

Every value comes from the records through `agentgym.eval.metrics.judge_episode`: the same
verdicts the aggregates pool, so a sum over the table equals the run's pooled metric.
"""

from __future__ import annotations

import functools
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from agentgym.core.protocol import ErrorCode
from agentgym.eval.csv_cells import write_csv
from agentgym.eval.headline import TOOL_RATES
from agentgym.eval.metrics import FAULT_KINDS, EpisodeVerdict, judge_episode
from agentgym.eval.records import canonical_json

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "Column",
    "EPISODE_COLUMNS",
    "STEP_COLUMNS",
    "NOISE_COLUMNS",
    "TABLES",
    "FORMATS",
    "episode_row",
    "step_rows",
    "noise_rows",
    "tables",
    "frame",
    "episodes_frame",
    "write_table",
    "write_dataset",
    "columns_markdown",
    "write_column_docs",
    "DOCS_BEGIN",
    "DOCS_END",
]

#: The export formats: one Parquet file, one CSV file, or a `datasets` folder of Parquet tables.
FORMATS = ("parquet", "csv", "datasets")
#: The error codes that get a column of their own (others count in ``errors_other``).
ERROR_CODES = tuple(code.value for code in ErrorCode)


@functools.cache
def _noise_kinds() -> tuple[str, ...]:
    from agentgym.noise.spec import KINDS

    return tuple(KINDS)


@dataclass(frozen=True)
class Column:
    """One column of an exported table.

    Attributes:
        name: the column's name.
        type: ``string``, ``bool``, ``int``, ``float``, ``list[int]``, ``list[float]`` or
            ``list[string]``; the pandas dtype and Arrow type follow (`PANDAS_DTYPES`, `arrow_type`).
        doc: what it holds, and when it is null.
    """

    name: str
    type: str
    doc: str


#: Column type -> pandas dtype (nullable throughout: a null is ``pd.NA``, never NaN or 0).
PANDAS_DTYPES: dict[str, str] = {"string": "string", "bool": "boolean", "int": "Int64", "float": "Float64",
                                 "list[int]": "object", "list[float]": "object", "list[string]": "object"}


def arrow_type(kind: str) -> "pa.DataType":
    """The Arrow type of a column type."""
    import pyarrow as pa

    scalar = {"string": pa.string(), "bool": pa.bool_(), "int": pa.int64(), "float": pa.float64()}
    if kind.startswith("list["):
        return pa.list_(scalar[kind[5:-1]])
    return scalar[kind]


@dataclass(frozen=True)
class _Rate:
    """A per-episode tool-call rate and the two counts it divides, as three columns.

    Attributes:
        name: the rate's column. what: the metric it is.
        metric: its headline key, whose `TOOL_RATES` entry names the two `ToolCounts` fields.
        numerator, denominator: (column, what it counts).
    """

    name: str
    what: str
    metric: str
    numerator: tuple[str, str]
    denominator: tuple[str, str]

    def columns(self) -> list[Column]:
        (num, num_doc), (den, den_doc) = self.numerator, self.denominator
        return [Column(num, "int", num_doc), Column(den, "int", den_doc),
                Column(self.name, "float", f"{num} / {den}: {self.what}; null when {den} is 0")]

    def values(self, v: EpisodeVerdict) -> dict[str, Any]:
        num_field, den_field = TOOL_RATES[self.metric]
        (num, _), (den, _) = self.numerator, self.denominator
        return {num: v.count(num_field), den: v.count(den_field), self.name: v.rate(num_field, den_field)}


#: The tool-call rates.
_TOOL_RATES: tuple[_Rate, ...] = (
    _Rate("validity", "tool-call validity", "validity", ("validity_valid", "valid calls not injected"),
          ("validity_attempts", "call attempts: calls not injected plus turn-level errors")),
    _Rate("correctness", "tool-call correctness", "tool_correctness",
          ("correctness_right", "judged calls that were right"),
          ("correctness_judged", "calls that decide something (valid, not a repeat, for the plan or wrong)")),
    _Rate("efficiency", "tool-call efficiency", "tool_efficiency",
          ("efficiency_useful", "useful calls: succeeded, on a gold plan, not a repeat"),
          ("efficiency_calls", "valid calls not injected")),
    _Rate("recall", "share of gold steps done", "tool_recall",
          ("recall_done", "gold steps completed by a successful call"),
          ("recall_gold", "gold steps (0 without a gold plan)")),
    _Rate("precision", "legacy precision", "tool_precision",
          ("precision_hits", "valid calls not injected for a gold step not yet done"),
          ("precision_calls", "legacy precision's denominator (0 without a gold plan)")),
)


def _episode_columns() -> tuple[Column, ...]:
    c = Column
    cols = [
        c("run", "string", "the run's name: its folder (or the records file's stem)"),
        c("key", "string", "the episode key (env, noise, seed, trial, make kwargs): unique in a run"),
        c("agent", "string", "the agent's name"),
        c("agent_config", "string", "the agent's config, as canonical JSON"),
        c("privileged", "bool", "the agent read hidden state (its own word)"),
        c("env", "string", "the environment id"),
        c("noise", "string", "the noise spec; 'none' without noise"),
        c("suite", "string", "the benchmark suite; null outside a suite"),
        c("family", "string", "the task family (dialog, tooluse, crosstask)"),
        c("domain", "string", "the task domain"),
        c("difficulty", "string", "easy, medium or hard"),
        c("split", "string", "train or test"),
        c("task_id", "string", "the task's id"),
        c("seed", "int", "the episode seed"),
        c("trial", "int", "the noise trial"),
        c("success", "bool", "the episode succeeded (false when the agent raised)"),
        c("score", "float", "partial credit in [0, 1] (0 when the agent raised)"),
        c("outcome", "string", "how the episode ended (committed, gave_up, truncated, time_budget, ...); "
                               "null when it did not end (agent error)"),
        c("turns", "int", "agent turns played"),
        c("max_turns", "int", "the turn budget; null when the episode did not end"),
        c("tool_calls", "int", "tool calls sent, every kind"),
        c("calls_injected", "int", "calls an injected fault acted on"),
        c("calls_repeated", "int", "valid calls repeating one that already succeeded"),
        c("calls_decoy", "int", "valid calls of a distractor tool"),
    ]
    for rate in _TOOL_RATES:
        cols += rate.columns()
    cols += [
        c("faults", "int", "recoverable faults that hit something: recovery's denominator"),
        c("faults_recovered", "int", "faults recovered"),
        c("faults_censored", "int", "faults never recovered (censored at the episode's end)"),
        c("faults_unrecoverable", "int", "faults left out: no turn was left to act in"),
        c("faults_unaffected", "int", "faults left out: they hit nothing"),
        c("faults_superseded", "int", "faults left out: they hit a step a goal shift replaced"),
        c("recovery_share", "float", "faults_recovered / faults: faults recovered; null when faults is 0"),
    ]
    for kind in FAULT_KINDS:
        cols += [c(f"faults_{kind}", "int", f"{kind} faults counted in recovery"),
                 c(f"recovered_{kind}", "int", f"{kind} faults recovered")]
    cols += [
        c("recovery_turns", "list[int]", "agent turns to recover, per recovered fault (noise-log order)"),
        c("censored_turns", "list[int]", "agent turns at risk, per censored fault (fault to episode end)"),
        c("recovery_ms", "list[float]", "simulated ms to recover, per recovered fault; null without latency noise"),
        c("censored_ms", "list[float]", "simulated ms at risk, per censored fault; null without latency noise"),
        c("recovery_turns_mean", "float", "mean of recovery_turns; null when no fault was recovered (the run's "
                                          "Kaplan-Meier figures need censored_turns too)"),
        c("commitments", "int", "commitments: valid write calls, proposals and the final state"),
        c("commitments_consistent", "int", "commitments that break no constraint stated by then"),
        c("goal_consistency", "float", "commitments_consistent / commitments: goal consistency; null when "
                                       "commitments is 0"),
        c("constraints_broken", "list[string]", "the constraints some commitment broke, sorted"),
        c("errors_total", "int", "the agent's errors (injected faults excluded)"),
    ]
    cols += [c(f"errors_{code.lower()}", "int", f"errors of code {code}") for code in ERROR_CODES]
    cols += [c("errors_other", "int", "errors of any other code"),
             c("noise_total", "int", "injections of every kind")]
    cols += [c(f"noise_{kind}", "int", f"{kind} injections") for kind in _noise_kinds()]
    cols += [
        c("elapsed_ms", "float", "simulated time at the end (0 without latency noise)"),
        c("time_budget_ms", "float", "the simulated-time budget; null when the episode did not end"),
        c("agent_error", "string", "'Type: message' of the exception the agent raised; null when none"),
        c("agent_error_type", "string", "the exception's type; null when none"),
        c("prompt_tokens", "int", "prompt tokens the agent reported; null when it reports none"),
        c("completion_tokens", "int", "completion tokens the agent reported; null when it reports none"),
        c("wall_s", "float", "wall-clock seconds the episode took"),
        c("started_at", "float", "when it started (Unix time)"),
        c("agentgym_version", "string", "the agentgym that played it"),
        c("git_commit", "string", "the commit of that agentgym; null outside a git checkout"),
    ]
    return tuple(cols)


EPISODE_COLUMNS: tuple[Column, ...] = _episode_columns()

STEP_COLUMNS: tuple[Column, ...] = (
    Column("run", "string", "the run's name"),
    Column("key", "string", "the episode key"),
    Column("turn", "int", "the agent turn, from 1"),
    Column("action", "string", "what the agent sent: its text, or its assistant-message dict as canonical JSON"),
    Column("reward", "float", "the step's reward (the score on the last step, else 0)"),
    Column("calls", "int", "tool calls in the action"),
    Column("call_names", "list[string]", "the tools called, in order"),
    Column("call_errors", "list[string]", "each call's error code, '' for a call that succeeded"),
    Column("calls_json", "string", "the step's calls as the record holds them (canonical JSON)"),
    Column("errors", "list[string]", "the agent's error codes of the step"),
    Column("noise", "list[string]", "the kinds injected at the step"),
    Column("elapsed_ms", "float", "simulated time so far; null until any was charged"),
    Column("messages", "string", "the step's messages (tool results, user replies) as JSON, when the export "
                                 "replayed the episodes (--messages); else null"),
)

NOISE_COLUMNS: tuple[Column, ...] = (
    Column("run", "string", "the run's name"),
    Column("key", "string", "the episode key"),
    Column("index", "int", "the injection's index in the episode's noise log"),
    Column("step", "int", "the turn it was injected at (0: at reset)"),
    Column("kind", "string", "the noise kind"),
    Column("target", "string", "what it acted on: a tool, a constraint, 'user'"),
    Column("call", "string", "the id of the call it acted on; null for turn-level kinds"),
    Column("hits_gold_step", "int", "the gold step it hits (an index into the gold plan, from 0); null when it hits none"),
    Column("hits_constraint", "string", "the constraint it hits; null when it hits none"),
    Column("at_ms", "float", "the simulated time it was injected at"),
    Column("is_fault", "bool", "a kind the agent recovers from (tool_failure, corruption, ambiguity, goal_shift)"),
    Column("status", "string", "recovered, censored, unrecoverable, unaffected or superseded; null when not a fault"),
    Column("recovered_turn", "int", "the turn it was recovered at; null unless recovered"),
    Column("turns", "int", "turns to the recovery, or at risk when censored; null when left out or not a fault"),
    Column("ms", "float", "the same in simulated ms; null when left out, not a fault or without latency noise"),
    Column("detail", "string", "the kind's description of what it did, as canonical JSON"),
)

#: The tables of a `datasets` export: name -> its columns.
TABLES: dict[str, tuple[Column, ...]] = {"episodes": EPISODE_COLUMNS, "steps": STEP_COLUMNS, "noise": NOISE_COLUMNS}


# ============================================================================ rows
def _task(rec: Mapping[str, Any]) -> Mapping[str, Any]:
    task = rec.get("task") or (rec.get("metrics") or {}).get("task") or {}
    return task if isinstance(task, Mapping) else {}


def _errors(rec: Mapping[str, Any]) -> dict[str, int]:
    m = rec.get("metrics") or {}
    if isinstance(m.get("errors"), Mapping):
        return {str(k): int(v) for k, v in m["errors"].items()}
    out: dict[str, int] = {}
    for s in rec.get("steps") or ():
        for code in s.get("errors", ()):
            out[code] = out.get(code, 0) + 1
    return out


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def episode_row(rec: Mapping[str, Any], run: str, verdict: EpisodeVerdict | None = None) -> dict[str, Any]:
    """The ``episodes`` row of one record (keys: `EPISODE_COLUMNS`); `verdict` is its
    `judge_episode`, when the caller has it."""
    v = verdict or judge_episode(rec)
    m = rec.get("metrics") or {}
    env, agent, task = rec.get("env") or {}, rec.get("agent") or {}, _task(rec)
    calls, noise = v.call_log, v.noise_log
    counted = [f for f in v.faults if f.status in ("recovered", "censored")]
    recovered = [f for f in counted if f.status == "recovered"]
    censored = [f for f in counted if f.status == "censored"]
    errors = _errors(rec)
    usage = rec.get("usage") or {}
    error = rec.get("agent_error")
    prov = rec.get("provenance") or {}
    row: dict[str, Any] = {
        "run": run, "key": rec.get("key"), "agent": agent.get("name"),
        "agent_config": canonical_json(agent.get("config") or {}), "privileged": bool(agent.get("privileged", False)),
        "env": env.get("id"), "noise": env.get("noise") or "none", "suite": rec.get("suite"),
        "family": task.get("family"), "domain": task.get("domain"), "difficulty": task.get("difficulty"),
        "split": task.get("split"), "task_id": task.get("id"), "seed": rec.get("seed"), "trial": rec.get("trial"),
        "success": v.success, "score": v.score, "outcome": m.get("outcome"), "turns": v.turns,
        "max_turns": m.get("max_turns"), "tool_calls": len(calls),
        "calls_injected": sum(1 for c in v.calls if c.injected),
        "calls_repeated": sum(1 for c in v.calls if c.repeat),
        "calls_decoy": sum(1 for c in v.calls if c.decoy),
        "faults": len(counted), "faults_recovered": len(recovered), "faults_censored": len(censored),
        "recovery_share": len(recovered) / len(counted) if counted else None,
    }
    for rate in _TOOL_RATES:
        row.update(rate.values(v))
    for why in ("unrecoverable", "unaffected", "superseded"):
        row[f"faults_{why}"] = sum(1 for f in v.faults if f.status == why)
    for kind in FAULT_KINDS:
        row[f"faults_{kind}"] = sum(1 for f in counted if f.kind == kind)
        row[f"recovered_{kind}"] = sum(1 for f in recovered if f.kind == kind)
    row.update({
        "recovery_turns": [f.turns for f in recovered], "censored_turns": [f.turns for f in censored],
        "recovery_ms": [f.ms for f in recovered] if v.timed else None,
        "censored_ms": [f.ms for f in censored] if v.timed else None,
        "recovery_turns_mean": _mean([f.turns for f in recovered]),
        "commitments": v.committed, "commitments_consistent": v.consistent,
        "goal_consistency": v.rate("consistent", "committed"),
        "constraints_broken": sorted({x for c in v.commitments for x in c.contradicts}),
        "errors_total": sum(errors.values()),
    })
    for code in ERROR_CODES:
        row[f"errors_{code.lower()}"] = errors.get(code, 0)
    row["errors_other"] = sum(k for code, k in errors.items() if code not in ERROR_CODES)
    row["noise_total"] = len(noise)
    for kind in _noise_kinds():
        row[f"noise_{kind}"] = sum(1 for e in noise if e.get("kind") == kind)
    row.update({
        "elapsed_ms": v.elapsed_ms, "time_budget_ms": m.get("time_budget_ms"),
        "agent_error": f"{error.get('type')}: {error.get('message')}" if error else None,
        "agent_error_type": error.get("type") if error else None,
        "prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens"),
        "wall_s": (rec.get("timing") or {}).get("wall_s"), "started_at": (rec.get("timing") or {}).get("started_at"),
        "agentgym_version": prov.get("agentgym"), "git_commit": prov.get("git_commit"),
    })
    return row


def step_rows(rec: Mapping[str, Any], run: str,
              messages: Sequence[Sequence[Mapping[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """The ``steps`` rows of one record (keys: `STEP_COLUMNS`).

    Args:
        rec: the record.
        run: the run's name.
        messages: the messages of each step, from a replay (`agentgym.eval.transcript`), when known.
    """
    rows = []
    actions = rec.get("actions") or []
    for i, s in enumerate(rec.get("steps") or ()):
        action = actions[i] if i < len(actions) else None
        calls = s.get("calls") or []
        rows.append({
            "run": run, "key": rec.get("key"), "turn": s.get("turn", i + 1),
            "action": action if isinstance(action, str) or action is None else canonical_json(action),
            "reward": s.get("reward"), "calls": len(calls),
            "call_names": [str(c.get("name", "")) for c in calls],
            "call_errors": [c.get("error") or "" for c in calls],
            "calls_json": canonical_json(calls), "errors": list(s.get("errors") or ()),
            "noise": [str(e.get("kind")) for e in s.get("noise") or ()],
            "elapsed_ms": s.get("elapsed_ms"),
            "messages": canonical_json(list(messages[i])) if messages is not None and i < len(messages) else None,
        })
    return rows


def noise_rows(rec: Mapping[str, Any], run: str, verdict: EpisodeVerdict | None = None) -> list[dict[str, Any]]:
    """The ``noise`` rows of one record, one per injection (keys: `NOISE_COLUMNS`)."""
    v = verdict or judge_episode(rec)
    faults = {f.index: f for f in v.faults}
    rows = []
    for i, e in enumerate(v.noise_log):
        hits = e.get("hits") if isinstance(e.get("hits"), Mapping) else {}
        f = faults.get(i)
        rows.append({
            "run": run, "key": rec.get("key"), "index": i, "step": e.get("step"), "kind": e.get("kind"),
            "target": e.get("target"), "call": e.get("call"), "hits_gold_step": hits.get("gold_step"),
            "hits_constraint": hits.get("constraint"), "at_ms": e.get("at_ms"),
            "is_fault": e.get("kind") in FAULT_KINDS, "status": f.status if f else None,
            "recovered_turn": f.turn if f else None, "turns": f.turns if f else None,
            "ms": f.ms if f else None, "detail": canonical_json(e.get("detail")),
        })
    return rows


def tables(records: Iterable[Mapping[str, Any]], run: str,
           messages: Mapping[str, Sequence[Sequence[Mapping[str, Any]]]] | None = None
           ) -> dict[str, list[dict[str, Any]]]:
    """The rows of every table of `TABLES` for a run's records, each episode judged once.

    Args:
        records: the run's records.
        run: the run's name.
        messages: per episode key, the messages of each step, when a replay gave them.
    """
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    for rec in records:
        v = judge_episode(rec)
        out["episodes"].append(episode_row(rec, run, v))
        out["steps"].extend(step_rows(rec, run, (messages or {}).get(rec.get("key"))))
        out["noise"].extend(noise_rows(rec, run, v))
    return out


# ============================================================================ frames and files
def _cell(value: Any, kind: str) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if kind == "float":
        return float(value)
    if kind == "int":
        return int(value)
    if kind == "bool":
        return bool(value)
    if kind == "string":
        return str(value)
    return list(value)


def frame(rows: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> "pd.DataFrame":
    """A DataFrame of `rows` with exactly `columns`, in order, with their nullable dtypes."""
    import pandas as pd

    data = {c.name: pd.Series([_cell(r.get(c.name), c.type) for r in rows], dtype=PANDAS_DTYPES[c.type])
            for c in columns}
    return pd.DataFrame(data, columns=[c.name for c in columns])


def episodes_frame(records: Iterable[Mapping[str, Any]], run: str) -> "pd.DataFrame":
    """The ``episodes`` table of a run's records as a DataFrame (columns: `EPISODE_COLUMNS`)."""
    return frame([episode_row(rec, run) for rec in records], EPISODE_COLUMNS)


def arrow_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[Column]) -> "pa.Table":
    """An Arrow table of `rows` with exactly `columns` and their Arrow types (an empty list column
    keeps its element type), with the pandas dtypes in its metadata, so ``pd.read_parquet`` gives
    back the frame of `frame`."""
    import pyarrow as pa

    schema = pa.schema([pa.field(c.name, arrow_type(c.type)) for c in columns])
    return pa.Table.from_pandas(frame(rows, columns), schema=schema, preserve_index=False)


def _need_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ValueError("Parquet needs pyarrow: pip install 'agentrl-gym[data]' (or pip install pyarrow)") from None


def _csv_cell(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, list) else value


def write_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[Column], path: str | os.PathLike[str],
                fmt: str) -> Path:
    """Write one table as Parquet or CSV.

    CSV holds a null as an empty cell, booleans as ``True``/``False``, a list as JSON text, and
    text that a spreadsheet would run as a formula with a leading ``'`` (`agentgym.eval.csv_cells`).

    Args:
        rows: the table's rows. columns: its columns. path: the file. fmt: ``parquet`` or ``csv``.

    Raises:
        ValueError: an unknown format, or Parquet without pyarrow.
    """
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet":
        _need_pyarrow()
        import pyarrow.parquet as pq

        pq.write_table(arrow_table(rows, columns), out)
    elif fmt == "csv":
        df = frame(rows, columns)
        for c in columns:
            if c.type.startswith("list["):
                df[c.name] = df[c.name].map(_csv_cell)
        write_csv(df, out)
    else:
        raise ValueError(f"unknown format {fmt!r}; known: parquet, csv")
    return out


def _card(tables: Mapping[str, int], runs: Sequence[str]) -> str:
    configs = "\n".join(f"- config_name: {name}\n  data_files: {name}.parquet" + ("\n  default: true" if
                        name == "episodes" else "") for name in tables)
    counts = "\n".join(f"- `{name}.parquet`: {n} rows" for name, n in tables.items())
    return (f"---\nconfigs:\n{configs}\n---\n\n# agentgym episodes\n\nExported by `agentgym export --to datasets` "
            f"from the run(s) {', '.join(runs)}.\n\n{counts}\n\nThe columns are documented in agentgym's "
            "docs/export.md. Load a table with\n`datasets.load_dataset(\"parquet\", data_files=\"episodes.parquet\")`"
            ", or this folder with\n`datasets.load_dataset(FOLDER, \"steps\")`.\n")


def write_dataset(tables: Mapping[str, Sequence[Mapping[str, Any]]], folder: str | os.PathLike[str],
                  runs: Sequence[str]) -> Path:
    """Write a `datasets`-compatible folder: one Parquet file per table and a dataset card whose
    ``configs`` name them, so ``datasets.load_dataset(FOLDER, "steps")`` loads a table by name.

    Args:
        tables: table name (a key of `TABLES`) -> its rows.
        folder: the folder to write (created; files of the same names are replaced).
        runs: the names of the exported runs, for the card.
    """
    _need_pyarrow()
    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out} exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        write_table(rows, TABLES[name], out / f"{name}.parquet", "parquet")
    (out / "README.md").write_text(_card({k: len(v) for k, v in tables.items()}, runs), encoding="utf-8")
    return out


# ============================================================================ the column docs
DOCS_BEGIN = "<!-- export columns: begin (generated from agentgym.eval.export; do not edit by hand) -->"
DOCS_END = "<!-- export columns: end -->"


def columns_markdown() -> str:
    """The Markdown tables of every exported table's columns (what docs/export.md holds)."""
    parts = []
    for name, columns in TABLES.items():
        lines = [f"### `{name}`", "", "| column | type | pandas dtype | what it holds |", "|---|---|---|---|"]
        lines += [f"| `{c.name}` | {c.type} | {PANDAS_DTYPES[c.type]} | {c.doc.replace('|', '/')} |" for c in columns]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def write_column_docs(path: str | os.PathLike[str]) -> bool:
    """Put `columns_markdown` between `DOCS_BEGIN` and `DOCS_END` in the file at `path`.

    Returns:
        True when the file changed.
    """
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    head, sep, rest = text.partition(DOCS_BEGIN)
    _, sep2, tail = rest.partition(DOCS_END)
    if not sep or not sep2:
        raise ValueError(f"{p} has no {DOCS_BEGIN!r} ... {DOCS_END!r} section")
    new = f"{head}{DOCS_BEGIN}\n{columns_markdown()}\n{DOCS_END}{tail}"
    if new != text:
        p.write_text(new, encoding="utf-8")
    return new != text
