"""What the hash policy reads: the public transcript of an episode (`Transcript`) and the hashed
features of a conversation and of each candidate action (`HashFeaturizer`).

History features are words and word pairs of the latest messages; a candidate's features are its
own words and its structural features: how it relates to the conversation in terms that name no
tool (where each of its values was last mentioned, under which key, in which place of a list,
what followed), so that they carry over to tools never seen in training.
"""

from __future__ import annotations

import json
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from agentgym.agents.transcript import NAME, Path, decode_json, key_stem, result_values
from agentgym.baselines.ppo.relations import Call, limit_features, sibling_features, tool_limits
from agentgym.core.render import answer_messages
from agentgym.users.understanding.words import stem

__all__ = ["Transcript", "HashFeaturizer", "CandidateFeatures", "FEATURES", "ToolNeeds"]

#: The hash policy's features' version. 1: the repeats, a tool's calls and failure, the names,
#: the keys, the limits; 2 adds the kind of a candidate, the turns left, whether a tool is done
#: yet or unlocks a value another tool lacks, and where a call's values came from; 3 added the
#: hours of the people a call names and the yes/no fields of the record each value sits in; 4
#: reads where a value sits off the decoded result (its path: its key, its record, its place in a
#: list) where 1 to 3 scanned the JSON text, and knows no hours (a baseline knows no domain). Only
#: the current version is computed: a checkpoint of an older one must be trained again. 5 adds how
#: a call stands beside the other calls of its tool (`relations`): whether its record holds more of
#: what the user's latest words name; and which side of a limit the brief ties to its tool its
#: amount falls on.
FEATURES = 5
_WORD = re.compile(r"[a-z0-9_]+(?:\.[0-9]+)?")


# ================================================================================ transcript
@dataclass(slots=True)
class Message:
    """One chat message, with its lower-cased text and words computed once."""

    role: str
    name: str
    text: str
    lower: str = ""
    words: list[str] = field(default_factory=list)
    #: The message's hashed bag of words, and its features at each recent age (filled and
    #: kept by `HashFeaturizer`: a message never changes).
    bag: list[int] | None = None
    aged: dict[int, list[int]] = field(default_factory=dict)
    #: A tool result's JSON value (None: not JSON), its scalars with their paths, lower-cased
    #: as a candidate names them (None: not JSON), and the keys of its records.
    data: Any = None
    values: list[tuple[Path, str]] | None = None
    keys: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.lower = self.text.lower()
        self.words = _WORD.findall(self.lower)
        if self.role == "tool" and self.text.startswith(("{", "[")):
            self.data = decode_json(self.text)
            if isinstance(self.data, (dict, list)):
                leaves = result_values(self.data)
                self.values = [(path, str(v).lower()) for path, v in leaves if not isinstance(v, bool)]
                self.keys = {p.lower() for path, _ in leaves for p in path if isinstance(p, str)}

    def find(self, anchor: str) -> Path | int | None:
        """Where the message mentions `anchor` (lower case): in a tool result, the path of the
        first value that holds it (a string containing it, a number equal to it); in any other
        text, its first offset; None where it does not."""
        if self.values is None:
            pos = self.lower.find(anchor)
            return pos if pos >= 0 else None
        for path, value in self.values:
            if value == anchor or (anchor in value and not _NUMERIC.fullmatch(value)):
                return path
        return None


_SCHEMA_WORD = re.compile(r"[a-z]{3,}")
_NUMERIC = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


