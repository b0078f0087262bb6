"""Env-server benchmark: step round trip with one client, and steps per second with 8 concurrent
clients, over loopback, for HTTP and WebSocket; side by side with OpenEnv's WebSocket server on
the same machine. Writes `benchmarks/server/RESULTS.md` (and, with ``--json PATH``, the figures and
the targets' verdicts for `benchmarks/peers/run.py` to read).

    .venv/bin/python benchmarks/server/bench_server.py [--openenv-python /tmp/openenv-venv/bin/python]

With the defaults (3 rounds, 3,000 timed steps per round trip, 10 s per 8-client run) it takes
about 12 minutes on two idle cores: each round measures 13 servers-and-clients combinations,
each throughput run after a 5 s start so that every client is connected and warm.

Every server runs in its own process; every client runs in its own process (8 for the
concurrent runs), so no two share a GIL. The OpenEnv side needs openenv-core in a separate
virtual environment (a benchmark-only dependency); without it that column says why.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RESULTS = HERE / "RESULTS.md"
#: The server issue's targets: one-client WebSocket round trip, and 8 clients against OpenEnv.
ROUND_TRIP_TARGET_US = 250.0
THROUGHPUT_TARGET_RATIO = 1.5
ECHO_ID = "Bench/Echo-v0"
DIALOG = "AgentRL/Dialog-v0"
ACTION = "Hello! What are you looking for, and in which area?"
#: `ServerConfig.env_calls`, both measured.
MODES = ("thread", "inline")
OUR_CLIENTS = ("ours-ws-raw", "RemoteEnv-ws", "RemoteEnv-http")
ROW_NAMES = {"ours-ws-raw": ("bare WebSocket client", "WebSocket"),
             "RemoteEnv-ws": ("`RemoteEnv(transport='ws')`", "WebSocket"),
             "RemoteEnv-http": ("`RemoteEnv(transport='http')`", "HTTP/1.1 keep-alive"),
             "openenv-ws-raw": ("OpenEnv, bare WebSocket client", "WebSocket")}
WS_CLIENTS = tuple(c for c in OUR_CLIENTS if ROW_NAMES[c][1] == "WebSocket")


# ---------------------------------------------------------------------------- servers
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 120.0) -> None:
    import http.client

    host, port = url.removeprefix("http://").split(":")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {proc.stderr.read().decode()[-3000:]}")
        try:
            conn = http.client.HTTPConnection(host, int(port), timeout=1)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"no server at {url} after {timeout_s} s")


class Server:
    def __init__(self, argv: list[str]) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([*argv, str(self.port)], cwd=ROOT, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)

    def __enter__(self) -> Server:
        _wait(self.url, self.proc)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.proc.terminate()
        self.proc.wait(10)


# ---------------------------------------------------------------------------- clients (one process each)
def _ours_ws_raw(url: str, env_id: str) -> tuple[Callable[[], None], Callable[[], None]]:
    """A bare WebSocket client on our protocol: the same code as the OpenEnv one below."""
    import http.client

    from websockets.sync.client import connect

    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port))
    conn.request("POST", "/sessions", json.dumps({"env_id": env_id}), {"Content-Type": "application/json"})
    sid = json.loads(conn.getresponse().read())["session_id"]
    ws = connect(f"ws://{host}:{port}/sessions/{sid}/ws", compression=None, max_size=None).__enter__()
    ws.send(json.dumps({"op": "reset", "seed": 0}))
    ws.recv()
    step = json.dumps({"op": "step", "action": ACTION})
    seed = [0]

    def call() -> None:
        ws.send(step)
        out = json.loads(ws.recv())
        if "error" in out:
            raise RuntimeError(f"the server answered {out['error']}")
        if out["terminated"] or out["truncated"]:  # as RemoteEnv below: the reset is part of the cost
            seed[0] += 1
            ws.send(json.dumps({"op": "reset", "seed": seed[0]}))
            json.loads(ws.recv())

    return call, ws.close


def _openenv_ws_raw(url: str, env_id: str) -> tuple[Callable[[], None], Callable[[], None]]:
    from websockets.sync.client import connect

    ws = connect("ws" + url.removeprefix("http") + "/ws", compression=None, max_size=None).__enter__()
    ws.send(json.dumps({"type": "reset", "data": {}}))
    ws.recv()
    step = json.dumps({"type": "step", "data": {"message": ACTION}})

    def call() -> None:
        ws.send(step)
        json.loads(ws.recv())

    return call, ws.close


def _remote_env(transport: str) -> Callable[[str, str], tuple[Callable[[], None], Callable[[], None]]]:
    def make(url: str, env_id: str) -> tuple[Callable[[], None], Callable[[], None]]:
        from agentgym.server.client import RemoteEnv

        env = RemoteEnv(url, env_id, transport=transport)
        env.reset(seed=0)
        seed = [0]

        def call() -> None:
            # The Dialog episode ends after its turn budget: the reset then is part of the cost.
            if env.step(ACTION)[2:4] != (False, False):
                seed[0] += 1
                env.reset(seed=seed[0])

        return call, env.close

    return make


CLIENTS: dict[str, Callable[[str, str], tuple[Callable[[], None], Callable[[], None]]]] = {
    "ours-ws-raw": _ours_ws_raw,
    "openenv-ws-raw": _openenv_ws_raw,
    "RemoteEnv-ws": _remote_env("ws"),
    "RemoteEnv-http": _remote_env("http"),
}


def _latency_worker(client: str, url: str, env_id: str, n: int) -> list[float]:
    call, close = CLIENTS[client](url, env_id)
    for _ in range(min(500, n)):
        call()
    times = []
    for _ in range(n):
        t = time.perf_counter_ns()
        call()
        times.append((time.perf_counter_ns() - t) / 1000)
    close()
    return times


def _warm() -> None:
    import websockets.sync.client  # noqa: F401

    import agentgym.server.client  # noqa: F401


def _throughput_worker(client: str, url: str, env_id: str, start_at: float, seconds: float) -> int:
    call, close = CLIENTS[client](url, env_id)
    for _ in range(200):
        call()
    if time.time() > start_at:
        raise RuntimeError("a client was not ready when the clock started; the machine is too busy")
    while time.time() < start_at:
        time.sleep(0.001)
    end = start_at + seconds
    done = 0
    while time.time() < end:
        call()
        done += 1
    close()
    return done


def latency(pool: ProcessPoolExecutor, client: str, url: str, env_id: str, n: int) -> dict[str, float]:
    times = pool.submit(_latency_worker, client, url, env_id, n).result()
    times.sort()
    return {"median_us": statistics.median(times), "p90_us": times[int(0.9 * len(times))],
            "mean_us": statistics.fmean(times)}


def _cpu_s(pid: int) -> float:
    """User plus system CPU seconds of process `pid` so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def throughput(pool: ProcessPoolExecutor, client: str, server: Server, env_id: str, clients: int,
               seconds: float) -> dict[str, float]:
    """Steps per second of `clients` concurrent clients, and the server's CPU time per step."""
    start_at = time.time() + 5.0  # every client connected and warm before the clock starts
    futures = [pool.submit(_throughput_worker, client, server.url, env_id, start_at, seconds) for _ in range(clients)]
    while time.time() < start_at:
        time.sleep(0.001)
    cpu0 = _cpu_s(server.proc.pid)
    steps = sum(f.result() for f in futures)
    cpu = _cpu_s(server.proc.pid) - cpu0
    return {"steps_per_s": steps / seconds, "server_cpu_us_per_step": cpu / max(1, steps) * 1e6}


