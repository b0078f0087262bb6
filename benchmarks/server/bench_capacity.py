"""Capacity benchmark on OpenEnv's grid: how many concurrent sessions a server holds, and how fast.

Each session, all of them started at once: create, reset, five real Dialog-v0 steps with a
think time (1 s) before each, close. Per server and session count: the share of sessions that
completed, the step latency (P50, P99), the session time (P99, against its 5 s of thinking),
steps per second over the run and the server's peak resident memory (its whole process tree).
Then, without think time, the steps per second a fixed set of clients gets from one worker
process and from one per core (real Dialog-v0 steps).

    .venv/bin/python benchmarks/server/bench_capacity.py [--grid 32,64,...,4096] [--ours-extra 8192] [--reps 3]
        [--servers ours,ours-1,openenv] [--openenv-python /tmp/openenv-venv/bin/python]

Servers: ``ours`` is ``agentgym serve`` with its defaults (one worker per core); ``ours-1`` the
same with ``--workers 1``; ``openenv`` is OpenEnv's own server (openenv-core in its own virtual
environment) with the echo env of its template (`openenv_echo_server.py`), its concurrency cap
raised to the grid's largest count. ``ray`` is `agentgym.ray_envs`' actor pool on a local Ray
cluster (see `bench_ray.py`). Our sessions are opened on their own WebSocket (``WS /ws``, the
``open`` op with the reset folded in: one exchange; ``--separate-open`` sends the reset apart,
for a server without the fold) and closed with the socket's closing handshake (the session
closes with its socket; ``--close-op`` sends the ``close`` op first); OpenEnv's on theirs (a
session per connection, its first message the reset, closed with the socket). The clients run in several processes (asyncio on uvloop, one socket per
session) and speak WebSocket through `lean_ws` (prepared frames, replies checked by their bytes),
not the `websockets` library: on a machine this small they share its cores with the server, as
the probe did, and with the library they took about as much CPU per step as the server, so they
set the ceiling. Each grid point and the throughput run report the server's CPU time (its whole
process tree, from /proc) and the clients' (their own processes), so where the cores went is on
the page.

The results go to `benchmarks/server/RESULTS.md`, between the capacity markers (the rest of the
file is `bench_server.py`'s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from lean_ws import LeanSocket, connect, frame  # noqa: E402

RESULTS = HERE / "RESULTS.md"
BEGIN, END = "<!-- capacity: begin (bench_capacity.py) -->", "<!-- capacity: end -->"
DIALOG = "AgentRL/Dialog-v0"
GRID = (32, 64, 128, 256, 512, 1024, 2048, 4096)
#: Five real Dialog-v0 turns: questions to the user and searches.
ACTIONS = ("Hello! What kind of place are you looking for, and in which area?",
           '{"name": "search", "arguments": {}}',
           "Which day and time would you like, and do you need any amenities?",
           '{"name": "search", "arguments": {"page": 2}}',
           "Is there a budget or a minimum rating I should keep to?")
#: The issue's bars: success, step P99, and session P99 against twice the think time.
SUCCESS_BAR, STEP_P99_BAR_S = 0.999, 1.0


# ---------------------------------------------------------------------------- servers
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tree(pid: int) -> list[int]:
    """`pid` and its children (a supervisor and its workers)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo.extend(int(c) for c in f.read().split())
        except FileNotFoundError:
            continue
    return out


def _tree_rss_bytes(pid: int) -> int:
    """Resident bytes of `pid` and its children."""
    total = 0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except FileNotFoundError:
            continue
    return total


def _tree_cpu_s(pid: int) -> float:
    """CPU seconds (user and system) of `pid` and its children so far."""
    total = 0.0
    for p in _tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


