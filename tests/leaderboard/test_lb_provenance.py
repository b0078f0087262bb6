"""Provenance is checked, not taken on its word: package versions and duplicate keys (docs/RELIABILITY.md, L8).

A record says which agentgym made it; the board replays it in its own envs, so only records of a
version whose episodes are this one's can be verified: any other is refused, naming the versions
it takes, and the version of every entry is shown on the board. A key twice in one JSON object
(which one counts depends on the reader) is refused wherever it is.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Callable

import lb_support as S
import pytest

import agentgym
from agentgym.leaderboard.board import board_dict, build_board
from agentgym.leaderboard.page import render_html, render_markdown
from agentgym.leaderboard.service import receive
from agentgym.leaderboard.store import Store
from agentgym.leaderboard.submission import MalformedSubmission, Rejected, decode_submission, encode_submission
from agentgym.leaderboard.verify import REPLAYABLE_VERSIONS, verify_submission


def _with_version(version: str) -> list[dict[str, Any]]:
    recs = S.records("heuristic")
    for rec in recs:
        rec["provenance"]["agentgym"] = version
    return recs


@pytest.mark.parametrize("version", ["9.9.9", "0.0.1", agentgym.__version__ + ".post1", "latest"])
def test_l8_a_version_the_board_cannot_replay_is_refused(tmp_path: Path, version: str) -> None:
    # The manifest and every record agree on the forged version: only the board's own list can refuse it.
    store = Store(tmp_path / "board.sqlite")
    with pytest.raises(Rejected) as info:
        receive(S.body_for(_with_version(version), package_version=version), store, suites=S.REGISTRY, workers=1)
    assert info.value.code == "unreplayable_version" and info.value.field == "package_version"
    assert agentgym.__version__ in info.value.message
    assert store.count() == 0


def test_l8_records_and_manifest_must_name_the_same_version() -> None:
    sub = decode_submission(S.body_for(_with_version("9.9.9")))  # the manifest says this version
    with pytest.raises(Rejected) as info:
        verify_submission(sub, S.REGISTRY, workers=1)
    assert info.value.code == "mixed_versions"


def test_l8_listed_versions_are_replayed() -> None:
    assert agentgym.__version__ in REPLAYABLE_VERSIONS
    sub = decode_submission(S.body_for(_with_version("0.0.9"), package_version="0.0.9"))
    verified = verify_submission(sub, S.REGISTRY, workers=1, versions=(agentgym.__version__, "0.0.9"))
    assert verified.manifest.package_version == "0.0.9"


def test_l8_the_version_is_shown_on_the_board(tmp_path: Path) -> None:
    store = Store(tmp_path / "board.sqlite")
    receive(S.body_for(S.records("heuristic")), store, suites=S.REGISTRY, workers=1)
    sections = build_board(store.entries(), S.REGISTRY)
    md = render_markdown(sections)
    header = next(line for line in md.splitlines() if line.startswith("| Rank"))
    row = next(line for line in md.splitlines() if line.startswith("| 1 "))
    assert header.rstrip(" |").endswith("agentgym") and row.rstrip(" |").endswith(agentgym.__version__)
    page = render_html(sections)
    assert '>agentgym</th></tr></thead>' in page and f'<td class="text">{agentgym.__version__}</td></tr>' in page
    assert board_dict(sections)["suites"][0]["rows"][0]["package_version"] == agentgym.__version__


@pytest.mark.parametrize("where, records", [
    ("top level", lambda raw: b'{"seed":1,' + raw[1:]),
    ("an escaped spelling", lambda raw: raw.replace(b'{"actions":', b'{"\\u0073eed":1,"actions":', 1)),
    ("the agent", lambda raw: raw.replace(b'"agent":{', b'"agent":{"privileged":true,', 1)),
    ("a step", lambda raw: raw.replace(b'"steps":[{', b'"steps":[{"reward":1.0,', 1)),
])
def test_l8_duplicate_keys_in_records_are_refused(where: str, records: Callable[[bytes], bytes]) -> None:
    raw = records(S.records_bytes(S.records("heuristic")))
    assert raw != S.records_bytes(S.records("heuristic")), where
    body = encode_submission(S.manifest_for(raw, records_sha256=hashlib.sha256(raw).hexdigest()), raw)
    with pytest.raises(MalformedSubmission) as info:
        decode_submission(body)
    assert info.value.code == "duplicate_key", where
    assert info.value.status == 400 and "twice" in info.value.message