# ---------------------------------------------------------------------------- main
def in_process_step_us(env_id: str, n: int = 3000) -> float:
    import gymnasium as gym

    env = gym.make(env_id)
    env.reset(seed=0)
    seed = 0
    t = time.perf_counter()
    for _ in range(n):
        if env.step(ACTION)[2:4] != (False, False):
            seed += 1
            env.reset(seed=seed)
    return (time.perf_counter() - t) / n * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--openenv-python", default="/tmp/openenv-venv/bin/python",
                        help="a Python with openenv-core installed (default: /tmp/openenv-venv/bin/python)")
    parser.add_argument("--steps", type=int, default=3000, help="timed steps for the one-client round trip")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each 8-client run")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds; the median is reported")
    parser.add_argument("--results", type=Path, default=RESULTS, help="Markdown file to write (default: %(default)s)")
    parser.add_argument("--json", type=Path, default=None,
                        help="also write the figures and the targets' verdicts here, as JSON")
    args = parser.parse_args()

    sys.path.insert(0, str(HERE))
    from echo_env import register

    import agentgym  # noqa: F401

    register()
    openenv_error = _openenv_problem(args.openenv_python)

    rows: dict[str, list[Any]] = {}

    def add(key: str, value: Any) -> None:
        rows.setdefault(key, []).append(value)

    ctx = get_context("spawn")
    with ProcessPoolExecutor(args.clients, mp_context=ctx) as pool:
        for f in [pool.submit(_warm) for _ in range(4 * args.clients)]:
            f.result()
        for r in range(args.rounds):
            print(f"round {r + 1}/{args.rounds}", flush=True)
            for mode in MODES:
                with Server([sys.executable, str(HERE / "echo_env.py"), mode]) as ours:
                    for client in OUR_CLIENTS:
                        for env_id in (ECHO_ID, DIALOG):
                            key = f"{mode}|{client}|{env_id}"
                            add("lat|" + key, latency(pool, client, ours.url, env_id, args.steps))
                            add("tput|" + key, throughput(pool, client, ours, env_id, args.clients, args.seconds))
            if openenv_error is None:
                with Server([args.openenv_python, str(HERE / "openenv_echo_server.py")]) as theirs:
                    key = f"openenv|openenv-ws-raw|{ECHO_ID}"
                    add("lat|" + key, latency(pool, "openenv-ws-raw", theirs.url, ECHO_ID, args.steps))
                    add("tput|" + key, throughput(pool, "openenv-ws-raw", theirs, ECHO_ID, args.clients, args.seconds))

    summary = {k: {m: statistics.median(x[m] for x in v) for m in v[0]} for k, v in rows.items()}
    context = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "load_average": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "in_process_step_us": {env_id: round(in_process_step_us(env_id), 1) for env_id in (ECHO_ID, DIALOG)},
    }
    targets = target_figures(summary)
    write_results(summary, context, targets, args, openenv_error)
    if args.json:
        write_json(args.json, summary, context, targets, args, openenv_error)
    print(args.results.read_text())
    return 0


