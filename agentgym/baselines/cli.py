"""`agentgym train ppo ...`: command-line options derived from the `Args` dataclass by tyro.

The options are never written by hand: `tyro.cli` turns each field of
`agentgym.baselines.ppo.Args` into a ``--flag`` whose help is the field's doc line, so the
dataclass is the one place defaults live (one config dataclass per entry point). Repeatable
fields take one value per use (``--env A --env B``), booleans come in pairs (``--plot`` /
``--no-plot``), ``Literal`` fields list their choices. torch is imported only when a training
command runs, so ``agentgym --help`` stays fast.

A bad option is one line on stderr and exit status 2, as for every `agentgym` command
(`agentgym.cli_parser`): tyro's own report, a box drawn for a terminal, is read back and
flattened to its first paragraph.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
from typing import Any, Sequence

from agentgym.cli_parser import usage_error

__all__ = ["add_train_command", "parse_dataclass"]

#: Algorithms `agentgym train` knows: name -> "module:Args class:entry function".
TRAINERS = {"ppo": ("agentgym.baselines.ppo", "Args", "train")}

#: Box drawing around tyro's report (its frame, and its rules on a UTF-8 console).
_FRAME = re.compile(r"[\u2500-\u257f]")


def parse_dataclass(cls: type, argv: Sequence[str] | None, prog: str) -> Any:
    """Parse `argv` into an instance of dataclass `cls` (its validation runs on construction).

    ``--help`` prints the options and exits 0. A bad option or value, and a `ValueError` of
    `cls`'s own checks, print one line and exit 2.
    """
    import tyro

    report = io.StringIO()
    try:
        with contextlib.redirect_stderr(report):
            return tyro.cli(cls, args=list(argv) if argv is not None else None, prog=prog,
                            description=(cls.__doc__ or "").strip(), config=(tyro.conf.UseAppendAction,))
    except SystemExit as exc:
        if exc.code in (0, None):
            raise
        usage_error(prog, _first_paragraph(report.getvalue(), cls.__name__))


def _first_paragraph(report: str, class_name: str) -> str:
    """What tyro's report says between its title and its first rule (the help after it is
    ``--help``'s), framed (a UTF-8 console) or not."""
    body: list[str] = []
    titled = False
    for raw in report.splitlines():
        inner = raw.strip().strip("\u2502|").strip()
        if len(inner) >= 3 and set(inner) <= {"-", "\u2500"}:  # a rule
            if body:
                break
            continue
        text = _FRAME.sub(" ", raw).strip()
        if text and titled:
            body.append(text)
        titled = titled or bool(text)
    flat = " ".join(" ".join(body).split()) or " ".join(_FRAME.sub(" ", report).split())
    # A check of the dataclass's own is reported under its class name, which means nothing here.
    return flat.removeprefix(f"Error parsing {class_name}: ")


def cmd_train(args: argparse.Namespace) -> int:
    """Run `agentgym train ALGO [options]`: parse the options into the algorithm's Args, train."""
    import importlib

    module_name, args_name, entry = TRAINERS[args.algo]
    module = importlib.import_module(module_name)
    config = parse_dataclass(getattr(module, args_name), args.options, prog=f"agentgym train {args.algo}")
    result = getattr(module, entry)(config)
    print(result.summary())
    return 0


def add_train_command(sub: Any) -> None:
    """Add ``train`` to the `agentgym` command's subparsers (`sub`)."""
    p = sub.add_parser(
        "train", help="train a baseline (ppo) on one or more environment ids",
        description="Train a baseline. `agentgym train ppo --help` lists every PPO option (the fields of "
                    "agentgym.baselines.ppo.Args); e.g. `agentgym train ppo --env AgentRL/Dialog-v0 "
                    "--difficulty easy --max-seconds 300`.")
    p.add_argument("algo", choices=tuple(TRAINERS), help="the algorithm")
    p.add_argument("options", nargs=argparse.REMAINDER, help="the algorithm's options (see ALGO --help)")
    p.set_defaults(func=cmd_train)
