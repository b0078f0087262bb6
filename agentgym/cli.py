"""The `agentgym` command: list and check environments, run agents, print the agents' table.

Each subcommand keeps its options in one place (its `add_*` function) and its logic in the
library, so `agentgym run` and `python -c "..."` give the same numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Sequence

__all__ = ["main", "build_parser"]

_BUILTIN_AGENTS = ("random", "heuristic", "oracle")


def _env_ids() -> list[str]:
    import gymnasium as gym

    import agentgym  # noqa: F401  (registers the ids)

    return sorted(i for i in gym.registry if i.startswith("AgentRL/") and "Remote" not in i)


def _make_env(env_id: str, args: argparse.Namespace) -> Any:
    import gymnasium as gym

    import agentgym  # noqa: F401

    kwargs: dict[str, Any] = {}
    for key in ("difficulty", "split", "domain"):
        value = getattr(args, key, None)
        if value is not None:
            kwargs[key] = value
    return gym.make(env_id, **kwargs)


def cmd_list(args: argparse.Namespace) -> int:
    """Print every registered id with the first line of its card."""
    import gymnasium as gym

    for env_id in _env_ids():
        spec = gym.spec(env_id)
        # Every id goes through the noise factory; the family's own class is its kwarg.
        entry = spec.kwargs.get("env_entry_point") or (
            spec.entry_point if isinstance(spec.entry_point, str) else repr(spec.entry_point))
        print(f"{env_id:24s} {entry}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Run the conformance checks on one id (or every id)."""
    from agentgym.testing import check_agent_env

    ids = _env_ids() if args.env == "all" else [args.env]
    failed = 0
    for env_id in ids:
        try:
            check_agent_env(env_id)
        except AssertionError as exc:
            failed += 1
            print(f"FAIL {env_id}: {exc}")
        else:
            print(f"ok   {env_id}")
    return 1 if failed else 0


def run_agent(env_id: str, agent_name: str, episodes: int, seed: int, args: argparse.Namespace,
              progress: bool = True) -> dict[str, Any]:
    """Play `episodes` episodes (seeds seed, seed+1, ...) and summarise them."""
    from agentgym.agents import make_agent
    from agentgym.eval.episode import run_episode
    from agentgym.eval.progress import Progress

    env = _make_env(env_id, args)
    agent = make_agent(agent_name)
    results = []
    by_difficulty: dict[str, list[bool]] = {}
    with Progress(total=episodes, desc=f"{agent_name} on {env_id}", enabled=progress) as bar:
        for i in range(episodes):
            r = run_episode(env, agent, seed + i)
            results.append(r)
            by_difficulty.setdefault(r.episode["task"]["difficulty"], []).append(r.success)
            bar.update(success=sum(x.success for x in results) / len(results))
    env.close()
    n = len(results)
    return {
        "env": env_id,
        "agent": agent_name,
        "episodes": n,
        "seed": seed,
        "success_rate": sum(r.success for r in results) / n,
        "mean_score": sum(r.score for r in results) / n,
        "mean_turns": sum(r.episode["turns"] for r in results) / n,
        "success_by_difficulty": {d: sum(by_difficulty[d]) / len(by_difficulty[d])
                                  for d in ("easy", "medium", "hard") if d in by_difficulty},
    }


def cmd_run(args: argparse.Namespace) -> int:
    """Play an agent on one env and print its success rate and mean score."""
    summary = run_agent(args.env, args.agent, args.episodes, args.seed, args, progress=not args.json)
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    else:
        print(f"{summary['agent']} on {summary['env']}: success {summary['success_rate']:.1%}, "
              f"mean score {summary['mean_score']:.3f}, mean turns {summary['mean_turns']:.1f} "
              f"over {summary['episodes']} episodes (seeds {args.seed}..{args.seed + args.episodes - 1})")
        for d, v in summary["success_by_difficulty"].items():
            print(f"  {d:7s} success {v:.1%}")
    return 0


def cmd_bench_agents(args: argparse.Namespace) -> int:
    """Run the built-in agents on every id and print one table."""
    rows = []
    for env_id in _env_ids():
        for agent in args.agents:
            rows.append(run_agent(env_id, agent, args.episodes, args.seed, args, progress=True))
    diffs = ("easy", "medium", "hard")
    header = f"| {'env':22s} | {'agent':9s} | success | score | turns | " + " | ".join(f"{d:6s}" for d in diffs) + " |"
    print()
    print(header)
    print("|" + "|".join("-" * (len(c) + 0) for c in header.split("|")[1:-1]) + "|")
    for r in rows:
        by = r["success_by_difficulty"]
        cells = " | ".join(f"{by[d]:6.1%}" if d in by else f"{'-':6s}" for d in diffs)
        print(f"| {r['env']:22s} | {r['agent']:9s} | {r['success_rate']:7.1%} | {r['mean_score']:5.3f} | "
              f"{r['mean_turns']:5.1f} | {cells} |")
    print(f"\n{args.episodes} episodes per row, seeds {args.seed}..{args.seed + args.episodes - 1}, "
          f"split {args.split or 'train'}.")
    return 0