def target_figures(s: dict[str, Any]) -> list[dict[str, Any]]:
    """Per `env calls` mode: the best WebSocket round trip, and our concurrent clients' steps per
    second over OpenEnv's (None without OpenEnv), each with whether it meets its target."""
    theirs = s.get(f"tput|openenv|openenv-ws-raw|{ECHO_ID}")
    out = []
    for mode in MODES:
        round_trip, client = min((s[f"lat|{mode}|{c}|{ECHO_ID}"]["median_us"], c) for c in WS_CLIENTS)
        ours = s[f"tput|{mode}|ours-ws-raw|{ECHO_ID}"]
        row: dict[str, Any] = {"mode": mode, "round_trip_us": round_trip, "round_trip_client": ROW_NAMES[client][0],
                               "round_trip_met": round_trip <= ROUND_TRIP_TARGET_US,
                               "steps_per_s": ours["steps_per_s"], "openenv_steps_per_s": None, "ratio": None,
                               "cpu_ratio": None, "ratio_met": None}
        if theirs:
            row["openenv_steps_per_s"] = theirs["steps_per_s"]
            row["ratio"] = ours["steps_per_s"] / theirs["steps_per_s"]
            row["cpu_ratio"] = theirs["server_cpu_us_per_step"] / ours["server_cpu_us_per_step"]
            row["ratio_met"] = row["ratio"] >= THROUGHPUT_TARGET_RATIO
        out.append(row)
    return out


def write_json(path: Path, s: dict[str, Any], ctx: dict[str, Any], targets: list[dict[str, Any]],
               args: argparse.Namespace, openenv_error: str | None) -> None:
    settings = {"rounds": args.rounds, "steps": args.steps, "seconds": args.seconds, "clients": args.clients}
    data = {"context": ctx, "settings": settings, "targets": targets, "target_round_trip_us": ROUND_TRIP_TARGET_US,
            "target_ratio": THROUGHPUT_TARGET_RATIO, "openenv_error": openenv_error, "summary": s}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")


def _openenv_problem(python: str) -> str | None:
    if not Path(python).exists():
        return f"{python} does not exist (create it: python3 -m venv /tmp/openenv-venv && " \
               "/tmp/openenv-venv/bin/pip install openenv-core)"
    probe = subprocess.run([python, "-c", "import openenv.core.env_server.http_server"], capture_output=True, text=True)
    if probe.returncode:
        return probe.stderr.strip().splitlines()[-1]
    return None


def _versions() -> str:
    from importlib.metadata import version

    return ", ".join(f"{p} {version(p)}" for p in ("fastapi", "uvicorn", "websockets", "starlette", "pydantic"))