class Server:
    """A server in its own process (tree) on a free port, its peak memory watched."""

    def __init__(self, kind: str, openenv_python: str, max_sessions: int, fold: bool = True,
                 close_op: bool = False) -> None:
        self.kind, self.port, self.fold, self.close_op = kind, _free_port(), fold, close_op
        self.url = f"http://127.0.0.1:{self.port}"
        if kind == "openenv":
            argv = [openenv_python, str(HERE / "openenv_echo_server.py"), str(self.port), str(max_sessions)]
        else:
            workers = ["--workers", "1"] if kind == "ours-1" else []
            argv = [sys.executable, "-m", "agentgym.server", "--port", str(self.port), "--log-level", "warning",
                    *workers]
        self.log = open(os.devnull, "wb")
        self.proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=self.log)
        self.peak_rss = 0
        self._watching = threading.Event()

    def __enter__(self) -> Server:
        import http.client

        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.kind} server exited with {self.proc.returncode}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=1)
                conn.request("GET", "/health")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"no {self.kind} server after 120 s")
            time.sleep(0.2)
        threading.Thread(target=self._watch, daemon=True).start()
        return self

    def _watch(self) -> None:
        while not self._watching.is_set():
            self.peak_rss = max(self.peak_rss, _tree_rss_bytes(self.proc.pid))
            time.sleep(0.25)

    def reset_peak(self) -> None:
        self.peak_rss = _tree_rss_bytes(self.proc.pid)

    def __exit__(self, *exc: Any) -> None:
        self._watching.set()
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


# ---------------------------------------------------------------------------- one client process
class _Protocol:
    """The messages of one server's sessions, as prepared client frames (`lean_ws.frame`)."""

    def __init__(self, kind: str, fold: bool = True, close_op: bool = False) -> None:
        self.openenv = kind == "openenv"
        self.fold, self.close_op = fold, close_op
        self.steps = tuple(frame(self._step(a)) for a in ACTIONS)

    def opening(self, seed: int) -> list[bytes]:
        """The first messages: a reset for OpenEnv (its socket is its session); for ours, the open
        with its reset folded in (one exchange), or the open and then the reset."""
        if self.openenv:
            return [self.reset(seed)]
        if self.fold:
            return [frame(json.dumps({"op": "open", "env_id": DIALOG, "reset": {"seed": seed}}).encode())]
        return [frame(json.dumps({"op": "open", "env_id": DIALOG}).encode()), self.reset(seed)]

    def reset(self, seed: int) -> bytes:
        if self.openenv:
            return frame(json.dumps({"type": "reset", "data": {}}).encode())
        return frame(json.dumps({"op": "reset", "seed": seed}).encode())

    def _step(self, action: str) -> bytes:
        if self.openenv:
            return json.dumps({"type": "step", "data": {"message": action}}).encode()
        return json.dumps({"op": "step", "action": action}).encode()

    def close(self) -> bytes | None:
        """The close op before the closing handshake (``--close-op``); else the socket's close
        alone closes the session, as OpenEnv's does."""
        return frame(b'{"op":"close"}') if self.close_op and not self.openenv else None

    def check(self, payload: bytes) -> bytes:
        """`payload`, unless it is an error answer (RuntimeError).

        Our answers are checked by their bytes: the server writes an error as ``{"error": ...}``
        and nothing else begins so. OpenEnv's small echo answers are parsed.
        """
        if self.openenv:
            out = json.loads(payload)
            if not isinstance(out, dict) or out.get("type") == "error":
                raise RuntimeError(f"answered {payload[:200]!r}")
        elif not (payload.startswith(b'{"obs"') or payload == b'{"closed":true}'
                  or (payload.startswith(b'{"session_id"') and (not self.fold or b',"reset":{"obs"' in payload))):
            raise RuntimeError(f"answered {payload[:200]!r}")
        return payload

    def ended(self, payload: bytes) -> bool:
        if self.openenv:
            return bool(json.loads(payload).get("data", {}).get("done"))
        # A step's answer is {"obs": <a string>, "reward": <a number>, "terminated": .., "truncated": ..,
        # "info": ..}: the first of each key is the answer's own (a JSON string holds no bare quote).
        return _flag(payload, b',"terminated":') or _flag(payload, b',"truncated":')


def _flag(payload: bytes, key: bytes) -> bool:
    at = payload.find(key)
    return at >= 0 and payload[at + len(key):at + len(key) + 1] == b"t"


