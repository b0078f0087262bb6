"""Replaying records while their run plays (`agentgym.leaderboard.replay_ahead`), and verification
that takes those verdicts (`verify_submission(replayed=...)`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import lb_support as S
import pytest

from agentgym.eval.records import RecordWriter
from agentgym.leaderboard.replay_ahead import ReplayAhead, line_digest
from agentgym.leaderboard.submission import Rejected, decode_submission
from agentgym.leaderboard.verify import background_pool, replay_lines, verify_submission


def _lines(recs: list[dict[str, Any]], tmp: Path) -> list[str]:
    # The lines exactly as a board writes them.
    writer = RecordWriter(tmp / "records.jsonl")
    out = [writer.write(r).rstrip("\n") for r in recs]
    writer.close()
    return out


def _jobs() -> dict[str, Any]:
    return {j.key: j for j in S.SUITE.jobs()}


def _ahead_over(recs: list[dict[str, Any]], tmp: Path, pool: Any = background_pool,
                batch: int = 3) -> tuple[ReplayAhead, dict[str, str]]:
    ahead = ReplayAhead(pool, batch=batch)
    jobs = _jobs()
    lines = _lines(recs, tmp)
    for rec, line in zip(recs, lines):
        ahead.add(jobs[rec["key"]], line)
    return ahead, {rec["key"]: line_digest(line) for rec, line in zip(recs, lines)}


def test_verdicts_from_a_worker_process_give_the_same_entry_as_a_full_replay(tmp_path: Path) -> None:
    recs = S.records("heuristic")
    ahead, digests = _ahead_over(recs, tmp_path, batch=3)
    background_pool().submit(int).result(timeout=120)  # the one worker takes batches in order: all begun
    replayed = ahead.verdicts(digests, timeout_s=120)
    # 16 records in batches of 3: the last one (a single record) is never handed over.
    assert len(replayed) == 15 and set(replayed.values()) == {None}
    sub = decode_submission(S.body_for(recs))
    full = verify_submission(sub, S.REGISTRY, workers=1)
    ahead_of = verify_submission(decode_submission(S.body_for(recs)), S.REGISTRY, workers=1, replayed=replayed)
    assert ahead_of.summary == full.summary and ahead_of.records == full.records


def test_a_line_changed_after_its_hand_over_is_replayed_again_and_rejected(tmp_path: Path) -> None:
    recs = S.records("heuristic")
    ahead, digests = _ahead_over(recs, tmp_path, pool=lambda: _INLINE, batch=1)
    tampered = S.records("heuristic")
    order = [j.key for j in S.SUITE.jobs()]
    victim = sorted(tampered, key=lambda r: order.index(r["key"]))[5]
    victim["steps"][0]["reward"] = 1.0
    digests[victim["key"]] = line_digest(_lines([victim], tmp_path / "t")[0])
    replayed = ahead.verdicts(digests)
    assert victim["key"] not in replayed and len(replayed) == len(recs) - 1
    with pytest.raises(Rejected) as info:
        verify_submission(decode_submission(S.body_for(tampered)), S.REGISTRY, workers=1, replayed=replayed)
    assert (info.value.episode, info.value.field) == (victim["key"], "reward")


def test_a_mismatch_found_ahead_rejects_naming_the_first_episode_in_suite_order(tmp_path: Path) -> None:
    order = [j.key for j in S.SUITE.jobs()]
    recs = sorted(S.records("random", (("seed", 0),)), key=lambda r: order.index(r["key"]))
    early, late = recs[2], recs[-2]
    early["steps"][1]["obs_sha256"] = "f" * 64
    late["steps"][0]["reward"] = 1.0
    # Only the late one was replayed ahead: the early one is replayed at the end and named.
    ahead, digests = _ahead_over([late], tmp_path, pool=lambda: _INLINE, batch=1)
    replayed = ahead.verdicts(digests)
    assert replayed[late["key"]] is not None
    with pytest.raises(Rejected) as info:
        verify_submission(decode_submission(S.body_for(recs)), S.REGISTRY, workers=1, replayed=replayed)
    assert (info.value.episode, info.value.step, info.value.field) == (early["key"], 2, "obs_sha256")
    # And with the early one replayed ahead too, the verdict names the same episode.
    ahead, digests = _ahead_over([early, late], tmp_path / "both", pool=lambda: _INLINE, batch=1)
    with pytest.raises(Rejected) as again:
        verify_submission(decode_submission(S.body_for(recs)), S.REGISTRY, workers=1,
                          replayed=ahead.verdicts(digests))
    assert (again.value.episode, again.value.step, again.value.field) == (early["key"], 2, "obs_sha256")


class _Broken(Executor):
    """A pool whose every batch fails, as a worker that died would fail it."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_exception(RuntimeError("the worker is gone"))
        return future


class _Refusing(Executor):
    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        raise RuntimeError("cannot schedule new futures after shutdown")


