"""The watchdog of ``env_calls="inline"``: it interrupts only calls that overrun, and never lands
its exception outside the call it meant (which would hit the event loop)."""

from __future__ import annotations

import time

import pytest

from agentgym.server.inline import StepTimeout, Watchdog


class Overran(TimeoutError):
    pass


def test_a_runaway_call_is_interrupted_and_the_next_runs() -> None:
    dog = Watchdog(0.1, Overran)
    try:
        def spin() -> None:
            while True:
                pass

        t = time.monotonic()
        with pytest.raises(Overran):
            dog.run(spin)
        assert time.monotonic() - t < 1.5
        assert dog.run(lambda x: x + 1, 41) == 42
    finally:
        dog.stop()


def test_env_code_cannot_swallow_the_interrupt() -> None:
    dog = Watchdog(0.1, Overran)
    try:
        def stubborn() -> None:
            while True:
                try:
                    while True:
                        pass
                except Exception:  # noqa: BLE001 (what a careless env does)
                    pass

        with pytest.raises(Overran):
            dog.run(stubborn)
    finally:
        dog.stop()


def test_errors_of_the_call_pass_through() -> None:
    dog = Watchdog(1.0, Overran)
    try:
        with pytest.raises(ZeroDivisionError):
            dog.run(lambda: 1 / 0)
    finally:
        dog.stop()


def test_the_interrupt_never_lands_outside_a_call() -> None:
    # Calls that end right at the timeout, thousands of times: each either returns or raises
    # Overran from run(); a StepTimeout anywhere else would fail this test (or crash it).
    dog = Watchdog(0.002, Overran)
    outcomes = {"returned": 0, "overran": 0}
    try:
        def about_the_timeout() -> None:
            end = time.monotonic() + 0.002
            while time.monotonic() < end:
                pass

        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            try:
                dog.run(about_the_timeout)
                outcomes["returned"] += 1
            except Overran:
                outcomes["overran"] += 1
            for _ in range(50):  # code between calls, where a stray interrupt would surface
                pass
    except StepTimeout:
        pytest.fail(f"the watchdog's interrupt landed outside a call after {outcomes}")
    finally:
        dog.stop()
    assert outcomes["returned"] + outcomes["overran"] > 100


def test_run_belongs_to_one_thread() -> None:
    import threading

    dog = Watchdog(1.0, Overran)
    errors: list[BaseException] = []
    t = threading.Thread(target=lambda: errors.append(pytest.raises(RuntimeError, dog.run, int).value))
    t.start()
    t.join()
    dog.stop()
    assert errors and "thread" in str(errors[0])


def test_calls_leave_the_interpreter_as_they_found_it_so_a_profiler_can_run() -> None:
    # Clearing a thread's async exception when none was set leaves CPython 3.11's eval breaker
    # raised for good: every call then takes the slow path, and a profiler spins on it for ever.
    # A watchdog that made no strike must clear nothing (checked in a process of its own).
    import subprocess
    import sys

    code = ("import cProfile; from agentgym.server.inline import Watchdog\n"
            "dog = Watchdog(5.0, TimeoutError)\n"
            "for _ in range(3): dog.run(sum, [1, 2])\n"
            "profile = cProfile.Profile(); profile.enable()\n"
            "total = sum(dog.run(abs, -i) for i in range(2000))\n"
            "profile.disable(); dog.stop(); print(total)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout.strip() == str(sum(range(2000))), done.stderr