async def _session(port: int, proto: _Protocol, seed: int, think_s: float, timeout_s: float,
                   steps: list[float]) -> tuple[bool, float, str]:
    """One session; (completed, seconds, the error if any). Step latencies go to `steps`."""
    start = time.perf_counter()
    ws: LeanSocket | None = None
    try:
        async with asyncio.timeout(timeout_s):
            ws = await connect("127.0.0.1", port, "/ws")
            for message in proto.opening(seed):
                proto.check(await ws.ask(message))
            for step in proto.steps:
                await asyncio.sleep(think_s)
                t = time.perf_counter()
                out = proto.check(await ws.ask(step))
                steps.append(time.perf_counter() - t)
                if proto.ended(out):  # a real episode may end early: the next step starts another
                    proto.check(await ws.ask(proto.reset(seed + 1)))
            if (closing := proto.close()) is not None:
                proto.check(await ws.ask(closing))
            await ws.shutdown()
        return True, time.perf_counter() - start, ""
    except Exception as exc:  # noqa: BLE001 - every failure is counted, by kind
        return False, time.perf_counter() - start, _failure(exc)
    finally:
        if ws is not None:
            ws.close()


def _failure(exc: BaseException) -> str:
    """A failure's kind: the exception's type, with the HTTP status of a refused handshake, or the
    place an assertion failed."""
    kind = type(exc).__name__
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status is not None:
        return f"{kind} {status}"
    if isinstance(exc, AssertionError) and exc.__traceback__ is not None:
        import traceback

        frame = traceback.extract_tb(exc.__traceback__)[-1]
        return f"{kind} at {Path(frame.filename).name}:{frame.lineno}"
    return kind


