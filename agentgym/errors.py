"""User errors, and the one place every `agentgym` command reports them.

A mistake in what a command was asked (an unknown id or agent, a bad option value, a missing or
unreadable file, a records file of another schema, a server that is not there, a port in use) is
reported as one line on stderr, ``agentgym: error: ...``, with exit status 2. Anything else is a
bug and keeps its traceback. With ``AGENTGYM_TRACEBACK=1`` in the environment a user error shows
its traceback too (to see where a message came from).

What counts as a user error: `UserError`, which the CLI raises; `ValueError`, which the library
raises for bad input (an unknown agent, a malformed noise spec, a record of another schema);
gymnasium's errors (an unregistered id, a server's refusal); `OSError` (a missing file, a
refused connection, a permission) and `sqlite3.Error` (a file that is no database).
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

__all__ = ["UserError", "TRACEBACK_ENV", "one_line", "user_message", "run_command"]

#: Set this environment variable (to anything but empty or 0) to see user errors' tracebacks.
TRACEBACK_ENV = "AGENTGYM_TRACEBACK"

#: The longest error line printed; a longer message is cut (a pasted file, a huge argument).
MAX_MESSAGE_CHARS = 2000


class UserError(ValueError):
    """A mistake in what the user asked for. Its message is the whole report: one line that says
    what was wrong and, where it helps, what to do instead."""


def one_line(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`text` on one line (every run of whitespace, newlines included, becomes one space), cut to
    `limit` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"


def _os_message(exc: OSError) -> str:
    if exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return str(exc) or type(exc).__name__


def user_message(exc: BaseException) -> str | None:
    """The one-line report of `exc` if it is a user error (see the module docstring), else None."""
    import sqlite3

    from gymnasium import error as gym_error

    if isinstance(exc, (ValueError, gym_error.Error)):
        text = str(exc) or type(exc).__name__
    elif isinstance(exc, OSError):
        text = _os_message(exc)
    elif isinstance(exc, sqlite3.Error):
        text = f"database error: {exc}"
    else:
        return None
    return one_line(text)


def _show_tracebacks() -> bool:
    return os.environ.get(TRACEBACK_ENV, "") not in ("", "0")


def run_command(func: Callable[[Any], int | None], args: Any, prog: str = "agentgym") -> int:
    """Run a command's function; report a user error as one line and return 2.

    Also: Ctrl-C prints one line and returns 130 (records written so far are kept, and the same
    command resumes); a closed stdout (``agentgym list | head -1``) ends quietly.
    """
    try:
        return int(func(args) or 0)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away: say nothing more on a pipe that is closed (Python's docs' recipe).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except Exception as exc:
        message = user_message(exc)
        if message is None or _show_tracebacks():
            raise
        print(f"{prog}: error: {message}", file=sys.stderr)
        return 2
