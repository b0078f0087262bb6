#!/usr/bin/env python
"""The sealed track's figures: how long a sealed run takes beside `agentgym bench`, and what known seeds buy there.

1. Timing (target: a sealed core-v0 run with the heuristic over WebSocket on loopback finishes
   within 3x the in-process `agentgym bench` time on 2 cores). One board for the whole run:
   ``agentgym leaderboard serve --db DB --sealed --port 0`` on 127.0.0.1 in its own process, on a
   temporary database, with a token from ``agentgym leaderboard token add``. Each round times,
   in fresh processes and in alternating order (the machine may be shared; interleaving spreads
   other jobs' load over both alike):

   - in process: ``agentgym bench core-v0 --agent heuristic --no-report --out DIR`` (the
     process pool on every core; no report, since the sealed command writes none);
   - sealed: ``agentgym bench core-v0 --agent heuristic --sealed URL --model M --revision R``
     (a new revision per round: a board holds one sealed entry per agent, model and revision),
     until the board has verified the run and the client has fetched its published records.

   Reported: the medians of the wall-clock times and their ratio, the median of the rounds' own
   ratios, the client's and the board's CPU time (the board's includes verifying the run by
   replay, whose time the board stores with the entry), and the 1-minute load average before
   and after every run.
2. Agents (the memoriser target): an agent that memorised the public core-v0 episodes (opening
   -> the oracle's actions, `tests/leaderboard/lb_sealed_support.py`'s `LookupAgent`) against
   the heuristic, on the public seeds and in a sealed run, with paired bootstrap 95% CIs on the
   same episodes; and the heuristic's and the random agent's success on the public seeds against
   their own sealed runs (95% CIs; the difference resamples tasks). A board in this process, as
   the tests run it.

Writes the marked sections of ``benchmarks/RESULTS-sealed.md`` (one per part) and, with
``--json PATH``, the figures.

    .venv/bin/python benchmarks/bench_sealed.py                     # 5 rounds, then the agents
    .venv/bin/python benchmarks/bench_sealed.py --rounds 3 --skip agents
    .venv/bin/python benchmarks/bench_sealed.py --suite smoke-v0 --rounds 1 --out /tmp/s.md  # a smoke run
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import json
import os
import platform
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "RESULTS-sealed.md"
#: The issue's target: sealed wall-clock time over the in-process one.
TARGET_RATIO = 3.0
_VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
PYTHON = str(_VENV_PYTHON) if _VENV_PYTHON.exists() else sys.executable
SECTIONS = ("timing", "agents")
_CLK_TCK = os.sysconf("SC_CLK_TCK")


def _marks(section: str) -> tuple[str, str]:
    return f"<!-- bench_sealed {section}: begin -->", f"<!-- bench_sealed {section}: end -->"


# ---------------------------------------------------------------------------- measuring aids
sys.path.insert(0, str(HERE / "ppo"))
from bench_families import LoadSampler  # noqa: E402 (the 1-minute load average, sampled in a thread)


def _cpu_of(pid: int) -> float:
    """CPU seconds of process `pid`, of the children it has waited for, and of those still alive
    (a board's replay processes, on more cores), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # After the command's name: utime, stime, cutime, cstime are fields 14-17 of stat(5).
    total = sum(int(v) for v in fields[11:15]) / _CLK_TCK
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in children.read_text().split():
            with contextlib.suppress(OSError):
                total += _cpu_of(int(child))
    return total


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def machine() -> str:
    cpu = platform.processor() or "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, Python {platform.python_version()}"


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                           text=True).stdout.strip()
    return (done.stdout.strip() or "?") + (" (with uncommitted changes)" if dirty else "")


# ---------------------------------------------------------------------------- the board
def _agentgym(*args: str) -> list[str]:
    return [PYTHON, "-m", "agentgym.cli", *args]


