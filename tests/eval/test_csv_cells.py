"""R5: CSV formula injection. Every CSV agentgym writes (``agentgym export --to csv``'s tables and
``report.csv``) holds hostile text (agent names, run names, errors like ``=HYPERLINK(``) as text:
no cell begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (before: 12 formula
cells in an export, 3 in a report); numbers are still numbers."""

from __future__ import annotations

import copy
import csv
from pathlib import Path

from played import played, write_run

from agentgym.eval import export
from agentgym.eval.csv_cells import FORMULA_STARTS, text_cell
from agentgym.eval.export import TABLES
from agentgym.eval.report import write_report

HOSTILE = ['=HYPERLINK("http://evil.example","click")', "+cmd|' /C calc'!A0", "-2+3+cmd", "@SUM(A1)",
           "\t=1+1", "\r=1+1"]


def _hostile_records() -> list[dict]:
    out = []
    for k, rec in enumerate(played("AgentRL/Dialog-v0", 3)):
        rec = copy.deepcopy(rec)
        name = HOSTILE[k % len(HOSTILE)]
        rec["agent"]["name"] = name
        rec["agent_error"] = {"type": HOSTILE[(k + 1) % len(HOSTILE)], "message": HOSTILE[(k + 2) % len(HOSTILE)],
                              "traceback": ""}
        out.append(rec)
    return out


def _cells(path: Path) -> list[str]:
    with open(path, newline="") as fh:
        return [cell for row in csv.reader(fh) for cell in row]


def test_no_csv_cell_is_a_formula(tmp_path: Path) -> None:
    records = _hostile_records()
    written = [export.write_table(rows, TABLES[name], tmp_path / f"{name}.csv", "csv")
               for name, rows in export.tables(records, HOSTILE[0]).items()]
    report = tmp_path / "report"
    write_report([write_run(tmp_path / "run", records)], report, show=False)
    written.append(report / "report.csv")
    hostile_seen = 0
    for path in written:
        for cell in _cells(path):
            assert not cell.startswith(FORMULA_STARTS) or _is_number(cell), (path.name, cell)
            hostile_seen += any(cell == "'" + h for h in HOSTILE)
    assert hostile_seen >= 6  # the hostile text is there, as text


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_text_cells_only() -> None:
    assert text_cell("=1+1") == "'=1+1" and text_cell("plain") == "plain" and text_cell(-1.5) == -1.5
