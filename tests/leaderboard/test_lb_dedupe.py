"""A run is on the board once, and a copy is refused before it is replayed (docs/RELIABILITY.md, L7).

A copy of records already on the board is refused from its manifest line in under 50 ms (so a
flood of copies delays no one), a copy of a submission still being verified is refused at once,
and a copy whose bytes differ (re-serialised, reordered, relabelled) is refused when it would be
stored. The same run under its own model and revision stays an idempotent resubmission.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
import statistics
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import lb_support as S
import pytest

from agentgym.leaderboard.service import receive
from agentgym.leaderboard.store import MIGRATIONS, SCHEMA_VERSION, Store
from agentgym.leaderboard.submission import LIMITS, Duplicate, SubmissionError, encode_submission

REFUSAL_LIMIT_S = 0.050


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "board.sqlite")


def _receive(store: Store, body: bytes) -> Any:
    return receive(body, store, suites=S.REGISTRY, workers=1)


def test_l7_identical_records_under_new_names_are_refused_before_replay(store: Store) -> None:
    first = _receive(store, S.body_for(S.records("heuristic"), model="original"))
    assert first.status == "ranked"
    times, codes = [], []
    for i in range(20):
        body = S.body_for(S.records("heuristic"), model=f"copy-{i}", agent=f"renamed {i}", organisation="elsewhere")
        t0 = time.perf_counter()
        with pytest.raises(Duplicate) as info:
            _receive(store, body)
        times.append(time.perf_counter() - t0)
        codes.append(info.value.code)
        assert info.value.status == 409 and f"entry {first.entry.id}" in info.value.message
    median = statistics.median(times)
    print(f"\nL7: 20 of 20 copies under new names refused, median {1000 * median:.1f} ms, "
          f"max {1000 * max(times):.1f} ms")
    assert set(codes) == {"duplicate_records"} and store.count() == 1
    assert median < REFUSAL_LIMIT_S
    assert [e.model for e in store.entries()] == ["original"]


def test_l7_a_copy_is_refused_having_read_its_manifest_line_only(store: Store) -> None:
    # After its manifest line this body holds 64 MiB of zeros, far past its decompressed cap: decoding
    # it would refuse it as too large. It is refused as a copy: nothing past the manifest line was read.
    honest = S.body_for(S.records("heuristic"), model="original")
    _receive(store, honest)
    manifest = json.loads(gzip.decompress(honest).split(b"\n", 1)[0])
    manifest["model"] = "a copy"
    body = gzip.compress(json.dumps(manifest).encode() + b"\n" + bytes(64 * 1024 * 1024), 1)
    assert 64 * 1024 * 1024 > LIMITS.decompressed_cap(len(body))
    with pytest.raises(Duplicate) as info:
        _receive(store, body)
    assert info.value.code == "duplicate_records"


def test_l7_resubmission_under_the_same_identity_is_idempotent(store: Store) -> None:
    first = _receive(store, S.body_for(S.records("heuristic"), model="m", revision="r"))
    again = _receive(store, S.body_for(S.records("heuristic"), model="m", revision="r", description="other text"))
    assert again.status == "duplicate" and again.entry.id == first.entry.id and store.count() == 1


def _relabelled(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for rec in recs:
        rec["agent"]["name"] = "my-own-agent"
        rec["agent"]["config"] = {"temperature": 0.7}
    return recs


@pytest.mark.parametrize("name, variant", [
    ("reordered", lambda recs: list(reversed(recs))),
    ("re-serialised", None),
    ("agent relabelled", _relabelled),
])
def test_l7_a_copy_with_other_bytes_is_refused(store: Store, name: str, variant: Any) -> None:
    _receive(store, S.body_for(S.records("heuristic"), model="original"))
    if variant is None:  # the same records, written with spaces and another key order
        raw = b"".join(json.dumps(r, indent=None, separators=(", ", ": ")).encode() + b"\n"
                       for r in S.records("heuristic"))
        body = encode_submission(S.manifest_for(raw, model="a copy"), raw)
    else:
        body = S.body_for(variant(S.records("heuristic")), model="a copy")
    with pytest.raises(Duplicate) as info:
        _receive(store, body)
    assert info.value.code == "duplicate_records", name
    assert store.count() == 1


def test_l7_a_tampered_copy_is_refused_as_tampered(store: Store) -> None:
    _receive(store, S.body_for(S.records("heuristic"), model="original"))
    recs = S.records("heuristic")
    recs[0]["steps"][0]["reward"] = 1.0
    with pytest.raises(SubmissionError) as info:
        _receive(store, S.body_for(recs, model="a copy"))
    assert info.value.code == "replay_mismatch"


def test_l7_copies_of_a_submission_in_flight_are_refused(store: Store) -> None:
    body = S.body_for(S.records("oracle"), model="first")
    digest = S.manifest_for(S.records_bytes(S.records("oracle"))).records_sha256
    with store.in_flight.hold(digest, "records"):
        with pytest.raises(Duplicate) as info:
            _receive(store, S.body_for(S.records("oracle"), model="second"))
    assert info.value.code == "duplicate_in_flight"
    assert _receive(store, body).status == "reference"  # released: the first goes through


def test_l7_concurrent_copies_make_one_entry(store: Store) -> None:
    bodies = [S.body_for(S.records("random", (("seed", 7),)), model=f"racer-{i}") for i in range(16)]
    start = threading.Barrier(len(bodies))

    def submit(body: bytes) -> str:
        start.wait(timeout=30)
        try:
            return _receive(store, body).status
        except SubmissionError as exc:
            return exc.code

    with ThreadPoolExecutor(len(bodies)) as pool:
        outcomes = list(pool.map(submit, bodies))
    assert outcomes.count("ranked") == 1, outcomes
    assert set(outcomes) - {"ranked"} <= {"duplicate_in_flight", "duplicate_records"}
    assert store.count() == 1


def test_store_refuses_a_copy_that_slipped_past_the_checks(store: Store) -> None:
    # Another process may store the run between this one's check and its insert.
    from agentgym.leaderboard.dedupe import play_digest
    from agentgym.leaderboard.submission import decode_submission
    from agentgym.leaderboard.verify import verify_submission

    verified = [verify_submission(decode_submission(S.body_for(S.records("heuristic"), model=m)), S.REGISTRY,
                                  workers=1) for m in ("a", "b")]
    store.add(verified[0], b"body", play_sha256=play_digest(verified[0].records))
    with pytest.raises(Duplicate):
        store.add(verified[1], b"body", play_sha256=play_digest(verified[1].records))
    assert store.count() == 1


def test_schema_1_board_is_migrated_and_its_entries_still_match(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
        raw = S.records_bytes(S.records("heuristic"))
        digest = S.manifest_for(raw).records_sha256
        conn.execute("INSERT INTO submissions (created_at, agent, model, revision, organisation, description, suite, "
                     "package_version, records_sha256, config_hash, agent_config, reference, episodes, summary, "
                     "verify_s) VALUES ('2026-01-01', 'heuristic', 'old', 'r', '', '', ?, '0', ?, 'c', '{}', 0, 16, "
                     "'{}', 1.0)", (S.SUITE.id, digest))
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    old = store.find(S.SUITE.id, records_sha256=digest)
    assert old is not None and old.play_sha256 is None
    with pytest.raises(Duplicate):
        _receive(store, S.body_for(S.records("heuristic"), model="new name"))


# ============================================================================ over HTTP
@pytest.fixture
def live_board(tmp_path: Path) -> Iterator[str]:
    from agentgym.leaderboard.server import create_app

    # The default four verification slots: copies must not need one.
    with S.serving(create_app(tmp_path / "board.sqlite", suites=S.REGISTRY, workers=1)) as url:
        yield url


def _post(url: str, body: bytes) -> tuple[int, dict[str, Any], float]:
    req = urllib.request.Request(url + "/submissions", data=body, method="POST")
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read()), time.perf_counter() - t0
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), time.perf_counter() - t0


def test_l7_a_flood_of_copies_delays_no_one(live_board: str) -> None:
    status, _, _ = _post(live_board, S.body_for(S.records("heuristic"), model="original"))
    assert status == 201
    copies = [S.body_for(S.records("heuristic"), model=f"copy-{i}") for i in range(16)]
    honest = [S.body_for(S.records(*run), model=f"honest-{i}") for i, run in enumerate(S.distinct_runs(2))]
    start = threading.Barrier(len(copies) + len(honest))

    def send(body: bytes) -> tuple[int, dict[str, Any], float]:
        start.wait(timeout=30)
        return _post(live_board, body)

    with ThreadPoolExecutor(len(copies) + len(honest)) as pool:
        answers = list(pool.map(send, copies + honest))
    copy_answers, honest_answers = answers[:len(copies)], answers[len(copies):]
    print(f"\nL7: {sum(s == 409 for s, _, _ in copy_answers)} of {len(copies)} concurrent copies refused (409), "
          f"slowest in {1000 * max(t for _, _, t in copy_answers):.0f} ms; "
          f"{sum(s == 201 for s, _, _ in honest_answers)} of {len(honest)} honest ones accepted, 0 answered 503")
    assert all(s == 409 and a["error"] == "duplicate_records" for s, a, _ in copy_answers), copy_answers
    assert all(s == 201 for s, _, _ in honest_answers), honest_answers
    with urllib.request.urlopen(live_board + "/leaderboard.json", timeout=10) as r:
        assert sum(len(s["rows"]) for s in json.loads(r.read())["suites"]) == 1 + len(honest)