@contextlib.contextmanager
def board(tmp: Path) -> Iterator[tuple[str, str, subprocess.Popen[bytes], Path]]:
    """A sealed board on 127.0.0.1 (any free port) in its own process, with a fresh token; yields
    (url, token, process, database)."""
    db = tmp / "board.sqlite"
    added = subprocess.run(_agentgym("leaderboard", "token", "add", "--org", "bench", "--quota", "1000", "--db",
                                     str(db)), capture_output=True, text=True, check=True, cwd=tmp)
    token = re.search(r"\bagt_[A-Za-z0-9_-]+", added.stdout + added.stderr)
    if token is None:
        raise RuntimeError(f"no token in the output of `token add`: {added.stdout!r} {added.stderr!r}")
    log = tmp / "board.log"
    with open(log, "wb") as err:
        proc = subprocess.Popen(_agentgym("leaderboard", "serve", "--db", str(db), "--sealed", "--port", "0"),
                                stdout=subprocess.DEVNULL, stderr=err, cwd=tmp)
    try:
        deadline = time.monotonic() + 120
        while True:
            found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", log.read_text(errors="replace"))
            if found:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the board did not start: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.1)
        url = found.group(1)
        with urllib.request.urlopen(url + "/leaderboard.json", timeout=30) as resp:  # noqa: S310 - loopback
            assert resp.status == 200
        yield url, token.group(0), proc, db
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ---------------------------------------------------------------------------- one timed run
def _timed(cmd: list[str], env: dict[str, str], cwd: Path, server: subprocess.Popen[bytes] | None = None) -> dict[str, Any]:
    load0 = os.getloadavg()[0]
    cpu0 = _children_cpu()
    server0 = _cpu_of(server.pid) if server is not None else 0.0
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {(done.stdout + done.stderr)[-3000:]}")
    out = {"wall_s": wall, "client_cpu_s": _children_cpu() - cpu0, "load_before": load0,
           "load_after": os.getloadavg()[0]}
    if server is not None:
        out["board_cpu_s"] = _cpu_of(server.pid) - server0
    return out


def _messages(published: Path) -> int:
    """WebSocket round trips a sealed run took: a reset per episode and a step per action."""
    from agentgym.leaderboard.submission import decode_submission

    records = decode_submission(published.read_bytes()).records
    return len(records) + sum(len(r["actions"]) for r in records)


def time_runs(suite: str, rounds: int, warmup: bool) -> dict[str, Any]:
    """Interleaved rounds of the in-process and the sealed command (see the module)."""
    rows: list[dict[str, Any]] = []
    load = LoadSampler(every=5.0)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-sealed-") as name:
        tmp = Path(name)
        with board(tmp) as (url, token, server, db):
            env = {**os.environ, "AGENTGYM_TOKEN": token, "PYTHONUNBUFFERED": "1"}

            def one(mode: str, label: str) -> dict[str, Any]:
                out = tmp / f"{mode}-{label}"
                if mode == "in-process":
                    cmd = _agentgym("bench", suite, "--agent", "heuristic", "--no-report", "--out", str(out))
                    row = _timed(cmd, env, tmp)
                else:
                    cmd = _agentgym("bench", suite, "--agent", "heuristic", "--sealed", url, "--model",
                                    "bench/heuristic", "--revision", label, "--out", str(out))
                    row = _timed(cmd, env, tmp, server)
                    with contextlib.closing(sqlite3.connect(db)) as conn:
                        row["verify_s"] = conn.execute("SELECT verify_s FROM submissions WHERE revision = ?",
                                                       (label,)).fetchone()[0]
                    row["messages"] = _messages(next(out.glob("sealed-*.agentgym.gz")))
                shutil.rmtree(out, ignore_errors=True)
                return {"mode": mode, **row}

            if warmup:
                for mode in ("in-process", "sealed"):
                    one(mode, "warmup")
            for r in range(rounds):
                order = ("in-process", "sealed") if r % 2 == 0 else ("sealed", "in-process")
                for mode in order:
                    row = one(mode, f"round-{r + 1}")
                    rows.append({"round": r + 1, **row})
                    print(f"round {r + 1} {mode}: {row['wall_s']:.1f} s wall, client CPU {row['client_cpu_s']:.1f} s"
                          + (f", board CPU {row['board_cpu_s']:.1f} s (verify {row['verify_s']:.1f} s)"
                             if mode == "sealed" else "")
                          + f", load {row['load_before']:.1f} -> {row['load_after']:.1f}", flush=True)
    return {"suite": suite, "rounds": rounds, "warmup": warmup, "runs": rows, "load": load.stop(),
            "seconds": time.perf_counter() - started, **summarise_timing(rows)}