def _client_process(port: int, kind: str, seeds: list[int], think_s: float, timeout_s: float,
                    start_at: float, fold: bool, close_op: bool) -> dict[str, Any]:
    """A client process: its share of the sessions, all started at `start_at` (wall clock)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    proto = _Protocol(kind, fold, close_op)

    async def main() -> dict[str, Any]:
        await asyncio.sleep(max(0.0, start_at - time.time()))
        steps: list[float] = []
        results = await asyncio.gather(*(_session(port, proto, s, think_s, timeout_s, steps) for s in seeds))
        errors: dict[str, int] = {}
        for ok, _, err in results:
            if not ok:
                errors[err] = errors.get(err, 0) + 1
        return {"ok": sum(ok for ok, _, _ in results), "sessions": [s for ok, s, _ in results if ok],
                "steps": steps, "errors": errors}

    cpu0 = time.process_time()
    out = asyncio.run(main())
    out["cpu_s"] = time.process_time() - cpu0
    return out


def _percentile(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def run_grid_point(pool: ProcessPoolExecutor, server: Server, n: int, clients: int, think_s: float,
                   timeout_s: float) -> dict[str, Any]:
    """`n` sessions at once against `server`, from `clients` processes."""
    server.reset_peak()
    start_at = time.time() + 1.0
    cpu0 = _tree_cpu_s(server.proc.pid)
    shares = [list(range(i, n, clients)) for i in range(clients)]
    t0 = time.perf_counter()
    futures = [pool.submit(_client_process, server.port, server.kind, share, think_s, timeout_s, start_at,
                           server.fold, server.close_op)
               for share in shares if share]
    parts = [f.result() for f in futures]
    wall = time.perf_counter() - t0 - 1.0
    server_cpu = _tree_cpu_s(server.proc.pid) - cpu0
    steps = [x for p in parts for x in p["steps"]]
    sessions = [x for p in parts for x in p["sessions"]]
    errors: dict[str, int] = {}
    for p in parts:
        for k, v in p["errors"].items():
            errors[k] = errors.get(k, 0) + v
    ok = sum(p["ok"] for p in parts)
    return {"sessions": n, "success": ok / n, "step_p50_ms": 1e3 * _percentile(steps, 0.5),
            "step_p99_ms": 1e3 * _percentile(steps, 0.99), "session_p99_s": _percentile(sessions, 0.99),
            "steps_per_s": len(steps) / wall, "peak_rss_mib": server.peak_rss / 2**20,
            "server_cpu_s": server_cpu, "client_cpu_s": sum(p["cpu_s"] for p in parts), "errors": errors}


# ---------------------------------------------------------------------------- throughput without think time
def _throughput_process(port: int, sessions: int, start_at: float, seconds: float, fold: bool) -> tuple[int, float]:
    """`sessions` sessions stepping back to back for `seconds`; the steps done, and this process's
    CPU seconds meanwhile."""
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    proto = _Protocol("ours", fold)

    async def one(seed: int) -> int:
        ws = await connect("127.0.0.1", port, "/ws")
        try:
            for message in proto.opening(seed):
                proto.check(await ws.ask(message))
            await asyncio.sleep(max(0.0, start_at - time.time()))
            done = 0
            while time.time() < start_at + seconds:
                out = proto.check(await ws.ask(proto.steps[done % len(proto.steps)]))
                done += 1
                if proto.ended(out):
                    proto.check(await ws.ask(proto.reset(seed + done)))
            return done
        finally:
            ws.close()

    async def main() -> int:
        return sum(await asyncio.gather(*(one(s) for s in range(sessions))))

    cpu0 = time.process_time()
    steps = asyncio.run(main())
    return steps, time.process_time() - cpu0


def throughput(pool: ProcessPoolExecutor, server: Server, clients: int, per_client: int,
               seconds: float) -> tuple[float, float, float]:
    """Steps per second, and the server's and the clients' CPU microseconds per step."""
    start_at = time.time() + 3.0
    futures = [pool.submit(_throughput_process, server.port, per_client, start_at, seconds, server.fold)
               for _ in range(clients)]
    time.sleep(max(0.0, start_at - time.time()))
    cpu0 = _tree_cpu_s(server.proc.pid)
    parts = [f.result() for f in futures]
    cpu = _tree_cpu_s(server.proc.pid) - cpu0
    steps = sum(n for n, _ in parts)
    return steps / seconds, 1e6 * cpu / max(1, steps), 1e6 * sum(c for _, c in parts) / max(1, steps)


def throughput_rounds(pool: ProcessPoolExecutor, kinds: list[str],
                      args: argparse.Namespace) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """`throughput` of each server kind, `args.tput_rounds` rounds with the kinds alternating (a
    fresh server each time), so other jobs' load falls on every kind alike: the median of each
    figure per kind."""
    runs: dict[str, list[tuple[float, float, float]]] = {k: [] for k in kinds}
    for _ in range(args.tput_rounds if args.tput_seconds > 0 else 0):
        for kind in kinds:
            with Server(kind, args.openenv_python, 1024, fold=not args.separate_open) as server:
                run_grid_point(pool, server, 64, args.clients, 0.0, args.timeout_s)
                runs[kind].append(throughput(pool, server, args.tput_clients, args.tput_sessions, args.tput_seconds))
            print(f"{kind}: {runs[kind][-1][0]:,.0f} steps/s without think time, CPU per step: server "
                  f"{runs[kind][-1][1]:.0f} us, clients {runs[kind][-1][2]:.0f} us", flush=True)
    tput = {k: _median([r[0] for r in v]) for k, v in runs.items() if v}
    cpu_us = {k: (_median([r[1] for r in v]), _median([r[2] for r in v])) for k, v in runs.items() if v}
    args.tput_runs = {k: [r[0] for r in v] for k, v in runs.items() if v}
    return tput, cpu_us


def _median(xs: list[float]) -> float:
    xs = sorted(xs)
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


# ---------------------------------------------------------------------------- results
def _machine(load_start: tuple[float, ...]) -> str:
    def load(xs: tuple[float, ...]) -> str:
        return " ".join(f"{x:.1f}" for x in xs)

    return (f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}; load average (1, 5, 15 min) at the start {load(load_start)}, "
            f"at the end {load(os.getloadavg())}")


def _row(r: dict[str, Any]) -> str:
    errors = ", ".join(f"{k} {v}" for k, v in sorted(r["errors"].items())) or "-"
    return (f"| {r['server']} | {r['sessions']:,} | {r['rep']} | {100 * r['success']:.2f}% | {r['step_p50_ms']:.1f} | "
            f"{r['step_p99_ms']:.1f} | {r['session_p99_s']:.2f} | {r['steps_per_s']:,.0f} | "
            f"{r['peak_rss_mib']:,.0f} | {r['server_cpu_s']:.1f} | {r['client_cpu_s']:.1f} | {errors} |")


def _verdicts(rows: list[dict[str, Any]], think_s: float, tput: dict[str, float]) -> list[str]:
    out = []
    ours = [r for r in rows if r["server"] == "ours"]
    for n, what in ((4096, f"step P99 under {STEP_P99_BAR_S:g} s"), (8192, f"session P99 under {2 * 5 * think_s:g} s")):
        reps = [r for r in ours if r["sessions"] == n]
        if not reps:
            continue
        if n == 4096:
            met = all(r["success"] >= SUCCESS_BAR and r["step_p99_ms"] < 1e3 * STEP_P99_BAR_S for r in reps)
        else:
            met = all(r["success"] >= SUCCESS_BAR and r["session_p99_s"] < 2 * 5 * think_s for r in reps)
        out.append(f"- {n:,} sessions with the defaults, >= {100 * SUCCESS_BAR:g}% success and {what}, every "
                   f"repetition ({len(reps)}): **{'met' if met else 'not met'}** here.")
    if "ours-1" in tput and "ours" in tput:
        ratio = tput["ours"] / tput["ours-1"]
        out.append(f"- Steps per second without think time, one worker per core vs one worker: {tput['ours']:,.0f} vs "
                   f"{tput['ours-1']:,.0f} (**{ratio:.2f}x**; target at least 1.7x: {'met' if ratio >= 1.7 else 'not met'}"
                   " here).")
    return out


def write_results(rows: list[dict[str, Any]], tput: dict[str, float], cpu_us: dict[str, tuple[float, float]],
                  args: argparse.Namespace, notes: list[str]) -> None:
    lines = [BEGIN, "## Capacity on OpenEnv's grid", "",
             "Generated by `benchmarks/server/bench_capacity.py`; do not edit by hand.", "",
             f"Machine: {_machine(args.load_start)}. Each session: create, reset, {len(ACTIONS)} real Dialog-v0 steps "
             f"(OpenEnv: its echo env) with {args.think_s:g} s of think time before each, close; all sessions start "
             f"at once, from {args.clients} client processes on the same machine (`lean_ws` clients; our create and "
             f"reset {'in two exchanges' if args.separate_open else 'in one exchange, the folded open'}; the "
             f"close {'our close op, then' if args.close_op else 'is'} the WebSocket's closing handshake). `ours`: "
             "`agentgym serve` with its defaults (one worker per core, each pinned to its core); `ours-1`: one "
             "worker; `openenv`: OpenEnv's own server, echo env. Server CPU: the server's process tree; client "
             "CPU: the client processes; both over the grid point.", "",
             *_verdicts(rows, args.think_s, tput), "",
             "| server | sessions | rep | success | step P50 ms | step P99 ms | session P99 s | steps/s | "
             "peak RSS MiB | server CPU s | client CPU s | errors |", "|---|---|---|---|---|---|---|---|---|---|---|---|",
             *(_row(r) for r in rows), ""]
    if tput:
        each = "; ".join(f"`{k}` " + ", ".join(f"{x:,.0f}" for x in v) for k, v in args.tput_runs.items())
        lines += [f"Steps per second without think time ({args.tput_clients} client processes x "
                  f"{args.tput_sessions} sessions, {args.tput_seconds:g} s, real Dialog-v0 steps; median of "
                  f"{args.tput_rounds} rounds with the servers alternating, each round {each}): "
                  + ", ".join(f"`{k}` {v:,.0f} (CPU per step: server {cpu_us[k][0]:.0f} us, clients {cpu_us[k][1]:.0f} us)"
                             for k, v in tput.items())
                  + ". On a machine shared with other jobs the server CPU per step is the steadier figure.", ""]
    lines += [*notes, *(f"{note}\n" for note in args.note), END]
    write_block(BEGIN, END, lines)


def write_block(begin: str, end: str, lines: list[str]) -> None:
    """Put `lines` (from `begin` to `end`) in RESULTS.md in place of that block, or after the rest."""
    block = "\n".join(lines) + "\n"
    text = RESULTS.read_text() if RESULTS.exists() else ""
    if begin in text:
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1].lstrip("\n")
    else:
        text = text.rstrip("\n") + "\n\n" + block
    RESULTS.write_text(text)
    print(block)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grid", default=",".join(map(str, GRID)), help="session counts, comma-separated")
    parser.add_argument("--ours-extra", default="8192", help="more session counts for `ours` only (the issue's "
                                                             "8,192-session target)")
    parser.add_argument("--reps", type=int, default=3, help="repetitions of each point (default: 3)")
    parser.add_argument("--servers", default="ours,ours-1,openenv", help="servers: ours, ours-1, openenv")
    parser.add_argument("--think-s", type=float, default=1.0, help="think time before each step (default: 1)")
    parser.add_argument("--clients", type=int, default=4, help="client processes (default: 4)")
    parser.add_argument("--timeout-s", type=float, default=120.0, help="a session's time limit (default: 120)")
    parser.add_argument("--openenv-python", default="/tmp/openenv-venv/bin/python",
                        help="a Python with openenv-core (default: /tmp/openenv-venv/bin/python)")
    parser.add_argument("--tput-clients", type=int, default=4, help="client processes of the throughput run")
    parser.add_argument("--tput-sessions", type=int, default=16, help="sessions per throughput client process")
    parser.add_argument("--tput-seconds", type=float, default=10.0, help="seconds of the throughput run (0: none)")
    parser.add_argument("--tput-rounds", type=int, default=3, help="throughput rounds, the servers alternating")
    parser.add_argument("--separate-open", action="store_true", help="open and reset in two exchanges (a server "
                                                                         "without the folded open)")
    parser.add_argument("--close-op", action="store_true", help="send our close op before the closing handshake "
                                                                    "(default: the socket's close closes the session)")
    parser.add_argument("--no-write", action="store_true", help="print the results, leave RESULTS.md alone")
    parser.add_argument("--note", action="append", default=[], help="a paragraph to add under the results "
                                                                      "(what the run's figures mean)")
    args = parser.parse_args()
    args.load_start = os.getloadavg()
    grid = [int(x) for x in args.grid.split(",") if x]
    servers = [s for s in args.servers.split(",") if s]
    notes: list[str] = []
    if "openenv" in servers and not Path(args.openenv_python).exists():
        notes.append(f"OpenEnv was not measured: {args.openenv_python} does not exist (python3 -m venv "
                     "/tmp/openenv-venv && /tmp/openenv-venv/bin/pip install openenv-core).")
        servers.remove("openenv")
    rows: list[dict[str, Any]] = []
    with ProcessPoolExecutor(max(args.clients, args.tput_clients), mp_context=get_context("spawn")) as pool:
        for kind in servers:
            with Server(kind, args.openenv_python, max(grid, default=64) * 2, fold=not args.separate_open,
                        close_op=args.close_op) as server:
                # Warm every worker (imports, the first envs) before anything is timed.
                run_grid_point(pool, server, 64, args.clients, 0.0, args.timeout_s)
                extra = [int(x) for x in args.ours_extra.split(",") if x] if kind == "ours" else []
                for n in grid + extra:
                    for rep in range(1, args.reps + 1):
                        row = {"server": kind, "rep": rep,
                               **run_grid_point(pool, server, n, args.clients, args.think_s, args.timeout_s)}
                        rows.append(row)
                        print(_row(row), flush=True)
        tput, cpu_us = throughput_rounds(pool, [s for s in servers if s != "openenv"], args)
    if not args.no_write:
        write_results(rows, tput, cpu_us, args, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
