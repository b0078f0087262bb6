"""`agentgym train ppo ...`: command-line options derived from the `Args` dataclass.

The options are never written by hand: each field of `agentgym.baselines.ppo.Args` becomes a
``--flag`` whose help is the field's doc line, so the dataclass is the one place defaults live
(one config dataclass per entry point, defaults in one place). torch is imported only when a training command runs, so ``agentgym --help``
stays fast.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import textwrap
from typing import Any, Sequence

__all__ = ["add_train_command", "dataclass_parser", "parse_dataclass", "field_docs"]

#: Algorithms `agentgym train` knows: name -> "module:Args class:entry function".
TRAINERS = {"ppo": ("agentgym.baselines.ppo", "Args", "train")}


def field_docs(cls: type) -> dict[str, str]:
    """The doc line under each field of a dataclass (the string literal that follows it)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for node, nxt in zip(body, body[1:]):
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                and isinstance(nxt.value.value, str)):
            docs[node.target.id] = " ".join(nxt.value.value.split())
    return docs


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def dataclass_parser(cls: type, parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """An argument parser with one option per field of dataclass `cls`.

    Types come from the annotations: ``bool`` gives ``--x/--no-x``, ``tuple[str, ...]`` a
    repeatable option, ``T | None`` an optional ``T``; ``metadata["choices"]`` restricts values.
    """
    parser = parser or argparse.ArgumentParser()
    docs = field_docs(cls)
    for f in dataclasses.fields(cls):
        kind = str(f.type).replace(" ", "")
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        help_text = docs.get(f.name, "")
        help_text = f"{help_text} (default: {default!r})" if help_text else f"default: {default!r}"
        kw: dict[str, Any] = {"dest": f.name, "help": help_text.replace("%", "%%")}
        if "choices" in f.metadata:
            kw["choices"] = f.metadata["choices"]
        if kind == "bool":
            parser.add_argument(_flag(f.name), action=argparse.BooleanOptionalAction, default=default, **kw)
            continue
        if kind.startswith("tuple["):
            # Repeatable; the dataclass default applies when the option is never given.
            parser.add_argument(_flag(f.name), action="append", default=None, metavar=f.name.upper(), **kw)
            continue
        base = kind.split("|")[0]
        conv = {"int": int, "float": float, "str": str}.get(base)
        if conv is None:
            raise TypeError(f"{cls.__name__}.{f.name}: unsupported option type {f.type!r}")
        if "choices" not in kw:
            kw["metavar"] = base.upper()
        parser.add_argument(_flag(f.name), type=conv, default=default, **kw)
    return parser


def parse_dataclass(cls: type, argv: Sequence[str] | None, prog: str | None = None) -> Any:
    """Parse `argv` into an instance of dataclass `cls` (its validation runs on construction)."""
    ns = dataclass_parser(cls, argparse.ArgumentParser(prog=prog, description=(cls.__doc__ or "").strip())) \
        .parse_args(argv)
    values = {k: v for k, v in vars(ns).items() if v is not None or k not in _tuple_fields(cls)}
    for name in _tuple_fields(cls):
        if name in values:
            values[name] = tuple(values[name])
    return cls(**values)


def _tuple_fields(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls) if str(f.type).replace(" ", "").startswith("tuple[")}


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
