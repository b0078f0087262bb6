"""The wire format and RELIABILITY L4: hostile bodies are refused before they are parsed in full.

Also L8's duplicate keys: a key twice in one object is refused wherever it is.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import struct
import time
import tracemalloc
import zlib

import lb_support as S
import pydantic
import pytest

from agentgym.leaderboard.submission import (
    FORMAT,
    LIMITS,
    LimitExceeded,
    Limits,
    MalformedSubmission,
    Manifest,
    SubmissionError,
    decode_submission,
    encode_submission,
    gunzip_capped,
    json_depth,
)

MIB = 1024 * 1024


def _manifest_line(**fields: object) -> bytes:
    raw = S.records_bytes(S.records("heuristic"))
    d = S.manifest_for(raw).to_dict()
    d.update(fields)
    return json.dumps(d).encode()


def test_round_trip_keeps_the_records_bytes() -> None:
    raw = S.records_bytes(S.records("heuristic"))
    body = S.body_for(S.records("heuristic"))
    sub = decode_submission(body)
    assert sub.records_sha256 == hashlib.sha256(raw).hexdigest() == sub.manifest.records_sha256
    assert sub.records == S.records("heuristic")
    # `submit` sends the run folder's file byte for byte: sha256sum records.jsonl is the manifest's digest.
    from agentgym.leaderboard.submitting import build_submission

    from_run = decode_submission(build_submission(S.run_dir("heuristic"), model="m", revision="r"))
    file_bytes = (S.run_dir("heuristic") / "records.jsonl").read_bytes()
    assert from_run.manifest.records_sha256 == hashlib.sha256(file_bytes).hexdigest()
    assert gzip.decompress(build_submission(S.run_dir("heuristic"), model="m", revision="r")).endswith(file_bytes)
    head = gzip.decompress(body).split(b"\n", 1)[0]
    assert json.loads(head)["format"] == FORMAT


def test_json_depth_skips_strings() -> None:
    assert json_depth(b'{"a": [1, {"b": "[[[[{{{{"}]}') == 3
    assert json_depth(b'"\\"[[[["') == 0
    assert json_depth(b'[' * 100_000 + b']' * 100_000) == 100_000
    assert json_depth(b"42") == 0


# ============================================================================ L4
def _bomb(total: int) -> bytes:
    """A valid gzip stream of `total` zero bytes, built without compressing them all.

    After a full flush the compressor starts afresh, so every MiB of zeros after the first
    compresses to the same bytes: the stream is that block repeated, then a trailer.
    """
    c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zero = b"\0" * MIB
    first = c.compress(zero) + c.flush(zlib.Z_FULL_FLUSH)
    block = c.compress(zero) + c.flush(zlib.Z_FULL_FLUSH)
    end = c.flush()[:-8]
    crc = 0
    for _ in range(total // MIB):
        crc = zlib.crc32(zero, crc)
    return first + block * (total // MIB - 1) + end + struct.pack("<II", crc, total & 0xFFFFFFFF)


def _incompressible(n: int) -> bytes:
    """`n` bytes of hex that gzip cannot shrink by more than half (so a body of them stays under the ratio cap)."""
    return random.Random(n).randbytes(n // 2).hex().encode()


def _l4_cases() -> list[tuple[str, bytes, Limits, type[SubmissionError], str]]:
    head = _manifest_line()
    good_records = S.records_bytes(S.records("heuristic"))
    deep = b"[" * 10_000 + b"]" * 10_000
    deeper = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    small = Limits(max_decompressed_bytes=1 * MIB)
    noisy = hashlib.sha256(b"seed").digest() * (3 * MIB // 32)  # barely compressible
    cases = [
        ("over the body cap", b"\x1f\x8b" + b"\0" * LIMITS.max_body_bytes, LIMITS, LimitExceeded, "too_large"),
        ("compression bomb (512 MiB of zeros)", _bomb(512 * MIB), LIMITS, LimitExceeded, "decompressed_too_large"),
        ("over the absolute decompressed cap", gzip.compress(noisy, 1), small, LimitExceeded, "decompressed_too_large"),
        ("not gzip", b'{"format": "agentgym-submission/1"}', LIMITS, MalformedSubmission, "not_gzip"),
        ("truncated gzip", S.body_for(S.records("heuristic"))[:-20], LIMITS, MalformedSubmission, "bad_gzip"),
        ("two gzip members", S.body_for(S.records("heuristic")) * 2, LIMITS, MalformedSubmission, "bad_gzip"),
        ("manifest not UTF-8", gzip.compress(head.replace(b'"tests"', b'"t\xe9sts"') + b"\n"), LIMITS,
         MalformedSubmission, "not_utf8"),
        ("overlong UTF-8", gzip.compress(head.replace(b'"tests"', b'"\xc0\xafx"') + b"\n"), LIMITS,
         MalformedSubmission, "not_utf8"),
        ("record not UTF-8", None, LIMITS, MalformedSubmission, "not_utf8"),
        ("manifest 10k deep", gzip.compress(deep + b"\n" + good_records), LIMITS, MalformedSubmission, "too_deep"),
        ("record 10k deep", None, LIMITS, MalformedSubmission, "too_deep"),
        ("record 100k deep", None, LIMITS, MalformedSubmission, "too_deep"),
        ("NaN in a record", None, LIMITS, MalformedSubmission, "bad_json"),
        ("torn records file", None, LIMITS, MalformedSubmission, "torn_records"),
        ("records digest mismatch", gzip.compress(head + b"\n" + good_records + good_records), LIMITS,
         MalformedSubmission, "hash_mismatch"),
        ("no manifest line", gzip.compress(head), LIMITS, MalformedSubmission, "bad_format"),
        ("manifest over 64 KiB", gzip.compress(head[:-1] + b', "x": "' + b"a" * 70_000 + b'"}\n' + good_records),
         LIMITS, LimitExceeded, "manifest_too_large"),
        ("a key twice in the manifest", gzip.compress(head[:-1] + b', "model": "other"}\n' + good_records), LIMITS,
         MalformedSubmission, "duplicate_key"),
        ("a key twice in a record", None, LIMITS, MalformedSubmission, "duplicate_key"),
        ("a key twice, once escaped", None, LIMITS, MalformedSubmission, "duplicate_key"),
        ("a key twice in a nested object", None, LIMITS, MalformedSubmission, "duplicate_key"),
        ("a record line over 8 MiB", None, LIMITS, LimitExceeded, "line_too_long"),
        ("a record of 600,000 values", None, LIMITS, LimitExceeded, "too_many_values"),
    ]
    # Cases whose records are hostile: the manifest carries their true digest, so the limits are what stops them.
    hostile = {
        "record not UTF-8": good_records.replace(b'"heuristic"', b'"heur\xffistic"', 1),
        "record 10k deep": good_records + deep + b"\n",
        "record 100k deep": good_records + deeper + b"\n",
        "NaN in a record": good_records + b'{"reward": NaN}\n',
        "torn records file": good_records[:-1],
        "a key twice in a record": b'{"seed":1,' + good_records[1:],
        "a key twice, once escaped": good_records + b'{"seed":1,"\\u0073eed":2}\n',
        "a key twice in a nested object": good_records.replace(b'"agent":{', b'"agent":{"name":"x",', 1),
        "a record line over 8 MiB": good_records + b'{"pad":"' + _incompressible(8 * MIB) + b'"}\n',
        "a record of 600,000 values": good_records + b'{"pad":"' + _incompressible(MIB) + b'","x":['
                                      + b"0," * 600_000 + b'0]}\n',
    }
    out = []
    for name, body, limits, exc, code in cases:
        if body is None:
            recs = hostile[name]
            line = _manifest_line(records_sha256=hashlib.sha256(recs).hexdigest())
            body = gzip.compress(line + b"\n" + recs)
        out.append((name, body, limits, exc, code))
    return out


def test_l4_hostile_bodies_rejected_before_full_parsing() -> None:
    cases = _l4_cases()
    rejected = 0
    for name, body, limits, exc_type, code in cases:
        t0 = time.perf_counter()
        with pytest.raises(exc_type) as info:
            decode_submission(body, limits)
        assert info.value.code == code, (name, info.value)
        assert time.perf_counter() - t0 < 2.0, name
        rejected += 1
    print(f"\nL4: {rejected} of {len(cases)} hostile bodies rejected")
    assert rejected == len(cases)


def test_l4_bomb_memory_stays_under_twice_the_cap() -> None:
    body = _bomb(1024 * MIB)  # 1 GiB of zeros in about 1 MB
    cap = LIMITS.decompressed_cap(len(body))
    assert cap < 1024 * MIB
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceeded):
            decode_submission(body)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    print(f"\nL4: a {len(body)} byte bomb stopped at a {cap} byte cap; peak {peak} bytes ({peak / cap:.2f}x the cap)")
    assert peak < 2 * cap


def _expansion_bomb(unit: bytes, line_bytes: int, lines: int) -> bytes:
    """A body of `lines` record lines, each `unit` repeated over `line_bytes` (JSON that grows 10x to 20x when
    parsed) with incompressible padding, so that it compresses about 80x: under the ratio cap. It passes
    decompression, the digest and every per-line limit; only the parse budget can stop it."""
    pad = _incompressible(line_bytes // 60)
    rows = [b'{"pad":"%s","x":[%s0]}' % (pad[i:] + pad[:i], unit * (line_bytes // len(unit))) for i in range(lines)]
    records = b"\n".join(rows) + b"\n"
    return gzip.compress(_manifest_line(records_sha256=hashlib.sha256(records).hexdigest()) + b"\n" + records, 6)


def _peak_decoding(body: bytes) -> tuple[SubmissionError, int]:
    tracemalloc.start()
    try:
        with pytest.raises(SubmissionError) as info:
            decode_submission(body)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return info.value, peak


@pytest.mark.parametrize("unit", [b"[],", b"{},", b'{"a":{"b":{}}},', b'{"k":null},', b'"ab",', b"1.5,"])
def test_l4_expansion_bomb_memory_stays_under_twice_the_cap(unit: bytes) -> None:
    body = _expansion_bomb(unit, 64 * 1024, 128)
    cap = LIMITS.decompressed_cap(len(body))
    t0 = time.perf_counter()
    error, peak = _peak_decoding(body)
    elapsed = time.perf_counter() - t0
    print(f"\nL4: {unit.decode()!r} bomb of {len(body)} bytes: {error.code}, peak {peak} bytes "
          f"({peak / cap:.2f}x the {cap} byte cap)")
    assert isinstance(error, LimitExceeded) and error.code == "over_parse_budget"
    assert peak < 2 * cap
    assert elapsed < 10.0


@pytest.mark.slow
def test_l4_expansion_bomb_of_the_red_team_size() -> None:
    # `[],` repeated, 1.11 MiB compressed: 2.8 GB of lists before the schema check was ever reached.
    body = _expansion_bomb(b"[],", MIB // 2, 190)
    cap = LIMITS.decompressed_cap(len(body))
    error, peak = _peak_decoding(body)
    print(f"\nL4: a {len(body) / MIB:.2f} MiB expansion bomb: {error.code}, peak {peak / MIB:.0f} MiB "
          f"({peak / cap:.2f}x the {cap / MIB:.0f} MiB cap)")
    assert error.code == "over_parse_budget" and peak < 2 * cap


def test_l4_honest_bodies_are_well_within_the_parse_budget() -> None:
    for agent, kwargs in S.AGENTS:
        raw = S.records_bytes(S.records(agent, kwargs))
        body = S.body_for(S.records(agent, kwargs))
        parser_limits = Limits(max_parse_ratio=LIMITS.max_parse_ratio / 2)
        assert decode_submission(body, parser_limits).records_bytes == len(raw), agent


def test_bomb_helper_is_a_valid_stream() -> None:
    assert zlib.decompress(_bomb(4 * MIB), 16 + zlib.MAX_WBITS) == b"\0" * (4 * MIB)


def test_gunzip_capped_accepts_exactly_the_cap() -> None:
    data = b"x" * 5000
    assert gunzip_capped(gzip.compress(data), 5000) == data
    with pytest.raises(LimitExceeded):
        gunzip_capped(gzip.compress(data), 4999)


def test_honest_records_compress_under_the_ratio_cap() -> None:
    for agent, kwargs in S.AGENTS:
        raw = S.records_bytes(S.records(agent, kwargs))
        ratio = len(raw) / len(gzip.compress(raw, 9))
        assert ratio < LIMITS.max_ratio / 3, (agent, ratio)


# ============================================================================ the manifest
@pytest.mark.parametrize("change, field", [
    ({"format": "agentgym-submission/0"}, "format"),
    ({"extra": 1}, "extra"),
    ({"model": ""}, "model"),
    ({"model": 42}, "model"),
    ({"agent": "x" * 101}, "agent"),
    ({"agent": "evil\u202egnp.exe"}, "agent"),
    ({"organisation": "a\x00b"}, "organisation"),
    ({"revision": "r1\nr2"}, "revision"),
    ({"description": "ok\u0007"}, "description"),
    ({"records_sha256": "ABC"}, "records_sha256"),
    ({"claimed": {"success": 2, "elo": 3}}, "claimed.elo"),
    ({"claimed": {"success": True}}, "claimed.success"),
    ({"claimed": []}, "claimed"),
])
def test_manifest_is_parsed_strictly(change: dict, field: str) -> None:
    raw = S.records_bytes(S.records("heuristic"))
    d = S.manifest_for(raw).to_dict()
    d.update(change)
    with pytest.raises(MalformedSubmission) as info:
        Manifest.from_dict(d)
    assert info.value.field == field


def test_manifest_missing_field() -> None:
    d = S.manifest_for(b"").to_dict()
    del d["suite"]
    with pytest.raises(MalformedSubmission, match="missing"):
        Manifest.from_dict(d)


#: The bounds of each manifest text field: (most characters, may be blank, newlines allowed).
TEXT_BOUNDS = {"agent": (100, False, False), "model": (200, False, False), "revision": (100, False, False),
               "organisation": (100, True, False), "description": (2000, True, True), "suite": (100, False, False),
               "package_version": (50, False, False)}
SEALED = {"run_id": "r" * 32, "seeds": [5, 0, 2**63 - 1]}


def _manifest(**change: object) -> dict[str, object]:
    d = S.manifest_for(b"").to_dict()
    d.update(change)
    return d


def test_the_manifest_is_a_strict_pydantic_model_with_its_bounds_declared() -> None:
    from pydantic import BaseModel

    assert issubclass(Manifest, BaseModel) and Manifest.model_config["extra"] == "forbid"
    assert Manifest.model_config["strict"] and Manifest.model_config["frozen"]
    schema = Manifest.model_json_schema()
    assert {k: schema["properties"][k]["maxLength"] for k in TEXT_BOUNDS} == {k: b[0] for k, b in TEXT_BOUNDS.items()}
    for name, (most, may_be_blank, newlines) in TEXT_BOUNDS.items():
        assert Manifest.from_dict(_manifest(**{name: "x" * most})).model_dump()[name] == "x" * most
        for value, ok in (("x" * (most + 1), False), (" ", may_be_blank), ("a\nb", newlines), ("a\tb", False)):
            if ok:
                Manifest.from_dict(_manifest(**{name: value}))
                continue
            with pytest.raises(MalformedSubmission) as info:
                Manifest.from_dict(_manifest(**{name: value}))
            assert info.value.field == name and info.value.code == "bad_manifest", (name, value)


@pytest.mark.parametrize("change, field, says", [
    ({"model": 42}, "model", "model must be a string"),
    ({"agent": "x" * 101}, "agent", "agent is longer than 100 characters"),
    ({"revision": "  "}, "revision", "revision must not be empty"),
    ({"agent": "a\ud800b"}, "agent", "agent holds the control character U+D800"),
    ({"organisation": "\u2066x"}, "organisation", "organisation holds the control character U+2066"),
    ({"records_sha256": 7}, "records_sha256", "records_sha256 must be 64 lowercase hex digits"),
    ({"records_sha256": "a" * 64 + "\n"}, "records_sha256", "64 lowercase hex digits"),
    ({"claimed": None}, "claimed", "claimed must be an object"),
    ({"claimed": {"success": "0.5"}}, "claimed.success", "claimed.success must be a number or null"),
    ({"claimed": {"score": float("inf")}}, "claimed.score", "must be a number or null"),
    ({"claimed": {"elo": 1}}, "claimed.elo", "claimed holds 'elo'; claimable: success, score"),
    ({"sealed": None}, "sealed", "sealed must be an object with exactly run_id and seeds"),
    ({"sealed": [1]}, "sealed", "sealed must be an object"),
    ({"sealed": {"run_id": "r" * 32}}, "sealed", "exactly run_id and seeds"),
    ({"sealed": {**SEALED, "extra": 1}}, "sealed", "exactly run_id and seeds"),
    ({"sealed": {**SEALED, "run_id": "short"}}, "sealed.run_id", "16 to 64 URL-safe characters"),
    ({"sealed": {**SEALED, "run_id": "r" * 31 + "/"}}, "sealed.run_id", "URL-safe"),
    ({"sealed": {**SEALED, "seeds": []}}, "sealed.seeds", "sealed.seeds must be 1 to 10000 seeds"),
    ({"sealed": {**SEALED, "seeds": [1, True]}}, "sealed.seeds", "1 to 10000 seeds"),
    ({"sealed": {**SEALED, "seeds": [1, "2"]}}, "sealed.seeds", "1 to 10000 seeds"),
    ({"sealed": {**SEALED, "seeds": [-1]}}, "sealed.seeds", "1 to 10000 seeds"),
    ({"sealed": {**SEALED, "seeds": [2**63]}}, "sealed.seeds", "1 to 10000 seeds"),
    ({"sealed": {**SEALED, "seeds": [3, 3]}}, "sealed.seeds", "sealed.seeds holds a seed twice"),
    ({"sealed": {**SEALED, "seeds": "123"}}, "sealed.seeds", "1 to 10000 seeds"),
    ({"extra": 1, "model": 42, "other": 2}, "extra", "unknown manifest fields ['extra', 'other']"),
    ({"model": 42, "suite": None}, "model", "model must be a string"),
])
def test_manifest_errors_keep_their_codes_fields_and_messages(change: dict, field: str, says: str) -> None:
    with pytest.raises(MalformedSubmission) as info:
        Manifest.from_dict(_manifest(**change))
    assert (info.value.code, info.value.field) == ("bad_manifest", field)
    assert says in info.value.message, info.value.message


def test_missing_fields_are_named_together_before_wrong_ones() -> None:
    d = _manifest(model=42)
    del d["suite"], d["agent"]
    with pytest.raises(MalformedSubmission) as info:
        Manifest.from_dict(d)
    assert info.value.field == "agent" and "missing manifest fields ['agent', 'suite']" in info.value.message


def test_a_manifest_round_trips_with_its_claims_as_floats_and_its_sealed_seeds() -> None:
    m = Manifest.from_dict(_manifest(claimed={"success": 1, "score": None}, sealed=SEALED))
    assert m.claimed == {"success": 1.0, "score": None} and isinstance(m.claimed["success"], float)
    assert m.sealed is not None and m.sealed.seeds == (5, 0, 2**63 - 1)
    assert m.to_dict()["sealed"] == SEALED and Manifest.from_dict(m.to_dict()) == m
    assert "sealed" not in Manifest.from_dict(_manifest()).to_dict()
    with pytest.raises(pydantic.ValidationError):
        m.model = "other"  # type: ignore[misc]  # frozen


def test_check_manifest_text_is_the_manifests_own_rule() -> None:
    from agentgym.leaderboard.submission import check_manifest_text

    assert check_manifest_text("organisation", "") == ""
    for name, value in (("agent", ""), ("description", "x" * 2001), ("model", None), ("suite", "a\x1bb")):
        with pytest.raises(MalformedSubmission) as info:
            check_manifest_text(name, value)
        assert info.value.field == name


def test_encode_refuses_a_wrong_digest() -> None:
    m = S.manifest_for(b"other")
    with pytest.raises(ValueError):
        encode_submission(m, b"records\n")