class ToolNeeds:
    """What the tool schemas say about the flow of values between tools: per tool, the kinds of
    value (stems) its name and description name (``list_accounts``, "The company's bank
    accounts": account, bank, company ...), and per kind, the tools with a required free-form
    argument of that kind (``create_transfer.from_account``: account). A look-up whose words
    name a kind some other tool needs and nothing has given yet is the step a chain lacks."""

    def __init__(self, tools: Sequence[Any]) -> None:
        self.vocabulary: dict[str, frozenset[str]] = {}
        self.needed_by: dict[str, set[str]] = {}
        for t in tools:
            fn = t.get("function", t) if isinstance(t, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                continue
            name = fn["name"]
            text = (name.replace("_", " ") + " " + str(fn.get("description") or "")).lower()
            self.vocabulary[name] = frozenset(stem(w) for w in _SCHEMA_WORD.findall(text))
            params = fn.get("parameters") or {}
            props = params.get("properties") or {}
            for arg in params.get("required") or ():
                schema = props.get(arg)
                if isinstance(schema, dict) and "enum" not in schema and schema.get("type") in ("string", "array"):
                    self.needed_by.setdefault(key_stem(arg), set()).add(name)

    def unlocks(self, tool: str, known: set[str]) -> bool:
        """Whether `tool`'s words name a kind of value another tool needs that `known` lacks."""
        return any(s not in known and self.needed_by[s] - {tool} for s in self.vocabulary.get(tool, ())
                   if s in self.needed_by)


class Transcript:
    """The public conversation of one episode, the agent's own turns included.

    Built from exactly what an agent sees: ``reset(info)``, then ``add(action, info)`` after
    each step. Nothing hidden (no ``info["episode_summary"]``, no noise log) is read.
    """

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.actions: Counter[str] = Counter()
        #: The episode's turn budget (``info["max_turns"]`` at reset; 0 when the env gives none).
        self.max_turns = 0
        #: What the tool schemas say (`ToolNeeds`), and the limits the brief ties to tools
        #: (`relations.tool_limits`), read once at reset.
        self.needs = ToolNeeds(())
        self.limits: list[tuple[float, frozenset[str]]] = []
        #: Per-step memo of featurizers (entity -> features); cleared whenever messages arrive.
        self.anchor_cache: dict[str, Any] = {}

    def reset(self, info: Mapping[str, Any]) -> None:
        self.messages = []
        self.actions = Counter()
        budget = info.get("max_turns")
        self.max_turns = int(budget) if isinstance(budget, int) and not isinstance(budget, bool) else 0
        self.needs = ToolNeeds(info.get("tools") or ())
        self._extend(info.get("messages", ()))
        self.limits = tool_limits([m.lower for m in self.messages if m.role == "system"], self.needs.vocabulary)

    def add(self, action: str, info: Mapping[str, Any]) -> None:
        self.messages.append(Message("assistant", "", action))
        self.actions[action] += 1
        # The step's messages open with the env's reading of this action: the raw action stands for it.
        self._extend(answer_messages(info.get("messages", [])))

    def _extend(self, messages: Any) -> None:
        self.anchor_cache = {}
        for m in messages:
            self.messages.append(Message(m.get("role", ""), m.get("name", "") or "", m.get("content") or ""))

    @property
    def turns(self) -> int:
        return sum(self.actions.values())

    def render(self) -> str:
        """The conversation as text, one ``[role] text`` block per message (as observations)."""
        parts = []
        for m in self.messages:
            tag = f"tool {m.name}" if m.role == "tool" else m.role
            parts.append(f"[{tag}] {m.text}")
        return "\n".join(parts) + "\n[assistant] "


# ================================================================================ features
class HashFeaturizer:
    """Hashed n-gram features of a conversation and of candidate actions.

    History features: words and word pairs of the last few messages (by age and role), a bag of
    every word said so far (by role), how many times each kind of message occurred, the turn.
    Candidate word features: the tool and argument names and values, or the words of a message;
    and, for each value the candidate names (every argument value, a message's capitalised
    names), where the conversation last mentioned it: in a tool result, the words and the yes/no
    fields of the record it sits in (``available: true``, ``final_sale: true``), read off the
    decoded result; in any other message, the words around it; and what came next (a ``fully
    booked`` error, a rejection): the pointer a bag of words cannot make on its own. Candidate structural features (`_shape`) say the same in terms that
    name no tool, so that they carry over to tools never seen in training. Hashing is CRC32
    (stable across runs and processes, unlike `hash()`). What does not change between steps (a
    message's bag of words, a candidate's own words) is computed once and cached.

    Args:
        buckets: the number of hash buckets (feature ids are in ``[0, buckets)``).
        recent: how many of the latest messages get position-tagged features.
        version: the features' version a policy trained with (`FEATURES`, the only one computed).
        words: with False, no word at all: only the structural features of the history (the
            kinds of messages, their order, the turn) and of each candidate, which name no tool and
            no value (a diagnostic of what carries over to unseen domains, `bench_ceiling.py`).
    """

    def __init__(self, buckets: int = 1 << 14, recent: int = 4, version: int = FEATURES, words: bool = True) -> None:
        if version != FEATURES:
            raise ValueError(f"features version {version!r} is not computed any more (this agentgym computes version "
                             f"{FEATURES}: where a value sits is read off the decoded result); train the policy again")
        self.buckets = int(buckets)
        self.recent = int(recent)
        self.version = int(version)
        self.words = bool(words)
        self._cache: dict[str, int] = {}
        self._static: dict[str, tuple[np.ndarray, list[str], list[str], str]] = {}

    def _ids(self, features: list[str]) -> list[int]:
        cache, out = self._cache, []
        if len(cache) > 1_000_000:
            cache.clear()
        for f in features:
            i = cache.get(f)
            if i is None:
                i = cache[f] = zlib.crc32(f.encode()) % self.buckets
            out.append(i)
        return out

    def _bag(self, m: Message) -> list[int]:
        if m.bag is None:
            m.bag = self._ids([f"h:{m.role}:{w}" for w in m.words[:64]])
        return m.bag

    def history(self, t: Transcript) -> np.ndarray:
        feats = [f"turn:{min(t.turns, 20)}", _turns_left(t)]
        msgs = [m for m in t.messages if m.role != "system"]
        kinds: Counter[str] = Counter()
        ids: list[int] = []
        for m in msgs:
            tag = f"{m.role}:{m.name}" if self.words else m.role
            kinds[tag] += 1
            if "[error" in m.text[:20]:
                kinds[f"{tag}:error"] += 1
            if self.words:
                ids += self._bag(m)
        feats += [f"n:{k}:{min(v, 5)}" for k, v in sorted(kinds.items())]
        if not self.words:
            feats += [f"r{age}:{m.role}" + (":error" if m.text.startswith("[error") else ":ask" if "?" in m.text else "")
                      for age, m in enumerate(reversed(msgs[-self.recent:]))]
            return np.unique(np.asarray(self._ids(feats), dtype=np.int64))
        for age, m in enumerate(reversed(msgs[-self.recent:])):
            aged = m.aged.get(age)
            if aged is None:
                pre = f"r{age}:{m.role}:{m.name}:"
                w = m.words[:48]
                aged = m.aged[age] = self._ids([pre, *(pre + x for x in w), *(pre + a + "_" + b for a, b in zip(w, w[1:]))])
            ids += aged
        return np.unique(np.asarray(ids + self._ids(feats), dtype=np.int64))

    def _own(self, text: str) -> tuple[np.ndarray, list[str], list[str], str]:
        """A candidate's features of its own (no context), the entities it names, the stem of
        the argument each entity fills (``""`` in a message) and its tool's name; cached."""
        hit = self._static.get(text)
        if hit is not None:
            return hit
        feats: list[str] = []
        anchors: list[str] = []
        slots: list[str] = []
        tool = ""
        call = _as_call(text)
        if call is not None:
            name, args = call
            tool = name
            feats += [f"c:tool:{name}" if self.words else "c:call", f"c:nargs:{min(len(args), 6)}"]
            for k, v in args.items():
                if self.words:
                    feats.append(f"c:arg:{name}:{k}")
                values = v if isinstance(v, list) else [v]
                if isinstance(v, list):
                    feats.append(f"c:list:{min(len(v), 6)}")
                for x in values:
                    s = str(x).lower()
                    if self.words:
                        feats += [f"c:val:{k}:{w}" for w in _WORD.findall(s)[:8]]
                    # Every value of a call is looked up in the conversation (where it came from
                    # is what tells a good call from a bad one); a message's names only.
                    if isinstance(x, (str, int, float)) and not isinstance(x, bool) and len(s) >= 2:
                        anchors.append(s)
                        slots.append(key_stem(k))
        else:
            w = _WORD.findall(text.lower())[:32] if self.words else []
            feats.append("c:msg")
            feats += [f"c:w:{x}" for x in w]
            feats += [f"c:w:{a}_{b}" for a, b in zip(w, w[1:])]
            anchors += [p.lower() for p in NAME.findall(text)]
            slots += [""] * len(anchors)
        if len(self._static) > 200_000:
            self._static.clear()
        out = self._static[text] = (np.asarray(self._ids(feats), dtype=np.int64), anchors[:6], slots[:6], tool)
        return out

    def _anchor(self, anchor: str, t: Transcript) -> Anchor:
        """Where the conversation last mentioned `anchor`; cached per step (see `Anchor`)."""
        hit = t.anchor_cache.get(anchor)
        if hit is not None:
            return hit
        msgs, words, shape, hits = t.messages, [], [], 0
        key, asked = "", 0
        for i in range(len(msgs) - 1, -1, -1):
            m = msgs[i]
            if m.role == "system":
                continue
            at = m.find(anchor)
            if at is None:
                continue
            pre = f"a{hits}:"
            shape += [pre + m.role, pre + f"age:{min(len(msgs) - 1 - i, 8)}"]
            if isinstance(at, int):  # plain text: the words around it
                if self.words:
                    words.append(pre + m.role + ":" + m.name)
                    words += [pre + "w:" + x for x in _WORD.findall(m.lower[max(0, at - 32): at + len(anchor) + 48])]
            else:  # a value of a tool result: its record's words and flags, its key, its place
                place = _place(m.data, at)
                if self.words:
                    words.append(pre + m.role + ":" + m.name)
                    words += [pre + "w:" + x for x in place.words[:24]]
                    words += [pre + f for f in place.flags]
                shape += [pre + p for p in place.position]
                if hits == 0:
                    key = place.key
                    asked = _asked(place.values, self._recent_user(t))
                    shape.append(pre + f"asked:{min(asked, 3)}")
                said = self._said(t)
                shape.append(pre + f"said:{min(len({w for w in place.words if w in said and w != anchor}), 3)}")
            if i + 1 < len(msgs):
                nxt = msgs[i + 1]
                if self.words:
                    words += [f"{pre}n:{nxt.role}:{x}" for x in nxt.words[:16]]
                shape.append(f"{pre}n:{nxt.role}" + (":error" if nxt.text.startswith("[error") else ""))
            hits += 1
            if hits == 2:
                break
        if not hits:
            shape.append("a:none")
        out = t.anchor_cache[anchor] = Anchor(np.asarray(self._ids(words), dtype=np.int64), self._ids(shape), key,
                                              asked)
        return out

    @staticmethod
    def _recent_user(t: Transcript) -> str:
        """The user's latest three messages, lower case (what the current request names); cached per step."""
        text = t.anchor_cache.get("__recent__")
        if text is None:
            text = t.anchor_cache["__recent__"] = "\n".join([m.lower for m in t.messages if m.role == "user"][-3:])
        return text

    @staticmethod
    def _said(t: Transcript) -> set[str]:
        """The user's words of more than three letters so far; cached per step."""
        said = t.anchor_cache.get("__said__")
        if said is None:
            said = t.anchor_cache["__said__"] = {w for u in t.messages if u.role == "user" for w in u.words
                                                 if len(w) > 3}
        return said

    def _shape(self, text: str, t: Transcript, anchors: list[str], slots: list[str], tool: str) -> list[int]:
        """A candidate's structural features: how it relates to the conversation, in terms that
        name no tool and no value, so they carry over to tools never seen in training: its kind
        (a call, a question, a reply), how often it and its tool were taken, whether its tool
        last failed or never succeeded yet, whether the user's words name its tool, the turns
        left; per value: the key it sat under (its argument's stem or another), the role and age
        of the message it came from, its place in a list, what followed, and where it came from
        (`_origin`); per call: how many of its values each source gave, none guessed, and the
        conjunctions that mark the natural next step of a chain (a tool not yet done whose values
        are all known, one of them from the result just in), and which side of a limit the brief
        ties to its tool its numbers fall on (`relations.limit_features`)."""
        state = t.anchor_cache.get("__state__")
        if state is None:
            state = t.anchor_cache["__state__"] = _transcript_state(t)
        feats = [f"s:repeat:{min(t.actions.get(text, 0), 3)}", "s:call" if tool else "s:msg"]
        ids: list[int] = []
        fresh = "fresh" if tool not in state.succeeded else "done"
        feats.append(_turns_left(t))
        if tool:
            feats.append(f"s:toolcalls:{min(state.calls.get(tool, 0), 3)}")
            if tool in state.failed:
                feats.append("s:toolfailed")
            words = [w[:5] for w in tool.lower().split("_") if len(w) > 2]
            feats.append(f"s:named:{min(sum(1 for w in words if w in state.said), 2)}")
            unlocks = "unlocks" if t.needs.unlocks(tool, state.known) else "gives"
            feats += [f"s:{fresh}", f"s:{unlocks}", f"s:{unlocks}:{fresh}"]
        else:
            kind = "ask" if "?" in text else "reply"
            feats += [f"s:{kind}", f"s:{kind}:asked:{min(state.asks, 3)}", f"s:{kind}:after:{state.last}"]
        sources: Counter[str] = Counter()
        for a, slot in zip(anchors, slots):
            anchor = self._anchor(a, t)
            ids += anchor.shape
            if slot:
                feats.append("s:keymatch" if anchor.key and key_stem(anchor.key) == slot
                             else "s:keyother" if anchor.key else "s:keynone")
                origin = self._origin(a, t, state.answer_start)
                sources[origin] += 1
                feats.append(f"s:from:{origin}")
                number = _number(a)
                if number is not None:  # a value against the limits the brief states
                    feats += [f"s:limit:{w}:{'over' if number > v else 'within'}" for w, v in state.limits]
        if tool:
            feats += limit_features(tool, anchors, t.limits, self.words)
            feats += [f"s:src:{k}:{min(v, 3)}" for k, v in sorted(sources.items())]
            sourced = "s:guessed" if sources.get("none") else "s:sourced"
            latest = "latest" if sources.get("latest") else "older"
            feats += [sourced, f"{sourced}:{fresh}", f"{sourced}:{fresh}:{latest}", f"{sourced}:{fresh}:{state.last}"]
        return self._ids(feats) + ids

    @staticmethod
    def _origin(anchor: str, t: Transcript, answer_start: int) -> str:
        """Where a call's value came from, the most telling source first: the messages that
        answered the agent's last action (``latest``), the user's words, an earlier tool
        result, the brief; ``none`` when only the agent itself said it (a guess). Cached per step."""
        key = "__origin__" + anchor
        hit = t.anchor_cache.get(key)
        if hit is not None:
            return hit
        roles: set[str] = set()
        for i, m in enumerate(t.messages):
            if m.role != "assistant" and m.find(anchor) is not None:
                roles.add("latest" if i >= answer_start and m.role != "system" else m.role)
        out = next((name for role, name in (("latest", "latest"), ("user", "user"), ("tool", "tool"),
                                            ("system", "brief")) if role in roles), "none")
        t.anchor_cache[key] = out
        return out

    def candidates(self, texts: Sequence[str], t: Transcript) -> CandidateFeatures:
        """Every candidate's features: its own words, its structural features (with how a call
        stands beside the other calls of its tool, `relations.sibling_features`), and the words
        around each distinct value it names (shared between candidates, a place's check, booking
        and details, so embedded once per step, not per candidate)."""
        own_ids: list[np.ndarray] = []
        shape_ids: list[np.ndarray] = []
        entity_ids: list[np.ndarray] = []
        index: dict[str, int] = {}
        links: list[list[int]] = []
        calls: list[Call] = []
        for text in texts:
            own, anchors, slots, tool = self._own(text)
            own_ids.append(own)
            shape_ids.append(np.asarray(self._shape(text, t, anchors, slots, tool), dtype=np.int64))
            mine = []
            for a in anchors:
                if a not in index:
                    index[a] = len(entity_ids)
                    entity_ids.append(self._anchor(a, t).words)
                mine.append(index[a])
            links.append(mine)
            found = [self._anchor(a, t) for a in anchors] if tool else []
            calls.append(Call(tool, anchors if tool else [], [f.asked for f in found]))
        for j, extra in enumerate(sibling_features(calls)):
            if extra:
                shape_ids[j] = np.concatenate([shape_ids[j], np.asarray(self._ids(extra), dtype=np.int64)])
        return CandidateFeatures(own_ids, shape_ids, entity_ids, links)


@dataclass(slots=True)
class Anchor:
    """Where a value a candidate names was last mentioned: the words around it and after it
    (`words`, embedded with the candidate's words), its structural features (`shape`: role,
    age, place in a list, whether the user named its record, what kind of message followed)
    and the JSON key it sat under (``""`` if none); and how many values of its record the user's
    latest words name (`asked`, 0 outside a tool result)."""

    words: np.ndarray
    shape: list[int]
    key: str
    asked: int


@dataclass(slots=True)
class CandidateFeatures:
    """One step's candidate features (see `HashFeaturizer.candidates`)."""

    own: list[np.ndarray]
    shape: list[np.ndarray]
    entities: list[np.ndarray]
    links: list[list[int]]


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a value sits in a tool result: the words of its record (the innermost object around
    it: its keys and values), the record's yes/no fields (``f:final_sale:true``), the key it is
    the value of (or, as a list item, the list's key) and its place in the innermost list around
    it (``p:first``, ``p:i<k>``, ``p:last``, ``p:single``; none outside a list); and the record's
    values, lower case, each whole (its scalars and the items of its lists of scalars)."""

    words: list[str]
    flags: list[str]
    key: str
    position: list[str]
    values: list[str]


def _place(data: Any, path: Path) -> _Place:
    """The `_Place` of the value at `path` in the decoded result `data`."""
    node, record, index, length = data, None, -1, 0
    for p in path:
        if isinstance(node, dict):
            record = node
        elif isinstance(node, list):
            index, length = int(p), len(node)
        node = node[p]
    scalars = [(str(k).lower(), v) for k, v in (record or {}).items() if isinstance(v, (str, int, float))]
    words = _WORD.findall(" ".join(f"{k} {str(v).lower()}" for k, v in scalars))
    flags = [f"f:{k}:{'true' if v else 'false'}" for k, v in scalars if isinstance(v, bool)][:8]
    key = next((p for p in reversed(path) if isinstance(p, str)), "").lower()
    position: list[str] = []
    if index >= 0:
        position.append("p:first" if index == 0 else f"p:i{min(index, 5)}")
        if index == length - 1:
            position.append("p:single" if index == 0 else "p:last")
    values = [str(v).lower() for _, v in scalars if not isinstance(v, bool)]
    values += [str(x).lower() for v in (record or {}).values() if isinstance(v, list)
               for x in v if isinstance(x, (str, int, float)) and not isinstance(x, bool)]
    return _Place(words, flags, key, position, values)


def _asked(values: Sequence[str], recent: str) -> int:
    """How many of a record's values (of three characters or more) the user's latest words name."""
    return sum(1 for v in dict.fromkeys(values) if len(v) >= 3 and v in recent)



_LIMIT = re.compile(r"\b([a-z]+)\s+(\d+(?:\.\d+)?)\b")


@dataclass(slots=True)
class _State:
    """What `_transcript_state` reads off a transcript once per step."""

    #: Per tool: how often the agent called it; the tools whose last call failed; those with a
    #: call that succeeded.
    calls: Counter[str]
    failed: set[str]
    succeeded: set[str]
    #: The user's words (their first five letters), to match tool names against.
    said: set[str]
    #: The numbers the brief states with the word before each (the limits policies set).
    limits: list[tuple[str, float]]
    #: How many questions the agent asked; what the latest message is (``tool``, ``error``,
    #: ``user``, ``user?``: the user asked something, ``none``).
    asks: int
    last: str
    #: The index of the first message that answered the agent's last action.
    answer_start: int
    #: The kinds of value (stems of keys) tool results and the agent's calls have held.
    known: set[str]


def _transcript_state(t: "Transcript") -> _State:
    """Per tool: how often the agent called it, which of its calls last failed and which
    succeeded; the user's words; the numbers the brief states with the word before each
    (``more than 1000.00``, ``over 150.00``: the limits policies set); the questions asked; the
    kind of the latest message; where the answer to the last action starts."""
    calls: Counter[str] = Counter()
    failed: set[str] = set()
    succeeded: set[str] = set()
    said: set[str] = set()
    limits: list[tuple[str, float]] = []
    last_tool = ""
    asks = 0
    answer_start = 0
    keys: set[str] = set()
    for i, m in enumerate(t.messages):
        if m.role == "system":
            limits += [(w, float(v)) for w, v in _LIMIT.findall(m.lower) if w in _LIMIT_WORDS][:6]
        elif m.role == "assistant":
            answer_start = i + 1
            call = _as_call(m.text)
            last_tool = call[0] if call is not None else ""
            if last_tool:
                calls[last_tool] += 1
                keys.update(call[1])
            elif "?" in m.text:
                asks += 1
        elif m.role == "tool" and last_tool:
            if m.text.startswith("[error"):
                failed.add(last_tool)
            else:
                failed.discard(last_tool)
                succeeded.add(last_tool)
                keys.update(m.keys)
        elif m.role == "user":
            said.update(w[:5] for w in m.words if len(w) > 2)
    last = "none"
    if t.messages and t.messages[-1].role != "system":
        m = t.messages[-1]
        if m.role == "tool":
            last = "error" if m.text.startswith("[error") else "tool"
        elif m.role == "user":
            last = "user?" if "?" in m.text else "user"
        else:
            last = m.role
    return _State(calls, failed, succeeded, said, limits, asks, last, answer_start, {key_stem(k) for k in keys})


def _turns_left(t: "Transcript") -> str:
    """The turns the episode has left, in buckets (``left:?`` when the env states no budget)."""
    if not t.max_turns:
        return "left:?"
    left = t.max_turns - t.turns
    return f"left:{left}" if left <= 2 else "left:3-4" if left <= 4 else "left:5-8" if left <= 8 else "left:9+"


#: Words that put a limit before a number in a brief.
_LIMIT_WORDS = frozenset({"than", "over", "above", "below", "under", "exceeds", "least", "most", "within", "limit"})


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _as_call(text: str) -> tuple[str, dict[str, Any]] | None:
    """A candidate's tool call as (name, arguments), or None for a message."""
    if not text.startswith("{"):
        return None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(obj, dict) and isinstance(obj.get("name"), str) and isinstance(obj.get("arguments"), dict):
        return obj["name"], obj["arguments"]
    return None


