"""`agentgym train ALGO ...`: train a baseline, with options derived from its `Args` dataclass.

The options are never written by hand: `agentgym.cli_parser.parse_dataclass` (tyro) turns each
field of `agentgym.baselines.ppo.Args` into a ``--flag`` whose help is the field's doc line, so
the dataclass is the one place defaults live (one config dataclass per entry point). torch is
imported only when a training command runs, so ``agentgym --help`` stays fast.
"""

from __future__ import annotations

import argparse
from typing import Any

from agentgym.cli_parser import parse_dataclass

__all__ = ["TRAINERS", "add_train_command", "cmd_train"]

#: Algorithms `agentgym train` knows: name -> "module:Args class:entry function".
TRAINERS = {"ppo": ("agentgym.baselines.ppo", "Args", "train")}


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
