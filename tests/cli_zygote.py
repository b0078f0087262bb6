"""Run the `agentgym` command many times without paying Python's start-up and imports each time.

A *zygote* is a child Python process that imports the command once and then, for each request,
forks: the fork changes to the request's folder, takes its environment, points stdout and stderr
at files, and runs ``python -m agentgym.cli ARGV`` as the interpreter would (``runpy``, its
``SystemExit`` turned into the exit status, an uncaught exception printed as a traceback). Each
command so runs in a fresh process of its own, as a user's does; only the imports are shared, and
they happened before any command ran. The zygote starts no thread, so forking it is safe.

Tests that check what the interpreter itself does at start-up (``--version``, import errors,
``AGENTGYM_TRACEBACK``) still run a plain subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

#: The child's program: read one JSON request a line, fork, answer one JSON line.
_PROGRAM = r'''
import json, os, runpy, signal, sys, time, traceback
import agentgym.cli  # the imports every command pays; nothing runs yet

# What the commands import when they run (the parser's subcommands import their modules as it is
# built, a command its runner, envs and agents as it starts): imported once here, so a fork does
# not pay them again. Importing them starts no thread and writes nothing.
agentgym.cli.build_parser()
import agentgym.agents.heuristic, agentgym.baselines.ppo.agent, agentgym.bench.run, agentgym.eval.report
import agentgym.envs.crosstask.env, agentgym.envs.dialog.env, agentgym.envs.tooluse.env, agentgym.eval.runner
import agentgym.noise.factory

# `python -m agentgym.cli` runs the module as __main__ without importing it first: forget it here
# so that each command does the same (what it imports stays imported).
del sys.modules["agentgym.cli"]
del agentgym.cli

def run(request):
    out, err = request["stdout"], request["stderr"]
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.chdir(request["cwd"])
            os.environ.clear()
            os.environ.update(request["env"])
            sys.path[:0] = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
            for fd, path in ((1, out), (2, err)):
                f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(f, fd)
                os.close(f)
            sys.stdin = open(os.devnull)
            sys.argv = ["agentgym", *request["argv"]]
            try:
                runpy.run_module("agentgym.cli", run_name="__main__", alter_sys=True)
                code = 0
            except SystemExit as stop:
                if stop.code is None:
                    code = 0
                elif isinstance(stop.code, int):
                    code = stop.code
                else:
                    print(stop.code, file=sys.stderr)
                    code = 1
            except BaseException:
                traceback.print_exc()
                code = 1
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:
                    pass
            os._exit(code)
    deadline = time.monotonic() + request["timeout"]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)

for line in sys.stdin:
    print(json.dumps({"returncode": run(json.loads(line))}), flush=True)
'''


class CliZygote:
    """A zygote process for `agentgym` commands (a context manager)."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen([sys.executable, "-c", _PROGRAM], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True)
        self._scratch = tempfile.TemporaryDirectory(prefix="agentgym-zygote-")

    def run(self, cwd: Path, argv: list[str], env: dict[str, str], timeout: float = 120
            ) -> subprocess.CompletedProcess[str]:
        """Run ``agentgym ARGV`` in `cwd` with environment `env`, as `subprocess.run` would (past
        `timeout` seconds the command is killed: its exit status is then -9)."""
        out, err = Path(self._scratch.name, "stdout"), Path(self._scratch.name, "stderr")
        request: dict[str, Any] = {"cwd": str(cwd), "argv": argv, "env": env, "stdout": str(out), "stderr": str(err),
                                  "timeout": timeout}
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._proc.stdin.write(json.dumps(request) + "\n")
        self._proc.stdin.flush()
        answer = self._proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"the zygote exited with {self._proc.wait(timeout)}")
        code = json.loads(answer)["returncode"]
        return subprocess.CompletedProcess(["agentgym", *argv], code, out.read_text(), err.read_text())

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._scratch.cleanup()

    def __enter__(self) -> CliZygote:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def fork_available() -> bool:
    """Whether this platform can fork (the zygote needs it)."""
    return hasattr(os, "fork")
