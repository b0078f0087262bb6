"""`agentgym.core.data`: the families' data files are read strictly and within a size budget."""

from __future__ import annotations

from pathlib import Path

import pytest

import agentgym
from agentgym.core.data import MAX_DATA_FILE_BYTES, read_json_file

PACKAGE = Path(agentgym.__file__).parent


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b'{"a": 1, "a": 2}', "duplicate key 'a'"),
        (b'{"rate": NaN}', "NaN"),
        (b'{"rate": 1e999}', "out of range"),
        (b'{"a": 1} trailing', "Extra data"),
        (b'{"name": "caf\xe9"}', "utf-8"),
        (b"[" * 100_000, "deeper than"),
    ],
)
def test_a_malformed_data_file_is_an_error_naming_it(tmp_path: Path, body: bytes, needle: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(body)
    with pytest.raises(ValueError, match="bad.json: ") as info:
        read_json_file(path, "bad.json")
    assert needle in str(info.value)


def test_a_data_file_past_the_budget_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b'["' + b"x" * MAX_DATA_FILE_BYTES + b'"]')
    with pytest.raises(ValueError, match=f"at most {MAX_DATA_FILE_BYTES} bytes"):
        read_json_file(path, "big.json")


def test_every_shipped_data_file_reads_strictly() -> None:
    files = sorted(PACKAGE.glob("**/data/*.json"))
    assert len(files) >= 8
    for path in files:
        read_json_file(path, str(path.relative_to(PACKAGE)))
