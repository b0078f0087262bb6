"""Noise draws keyed on the call they act on (the noise spec's ``draws=call``): the same call
meets the same fault, whatever else the agent calls.

A layer that acts on tool calls (a tool failure, a corrupted result, simulated latency) keyed
so draws for a call from bits of the episode seed, the trial, the call itself (its tool and
arguments, top-level keys in sorted order) and how many times the episode made that very call
before; never from a stream that every call advances. So the calls an agent adds or leaves out
(reads it pads a turn with, a batch split another way) never change which of its other calls
fail, are corrupted or how long they take; two agents that make the same calls meet the same
faults (common random numbers for comparing them), and a retry of a call is a new draw (its
occurrence count has moved on). Each kind reads bits of its own from the call's digest, so
adding or removing one layer never shifts another's draws.

The gate of each fault (does it strike this call?) and latency's one draw read the digest
directly; a fault that strikes gets a generator (`Rng`) seeded from the digest for its further
draws (which failure mode, which value to corrupt and how). The digest costs each call a hash,
which is why the episode's stream stays the default.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any

from agentgym.core._fast import seeded_random
from agentgym.core.action_types import ToolCall
from agentgym.core.seeding import Rng

__all__ = ["CallDraws", "KINDS", "call_key"]

#: The kinds that draw per call, each with its 64 bits of the call's digest.
KINDS: dict[str, int] = {"tool_failure": 0, "corruption": 1, "latency": 2}
_SEED_SLOT = 3  # the bits a struck fault's generator is seeded from (with its kind's slot)
_UNIT = 2.0 ** -53
_WORDS = struct.Struct("<4Q").unpack
_blake2b = hashlib.blake2b


def call_key(name: str, arguments: Any) -> str:
    """A call as one string: the tool and its arguments (top-level keys in sorted order), so two
    calls with equal arguments are the same call whatever order the agent wrote them in."""
    if type(arguments) is dict and len(arguments) > 1:
        keys = list(arguments)
        ordered = sorted(keys)
        if keys != ordered:
            arguments = {k: arguments[k] for k in ordered}
    return f"{name}\x1f{arguments!r}"


class CallDraws:
    """An episode's per-call draws (`AgentEnv.call_uniform`, `AgentEnv.call_rng`).

    Args:
        seed: the episode seed.
        trial: the episode's trial (`options["trial"]`): another trial meets other faults.
    """

    __slots__ = ("_prefix", "_counts", "_counted", "_call", "_words", "_pending")

    def __init__(self, seed: int, trial: int) -> None:
        self._prefix = f"{int(seed)}/{int(trial)}/"
        self._counts: dict[str, int] = {}  # call key -> how many of the episode's calls made it
        self._counted = 0  # how many of the episode's call records are counted
        self._call: ToolCall | None = None  # the call `_words` are of (the one being made)
        self._words: tuple[int, ...] = ()
        self._pending: tuple[int, str] | None = None  # that call's record index and key, once recorded

    def words(self, records: list[dict[str, Any]], call: ToolCall) -> tuple[int, ...]:
        """Four 64-bit words of `call`'s digest, the call being made after the calls `records`
        holds (the episode's, in order: each valid one counts as an occurrence of its call)."""
        if call is self._call:
            return self._words
        counts = self._counts
        n_records = len(records)
        if self._counted < n_records:
            pending = self._pending
            for index in range(self._counted, n_records):
                record = records[index]
                if not record["valid"]:
                    continue  # never reached the tools, so no layer drew for it
                if pending is not None and index == pending[0]:
                    key = pending[1]  # the call digested last: its key is known
                else:
                    key = call_key(record["name"], record.get("arguments"))
                counts[key] = counts.get(key, 0) + 1
            self._counted = n_records
        key = call_key(call.name, call.arguments)
        self._pending = (n_records, key)
        text = f"{self._prefix}{key}#{counts.get(key, 0)}".encode("utf-8")
        self._call, self._words = call, _WORDS(_blake2b(text, digest_size=32).digest())
        return self._words

    @staticmethod
    def uniform(words: tuple[int, ...], kind: str) -> float:
        """The uniform draw in [0, 1) of `kind` for the call of `words`."""
        return (words[KINDS[kind]] >> 11) * _UNIT

    @staticmethod
    def rng(words: tuple[int, ...], kind: str) -> Rng:
        """A generator for `kind`'s further draws on the call of `words` (unrelated to its
        uniform and to any other kind's)."""
        return seeded_random(Rng, words[_SEED_SLOT] << 2 | KINDS[kind])
