"""How well the simulated users understand assistants' questions (docs/users-check.md).

    .venv/bin/python benchmarks/users/check_users.py --out docs/users-check.md [--json FILE] [--family ...]

The same code as `agentgym check-users` (`agentgym.usercheck`); `--help` explains the options.
"""

from __future__ import annotations

import sys

from agentgym.usercheck.commands import main

if __name__ == "__main__":
    sys.exit(main(prog="check_users.py"))
