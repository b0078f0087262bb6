"""The argument parser every `agentgym` command and subcommand is built with, option types, and
config dataclasses parsed from options.

`Parser` is argparse with two changes: a usage error is one line (the message and where the
help is, not the usage block), and a subcommand added with only ``help=`` gets that text as its
description too, so ``agentgym COMMAND --help`` always says what the command does.

The option types (`at_least`, `positive_float`, `tcp_port`) refuse a bad value while parsing, so the
message names the option: ``agentgym eval: error: argument --trials: must be at least 1, got 0``.

`parse_dataclass` derives a command's options from its config dataclass with tyro (the trainer
and the integration examples): each field a ``--flag`` whose help is the field's doc line,
repeatable fields one value per use (``--env A --env B``), booleans in pairs (``--plot`` /
``--no-plot``), ``Literal`` fields with their choices. A bad option is one line on stderr and
exit status 2, as for every command: tyro's own report, a box drawn for a terminal, is read back
and flattened to its first paragraph.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
from typing import Any, Callable, NoReturn, Sequence

from agentgym.errors import one_line

__all__ = ["Parser", "usage_error", "at_least", "positive_float", "tcp_port", "parse_dataclass"]


#: The namespace attribute naming the subcommand parsed (while parsing only).
_COMMAND_PROG = "_agentgym_command_prog"


class _Subcommands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """argparse's subcommand action, defaulting each subcommand's description to its help."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        summary = kwargs.get("help")
        if summary and not kwargs.get("description"):
            kwargs["description"] = summary[0].upper() + summary[1:] + ("" if summary.endswith(".") else ".")
        parser = super().add_parser(name, **kwargs)
        # The deepest subcommand parsed names itself, for an error only the top parser sees.
        parser.set_defaults(**{_COMMAND_PROG: parser.prog})
        return parser


class Parser(argparse.ArgumentParser):
    """An `argparse.ArgumentParser` with one-line usage errors (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", "parsers", _Subcommands)

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:  # type: ignore[override]
        ns, extras = self.parse_known_args(args, namespace)
        prog = vars(ns).pop(_COMMAND_PROG, self.prog)
        if extras:
            # argparse leaves arguments no subcommand took to the top parser: name the subcommand.
            self._fail(prog, f"unrecognized arguments: {' '.join(extras)}")
        return ns

    def error(self, message: str) -> NoReturn:
        self._fail(self.prog, message)

    def _fail(self, prog: str, message: str) -> NoReturn:
        usage_error(prog, message)


def usage_error(prog: str, message: str) -> NoReturn:
    """Print a usage error of command `prog` as one line on stderr and exit with status 2."""
    sys.stderr.write(f"{prog}: error: {one_line(message)} (see `{prog} --help`)\n")
    raise SystemExit(2)


def at_least(low: int) -> Callable[[str], int]:
    """An option type: an integer no smaller than `low`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text[:100]!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


def positive_float(text: str) -> float:
    """An option type: a finite number above 0 (seconds, a rate limit)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text[:100]!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {text[:100]!r}")
    return value


def tcp_port(text: str) -> int:
    """An option type: a TCP port, 0 to 65535 (0: any free port)."""
    value = at_least(0)(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"a TCP port is 0 to 65535, got {value}")
    return value


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