def _parse_kv(pairs: Sequence[str] | None, what: str) -> dict[str, Any]:
    """``["k=v", ...]`` to a dict; values parse as JSON when they can (numbers, true, lists)."""
    out: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"{what} must look like key=value, got {pair!r}")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def _agent_spec(args: argparse.Namespace) -> Any:
    from agentgym.eval.runner import AgentSpec

    kwargs = _parse_kv(args.agent_arg, "--agent-arg")
    # Shorthands for the LLM agents' most used settings.
    for flag, key in (("model", "model"), ("base_url", "base_url"), ("api_key_env", "api_key_env"),
                      ("checkpoint", "checkpoint")):
        value = getattr(args, flag, None)
        if value is not None:
            kwargs[key] = value
    return AgentSpec(args.agent, tuple(sorted(kwargs.items())))


def _run_options(args: argparse.Namespace) -> dict[str, Any]:
    return {"workers": args.workers, "backend": args.backend, "timeout_s": args.timeout,
            "concurrency": args.concurrency, "ray_address": args.ray_address, "remote": args.remote}


def cmd_eval(args: argparse.Namespace) -> int:
    """Evaluate an agent on one env: records to a JSONL file, a summary with CIs on stdout."""
    from pathlib import Path

    from agentgym.eval.records import read_records
    from agentgym.eval.report import summary_line
    from agentgym.eval.runner import EpisodeJob, run_jobs

    kwargs = {k: v for k, v in (("split", args.split), ("difficulty", args.difficulty), ("domain", args.domain))
              if v is not None}
    noise = None if args.noise in (None, "none") else args.noise
    _check_noise(args.env, noise)
    jobs = [EpisodeJob(args.env, seed=args.seed + i, trial=t, noise=noise, kwargs=tuple(sorted(kwargs.items())))
            for i in range(args.episodes) for t in range(args.trials)]
    out = Path(args.out or f"runs/eval/{args.env.replace('/', '_')}-{args.agent.replace(':', '_')}.jsonl")
    summary = run_jobs(jobs, _agent_spec(args), out, progress=not args.json, **_run_options(args))
    keys = {j.key for j in jobs}
    records = [r for r in read_records(out) if r["key"] in keys]
    line = summary_line(records)
    line.update({"records": str(out), "ran": summary.ran, "resumed": summary.skipped,
                 "agent_errors": summary.agent_errors})
    if args.json:
        print(json.dumps(line, sort_keys=True))
    else:
        print(f"{args.agent} on {args.env} (noise {args.noise or 'none'}): "
              f"success {line['success']:.1%} [{line['success_ci'][0]:.1%}, {line['success_ci'][1]:.1%}], "
              f"mean score {line['score']:.3f} over {line['n']} episodes; "
              f"{summary.ran} run now, {summary.skipped} already in {out}; {summary.agent_errors} agent errors")
    return 0


def _check_noise(env_id: str, noise: str | None) -> None:
    if noise is None:
        return
    from agentgym.noise.spec import parse_noise

    parse_noise(noise)  # a malformed spec is a clear error before any episode runs


def cmd_bench(args: argparse.Namespace) -> int:
    """Run a suite for an agent into DIR, then print and write its report (or, with --sealed, play
    it on a board that steps every episode itself)."""
    from pathlib import Path

    from agentgym.bench.run import run_suite
    from agentgym.eval.report import write_report

    if args.sealed:
        return _bench_sealed(args)
    for flag in ("revision", "org", "token_file", "description"):
        if getattr(args, flag):
            raise ValueError(f"--{flag.replace('_', '-')} is for a sealed run (--sealed URL)")
    out = Path(args.out or f"runs/{args.suite}/{args.agent.replace(':', '_')}")
    summary = run_suite(args.suite, _agent_spec(args), out, progress=True, **_run_options(args))
    print(f"{args.agent} on {args.suite}: {summary.ran} episodes run, {summary.skipped} resumed, "
          f"{summary.agent_errors} agent errors -> {out}")
    if not args.no_report:
        write_report([out], out / "report", show=True)
    return 0


