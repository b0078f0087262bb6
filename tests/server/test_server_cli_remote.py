"""``agentgym eval --remote URL`` with no server there: one clear line and a non-zero exit, whether
the episodes run in this process or in a pool of workers (the client's errors cross processes)."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from server_support import free_port

from agentgym.server.client import RemoteEnv, RemoteEnvError, ServerBusy


def test_remote_errors_survive_pickling() -> None:
    for error in (RemoteEnvError(0, "connection_lost", "cannot reach the env server"),
                  RemoteEnvError(404, "unknown_env", "not served here"),
                  ServerBusy(429, "too_many_sessions", "at the cap", 2.0)):
        again = pickle.loads(pickle.dumps(error))
        assert type(again) is type(error) and str(again) == str(error)
        assert (again.status, again.code, again.message) == (error.status, error.code, error.message)
    assert pickle.loads(pickle.dumps(ServerBusy(429, "too_many_sessions", "x", 2.5))).retry_after_s == 2.5


def test_a_server_that_is_not_there_is_a_remote_error_naming_it() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(RemoteEnvError) as error:
        RemoteEnv(url, "AgentRL/Dialog-v0")
    assert error.value.code == "connection_lost" and url in str(error.value)


@pytest.mark.parametrize("workers", ["1", "2"])
def test_eval_remote_with_the_server_down_prints_one_line(tmp_path: Path, workers: str) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    done = subprocess.run([sys.executable, "-m", "agentgym.cli", "eval", "AgentRL/Dialog-v0", "--remote", url,
                           "--episodes", "4", "--workers", workers, "--out", str(tmp_path / "records.jsonl")],
                          capture_output=True, timeout=120)
    stderr = done.stderr.decode()
    # A progress bar redraws itself with carriage returns: what a terminal shows is the last part.
    shown = [line.split("\r")[-1] for line in stderr.split("\n")]
    shown = [line for line in shown if line.strip()]
    print(f"\nworkers {workers}: exit {done.returncode}; stderr as shown: {shown}")
    assert done.returncode != 0
    assert "Traceback" not in stderr and "BrokenProcessPool" not in stderr
    assert len(shown) == 1 and shown[0].startswith("agentgym: error: ") and url in shown[0]