@pytest.mark.parametrize("pool", [_Broken(), _Refusing()], ids=["batches-fail", "pool-shut-down"])
def test_a_failed_worker_leaves_its_episodes_to_the_final_replay(tmp_path: Path, pool: Executor) -> None:
    recs = S.records("heuristic")
    ahead, digests = _ahead_over(recs, tmp_path, pool=lambda: pool, batch=2)
    replayed = ahead.verdicts(digests)
    assert replayed == {}
    verified = verify_submission(decode_submission(S.body_for(recs)), S.REGISTRY, workers=1, replayed=replayed or None)
    assert verified.summary == verify_submission(decode_submission(S.body_for(recs)), S.REGISTRY, workers=1).summary


def test_batches_not_begun_are_withdrawn_and_cancel_drops_the_rest(tmp_path: Path) -> None:
    recs = S.records("heuristic")
    gate = _Gated()
    ahead, digests = _ahead_over(recs, tmp_path, pool=lambda: gate, batch=2)
    assert gate.submitted == 8
    gate.release_first()
    # The first batch runs; the 7 that were never started are withdrawn, not waited for.
    replayed = ahead.verdicts(digests, timeout_s=60)
    assert len(replayed) == 2 and gate.cancelled == 7
    ahead.cancel()
    ahead.add(_jobs()[recs[0]["key"]], _lines(recs[:1], tmp_path / "late")[0])
    assert gate.submitted == 8  # nothing is handed over once cancelled


def test_a_batch_in_flight_that_does_not_finish_is_not_waited_for_past_the_limit(tmp_path: Path) -> None:
    # A worker starved of CPU (it runs only when nothing else wants it) must not hold the run.
    recs = S.records("heuristic")
    gate = _Gated()  # never released: its first batch stays in flight
    ahead, digests = _ahead_over(recs, tmp_path, pool=lambda: gate, batch=4)
    started = time.monotonic()
    assert ahead.verdicts(digests, timeout_s=0.3) == {}
    assert time.monotonic() - started < 5


class _Gated(Executor):
    """Runs the first batch when told to, in a thread; the others wait (and can be cancelled)."""

    def __init__(self) -> None:
        self.submitted = self.cancelled = 0
        self._pool = ThreadPoolExecutor(1)
        self._first: tuple[Future[Any], Any, tuple[Any, ...]] | None = None

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.submitted += 1
        future: Future[Any] = Future()
        if self._first is None:
            self._first = (future, fn, args)
            future.set_running_or_notify_cancel()
        else:
            future.add_done_callback(lambda f: setattr(self, "cancelled", self.cancelled + f.cancelled()))
        return future

    def release_first(self) -> None:
        assert self._first is not None
        future, fn, args = self._first
        self._pool.submit(lambda: future.set_result(fn(*args)))


class _Inline(Executor):
    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args, **kwargs))
        return future


_INLINE = _Inline()


def test_replay_lines_parses_the_bytes_it_is_given() -> None:
    recs = S.records("heuristic")[:2]
    jobs = _jobs()
    lines = [S.records_bytes([r]).rstrip(b"\n") for r in recs]
    assert replay_lines([(jobs[r["key"]], line) for r, line in zip(recs, lines)]) == [None, None]


def test_workers_exit_when_the_process_that_made_them_is_killed(tmp_path: Path) -> None:
    # A board killed (or stopped by a signal: no exit hooks run) must not leave replay workers behind.
    script = textwrap.dedent("""
        import os, sys, time
        from agentgym.leaderboard.verify import background_pool
        print(background_pool().submit(os.getpid).result(timeout=120), flush=True)
        time.sleep(120)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        workers = [int(p) for p in line.split()]
        assert workers, "the pool started no worker"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(_alive(p) for p in workers):
            time.sleep(0.1)
        assert not any(_alive(p) for p in workers), "a worker outlived the process that made it"
    finally:
        if proc.poll() is None:
            proc.kill()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_batches_are_bounded_in_bytes(tmp_path: Path) -> None:
    """Records are handed over once their lines pass the byte bound, however few they are, so
    what waits in the board and what is pickled to the worker at once stays small."""
    handed: list[list[int]] = []

    class Pool:
        def submit(self, fn: Any, items: list[Any]) -> Future[Any]:
            handed.append([len(data) for _, data in items])
            done: Future[Any] = Future()
            done.set_result([None] * len(items))
            return done

    recs = S.records("heuristic")[:6]
    lines = _lines(recs, tmp_path)
    jobs = _jobs()
    bound = 2 * max(map(len, lines))
    ahead = ReplayAhead(lambda: Pool(), batch=16, batch_bytes=bound)
    for rec, line in zip(recs, lines):
        ahead.add(jobs[rec["key"]], line)
    # 16 a batch by count, so every batch went for its bytes: the line that passed the bound
    # was its last, and no batch waited for more than that.
    assert handed and all(sum(sizes) >= bound > sum(sizes[:-1]) for sizes in handed)
    assert sum(map(len, handed)) <= len(lines) and len(handed) >= 2
