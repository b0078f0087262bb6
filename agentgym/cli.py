"""The `agentgym` command: list and check environments, run and evaluate agents, benchmark, report.

Each subcommand keeps its options in one place (its `add_*` function) and its logic in the
library, so `agentgym run` and `python -c "..."` give the same numbers. A mistake in what a
command is asked is one line on stderr and exit status 2 (`agentgym.errors`): the commands check
ids, agents and servers before they run anything or create any file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

from agentgym.cli_parser import Parser, at_least, positive_float
from agentgym.errors import UserError, run_command

__all__ = ["main", "build_parser", "eval_out_path", "report_out_path"]

#: The agent options that have a flag of their own: constructor argument -> the flag, as used.
_AGENT_FLAGS = {"model": "--model NAME", "base_url": "--base-url URL", "api_key_env": "--api-key-env NAME",
                "checkpoint": "--checkpoint PATH"}


def _env_ids() -> list[str]:
    import agentgym

    return sorted(agentgym.ENV_IDS)


def _check_env(env_id: str, kwargs: dict[str, Any] | None = None, remote: str | None = None) -> None:
    """Make the env once and close it: an unknown id, an option the env refuses (a domain it does
    not have) or an env server that is not there is one clear error before any episode runs."""
    import gymnasium as gym

    import agentgym  # noqa: F401  (registers the ids)
    from agentgym.registration import import_env_module

    kw = dict(kwargs or {})
    if remote == "ray":  # Ray env actors (--backend ray) make the env as this process would
        remote = None
    if not remote:
        import_env_module(env_id)  # module:NS/Name-vN: the module that registers it (gym.make's rule)
    try:
        env = gym.make("AgentRL/Remote-v0", url=remote, env_id=env_id, **kw) if remote else gym.make(env_id, **kw)
    except gym.error.UnregisteredEnv as exc:
        raise UserError(f"unknown environment {env_id!r}: {exc} Registered: {', '.join(_env_ids())} "
                        "(`agentgym list` describes them; an env of your own is given as module:NS/Name-vN, "
                        "docs/own-env.md)") from exc
    env.close()


def _check_agent(spec: Any) -> None:
    """Resolve the agent's class and check its arguments against its signature, without building
    it (a model can take minutes to load): an unknown agent, a missing or a misspelt argument is
    one clear error before any episode runs."""
    import inspect

    from agentgym.agents import agent_class

    cls = agent_class(spec.name)
    kwargs = dict(spec.kwargs)
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):  # a class whose signature Python cannot tell: its constructor decides
        return
    params = signature.parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    unknown = [k for k in kwargs if k not in params and not takes_any]
    if unknown:
        known = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        raise UserError(f"agent {spec.name!r} takes no argument {unknown[0]!r}; "
                        + (f"its arguments: {', '.join(known)}" if known else "it takes no arguments"))
    missing = [n for n, p in params.items() if p.default is p.empty and n not in kwargs
               and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if missing:
        how = [_AGENT_FLAGS.get(n, f"--agent-arg {n}=VALUE") for n in missing]
        raise UserError(f"agent {spec.name!r} needs {', '.join(missing)}: give {' and '.join(how)}")


def cmd_list(args: argparse.Namespace) -> int:
    """Print every registered ``AgentRL/*`` id with the first line of its card (``--card``: the
    whole card, `agentgym.registration.spec_card`)."""
    import gymnasium as gym

    from agentgym.registration import REMOTE_ID, card_summary, env_card, spec_card

    known = sorted(i for i in gym.registry if i.startswith("AgentRL/"))
    wanted = list(getattr(args, "ids", None) or known)
    unknown = [i for i in wanted if i not in gym.registry]
    if unknown:
        print(f"agentgym list: no such environment: {', '.join(unknown)} (known: {', '.join(known)})",
              file=sys.stderr)
        return 2
    width = max(len(i) for i in wanted)
    for env_id in wanted:
        spec = gym.spec(env_id)
        role = "(the client of an env server) " if env_id == REMOTE_ID else ""
        if getattr(args, "card", False):
            print(f"{env_id} {role}".rstrip() + f"\n\n{spec_card(spec)}\n")
        else:
            print(f"{env_id:{width}s}  {role}{card_summary(env_card(spec))}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Run the conformance checks on one id (or every id)."""
    from agentgym.testing import check_agent_env

    ids = _env_ids() if args.env == "all" else [args.env]
    if args.env != "all":
        _check_env(args.env)
    failed = 0
    for env_id in ids:
        try:
            report = check_agent_env(env_id)
        except AssertionError as exc:
            failed += 1
            print(f"FAIL {env_id}: {exc}")
        else:
            print(f"ok   {report}")
    return 1 if failed else 0


def run_agent(env_id: str, agent: Any, episodes: int, seed: int, env_kwargs: dict[str, Any] | None = None,
              progress: bool = True) -> dict[str, Any]:
    """Play `episodes` episodes (seeds seed, seed+1, ...) in this process, as `agentgym eval`
    plays them (`agentgym.eval.backends.play_sequential`), and summarise their records with the
    same metrics (`agentgym.eval.metrics.completion`); nothing is written.

    Args:
        env_id: the env's id.
        agent: an `agentgym.eval.jobs.AgentSpec`.
        episodes: how many episodes.
        seed: the first seed.
        env_kwargs: ``gym.make`` kwargs (difficulty, split, domain).
        progress: show a progress bar on stderr.
    """
    from agentgym.eval.backends import play_sequential
    from agentgym.eval.episode import InstanceCache
    from agentgym.eval.jobs import EpisodeJob
    from agentgym.eval.metrics import completion
    from agentgym.eval.progress import Progress

    kwargs = tuple(sorted((env_kwargs or {}).items()))
    jobs = [EpisodeJob(env_id, seed=seed + i, kwargs=kwargs) for i in range(episodes)]
    records: list[dict[str, Any]] = []
    successes = 0
    instances = InstanceCache()
    with Progress(total=episodes, desc=f"{agent.name} on {env_id}", enabled=progress) as bar:

        def accept(done: list[dict[str, Any]]) -> None:
            nonlocal successes
            records.extend(done)
            successes += sum(bool(r["metrics"].get("success", False)) for r in done)
            bar.update(len(done), success=successes / len(records))

        try:
            play_sequential(jobs, agent, None, accept, instances=instances)
        finally:
            instances.close()
    by_difficulty: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        by_difficulty.setdefault(((rec["metrics"].get("task") or {}).get("difficulty")), []).append(rec)
    overall = completion(records)
    return {
        "env": env_id,
        "agent": agent.name,
        "episodes": overall["episodes"],
        "seed": seed,
        "success_rate": overall["success_rate"]["value"],
        "success_ci": overall["success_rate"]["ci"],
        "mean_score": overall["mean_score"]["value"],
        "mean_turns": sum(int(r["metrics"].get("turns", 0)) for r in records) / len(records),
        "success_by_difficulty": {d: completion(by_difficulty[d])["success_rate"]["value"]
                                  for d in ("easy", "medium", "hard") if d in by_difficulty},
        "agent_errors": sum(r["agent_error"] is not None for r in records),
    }


def cmd_run(args: argparse.Namespace) -> int:
    """Play an agent on one env and print its success rate and mean score (`run_agent`)."""
    spec = _agent_spec(args)
    _check_agent(spec)
    _check_env(args.env, _env_kwargs(args))
    summary = run_agent(args.env, spec, args.episodes, args.seed, _env_kwargs(args), progress=not args.json)
    if args.json:
        print(json.dumps(summary, sort_keys=True))
    else:
        errors = f"; {summary['agent_errors']} agent errors" if summary["agent_errors"] else ""
        lo, hi = summary["success_ci"]
        print(f"{summary['agent']} on {summary['env']}: success {summary['success_rate']:.1%} [{lo:.1%}, {hi:.1%}], "
              f"mean score {summary['mean_score']:.3f}, mean turns {summary['mean_turns']:.1f} "
              f"over {summary['episodes']} episodes (seeds {args.seed}..{args.seed + args.episodes - 1}){errors}")
        for d, v in summary["success_by_difficulty"].items():
            print(f"  {d:7s} success {v:.1%}")
    return 0


def _parse_kv(pairs: Sequence[str] | None, what: str) -> dict[str, Any]:
    """``["k=v", ...]`` to a dict; values parse as strict JSON when they can (numbers, true,
    lists), else stay strings (so ``NaN`` or a 100,000-deep ``[[[`` is text, never a crash)."""
    from agentgym.core.protocol import strict_json

    out: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"{what} must look like key=value, got {pair[:100]!r}")
        try:
            out[key] = strict_json(raw)
        except ValueError:
            out[key] = raw
    return out


def _agent_spec(args: argparse.Namespace) -> Any:
    from agentgym.eval.runner import AgentSpec

    kwargs = _parse_kv(args.agent_arg, "--agent-arg")
    # Shorthands for the agents' most used settings.
    for key in _AGENT_FLAGS:
        value = getattr(args, key, None)
        if value is not None:
            kwargs[key] = value
    return AgentSpec(args.agent, tuple(sorted(kwargs.items())))


def _env_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k, v in (("split", args.split), ("difficulty", args.difficulty), ("domain", args.domain))
            if v is not None}


def _run_options(args: argparse.Namespace) -> dict[str, Any]:
    if args.remote == "ray" and args.backend != "ray":
        raise UserError("--remote ray steps the envs on Ray env actors: give it with --backend ray")
    return {"workers": args.workers, "backend": args.backend, "timeout_s": args.timeout,
            "concurrency": args.concurrency, "ray_address": args.ray_address, "remote": args.remote}


def cmd_eval(args: argparse.Namespace) -> int:
    """Evaluate an agent on one env: records to a JSONL file, a summary with CIs on stdout."""
    from agentgym.eval.records import read_records
    from agentgym.eval.report import summary_line
    from agentgym.eval.runner import EpisodeJob, run_jobs

    kwargs = _env_kwargs(args)
    noise = None if args.noise in (None, "none") else args.noise
    _check_noise(args.env, noise)
    spec = _agent_spec(args)
    _check_agent(spec)
    _check_env(args.env, {**kwargs, **({"noise": noise} if noise else {})}, args.remote)
    jobs = [EpisodeJob(args.env, seed=args.seed + i, trial=t, noise=noise, kwargs=tuple(sorted(kwargs.items())))
            for i in range(args.episodes) for t in range(args.trials)]
    out = _records_file(args.out) if args.out else eval_out_path(args.env, spec, noise, kwargs)
    summary = run_jobs(jobs, spec, out, progress=not args.json, **_run_options(args))
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


def _path_part(text: str, limit: int = 60) -> str:
    """`text` as one safe path component: ``/``, ``:``, spaces and the like become ``_``; a long
    one keeps its start and gets a digest of the whole, so two settings never share a name."""
    import hashlib
    import re

    safe = re.sub(r"[^A-Za-z0-9._=+-]", "_", text.strip().replace(",", "+"))
    if len(safe) <= limit:
        return safe
    return f"{safe[: limit - 13]}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


def eval_out_path(env_id: str, agent: Any, noise: str | None, env_kwargs: dict[str, Any],
                  root: str | Path = "runs/eval") -> Path:
    """The records file `agentgym eval` writes without ``--out``: one folder per env, agent (with
    a digest of its arguments when it has any), noise setting and fixed task option (difficulty,
    split, domain), so an eval with other settings starts its own run and never resumes, or
    mixes into, another's. Seeds and trials are not part of it: more of them extend the run.

    ``runs/eval/AgentRL_Dialog-v0-heuristic-noise_medium-difficulty_easy/records.jsonl``
    """
    import hashlib

    parts = [_path_part(env_id), _path_part(agent.name)]
    if agent.kwargs:
        digest = hashlib.sha256(json.dumps(dict(agent.kwargs), sort_keys=True, default=str).encode()).hexdigest()
        parts.append(f"args_{digest[:10]}")
    parts.append(f"noise_{_path_part(noise or 'none')}")
    parts += [f"{k}_{_path_part(str(v))}" for k, v in sorted(env_kwargs.items())]
    return Path(root) / "-".join(parts) / "records.jsonl"


def _records_file(out: str) -> Path:
    """``--out``: a records file, or a folder to hold ``records.jsonl``."""
    path = Path(out)
    return path / "records.jsonl" if path.is_dir() or out.endswith(("/", "\\")) else path


def _check_noise(env_id: str, noise: str | None) -> None:
    if noise is None:
        return
    from agentgym.noise.spec import parse_noise

    parse_noise(noise)  # a malformed spec is a clear error before any episode runs


def cmd_bench(args: argparse.Namespace) -> int:
    """Run a suite for an agent into DIR, then print and write its report (or, with --sealed, play
    it on a board that steps every episode itself)."""
    from agentgym.bench.run import run_suite
    from agentgym.bench.suites import get_suite
    from agentgym.eval.report import write_report

    if args.sealed:
        return _bench_sealed(args)  # the board knows the suite; --model names the entry
    suite = get_suite(args.suite)
    spec = _agent_spec(args)
    _check_agent(spec)
    for flag in ("revision", "org", "token_file", "description"):
        if getattr(args, flag):
            raise UserError(f"--{flag.replace('_', '-')} is for a sealed run (--sealed URL)")
    for env_id in suite.envs:
        _check_env(env_id, {"split": suite.split, **suite.kwargs}, args.remote)
    out = Path(args.out or f"runs/{_path_part(suite.id)}/{_path_part(args.agent)}")
    summary = run_suite(suite, spec, out, progress=True, **_run_options(args))
    print(f"{args.agent} on {args.suite}: {summary.ran} episodes run, {summary.skipped} resumed, "
          f"{summary.agent_errors} agent errors -> {out}")
    if not args.no_report:
        write_report([out], out / "report", show=True)
    return 0


def _bench_sealed(args: argparse.Namespace) -> int:
    """``bench SUITE --sealed URL``: a sealed run, played on the board, ranked in its sealed track."""
    import inspect

    from agentgym.agents import agent_class
    from agentgym.eval.runner import AgentSpec
    from agentgym.leaderboard.sealed.client import SealedError, SealedTarget, read_token, refuse_privileged, run_sealed

    if not args.model or not args.revision:
        raise UserError("a sealed run names its entry: give --model MODEL and --revision REVISION")
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
    out = Path(args.out or f"runs/{_path_part(args.suite)}/{_path_part(args.agent)}-sealed")
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
    from agentgym.eval.report import write_report

    runs = [Path(r) for r in args.runs]
    for run in runs:
        if not run.exists():
            raise UserError(f"no run at {run}: give a run folder (it holds records.jsonl) or a records file")
    out = Path(args.out) if args.out else report_out_path(runs)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file; the report is a folder (report.md, report.csv and plots)")
    write_report(runs, out, show=True)
    return 0


def report_out_path(runs: Sequence[Path]) -> Path:
    """Where `agentgym report` writes without ``--out``: RUN/report for one run folder (or its
    records.jsonl), NAME-report beside one records file NAME.jsonl, runs/report for several."""
    if len(runs) != 1:
        return Path("runs/report")
    run = runs[0]
    if run.is_dir():
        return run / "report"
    if run.name == "records.jsonl":
        return run.parent / "report"
    return run.with_name(f"{run.stem}-report")


def _agent_names() -> str:
    from agentgym.agents import AGENTS

    return ", ".join(AGENTS)


def _add_agent_options(p: argparse.ArgumentParser) -> None:
    """The agent and its arguments: the same options, and the same agents, for `run` and `eval`."""
    p.add_argument("--agent", default="heuristic",
                   help=f"a built-in agent ({_agent_names()}) or module:Class (default: heuristic)")
    p.add_argument("--agent-arg", action="append", metavar="KEY=VALUE",
                   help="an agent constructor argument (repeatable; values parse as JSON when they can)")
    p.add_argument("--model", default=None, help="model path (transformers) or name (openai): --agent-arg model=...")
    p.add_argument("--base-url", default=None, help="OpenAI-compatible server URL (openai agent)")
    p.add_argument("--api-key-env", default=None, help="environment variable holding the API key (openai agent)")
    p.add_argument("--checkpoint", default=None, help="a trained policy's checkpoint.pt (ppo agent)")


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """The agent options, then how the episodes run (workers, backend, timeout, an env server)."""
    import os

    _add_agent_options(p)
    p.add_argument("--workers", type=at_least(1), default=os.cpu_count() or 1,
                   help="processes for the process backend (default: the number of cores)")
    p.add_argument("--backend", choices=("process", "async", "ray"), default="process",
                   help="process pool (default), asyncio for I/O-bound agents, or a Ray cluster")
    p.add_argument("--concurrency", type=at_least(1), default=8, help="concurrent episodes for --backend async")
    p.add_argument("--ray-address", default=None, help="Ray cluster address (default: start a local one)")
    p.add_argument("--timeout", type=positive_float, default=300.0,
                   help="per-episode limit in seconds (default: 300)")
    p.add_argument("--remote", default=None, metavar="URL",
                   help="step the envs on an env server (agentgym serve) at URL instead of in process; "
                        "`ray` (with --backend ray): on Ray env actors spread over the cluster's CPU nodes")


def _add_env_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--difficulty", choices=("easy", "medium", "hard"), default=None,
                   help="fix the difficulty (default: drawn per episode)")
    p.add_argument("--split", choices=("train", "test"), default=None,
                   help="the task split (default: the env's, train)")
    p.add_argument("--domain", default=None, help="fix the domain (default: drawn from the split's domains)")


def _add_episode_options(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--episodes", type=at_least(1), default=100, help=f"number of {what} (default: 100)")
    p.add_argument("--seed", type=at_least(0), default=0, help="seed of the first episode (default: 0)")


def _version() -> str:
    import agentgym

    return f"agentgym {agentgym.__version__}"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `agentgym` command."""
    parser = Parser(
        prog="agentgym",
        description="Gymnasium environments and a benchmark for agentic RL with language-model agents.",
        epilog="`agentgym COMMAND --help` describes each command. A mistake in what a command is asked is one "
               "line on stderr and exit status 2; AGENTGYM_TRACEBACK=1 shows its traceback.",
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("list", help="list the registered environment ids with the first line of each card",
                       description="Every AgentRL/* id with the first line of its card (its env class's "
                                   "docstring); --card prints the whole card.")
    p.add_argument("ids", nargs="*", metavar="ID", help="only these ids (default: every AgentRL/* id)")
    p.add_argument("--card", action="store_true", help="print each env's whole card")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("check", help="run the env-contract conformance checks on an id",
                       description="Run gymnasium's check_env plus agentgym's stricter checks (replay in a fresh "
                                   "process, garbage actions, step after the end) on one id, or on every id with "
                                   "'all'. Prints FAIL per id that fails (exits 1), else ok and what each metric "
                                   "gets from the env (docs/own-env.md).")
    p.add_argument("env", help="an id such as AgentRL/Dialog-v0 or module:MyOrg/Name-v0, or 'all'")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("run", help="play an agent on an env and print success rate and mean score",
                       description="Play --episodes episodes with seeds SEED, SEED+1, ... in this process, as "
                                   "`agentgym eval` plays them, and print the success rate (with its 95% CI), mean "
                                   "score and turns, per difficulty too; no records are written (`agentgym eval` "
                                   "writes them, and resumes).")
    p.add_argument("env", help="an environment id, e.g. AgentRL/Dialog-v0")
    _add_episode_options(p, "episodes")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object, no progress bar")
    _add_agent_options(p)
    _add_env_options(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("eval", help="evaluate an agent on one env, with records and confidence intervals",
                       description="Play --episodes seeds x --trials noise trials, append one record per episode "
                                   "to the records file (a killed run resumes where it stopped) and print the "
                                   "summary with 95% CIs. Without --out the records go to runs/eval/ in a folder "
                                   "named after the env, agent, noise and task options, so evals with other "
                                   "settings never resume or mix into each other.")
    p.add_argument("env", help="an environment id, e.g. AgentRL/Dialog-v0")
    _add_episode_options(p, "seeds")
    p.add_argument("--trials", type=at_least(1), default=1, help="noise trials per seed, for pass^k (default: 1)")
    p.add_argument("--noise", default=None, help="a noise spec ('tool_failure=0.2,ambiguity=0.5') or preset "
                                                 "(none, light, medium, heavy)")
    p.add_argument("--out", default=None,
                   help="records file, or a folder for records.jsonl (default: "
                        "runs/eval/ENV-AGENT-noise_NOISE[-OPTION_VALUE...]/records.jsonl)")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    _add_run_options(p)
    _add_env_options(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("bench", help="run a versioned benchmark suite for an agent and report it",
                       description="Run every episode of SUITE (core-v0, hard-v0, robustness-v0, smoke-v0 or a .toml "
                                   "file) into a run folder (records.jsonl and run.json), resuming what is there, "
                                   "then print and write its report (RUN/report). Compare agents with `agentgym "
                                   "report RUN RUN ...`; submit a run with `agentgym submit RUN`.")
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
                       description="Per agent, env and noise setting: success, score, tool-call validity, "
                                   "correctness and efficiency, recovery and goal consistency, each with its "
                                   "bootstrap 95% CI and n; printed, and written as report.md, report.csv and "
                                   "PNG plots.")
    p.add_argument("runs", nargs="+", help="run folders (each holds records.jsonl) or records files")
    p.add_argument("--out", default=None,
                   help="the report's folder (default: RUN/report for one run folder, NAME-report beside one "
                        "records file NAME.jsonl, runs/report for several runs)")
    p.set_defaults(func=cmd_report)

    from agentgym.baselines.commands import add_train_command
    from agentgym.leaderboard.commands import add_leaderboard_commands
    from agentgym.mcp.commands import add_mcp_command
    from agentgym.server.commands import add_serve_command
    from agentgym.testing.validity import add_validate_command

    add_leaderboard_commands(sub)
    add_serve_command(sub)
    add_mcp_command(sub)
    add_train_command(sub)
    add_validate_command(sub)

    from agentgym.usercheck.commands import add_check_users_command

    add_check_users_command(sub)

    from agentgym.eval.commands import add_export_command, add_view_command
    from agentgym.eval.play_command import add_play_command

    add_export_command(sub)
    add_view_command(sub)
    add_play_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `agentgym` console script."""
    from agentgym.registration import importable_working_dir

    importable_working_dir()  # module:Class agents and module:NS/Name-vN envs, as python -m finds them
    args = build_parser().parse_args(argv)
    return run_command(args.func, args)


if __name__ == "__main__":
    sys.exit(main())