def summarise_timing(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Medians per mode, their ratio and the median of the rounds' own ratios."""
    by = {m: [r for r in rows if r["mode"] == m] for m in ("in-process", "sealed")}
    med = {m: {k: statistics.median(r[k] for r in rs if r.get(k) is not None)
               for k in ("wall_s", "client_cpu_s", "board_cpu_s", "verify_s")
               if any(r.get(k) is not None for r in rs)} for m, rs in by.items()}
    rounds = sorted({r["round"] for r in rows})
    per_round = [next(r["wall_s"] for r in by["sealed"] if r["round"] == n) /
                 next(r["wall_s"] for r in by["in-process"] if r["round"] == n) for n in rounds]
    ratio = med["sealed"]["wall_s"] / med["in-process"]["wall_s"]
    cpu_sealed = med["sealed"]["client_cpu_s"] + med["sealed"]["board_cpu_s"]
    messages = statistics.median(r["messages"] for r in by["sealed"])
    per_message = statistics.median(r["board_cpu_s"] / r["messages"] for r in by["sealed"]) * 1e6
    return {"medians": med, "ratio": ratio, "messages": messages, "board_cpu_per_message_us": per_message, "round_ratios": per_round, "round_ratio_median": statistics.median(per_round),
            "cpu_ratio": cpu_sealed / med["in-process"]["client_cpu_s"], "passed": ratio <= TARGET_RATIO}


# ---------------------------------------------------------------------------- the agents
def agent_figures(suite_id: str, tmp: Path) -> dict[str, Any]:
    """The memoriser against the heuristic, and the public-seed and sealed success of the
    heuristic and the random agent (the tests' helpers: one place for how they are measured)."""
    sys.path.insert(0, str(ROOT / "tests" / "leaderboard"))
    import lb_sealed_support as T

    from agentgym.bench.suites import SUITES

    suite = SUITES[suite_id]
    started = time.perf_counter()
    load = LoadSampler(every=5.0)
    oracle = T.public_records(suite, "oracle", tmp / "public")
    out: dict[str, Any] = {"suite": suite.id, "episodes": len(suite),
                           "memoriser": T.memoriser_figures(suite, oracle, tmp)}
    for agent in ("heuristic", "random"):
        print(f"agents: {agent}, public seeds and sealed", flush=True)
        out[agent] = T.agreement_figures(suite, agent, tmp)
    out["load"] = load.stop()
    out["seconds"] = time.perf_counter() - started
    return out


# ---------------------------------------------------------------------------- report
def _pct(agg: dict[str, Any]) -> str:
    return f"{agg['value']:.1%} [{agg['ci'][0]:.1%}, {agg['ci'][1]:.1%}]"


def _points(agg: dict[str, Any]) -> str:
    return f"{agg['value'] * 100:+.1f} points [{agg['ci'][0] * 100:+.1f}, {agg['ci'][1] * 100:+.1f}]"


def _load(load: dict[str, float]) -> str:
    return f"{load['min']:.1f} / {load['median']:.1f} / {load['max']:.1f}"


def timing_markdown(res: dict[str, Any]) -> list[str]:
    t = res["timing"]
    med = t["medians"]
    verdict = "pass" if t["passed"] else f"**MISS** ({t['ratio']:.2f}x)"
    o = [f"## Timing: a sealed {t['suite']} run beside `agentgym bench` ({res['date']})", "",
         f"Machine: {res['machine']}; agentgym git {res['commit']}. {t['rounds']} rounds after "
         f"{'one untimed warm-up run of each' if t['warmup'] else 'no warm-up'}, the two commands alternating "
         f"(which goes first alternates too); {t['seconds']:.0f} s in all. Load (1-minute average, sampled every "
         f"5 s; min / median / max): {_load(t['load'])}: at 2 the two cores were ours, above it other jobs shared "
         f"them.", "",
         "| figure | in process | sealed | ratio | target | result |", "|---|---:|---:|---:|---:|---|",
         f"| wall clock, median | {med['in-process']['wall_s']:.1f} s | {med['sealed']['wall_s']:.1f} s "
         f"| **{t['ratio']:.2f}x** | <= {TARGET_RATIO:g}x | {verdict} |",
         f"| the rounds' own ratios (median, min-max) | | | {t['round_ratio_median']:.2f}x "
         f"({min(t['round_ratios']):.2f}-{max(t['round_ratios']):.2f}) | | |",
         f"| CPU time, median (sealed: client + board) | {med['in-process']['client_cpu_s']:.1f} s "
         f"| {med['sealed']['client_cpu_s']:.1f} + {med['sealed']['board_cpu_s']:.1f} s | {t['cpu_ratio']:.2f}x | | |"]
    o.append(f"| of the sealed wall clock: the board's verification after the last episode, median "
             f"| | {med['sealed']['verify_s']:.1f} s | | | |")
    o.append(f"| board CPU per WebSocket round trip, median ({t['messages']:,} a run) "
             f"| | {t['board_cpu_per_message_us']:.0f} us | | | |")
    o += ["", "Every run:", "", "| round | command | wall s | client CPU s | board CPU s | board's verification s | load before "
                                "-> after |", "|---:|---|---:|---:|---:|---:|---|"]
    for r in t["runs"]:
        sealed = r["mode"] == "sealed"
        o.append(f"| {r['round']} | {r['mode']} | {r['wall_s']:.1f} | {r['client_cpu_s']:.1f} "
                 f"| {r['board_cpu_s']:.1f} | {r['verify_s']:.1f} " if sealed else
                 f"| {r['round']} | {r['mode']} | {r['wall_s']:.1f} | {r['client_cpu_s']:.1f} | - | - ")
        o[-1] += f"| {r['load_before']:.1f} -> {r['load_after']:.1f} |"
    o += ["", "In process: the process pool on every core plays the episodes and writes the records. Sealed: the "
              "client plays the heuristic in 8 threads, one WebSocket session each; the board steps every env "
              "(`--env-calls inline`: on its event loop) and writes the records, which a background worker "
              "replays as they are written (`agentgym.leaderboard.replay_ahead`); once every episode is played "
              "it verifies the run (the replays not done yet, the summary and its checks) and stores the entry; the client waits for it and fetches the published records. *client CPU* is the command's and its children's CPU time; *board CPU* the board "
              "process's (and its children's) over the run, its replay included; *board's verification*: the entry's `verify_s`, the "
              "verification once the run is played (the replays the worker had not done, the summary and its checks)."]
    return o


def agents_markdown(res: dict[str, Any]) -> list[str]:
    a = res["agents"]
    m = a["memoriser"]
    o = [f"## Agents: what memorised public episodes buy in a sealed {a['suite']} run ({res['date']})", "",
         f"Machine: {res['machine']}; agentgym git {res['commit']}; {a['episodes']:,} episodes a run, "
         f"{a['seconds']:.0f} s in all (load {_load(a['load'])}). Success rates with bootstrap 95% CIs "
         f"(2,000 resamples); *paired*: the same episodes for both agents, by record key.", "",
         f"The memoriser keys every public episode on its opening (observation, tools, trial) and replays "
         f"the oracle's actions when it knows an opening, else plays the heuristic. It knew "
         f"{m['public_hits']:,} of the {m['episodes']:,} public openings (where the oracle it copies scores "
         f"{_pct(m['oracle_public'])}; a few openings are shared by two public tasks, and it keeps the first's "
         f"actions), and {m['sealed_hits']:,} of "
         f"the sealed run's: a template's openings repeat across tasks, their worlds do not, so there the "
         f"memorised actions belong to another task.", "",
         "| | public seeds | sealed run |", "|---|---|---|",
         f"| memoriser | {_pct(m['public'])} | {_pct(m['sealed'])} |",
         f"| heuristic, same episodes | {_pct(m['heuristic_public'])} | {_pct(m['heuristic_sealed'])} |",
         f"| memoriser - heuristic, paired | {_points(m['public_vs_heuristic'])} "
         f"| **{_points(m['sealed_vs_heuristic'])}** |", "",
         "The same agent on the public seeds and in its own sealed run (other tasks: the CI of the difference "
         "resamples tasks, each task's noise settings and trials together):", "",
         "| agent | public seeds | sealed run | sealed - public | within each other's CIs |", "|---|---|---|---|---|"]
    for agent in ("heuristic", "random"):
        g = a[agent]
        o.append(f"| {agent} | {_pct(g['public'])} | {_pct(g['sealed'])} | {_points(g['difference'])} "
                 f"| {'yes' if g['overlap'] else '**no**'} |")
    return o


def write_results(res: dict[str, Any], path: Path) -> None:
    text = path.read_text() if path.exists() else (
        "# The sealed track's figures\n\nGenerated by `benchmarks/bench_sealed.py`; each section is rewritten by "
        "its part of a run (regenerate rather than edit).\n")
    for section, render in (("timing", timing_markdown), ("agents", agents_markdown)):
        if section not in res:
            continue
        begin, end = _marks(section)
        block = "\n".join([begin, "", *render(res), "", end])
        if begin in text and end in text:
            text = text[: text.index(begin)] + block + text[text.index(end) + len(end):]
        else:
            text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--suite", default="core-v0", help="the suite of both parts (default: core-v0)")
    p.add_argument("--rounds", type=int, default=5, help="timed rounds of each command")
    p.add_argument("--no-warmup", action="store_true", help="no untimed run of each command first")
    p.add_argument("--skip", default="", help=f"comma-separated parts to skip: {','.join(SECTIONS)}")
    p.add_argument("--out", default=str(RESULTS), help="the Markdown file whose marked sections are rewritten")
    p.add_argument("--json", default=None, help="also write the figures as JSON here")
    a = p.parse_args(argv)
    skip = {s for s in a.skip.split(",") if s}
    if skip - set(SECTIONS):
        p.error(f"--skip takes {','.join(SECTIONS)}")
    res: dict[str, Any] = {"date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                           "machine": machine(), "commit": _commit()}
    if "timing" not in skip:
        res["timing"] = time_runs(a.suite, a.rounds, not a.no_warmup)
        t = res["timing"]
        print(f"sealed / in process: {t['ratio']:.2f}x of the medians (target <= {TARGET_RATIO:g}x: "
              f"{'pass' if t['passed'] else 'MISS'})", flush=True)
    if "agents" not in skip:
        with tempfile.TemporaryDirectory(prefix="bench-sealed-agents-") as tmp:
            res["agents"] = agent_figures(a.suite, Path(tmp))
        m = res["agents"]["memoriser"]
        print(f"memoriser - heuristic, sealed: {_points(m['sealed_vs_heuristic'])}; public: "
              f"{_points(m['public_vs_heuristic'])}", flush=True)
    write_results(res, Path(a.out))
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=2, sort_keys=True) + "\n")
    return 0 if res.get("timing", {}).get("passed", True) else 1


if __name__ == "__main__":
    sys.exit(main())
