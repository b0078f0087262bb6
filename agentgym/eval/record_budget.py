"""`RecordBudget`: keeps an episode's record under a cap as the episode is played.

A record holds every action and a summary of every step, so an agent that writes long turns
makes a long record: an action may hold up to 64 KiB of text (written up to 6x that in the
record's ASCII JSON), and an episode up to 256 turns. The budget is checked before each turn is
stepped: a turn that could take the record past its cap is not stepped, and the episode ends
there as an agent error (`RecordTooLarge`), so what is recorded stays under the cap and still
replays.

Counting costs almost nothing while the record is small: each action is sized as the JSON it is
written as (for a string, one C call), and each step is estimated from that and from how many
calls, errors and noise events it holds (a step's calls are parsed from its action, and the
env's own text per call, error or event is short). Once the estimate passes a quarter of the
cap, every step is sized exactly as its JSON, the ones before included, so near the cap the
count is exact.
"""

from __future__ import annotations

from typing import Any, Sequence

from agentgym.core.protocol import MAX_CALLS_PER_TURN
from agentgym.eval.records import canonical_json

__all__ = ["RecordBudget", "RecordTooLarge", "MAX_RECORD_BYTES"]

#: The most bytes one record line may take (the board refuses longer ones; the largest honest
#: record of the built-in agents is about 36 KB).
MAX_RECORD_BYTES = 8 * 1024 * 1024
#: A step's bytes beyond its calls' own text: its digest, reward, turn, and the keys.
_STEP_BASE = 512
#: The env's own text per call (its id, kind and verdict), error (code and message) or noise event.
_PER_ITEM = 1024


class RecordTooLarge(Exception):
    """The episode's record would pass its cap: the turn was not stepped and the episode ends."""


class RecordBudget:
    """The bytes an episode's record may still take.

    Args:
        max_bytes: the cap on the record's line.
    """

    #: The bytes counted so far (actions and steps).
    used = 0
    _exact = False

    def __init__(self, max_bytes: int = MAX_RECORD_BYTES) -> None:
        self.max_bytes = max_bytes
        # The record's other parts (provenance, env spec, task, agent, metrics, timing): the
        # episode's summary grows with its turns, so an eighth of the cap, and at least 64 KiB.
        self._room = max_bytes - max(64 * 1024, max_bytes // 8)

    def check(self, turn: Any) -> int:
        """The size of `turn` as recorded, if stepping it keeps the record under the cap.

        Raises:
            RecordTooLarge: the turn, and the step it would make, could pass the cap.
        """
        size = len(canonical_json(turn))
        # The step's calls are parsed from the turn: their names, ids and arguments are parts of
        # its text, plus the env's own per call and per error.
        if self.used + 2 * size + _WORST_STEP > self._room:
            raise RecordTooLarge(f"the episode's record would pass {self.max_bytes} bytes (its actions so far take "
                                 f"{self.used}; this one {size} as JSON): the episode ends here")
        return size

    def stepped(self, size: int, step: dict[str, Any], actions: Sequence[Any], steps: Sequence[dict[str, Any]]) -> None:
        """Count a turn of `size` and the `step` it made (the last of `steps`, as `actions` holds it)."""
        if self._exact:
            self.used += size + len(canonical_json(step))
            return
        items = len(step["calls"]) + len(step["errors"]) + len(step["noise"])
        self.used += 2 * size + _STEP_BASE + items * _PER_ITEM
        if self.used > self._room // 4:
            # From here on, exactly: the estimate may be loose, and the cap is near.
            self._exact = True
            self.used = sum(len(canonical_json(a)) for a in actions) + sum(len(canonical_json(s)) for s in steps)


#: What a step may add beyond twice its turn: its base, and the env's text of every call it may make.
_WORST_STEP = _STEP_BASE + 2 * MAX_CALLS_PER_TURN * _PER_ITEM
