"""The record writer's fast encoder equals the plain canonical JSON wherever it answers, and it
answers for what records hold."""

from __future__ import annotations

import dataclasses
import math
import random
import re
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentgym.eval import canonical_fast, records
from agentgym.eval.canonical_fast import canonical_bytes
from agentgym.eval.records import RecordWriter, canonical_json, read_records
from agentgym.eval.runner import AgentSpec, EpisodeJob, run_jobs

pytest.importorskip("orjson")


def _agrees(obj: object) -> bytes | None:
    """`canonical_bytes(obj)`, checked equal to the plain encoding where it answers."""
    fast = canonical_bytes(obj)
    if fast is not None:
        assert fast == canonical_json(obj).encode("ascii"), obj
    return fast


# Every code point, surrogates, controls and DEL included.
_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=()), max_size=12)
_FLOATS = st.floats(allow_nan=False, allow_infinity=False) | st.floats(-1e-3, 1e-3)
_SCALARS = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | _FLOATS | _TEXT
_TREES = st.recursive(
    _SCALARS,
    lambda kids: st.lists(kids, max_size=4) | st.tuples(kids, kids)
    | st.dictionaries(_TEXT, kids, max_size=4) | st.dictionaries(st.integers(-5, 5), kids, max_size=2),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(_TREES)
def test_equals_the_plain_encoding_wherever_it_answers(obj: object) -> None:
    _agrees(obj)


def test_every_float_magnitude() -> None:
    rnd = random.Random(7)
    floats = [s * m * 10.0**e for e in range(-323, 308) for m in (1.0, 1.5, 2.5, 9.999999, 1.2345678901234567)
              for s in (1, -1)]
    floats += [struct.unpack("<d", rnd.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(20_000)]
    floats += [rnd.uniform(-1e-3, 1e-3) for _ in range(5_000)] + [0.0, -0.0, 5e-324, 1e-4, -1e-4]
    for x in filter(math.isfinite, floats):
        fast = _agrees({"x": [x]})
        if (x == 0 or abs(x) >= 1e-4) and "0.0000" not in repr(x):
            assert fast is not None, x  # only small ones, and digits that read like them, go the plain way


def test_text_it_answers_for_and_text_it_leaves() -> None:
    assert _agrees({"a": "tab\tnl\ncr\rbs\\quote\"\x00\x1f/~"}) is not None  # escapes as the plain encoder's
    assert _agrees({"a": "café"}) is None  # UTF-8 out: the plain way escapes it
    assert _agrees({"a": "del\x7f"}) is None
    assert _agrees({"a": "lone \ud800"}) is None
    assert _agrees({"a": "1e-5 in words, 2.5e-7 too"}) is None  # looks like a small float: plain, never wrong
    assert _agrees({"a": "re-check e-mail"}) is not None


def test_what_orjson_refuses_or_passes_through_goes_the_plain_way() -> None:
    assert _agrees({"n": 2**64}) is None
    assert _agrees({1: "int key"}) is None

    class Text(str):
        pass

    @dataclasses.dataclass
    class Point:
        x: int

    assert canonical_bytes({"t": Text("x")}) is None
    assert canonical_bytes({"p": Point(1)}) is None
    with pytest.raises(TypeError):
        canonical_json({"p": Point(1)})  # the plain encoder still refuses it, as before


def test_real_records_take_the_fast_path(tmp_path: Path) -> None:
    out = tmp_path / "records.jsonl"
    for env_id in ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0"):
        run_jobs([EpisodeJob(env_id, seed=s, noise=n) for s in range(3) for n in (None, "medium")],
                 AgentSpec("heuristic"), out, workers=1, progress=False)
    recs = list(read_records(out))
    assert len(recs) == 18
    for rec in recs:
        assert _agrees(rec) is not None, rec["key"]


def test_the_writer_writes_the_same_line_either_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_jobs([EpisodeJob("AgentRL/ToolUse-v0", seed=s) for s in range(2)], AgentSpec("heuristic"),
             tmp_path / "a.jsonl", workers=1, progress=False)
    recs = list(read_records(tmp_path / "a.jsonl"))
    recs.append({**recs[0], "task": {"note": "caf\u00e9 \ud800 1e-05"}})  # a record the fast path leaves
    with RecordWriter(tmp_path / "fast.jsonl") as writer:
        fast = [writer.write(r) for r in recs]
    monkeypatch.setattr(records, "canonical_bytes", lambda obj: None)
    with RecordWriter(tmp_path / "plain.jsonl") as writer:
        plain = [writer.write(r) for r in recs]
    assert fast == plain
    assert (tmp_path / "fast.jsonl").read_bytes() == (tmp_path / "plain.jsonl").read_bytes()
    assert canonical_fast.canonical_bytes(recs[-1]) is None


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=40).map(lambda b: bytes(b"0123456789e-. x"[c % 15] for c in b)))
def test_the_small_float_check_is_its_plain_search(text: bytes) -> None:
    plain = b"0.0000" in text or re.search(rb"[0-9]e-", text) is not None
    assert canonical_fast._may_hold_small_float(text) == plain
