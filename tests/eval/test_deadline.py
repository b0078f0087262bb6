"""The per-episode deadline: SIGALRM interrupts an agent past it; a run leaves no timer behind."""

from __future__ import annotations

import signal
import time

import pytest

from agentgym.eval.deadline import AgentTimeout, Deadline, alarm_handler

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="no SIGALRM on this platform")


def test_an_episode_past_its_deadline_is_interrupted_and_one_within_it_is_not() -> None:
    with alarm_handler():
        with pytest.raises(AgentTimeout, match="0.2 s"):
            with Deadline(0.2):
                time.sleep(2)
        with Deadline(5):
            time.sleep(0.01)


def test_an_alarm_between_episodes_is_ignored_and_the_run_clears_the_timer() -> None:
    before = signal.getsignal(signal.SIGALRM)
    with alarm_handler():
        with Deadline(0.1):
            pass
        time.sleep(0.3)  # the first deadline's alarm rings here, with no episode armed
        _interrupted_after(0.1)
        with Deadline(0.2):
            pass
    _left_as_found(before)
    time.sleep(0.3)  # nothing rings after the run


def test_a_deadline_outside_a_run_installs_and_restores_the_handler_itself() -> None:
    before = signal.getsignal(signal.SIGALRM)
    _interrupted_after(0.1)
    with Deadline(5):
        pass
    _left_as_found(before)


def _interrupted_after(seconds: float) -> None:
    """A deadline of `seconds` interrupts an episode that runs on past it."""
    with pytest.raises(AgentTimeout):
        with Deadline(seconds):
            time.sleep(2)


def _left_as_found(before: object) -> None:
    """No timer runs, and SIGALRM has the handler it had before."""
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is before
