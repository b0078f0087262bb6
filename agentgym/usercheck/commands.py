"""`agentgym check-users` (and ``benchmarks/users/check_users.py``): run the corpus, print the
rates, write docs/users-check.md and the JSON results."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import shlex
import sys
from pathlib import Path
from typing import Any, Sequence

from agentgym.usercheck.trials import FAMILIES, Settings

__all__ = ["add_check_users_command", "add_options", "build_parser", "check_users", "main"]

_DESCRIPTION = """\
Measure how well the simulated users understand assistants' questions. A paraphrase corpus (at
least 40 phrasings per slot concept, in terse, question, polite, indirect, imperative, yes/no,
typo, domain-specific and compound styles, plus negatives that must reveal nothing) is sent,
as the assistant's first message, to users that hold the asked slot; the same episode with the
neutral message "Okay." is the paired control, so what the phrasing reveals beyond it is its
answer. Prints, per family and concept, the understanding and wrong-slot rates with n and 95%
Wilson intervals; --out writes them as Markdown (docs/users-check.md), --json every rate and trial.
A second corpus of messages naming two places (a recommendation with an alternative, or a bare
choice) checks that the booking users judge the place recommended, and ask which one otherwise."""


def add_options(p: argparse.ArgumentParser) -> None:
    """The command's options (shared by the subcommand and the benchmark script)."""
    d = Settings()
    p.add_argument("--family", nargs="+", choices=list(FAMILIES), default=list(FAMILIES),
                   help="the env families to measure (default: all)")
    p.add_argument("--out", default=None, help="write the Markdown report here (e.g. docs/users-check.md)")
    p.add_argument("--json", default=None, metavar="FILE", help="write every rate and trial as JSON here")
    p.add_argument("--corpus", default=None, metavar="DIR",
                   help="a folder of *.jsonl phrasings to run instead of the shipped corpus (its proposals/ "
                        "subfolder, if any, instead of the shipped proposals)")
    p.add_argument("--pool", type=int, default=d.pool,
                   help=f"seeds per split, domain and noise setting to find holding users in (default: {d.pool})")
    p.add_argument("--seed", type=int, default=d.first_seed, help=f"the first of those seeds (default: {d.first_seed})")
    p.add_argument("--matched", type=int, default=d.matched,
                   help=f"episodes per phrasing and family whose user holds what it asks (default: {d.matched})")
    p.add_argument("--cross", type=int, default=d.cross,
                   help=f"episodes per phrasing whose user holds only other slots (default: {d.cross})")
    p.add_argument("--per-concept", type=int, default=None, metavar="N",
                   help="run only the first N phrasings of each concept or style (a quick sample)")
    p.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")


def add_check_users_command(sub: Any) -> None:
    """Register ``check-users`` on the `agentgym` command's subparsers."""
    p = sub.add_parser("check-users", help="measure how well the simulated users understand questions",
                       description=_DESCRIPTION)
    add_options(p)
    p.set_defaults(func=check_users)


def build_parser(prog: str) -> argparse.ArgumentParser:
    """The parser of the standalone script."""
    p = argparse.ArgumentParser(prog=prog, description=_DESCRIPTION)
    add_options(p)
    return p


def _canonical_command(args: argparse.Namespace) -> str:
    """The command that reproduces the run (the options that differ from the defaults)."""
    defaults = build_parser("x").parse_args([])
    words = ["agentgym", "check-users"]
    for name in ("family", "pool", "seed", "matched", "cross", "per_concept", "corpus", "out", "json"):
        value = getattr(args, name)
        if value == getattr(defaults, name):
            continue
        flag = "--" + name.replace("_", "-")
        words += [flag, *map(str, value)] if isinstance(value, list) else [flag, str(value)]
    return shlex.join(words)


def _commit() -> str:
    from agentgym.eval.records import provenance

    prov = provenance()
    commit = prov.get("git_commit")
    if not commit:
        return "unknown"
    return commit[:12] + (" (with uncommitted changes)" if prov.get("git_dirty") else "")


def check_users(args: argparse.Namespace) -> int:
    """Run the check as `args` say; 1 under --strict when a target is missed."""
    import agentgym
    from agentgym.usercheck.corpus import coverage_problems, load_corpus
    from agentgym.usercheck.proposals import FAMILIES as PROPOSING
    from agentgym.usercheck.proposals import (
        load_proposals,
        meets_proposal_targets,
        proposal_problems,
        proposal_rates,
        run_proposals,
    )
    from agentgym.usercheck.report import RunInfo, console_table, markdown, meets_targets, results_json
    from agentgym.usercheck.summary import summarise
    from agentgym.usercheck.trials import run_trials

    for name in ("pool", "matched"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name} must be at least 1")
    if args.cross < 0 or (args.per_concept is not None and args.per_concept < 1) or args.seed < 0:
        raise ValueError("--cross must be >= 0, --per-concept >= 1 and --seed >= 0")
    corpus = load_corpus(args.corpus)
    proposals_dir = None if args.corpus is None else Path(args.corpus) / "proposals"
    proposals = load_proposals(proposals_dir) if proposals_dir is None or proposals_dir.is_dir() else ()
    if args.corpus is None:
        problems = coverage_problems(corpus) + proposal_problems(proposals)
        if problems:
            raise ValueError("the shipped corpus does not keep its promise: " + "; ".join(problems))
    settings = Settings(pool=args.pool, first_seed=args.seed, matched=args.matched, cross=args.cross,
                        per_concept=args.per_concept)
    trials = [t for family in args.family for t in run_trials(family, corpus, settings)]
    summary = summarise(trials)
    heard = [t for family in args.family if family in PROPOSING for t in run_proposals(
        family, proposals, pool=settings.pool, first_seed=settings.first_seed, matched=settings.matched)]
    rates = proposal_rates(heard)
    info = RunInfo(command=_canonical_command(args), date=_dt.datetime.now(_dt.timezone.utc).date().isoformat(),
                   commit=_commit(), version=agentgym.__version__, corpus_size=len(corpus), settings=settings)
    print(console_table(summary, rates))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(markdown(summary, trials, info, heard), encoding="utf-8")
        print(f"wrote {args.out}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results_json(summary, trials, info, heard), indent=1) + "\n",
                                   encoding="utf-8")
        print(f"wrote {args.json}")
    met = meets_targets(summary) and meets_proposal_targets(rates)
    return 1 if args.strict and not met else 0


def main(argv: Sequence[str] | None = None, prog: str = "check_users.py") -> int:
    """Entry point of the standalone script."""
    args = build_parser(prog).parse_args(argv)
    try:
        return check_users(args)
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