def write_results(s: dict[str, Any], ctx: dict[str, Any], targets: list[dict[str, Any]], args: argparse.Namespace,
                  openenv_error: str | None) -> None:
    def cell(kind: str, key: str) -> str:
        v = s.get(f"{kind}|{key}")
        if v is None:
            return "-"
        if kind == "lat":
            return f"{v['median_us']:.0f} / {v['p90_us']:.0f}"
        return f"{v['steps_per_s']:,.0f} ({v['server_cpu_us_per_step']:.0f} us)"

    def table(kind: str) -> list[str]:
        out = ["| client | transport | env calls | echo env | Dialog-v0 |", "|---|---|---|---|---|"]
        for mode, client in [(m, c) for m in MODES for c in OUR_CLIENTS] + [("openenv", "openenv-ws-raw")]:
            name, transport = ROW_NAMES[client]
            out.append(f"| {name} | {transport} | {mode if mode != 'openenv' else '(OpenEnv)'} | "
                       f"{cell(kind, f'{mode}|{client}|{ECHO_ID}')} | {cell(kind, f'{mode}|{client}|{DIALOG}')} |")
        return out

    def met(ok: bool) -> str:
        return "met" if ok else "not met here"

    verdicts = []
    for t in targets:
        line = (f"- env calls `{t['mode']}`: one-client round trip {t['round_trip_us']:.0f} us "
                f"({t['round_trip_client']}, echo env; target at most {ROUND_TRIP_TARGET_US:g} us: "
                f"{met(t['round_trip_met'])})")
        if t["ratio"] is not None:
            line += (f"; {args.clients} clients, WebSocket, echo env: **{t['ratio']:.2f}x** OpenEnv's steps per "
                     f"second (target at least {THROUGHPUT_TARGET_RATIO:g}x: {met(t['ratio_met'])}), and OpenEnv's "
                     f"server spends {t['cpu_ratio']:.2f}x our CPU time per step")
        verdicts.append(line + ".")
    lines = [
        "# Env server benchmark",
        "",
        "Generated by `benchmarks/server/bench_server.py`; do not edit by hand.",
        "",
        f"Machine: {ctx['machine']}; Python {ctx['python']}; {_versions()}. Load average at the end: "
        f"{ctx['load_average']}; other jobs shared this machine, so wall-clock figures are pessimistic and noisy "
        "(the server CPU time per step is the steadier measure).",
        f"Median of {args.rounds} rounds; {args.steps} timed steps per round-trip figure, {args.seconds:g} s per "
        f"throughput figure with {args.clients} client processes. Loopback; each server is one process, each "
        "client its own process (one worker: `--workers 1`). `env calls` is `ServerConfig.env_calls`: `thread` "
        "runs each session's env on its own thread, `inline` (the default) on the event loop under a watchdog.",
        "",
        f"Env step in process, for scale: echo {ctx['in_process_step_us'][ECHO_ID]} us, Dialog-v0 "
        f"{ctx['in_process_step_us'][DIALOG]} us (a chat turn, with a reset when an episode ends).",
        "",
        "## Verdict",
        "",
        *verdicts,
        "",
        "## Step round trip, one client (median / p90, microseconds)",
        "",
        *table("lat"),
        "",
        f"## Steps per second, {args.clients} concurrent clients (server CPU time per step)",
        "",
        *table("tput"),
        "",
        "## Side by side",
        "",
    ]
    if openenv_error:
        lines.append(f"OpenEnv was not measured: {openenv_error}")
    else:
        lines.append(
            "OpenEnv: `openenv-core` in its own virtual environment, serving the echo env of its `openenv init` "
            "template (`benchmarks/server/openenv_echo_server.py`) with its `create_app` on uvicorn. Our server "
            "serves the same echo behaviour (`benchmarks/server/echo_env.py`). Both are driven by the same bare "
            "WebSocket client loop (send one JSON step, wait for the answer), so the clients cost the same and the "
            "difference is the servers'. Both run uvicorn's default WebSocket implementation (websockets-sansio).")
    # The sections of bench_capacity.py and bench_ray.py (from the first of them on) are kept as they were.
    old = args.results.read_text() if args.results.exists() else ""
    starts = [old.index(b) for b in ("<!-- capacity: begin", "<!-- ray: begin") if b in old]
    kept = "\n" + old[min(starts):] if starts else ""
    args.results.write_text("\n".join(lines) + "\n" + kept)


if __name__ == "__main__":
    sys.exit(main())
