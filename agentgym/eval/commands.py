"""The `agentgym export` and `agentgym view` commands: a run's episodes as tables, or in a terminal.

Their parsers are built on every `agentgym` call, so the work loads only when a command runs. Bad
input (no run at the path, a records file of another schema, an unknown episode) is a ValueError
with one line, which the command line prints without a traceback; a torn last line (a run killed
mid-write) is left out with a one-line warning.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_export_command", "add_view_command", "cmd_export", "cmd_view", "default_out"]

_SUFFIX = {"parquet": ".parquet", "csv": ".csv", "datasets": "-dataset"}


def _open(path: str) -> Any:
    from agentgym.eval.runs import open_run

    run = open_run(path)
    if run.torn_tail:
        print(f"agentgym: warning: {run.path}: the last line is torn (a run killed mid-write) and was left out; "
              "resuming the run plays that episode again", file=sys.stderr)
    return run


def default_out(run_path: str, fmt: str) -> Path:
    """Where an export goes by default: ``RUN/episodes.parquet`` (``.csv``, ``dataset/``) for a run
    folder, ``FILE.parquet`` (``.csv``, ``FILE-dataset/``) beside a records file."""
    from agentgym.eval.runs import RECORDS_FILE

    p = Path(run_path)
    if p.is_dir() or p.name == RECORDS_FILE:
        folder = p if p.is_dir() else p.parent
        return folder / ("dataset" if fmt == "datasets" else f"episodes{_SUFFIX[fmt]}")
    return p.with_name(p.stem + _SUFFIX[fmt])


def cmd_export(args: argparse.Namespace) -> int:
    """Write the episodes of one or more runs as Parquet, CSV or a `datasets` folder."""
    from agentgym.eval import export

    if len(args.runs) > 1 and not args.out:
        raise ValueError("exporting several runs needs --out")
    if args.messages and args.to != "datasets":
        raise ValueError("--messages fills the steps table: it needs --to datasets")
    runs = [_open(path) for path in args.runs]
    out = Path(args.out) if args.out else default_out(args.runs[0], args.to)
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in export.TABLES}
    for run in runs:
        messages = _messages(run.records) if args.messages else None
        for name, part in export.tables(run.records, run.name, messages).items():
            rows[name].extend(part)
    try:
        if args.to == "datasets":
            export.write_dataset(rows, out, [r.name for r in runs])
        else:
            export.write_table(rows["episodes"], export.EPISODE_COLUMNS, out, args.to)
    except OSError as exc:
        raise ValueError(f"cannot write {out}: {exc.strerror or exc}") from exc
    if args.to == "datasets":
        sizes = ", ".join(f"{name} ({len(part)} rows)" for name, part in rows.items())
        print(f"wrote {sizes} to {out}/")
    else:
        print(f"wrote {len(rows['episodes'])} episodes to {out}")
    return 0


def _messages(records: list[dict[str, Any]]) -> dict[str, Any]:
    from agentgym.eval.transcript import replay_transcript

    out = {}
    for rec in records:
        t = replay_transcript(rec)
        if t.problem:
            print(f"agentgym: warning: {rec.get('key')}: {t.problem}", file=sys.stderr)
        out[rec.get("key")] = t.steps
    return out


def _emit(text: str) -> None:
    """Print `text`; a reader that stops early (``| head``) ends the output, not with a traceback."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        # Python flushes stdout again at exit: point it at nothing so that flush cannot fail.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def cmd_view(args: argparse.Namespace) -> int:
    """List a run's episodes, or show one episode turn by turn."""
    from agentgym.eval.timeline import episode_summary, timeline
    from agentgym.eval.transcript import replay_transcript
    from agentgym.eval.view import events_json, find_episode, render_episode, render_list, style_for

    run = _open(args.run)
    style = style_for(sys.stdout, args.color)
    if args.episode is None:
        rows = [episode_summary(rec) for rec in run.records]
        if args.json:
            import json

            _emit(json.dumps(rows, sort_keys=True))
        else:
            _emit(render_list(rows, style, args.run))
        return 0
    rec = find_episode(run.records, args.episode, args.run)
    events = timeline(rec, None if args.no_replay else replay_transcript(rec))
    _emit(events_json(events) if args.json else render_episode(str(rec.get("key")), events, style, full=args.full))
    return 0


def add_export_command(sub: Any) -> None:
    """Register ``agentgym export`` on the command line's subparsers."""
    p = sub.add_parser(
        "export", help="a run's episodes as one flat table (Parquet, CSV) or a datasets folder",
        description="One row per episode: identity, success, score, turns, the per-episode inputs and value of "
                    "every metric, errors by code, injections by kind, simulated time, agent error (docs/export.md "
                    "lists the columns). --to datasets writes episodes.parquet, steps.parquet and noise.parquet "
                    "with a dataset card, for datasets.load_dataset.")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders (each holds records.jsonl) or records files")
    p.add_argument("--to", choices=("parquet", "csv", "datasets"), default="parquet",
                   help="parquet (default; needs pyarrow), csv, or a datasets folder of Parquet tables")
    p.add_argument("--out", default=None, metavar="FILE",
                   help="where to write (default: RUN/episodes.parquet, RUN/episodes.csv or RUN/dataset/)")
    p.add_argument("--messages", action="store_true",
                   help="replay the episodes to add each step's messages (tool results, user replies) to the "
                        "steps table (--to datasets)")
    p.set_defaults(func=cmd_export)


def add_view_command(sub: Any) -> None:
    """Register ``agentgym view`` on the command line's subparsers."""
    p = sub.add_parser(
        "view", help="a run's episodes in the terminal, or one episode turn by turn",
        description="Without --episode: one line per episode (success, score, turns, calls, faults recovered). "
                    "With --episode: its turns in order, the agent's messages and tool calls, tool results, the "
                    "user's words, each injected fault and what it hit, and where each metric counted. The texts "
                    "come from replaying the recorded actions (--no-replay shows the record alone).")
    p.add_argument("run", metavar="RUN", help="a run folder (holding records.jsonl) or a records file")
    p.add_argument("--episode", default=None, metavar="KEY", help="an episode key, or its # in the list")
    p.add_argument("--no-replay", action="store_true", help="do not replay: no tool results nor user words")
    p.add_argument("--full", action="store_true", help="show tool results and messages whole")
    p.add_argument("--json", action="store_true", help="print the list or the timeline as JSON")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour: auto (a terminal without NO_COLOR), always or never")
    p.set_defaults(func=cmd_view)
