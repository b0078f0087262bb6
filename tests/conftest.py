"""Shared fixtures. The tests directory has no __init__.py: test basenames are unique across it."""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers every AgentRL/* id)

DIALOG_ID = "AgentRL/Dialog-v0"


class InvokeSpy:
    """Counts the tool executions of an agentgym env by wrapping its real toolkit's `invoke`.

    The toolkit is made anew at every reset, so `attach` must follow each `reset`. Nothing is
    mocked: the real method runs, the spy only counts (the env's own object is observed).
    """

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def attach(self, env: gym.Env) -> None:
        toolkit = env.unwrapped.toolkit
        real = type(toolkit).invoke.__get__(toolkit)

        def counting_invoke(name: str, arguments: dict[str, Any]) -> Any:
            self.calls[name] += 1
            return real(name, arguments)

        toolkit.invoke = counting_invoke  # type: ignore[method-assign]

    @property
    def total(self) -> int:
        return sum(self.calls.values())


@pytest.fixture
def invoke_spy() -> InvokeSpy:
    """A fresh `InvokeSpy`."""
    return InvokeSpy()


@pytest.fixture
def make_env() -> Iterator[Callable[..., gym.Env]]:
    """``make_env(id=DIALOG_ID, **kwargs)``: ``gym.make`` whose envs are closed at teardown."""
    made: list[gym.Env] = []

    def make(env_id: str = DIALOG_ID, **kwargs: Any) -> gym.Env:
        env = gym.make(env_id, **kwargs)
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()


@pytest.fixture
def dialog_env(make_env: Callable[..., gym.Env]) -> gym.Env:
    """A fresh `AgentRL/Dialog-v0`."""
    return make_env(DIALOG_ID)


@pytest.fixture
def agentgym_here(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
                  ) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``agentgym_here(*argv)``: the `agentgym` command run in this process by its `main`, for tests
    of its messages and exit status (a test of the process itself runs ``python -m agentgym.cli``).
    Returns what `subprocess.run` would; AGENTGYM_TRACEBACK is unset, as a user's shell has it."""
    from agentgym.cli import main

    monkeypatch.delenv("AGENTGYM_TRACEBACK", raising=False)

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        try:
            code = main(list(argv))
        except SystemExit as stop:  # argparse and tyro exit from inside the parse
            code = stop.code if isinstance(stop.code, int) else 1
        out = capsys.readouterr()
        return subprocess.CompletedProcess(["agentgym", *argv], code, out.out, out.err)

    return run


def rss_bytes() -> int:
    """This process's resident set size, from /proc/self/statm (Linux; no psutil needed)."""
    with open("/proc/self/statm") as f:
        resident_pages = int(f.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE")


@pytest.fixture
def rss() -> Callable[[], int]:
    """A function returning the current RSS in bytes."""
    return rss_bytes


#: The longest test files, longest first (each file's time in a default run on two cores): they
#: start first, so that no worker of pytest-xdist (``--dist loadfile`` hands out whole files in
#: collection order, see `pytest_configure`) is left running one of them alone at the end of the
#: run. The rest follow in collection order.
_LONG_FILES = (
    "tests/server/test_server_workers.py",
    "tests/testing/test_defects.py",
    "tests/rayenv/test_rayenv.py",
    "tests/baselines/test_ppo_tool_chains.py",
    "tests/server/test_server_soak.py",
    "tests/baselines/test_ppo_learning.py",
    "tests/agents/test_llm_agents.py",
    "tests/noise/test_noise_rates.py",
    "tests/server/test_server_ws_frames.py",
    "tests/agents/test_exploits.py",
    "tests/leaderboard/test_lb_sealed_readme.py",
    "tests/leaderboard/test_lb_sealed_agents.py",
    "tests/test_cli_errors.py",
    "tests/baselines/test_ppo_calibration.py",
    "tests/eval/test_runner.py",
    "tests/bench/test_suites.py",
    "tests/server/test_server_load.py",
    "tests/server/test_server_slowloris.py",
    "tests/envs/test_reliability.py",
    "tests/server/test_server_backpressure.py",
    "tests/baselines/test_ppo_units.py",
    "tests/leaderboard/test_lb_sealed_run.py",
    "tests/server/test_server_fuzz.py",
    "tests/envs/test_shared_state.py",
    "tests/leaderboard/test_lb_sealed_bounds.py",
    "tests/noise/test_noise_calibration.py",
    "tests/leaderboard/test_lb_cli.py",
    "tests/leaderboard/test_lb_verify.py",
)


def pytest_configure(config: pytest.Config) -> None:
    """pytest-xdist hands out the files of ``--dist loadfile`` in collection order, not re-sorted
    by how many tests each holds (its default): a file's test count says nothing of its time, and
    the longest files hold few tests, so that order would start them last."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest files first (a stable sort: the rest keep their order); tests marked `slow` run
    only when asked for with ``-m`` (as pyproject's marker says)."""
    rank = {path: i for i, path in enumerate(_LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
    if config.option.markexpr:
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