def _bench_sealed(args: argparse.Namespace) -> int:
    """``bench SUITE --sealed URL``: a sealed run, played on the board, ranked in its sealed track."""
    import inspect
    from pathlib import Path

    from agentgym.agents import agent_class
    from agentgym.eval.runner import AgentSpec
    from agentgym.leaderboard.sealed.client import SealedError, SealedTarget, read_token, refuse_privileged, run_sealed

    if not args.model or not args.revision:
        raise ValueError("a sealed run names its entry: give --model MODEL and --revision REVISION")
    cls = agent_class(args.agent)
    try:
        refuse_privileged(cls, args.agent)  # before the agent is even made
        token = read_token(args.token_file)
    except SealedError as exc:
        print(f"agentgym: {exc}", file=sys.stderr)
        return 2
    spec = _agent_spec(args)
    # --model names the entry; an agent that takes a model gets it too (openai, transformers).
    params = inspect.signature(cls).parameters
    takes_model = "model" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    if not takes_model:
        spec = AgentSpec(spec.name, tuple((k, v) for k, v in spec.kwargs if k != "model"))
    out = Path(args.out or f"runs/{args.suite}/{args.agent.replace(':', '_')}-sealed")
    target = SealedTarget(url=args.sealed, token=token, model=args.model, revision=args.revision,
                          organisation=args.org, description=args.description or "")
    try:
        final = run_sealed(args.suite, spec, target, out, concurrency=args.concurrency, timeout_s=args.timeout)
    except SealedError as exc:
        print(f"agentgym: {exc}", file=sys.stderr)
        return 1
    if final["state"] != "complete" or not final.get("entry"):
        print(f"agentgym: sealed run {final.get('run_id')} ended {final['state']}: {final.get('reason')}",
              file=sys.stderr)
        return 1
    entry = final["entry"]
    success = (entry["summary"].get("success") or {}).get("value")
    shown = f", success {success:.1%}" if isinstance(success, (int, float)) else ""
    print(f"{args.agent} on {args.suite} (sealed): entry {entry['id']}{shown} over {entry['episodes']} episodes "
          f"played on the board in {final['played_s']:.1f} s; records with their seeds: {args.sealed.rstrip('/')}"
          f"{entry['records_url']}")
    if final.get("records_file"):
        print(f"replay them yourself: agentgym leaderboard verify {final['records_file']}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """Tables (stdout, CSV, Markdown) and PNG plots from one or more run folders."""
    from pathlib import Path

    from agentgym.eval.report import write_report

    runs = [Path(r) for r in args.runs]
    out = Path(args.out) if args.out else (runs[0] / "report" if len(runs) == 1 else Path("runs/report"))
    write_report(runs, out, show=True)
    return 0


def _add_run_options(p: argparse.ArgumentParser) -> None:
    import os

    p.add_argument("--agent", default="heuristic",
                   help="a built-in agent (random, heuristic, oracle, transformers, openai, ppo) or module:Class "
                        "(default: heuristic)")
    p.add_argument("--agent-arg", action="append", metavar="KEY=VALUE",
                   help="an agent constructor argument (repeatable; values parse as JSON when they can)")
    p.add_argument("--model", default=None, help="model path (transformers) or name (openai): --agent-arg model=...")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible server URL (openai agent)")
    p.add_argument("--api-key-env", default=None, help="environment variable holding the API key (openai agent)")
    p.add_argument("--checkpoint", default=None, help="a trained policy's checkpoint (ppo agent)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                   help="processes for the process backend (default: the number of cores)")
    p.add_argument("--backend", choices=("process", "async", "ray"), default="process",
                   help="process pool (default), asyncio for I/O-bound agents, or a Ray cluster")
    p.add_argument("--concurrency", type=int, default=8, help="concurrent episodes for --backend async")
    p.add_argument("--ray-address", default=None, help="Ray cluster address (default: start a local one)")
    p.add_argument("--timeout", type=float, default=300.0, help="per-episode limit in seconds (default: 300)")
    p.add_argument("--remote", default=None, metavar="URL",
                   help="step the envs on an env server (agentgym serve) at URL instead of in process")


def _add_env_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--difficulty", choices=("easy", "medium", "hard"), default=None,
                   help="fix the difficulty (default: drawn per episode)")
    p.add_argument("--split", choices=("train", "test"), default=None,
                   help="the task split (default: the env's, train)")
    p.add_argument("--domain", default=None, help="fix the domain (default: drawn from the split's domains)")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `agentgym` command."""
    parser = argparse.ArgumentParser(
        prog="agentgym",
        description="Gymnasium environments and a benchmark for agentic RL with language-model agents.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("list", help="list the registered environment ids")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("check", help="run the env-contract conformance checks on an id",
                       description="gymnasium's check_env plus agentgym's stricter checks "
                                   "(replay in a fresh process, garbage actions, step after end).")
    p.add_argument("env", help="an id such as AgentRL/Dialog-v0, or 'all'")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("run", help="play an agent on an env and print success rate and mean score",
                       description="Play N episodes with seeds SEED, SEED+1, ... and summarise them.")
    p.add_argument("env", help="an environment id, e.g. AgentRL/Dialog-v0")
    p.add_argument("--agent", default="heuristic",
                   help=f"a built-in agent ({', '.join(_BUILTIN_AGENTS)}) or module:Class (default: heuristic)")
    p.add_argument("--episodes", type=int, default=100, help="number of episodes (default: 100)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first episode (default: 0)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object, no progress bar")
    _add_env_options(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("eval", help="evaluate an agent on one env, with records and confidence intervals",
                       description="Play --episodes seeds x --trials noise trials, append one record per "
                                   "episode to --out (a killed run resumes), print the summary with 95%% CIs.")
    p.add_argument("env", help="an environment id, e.g. AgentRL/Dialog-v0")
    p.add_argument("--episodes", type=int, default=100, help="number of seeds (default: 100)")
    p.add_argument("--trials", type=int, default=1, help="noise trials per seed, for pass^k (default: 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first episode (default: 0)")
    p.add_argument("--noise", default=None, help="a noise spec ('tool_failure=0.2,ambiguity=0.5') or preset "
                                                 "(none, light, medium, heavy)")
    p.add_argument("--out", default=None, help="records file (default: runs/eval/<env>-<agent>.jsonl)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    _add_run_options(p)
    _add_env_options(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("bench", help="run a versioned benchmark suite for an agent and report it",
                       description="Run every episode of SUITE (core-v0, robustness-v0, smoke-v0 or a .toml "
                                   "file) into --out, resuming what is there, then print and write the report.")
    p.add_argument("suite", help="a suite id or a .toml file")
    p.add_argument("--out", default=None, help="run folder (default: runs/<suite>/<agent>)")
    p.add_argument("--no-report", action="store_true", help="skip the report")
    _add_run_options(p)
    sealed = p.add_argument_group("sealed track", "play the suite on a board that steps every episode itself, on "
                                  "seeds drawn for this run (--model then names the entry too)")
    sealed.add_argument("--sealed", metavar="URL", default=None,
                        help="the board (agentgym leaderboard serve --sealed); your token is read from "
                             "$AGENTGYM_TOKEN or --token-file")
    sealed.add_argument("--revision", default=None, help="the model's revision (a commit, a date, a step)")
    sealed.add_argument("--org", default=None, help="your organisation (default: your token's)")
    sealed.add_argument("--description", default=None, help="a short description of the agent")
    sealed.add_argument("--token-file", default=None, help="a file holding your token (else $AGENTGYM_TOKEN)")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("report", help="tables and plots from run folders",
                       description="Per env and noise setting: success, score, tool accuracy, recovery time and "
                                   "goal consistency with bootstrap 95%% CIs; CSV, Markdown and PNG plots.")
    p.add_argument("runs", nargs="+", help="run folders (each holds records.jsonl) or records files")
    p.add_argument("--out", default=None, help="where to write the report (default: RUN/report)")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("bench-agents", help="run the built-in agents on every id and print a table")
    p.add_argument("--agents", nargs="+", default=list(_BUILTIN_AGENTS), help="agents to run")
    p.add_argument("--episodes", type=int, default=100, help="episodes per agent and id (default: 100)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first episode (default: 0)")
    _add_env_options(p)
    p.set_defaults(func=cmd_bench_agents)

    from agentgym.baselines.cli import add_train_command
    from agentgym.leaderboard.cli import add_leaderboard_commands
    from agentgym.server.cli import add_serve_command

    add_leaderboard_commands(sub)
    add_serve_command(sub)
    add_train_command(sub)

    from agentgym.usercheck.cli import add_check_users_command

    add_check_users_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `agentgym` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "episodes", 1) < 1:
        parser.error("--episodes must be at least 1")
    try:
        return int(args.func(args) or 0)
    except ValueError as exc:  # bad ids, agents or options: a message, not a traceback
        print(f"agentgym: error: {exc}", file=sys.stderr)
        return 2
    except gym_error_types() as exc:
        print(f"agentgym: error: {exc}", file=sys.stderr)
        return 2


def gym_error_types() -> tuple[type[BaseException], ...]:
    from gymnasium import error

    return (error.Error,)


if __name__ == "__main__":
    sys.exit(main())
