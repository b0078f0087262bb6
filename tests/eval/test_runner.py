"""The runner: resume after SIGKILL (R1), torn lines (R2), agent faults (R3), backends agree (the
ray backend's test is in `tests/rayenv/test_rayenv.py`, on that module's one Ray cluster)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentgym.eval.records import RecordWriter, read_records
from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs

ENV = "AgentRL/Dialog-v0"
HERE = Path(__file__).parent


def _strip(rec: dict[str, Any]) -> dict[str, Any]:
    """A record without its wall-clock fields (the only ones allowed to differ between runs)."""
    return {k: v for k, v in rec.items() if k != "timing"}


def _by_key(path: Path) -> dict[str, dict[str, Any]]:
    recs = list(read_records(path))
    keys = [r["key"] for r in recs]
    assert len(keys) == len(set(keys)), "an episode was recorded twice"
    return {r["key"]: _strip(r) for r in recs}


def _record(key: str, **fields: Any) -> dict[str, Any]:
    """A hand-made record with every field a record has (`read_records` refuses fewer)."""
    from agentgym.eval.records import _required_fields

    return {**{name: None for name in _required_fields() if name != "schema_version"}, "key": key, **fields}


def _jobs(n: int, noise: str | None = None) -> list[EpisodeJob]:
    return [EpisodeJob(ENV, seed=s, trial=t, noise=noise) for s in range(n) for t in range(2)]


def test_workers_and_backends_give_identical_records(tmp_path: Path) -> None:
    jobs = _jobs(30, noise="medium")
    one = tmp_path / "one.jsonl"
    two = tmp_path / "two.jsonl"
    run_jobs(jobs, AgentSpec("heuristic"), one, workers=1, progress=False)
    run_jobs(jobs, AgentSpec("heuristic"), two, workers=2, progress=False)
    a, b = _by_key(one), _by_key(two)
    assert set(a) == {j.key for j in jobs}
    assert a == b


def test_async_backend_gives_identical_records(tmp_path: Path) -> None:
    jobs = _jobs(10)
    local, aio = tmp_path / "local.jsonl", tmp_path / "async.jsonl"
    run_jobs(jobs, AgentSpec("heuristic"), local, workers=1, progress=False)
    run_jobs(jobs, AgentSpec("heuristic"), aio, backend="async", concurrency=4, progress=False)
    assert _by_key(local) == _by_key(aio)


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_r1_sigkill_five_times_then_resume(tmp_path: Path) -> None:
    """A run killed with SIGKILL five times and resumed: 0 lost, 0 duplicated, same numbers."""
    n = 1000
    out = tmp_path / "killed.jsonl"
    cmd = [sys.executable, "-m", "agentgym.cli", "eval", ENV, "--agent", "heuristic", "--episodes", str(n),
           "--workers", "1", "--out", str(out), "--json"]
    kills = 0
    for _ in range(5):
        # Kill mid-run, once it has written a further 100 episodes (wherever it is then).
        target = _lines(out) + 100
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while proc.poll() is None and _lines(out) < target and time.monotonic() < deadline:
            time.sleep(0.02)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
    assert kills == 5
    assert _lines(out) < n
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    summary = json.loads(done.stdout)
    killed = _by_key(out)
    clean = tmp_path / "clean.jsonl"
    run_jobs([EpisodeJob(ENV, seed=s) for s in range(n)], AgentSpec("heuristic"), clean, workers=1, progress=False)
    reference = _by_key(clean)
    assert set(killed) == set(reference)  # 0 lost (and _by_key asserts 0 duplicated)
    assert killed == reference  # identical episodes, so identical numbers
    assert summary["n"] == n and summary["resumed"] > 0


def test_r2_a_torn_last_line_is_cut_and_its_episode_rerun(tmp_path: Path) -> None:
    out = tmp_path / "torn.jsonl"
    jobs = [EpisodeJob(ENV, seed=s) for s in range(6)]
    run_jobs(jobs, AgentSpec("heuristic"), out, workers=1, progress=False)
    data = out.read_bytes()
    lines = data.split(b"\n")
    torn = b"\n".join(lines[:-2]) + b"\n" + lines[-2][: len(lines[-2]) // 2]  # last record half written
    out.write_bytes(torn)
    assert len(list(read_records(out))) == 5  # the torn line is skipped when reading
    with pytest.raises(ValueError, match="torn"):
        list(read_records(out, strict=True))
    summary = run_jobs(jobs, AgentSpec("heuristic"), out, workers=1, progress=False)
    assert summary.ran == 1 and summary.skipped == 5
    assert len(_by_key(out)) == 6
    for raw in out.read_bytes().split(b"\n")[:-1]:
        json.loads(raw)  # the file always parses


def test_a_writer_that_writes_nothing_leaves_no_file(tmp_path: Path) -> None:
    # A run that fails before its first episode ends (an agent that cannot be built) leaves nothing.
    with RecordWriter(tmp_path / "run" / "records.jsonl"):
        pass
    assert not (tmp_path / "run").exists()


def test_a_line_without_the_fields_of_a_record_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "other.jsonl"
    with RecordWriter(out) as w:
        w.write(_record("a"))
        w.write({"key": "b", "metrics": {}})
    with pytest.raises(ValueError, match=r":2: not an episode record \(no actions, agent"):
        list(read_records(out))


def test_a_malformed_line_in_the_middle_is_an_error_naming_it(tmp_path: Path) -> None:
    out = tmp_path / "bad.jsonl"
    with RecordWriter(out) as w:
        w.write(_record("a"))
    with open(out, "a", encoding="ascii") as fh:
        fh.write('{"schema_version":2,not json\n')  # begins as a record does: the writer appends after it
    with RecordWriter(out) as w:
        w.write(_record("b"))
    with pytest.raises(ValueError, match=":2:"):
        list(read_records(out))


@pytest.mark.parametrize("agent,expect", [
    ("fake_agents:RaisingAgent", "RuntimeError"),
    ("fake_agents:NonStringAgent", "TypeError"),
])
def test_r3_agent_faults_are_recorded_and_the_run_goes_on(tmp_path: Path, agent: str, expect: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    out = tmp_path / "faults.jsonl"
    jobs = [EpisodeJob(ENV, seed=s) for s in range(10)]
    summary = run_jobs(jobs, AgentSpec(agent), out, workers=1, progress=False)
    recs = _by_key(out)
    assert summary.ran == 10 and len(recs) == 10  # 0 runs aborted
    errors = [r for r in recs.values() if r["agent_error"] is not None]
    assert len(errors) == 5 and all(r["agent_error"]["type"] == expect for r in errors)
    assert all(r["metrics"] == {} for r in errors)


def test_r3_a_hanging_agent_times_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    out = tmp_path / "hang.jsonl"
    jobs = [EpisodeJob(ENV, seed=s) for s in range(4)]  # seeds 0 and 3 hang
    t0 = time.perf_counter()
    run_jobs(jobs, AgentSpec("fake_agents:HangingAgent"), out, workers=1, timeout_s=0.5, progress=False)
    assert time.perf_counter() - t0 < 10  # the per-episode timeout holds
    recs = _by_key(out)
    timed_out = sorted(r["seed"] for r in recs.values() if r["agent_error"])
    assert timed_out == [0, 3]
    assert all(recs[k]["agent_error"]["type"] == "AgentTimeout" for k in recs if recs[k]["seed"] in (0, 3))


def test_records_carry_provenance_and_survive_any_string(tmp_path: Path) -> None:
    out = tmp_path / "odd.jsonl"
    jobs = [EpisodeJob(ENV, seed=0)]

    run_jobs(jobs, AgentSpec("heuristic"), out, workers=1, progress=False)
    rec = next(read_records(out))
    assert list(json.loads(out.read_text().splitlines()[0]))[0] == "schema_version"
    prov = rec["provenance"]
    assert prov["agentgym"] and prov["python"] and prov["gymnasium"]
    assert "git_commit" in prov and "git_dirty" in prov
    assert rec["env"]["spec"]["id"] == ENV
    # Lone surrogates and control characters survive the file.
    with RecordWriter(out) as w:
        w.write(_record("odd", actions=["\ud800 \x00 \u202e \u200b" + "\u0301" * 100]))
    odd = [r for r in read_records(out) if r["key"] == "odd"][0]
    assert odd["actions"] == ["\ud800 \x00 \u202e \u200b" + "\u0301" * 100]


def test_record_file_is_ascii(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    run_jobs([EpisodeJob(ENV, seed=1)], AgentSpec("heuristic"), out, workers=1, progress=False)
    out.read_bytes().decode("ascii")
    assert os.path.getsize(out) > 0


@pytest.mark.parametrize("content", [b"theme = 'dark'", b"theme = 'dark'\n", b'{"a": 1}', b"a note\nthat goes on",
                                     b'{"schema_version":2,"key":"x"}\nnot a record\n'])
def test_the_writer_refuses_a_file_that_is_not_records(tmp_path: Path, content: bytes) -> None:
    """R4: --out onto a config or a note is refused with one line, and the file is left as it was."""
    out = tmp_path / "settings.toml"
    out.write_bytes(content)
    with pytest.raises(ValueError, match="not a record"):
        run_jobs([EpisodeJob(ENV, seed=0)], AgentSpec("random"), out, workers=1, progress=False)
    with pytest.raises(ValueError, match="not a record"):
        RecordWriter(out)
    assert out.read_bytes() == content


def test_the_writer_refuses_a_symbolic_link_and_a_folder(tmp_path: Path) -> None:
    target = tmp_path / "precious.txt"
    target.write_bytes(b"keep me")
    link = tmp_path / "records.jsonl"
    link.symlink_to(target)
    for path in (link, tmp_path):
        with pytest.raises(ValueError, match="symbolic link|not a regular file"):
            run_jobs([EpisodeJob(ENV, seed=0)], AgentSpec("random"), path, workers=1, progress=False)
    assert target.read_bytes() == b"keep me"


def test_a_torn_record_is_still_repaired(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    run_jobs([EpisodeJob(ENV, seed=0)], AgentSpec("random"), out, workers=1, progress=False)
    whole = out.read_bytes()
    for cut in (5, 12, len(whole) // 2):  # inside the leading key, and in the middle of the record
        out.write_bytes(whole + whole[:cut])
        RecordWriter(out).close()
        assert out.read_bytes() == whole


def test_the_writer_writes_a_whole_line_through_short_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A write call may take fewer bytes than asked (a signal, a full pipe or disk): the rest follows.
    import agentgym.eval.records as records

    real_write, calls = os.write, []

    def short_write(fd: int, data: Any) -> int:
        calls.append(len(data))
        return real_write(fd, bytes(data[:100]))

    monkeypatch.setattr(records.os, "write", short_write)
    out = tmp_path / "short.jsonl"
    with RecordWriter(out, fsync=True) as writer:
        lines = [writer.write(_record(f"k{i}", actions=["x" * 350])) for i in range(2)]
    assert out.read_text("ascii") == "".join(lines) and len(calls) >= 8
    assert [r["key"] for r in read_records(out, strict=True)] == ["k0", "k1"]
