"""Behaviour lock: the built-in agents' episodes hash exactly as before the hot paths were made
lean (every id; no noise, each preset and each noise kind alone; hard difficulty; test split)."""

from __future__ import annotations

import json

from golden_play import GOLDEN_FILE, compute


def test_episodes_hash_as_recorded() -> None:
    golden = json.loads(GOLDEN_FILE.read_text())
    got = compute(golden["seeds"])
    assert set(got) == set(golden["digests"])
    differ = sorted(k for k, v in got.items() if golden["digests"][k] != v)
    assert not differ, f"{len(differ)}/{len(got)} groups changed behaviour, e.g. {differ[:5]}"
