"""The record schema compiled to native code: a quick yes for the records that pass it.

The plain validator (`agentgym.leaderboard.record_schema`, the `jsonschema` package) costs more
per record than replaying the episode; `jsonschema_rs` checks the same committed schema, of the
same draft, in native code. Its yes is final; its no is not: the plain validator then
decides and explains. Where the two drafts' readings differ the native one is the stricter (a
``pattern``'s ``$`` does not match before a final newline there), so the verdict is always the
plain validator's, which `tests/leaderboard/test_lb_record_schema.py` checks over a corpus of
edited records.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping

from agentgym.leaderboard.record_schema import RECORD_SCHEMA

__all__ = ["known_valid"]


@functools.lru_cache(maxsize=1)
def _compiled() -> Any:
    import jsonschema_rs

    return jsonschema_rs.validator_for(RECORD_SCHEMA)


def known_valid(rec: Mapping[str, Any]) -> bool:
    """True if the committed schema accepts `rec`; False means only: ask the plain validator."""
    try:
        return bool(_compiled().is_valid(rec))
    except ValueError:  # a value it cannot read as JSON: the plain validator's to judge
        return False
