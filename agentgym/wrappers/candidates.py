"""`ActionCandidates`: a short list of sensible next actions, built only from public information.

A policy that cannot write text can still act in a text env by choosing among candidate actions,
as text-game agents do with admissible commands. Every step, this wrapper puts
``info["candidates"]`` (a list of action strings) beside the env's own info. The list comes from a
`CandidateBuilder` that reads only what any agent sees: the brief, the tool schemas, the user's
messages, the tool results, and the agent's own actions. It never looks at the hidden goal, the
gold, the noise log or the episode summary, so two tasks that differ only in their hidden goals
get the same lists for the same public transcript.

Builders:

* `DialogCandidates` (family ``dialog``): a clarifying question for each slot the user lexicon
  knows (and one asking everything at once), ``search`` with the needs the user stated,
  ``check_availability``, ``book``, ``get_details`` and a proposal for each place seen in tool
  results, ``cancel_booking`` for each active booking, and a few plain replies.
* `ToolUseCandidates` (family ``tooluse``): the next calls of a tool chain, each tool with its
  arguments filled from what is known (by key, by result record, by set, from the user's and the
  brief's words; see `agentgym.wrappers.tool_chains`), a question for each detail the tools need
  that nothing has given, and the final answer. It knows no domain: the test split's unseen
  domain gets its candidates from its own schemas and results.
* `CrossTaskCandidates` (family ``crosstask``): the builder of the active sub-task's family,
  switched at the session's public boundaries (``info["segment"]``, ``info["segment_switch"]``);
  a follow-up goes on with the dialog builder that saw the booking.
* `GenericCandidates` (any other family): each tool of ``info["tools"]`` with arguments filled
  from values seen so far (schema enums, values under the same key in earlier tool results, ids,
  dates, times, numbers and quoted or capitalised phrases in the messages), and plain replies.

The same builder class works from the sequence ``reset(obs, info)``, ``step(action, obs, info)``
that any agent sees, so a trained policy plays through an `Agent` exactly as it trained. Every
list is deterministic in the transcript (no set order or str hashing reaches it).
"""

from __future__ import annotations

import abc
import importlib
import itertools
import json
import re
from dataclasses import asdict, dataclass, fields
from typing import Any, Mapping

import gymnasium as gym
from gymnasium.utils import RecordConstructorArgs

from agentgym.agents.strategies.dialog import heard_facts
from agentgym.core.protocol import parse_action
from agentgym.core.render import answer_messages, call_text

__all__ = [
    "ActionCandidates",
    "CandidateBuilder",
    "CandidateConfig",
    "DialogCandidates",
    "ToolUseCandidates",
    "CrossTaskCandidates",
    "GenericCandidates",
    "BUILDERS",
    "make_builder",
    "public_view",
]

#: The only info keys a builder may read. `episode_summary` (the gold), `noise` (where faults were
#: injected) and `calls` (checked against the user's goal) never reach it. `segment` and
#: `segment_switch` are a cross-task session's public sub-task boundaries.
PUBLIC_KEYS = ("messages", "tools", "task", "turn", "max_turns", "segment", "segment_switch")


@dataclass(frozen=True)
class CandidateConfig:
    """How candidate lists are built; stored with a trained policy, so it plays as it trained."""

    max_entities: int = 8
    """Entities (places, records) seen in tool results that get actions, most recent first."""
    max_candidates: int = 64
    """The longest list handed out; later candidates are cut."""
    proposals: bool = True
    """Dialog: offer "How about X?" messages for seen entities, besides tool calls."""
    values_per_argument: int = 4
    """Tool chains (and generic): values tried per required argument (most relevant first)."""
    calls_per_tool: int = 8
    """Tool chains (and generic): argument combinations offered per tool."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type in ("int", int) and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"CandidateConfig.{f.name} must be a positive int, got {value!r}")

    @classmethod
    def of(cls, value: "CandidateConfig | Mapping[str, Any] | None") -> "CandidateConfig":
        """A config from itself, a mapping of its fields (unknown keys are an error) or None."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        known = {f.name for f in fields(cls)}
        unknown = set(value) - known
        if unknown:
            raise ValueError(f"unknown CandidateConfig fields {sorted(unknown)}; known: {sorted(known)}")
        return cls(**dict(value))


def public_view(info: Mapping[str, Any]) -> dict[str, Any]:
    """The part of an info a candidate builder may read (see `PUBLIC_KEYS`)."""
    return {k: info[k] for k in PUBLIC_KEYS if k in info}


def _decode(content: str) -> Any:
    try:
        return json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return None


def _dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    return [x for x in items if not (x in seen or seen.add(x))]


class CandidateBuilder(abc.ABC):
    """Builds candidate actions from the public transcript of one episode at a time.

    Call `reset` with what `env.reset` returned, then `step` with each action taken and what
    `env.step` returned; `candidates()` is the list for the next action.
    """

    #: The task family this builder is made for (``"*"``: any).
    family: str = "*"

    def __init__(self, config: CandidateConfig | Mapping[str, Any] | None = None) -> None:
        self.config = CandidateConfig.of(config)

    def reset(self, obs: str, info: Mapping[str, Any]) -> None:
        """Start an episode from the reset's public info."""
        view = public_view(info)
        self._start(view)
        self._observe(view.get("messages", ()))

    def step(self, action: Any, obs: str, info: Mapping[str, Any]) -> None:
        """Fold in the action just taken and the public part of what the env returned."""
        view = public_view(info)
        self._acted(action)
        # A step's messages open with the action itself: the builder folds in only the answer.
        self._step_view({**view, "messages": answer_messages(view.get("messages", []))})

    def _step_view(self, view: dict[str, Any]) -> None:
        """Fold in a step's public view (default: its messages)."""
        self._observe(view.get("messages", ()))

    def candidates(self) -> list[str]:
        """The candidate actions for the next step: distinct, in a fixed order, never empty."""
        out = _dedupe(self._build())
        return out[: self.config.max_candidates] or [PLAIN_REPLIES[0]]

    @abc.abstractmethod
    def _start(self, view: dict[str, Any]) -> None:
        """Clear the episode state; `view` is the reset's public info."""

    @abc.abstractmethod
    def _observe(self, messages: Any) -> None:
        """Fold in new chat messages (user, tool, system)."""

    def _acted(self, action: Any) -> None:
        """Fold in the agent's own action (default: nothing)."""

    @abc.abstractmethod
    def _build(self) -> list[str]:
        """The raw candidate list (duplicates allowed, cut to size by `candidates`)."""


#: Plain replies every builder offers: moving the dialog on without a tool.
PLAIN_REPLIES = (
    "Okay, let me look into that.",
    "Is there anything else I should know?",
    "Done. Is there anything else you need?",
)


# ================================================================================== dialog
_LIST_LINE = re.compile(r"^(Known [^:]+|Areas|Amenities):\s*(.+?)\.?$", re.M)
#: A clarifying question per lexicon slot; `{label}` is the domain's category word.
_SLOT_QUESTIONS = {
    "category": "Which {label} would you like?",
    "area": "Which area would you like?",
    "price": "What is your budget?",
    "rating": "What minimum rating do you want?",
    "amenity": "Do you need any amenities?",
    "time": "Which day and what time of day would you like?",
}


def _vocab(brief: str) -> tuple[str, dict[str, list[str]]]:
    """The category word and the lists a dialog brief shows: categories, areas, amenities."""
    label = "type"
    vocab: dict[str, list[str]] = {"category": [], "area": [], "amenity": []}
    for head, values in _LIST_LINE.findall(brief):
        if head.startswith("Known "):
            word = head[len("Known "):].strip()
            label = word[:-1] if word.endswith("s") else word
            key = "category"
        else:
            key = "area" if head == "Areas" else "amenity"
        vocab[key] = [v.strip() for v in values.split(",") if v.strip()]
    return label, vocab


class DialogCandidates(CandidateBuilder):
    """Candidates for the dialog family: questions, searches, and actions on seen places."""

    family = "dialog"

    def _start(self, view: dict[str, Any]) -> None:
        from agentgym.envs.dialog.domain import load_lexicon  # public package data

        brief = next((m["content"] for m in view.get("messages", ()) if m.get("role") == "system"), "")
        self._label, self._vocab = _vocab(brief)
        self._slots = tuple(load_lexicon().slots)
        self._needs: dict[str, Any] = {}
        self._amenities: list[str] = []
        self._day: str | None = None
        self._slot: str | None = None
        #: Entity id -> name, most recently seen first.
        self._entities: dict[str, str] = {}
        self._bookings: list[str] = []
        self._search: dict[str, Any] | None = None
        self._more_pages = False

    # ---------------------------------------------------------------- reading the transcript
    def _acted(self, action: Any) -> None:
        parsed = parse_action(action)
        for c in parsed.calls:
            if c.name == "search" and c.arguments is not None:
                self._search = dict(c.arguments)

    def _observe(self, messages: Any) -> None:
        for m in messages:
            role, content = m.get("role"), m.get("content") or ""
            if role == "user" and not content.startswith("[error"):
                self._hear(content)
            elif role == "tool":
                self._result(m.get("name", ""), _decode(content))

    def _hear(self, text: str) -> None:
        for name, value in heard_facts(text, self._vocab):
            if name == "amenities":
                if value not in self._amenities:
                    self._amenities.append(value)
            elif name == "day":
                self._day = value
            elif name == "slot":
                self._slot = value
            else:
                self._needs[name] = value

    def _seen(self, items: list[dict[str, Any]]) -> None:
        fresh = {str(r["id"]): str(r.get("name", r["id"])) for r in items if isinstance(r, dict) and "id" in r}
        self._entities = {**fresh, **{k: v for k, v in self._entities.items() if k not in fresh}}

    def _result(self, name: str, result: Any) -> None:
        if not isinstance(result, dict):
            return
        if name == "search":
            self._seen(list(result.get("results", ())))
            self._more_pages = int(result.get("page", 1)) < int(result.get("pages", 1))
        elif name == "get_details":
            self._seen([result])
        elif name == "book" and "booking_id" in result:
            self._bookings.append(str(result["booking_id"]))
        elif name == "cancel_booking" and result.get("booking_id") in self._bookings:
            self._bookings.remove(result["booking_id"])

    # ---------------------------------------------------------------- building
    def _search_args(self) -> dict[str, Any]:
        args = dict(self._needs)
        if self._amenities:
            args["amenities"] = list(self._amenities)
        return args

    def _build(self) -> list[str]:
        label = self._label
        asks = [_SLOT_QUESTIONS.get(s, "What about the " + s + "?").format(label=label) for s in self._slots]
        out = [
            f"To find the right place: which {label}, which area, what budget, what minimum rating, "
            "which amenities, and which day and time would you like?",
            *asks,
        ]
        args = self._search_args()
        out.append(call_text("search", **args))
        if self._more_pages and self._search is not None:
            out.append(call_text("search", **{**self._search, "page": int(self._search.get("page", 1)) + 1}))
        timed = self._day is not None and self._slot is not None
        for item_id, name in itertools.islice(self._entities.items(), self.config.max_entities):
            if timed:
                out.append(call_text("check_availability", item_id=item_id, day=self._day, slot=self._slot))
                out.append(call_text("book", item_id=item_id, day=self._day, slot=self._slot))
            out.append(call_text("get_details", item_id=item_id))
            if self.config.proposals:
                out.append(f"How about {name}?")
        out += [call_text("cancel_booking", booking_id=b) for b in self._bookings]
        out += PLAIN_REPLIES
        return out


# ================================================================================== generic
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_TIME = re.compile(r"\b\d{2}:\d{2}\b")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.]+\b")
_IDISH = re.compile(r"\b(?:[A-Z]{1,5}-\d{2,}|[a-z]+_\d{2,})\b")
_NUMBER = re.compile(r"(?<![\w.-])\d+(?:\.\d+)?(?![\w-])")
_QUOTED = re.compile(r"\"([^\"]{1,80})\"")
_PHRASE = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)+\b")


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    return word[:-1] if word.endswith("s") else word


def _fits(value: Any, schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    if "enum" in schema:
        return value in schema["enum"]
    if kind == "string":
        return isinstance(value, str) and len(value) <= int(schema.get("maxLength", 10_000))
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return kind is None


class GenericCandidates(CandidateBuilder):
    """Candidates for any family: every tool with arguments filled from values seen so far."""

    family = "*"

    def _start(self, view: dict[str, Any]) -> None:
        self._tools: list[dict[str, Any]] = [t.get("function", t) for t in view.get("tools", ())
                                              if isinstance(t, dict)]
        #: Key -> values seen under it in tool results (and call arguments), most recent first.
        self._by_key: dict[str, list[Any]] = {}
        #: Text pattern kind -> values found in messages, most recent first.
        self._texts: dict[str, list[Any]] = {k: [] for k in ("date", "time", "email", "id", "number", "phrase")}

    @staticmethod
    def _push(bucket: list[Any], value: Any, limit: int = 32) -> None:
        if value in bucket:
            bucket.remove(value)
        bucket.insert(0, value)
        del bucket[limit:]

    def _walk(self, key: str | None, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                self._walk(str(k), v)
        elif isinstance(value, list):
            for v in value[:64]:
                self._walk(_singular(key) if key else None, v)
        elif key is not None and isinstance(value, (str, int, float, bool)):
            self._push(self._by_key.setdefault(key, []), value)

    def _scan(self, text: str, role: str) -> None:
        for kind, pattern in (("date", _DATE), ("time", _TIME), ("email", _EMAIL), ("id", _IDISH)):
            for v in pattern.findall(text):
                self._push(self._texts[kind], v)
        # Numbers and phrases of a JSON result are already under their keys; the brief's
        # quoted phrases are its own examples, not the user's words.
        if role != "user":
            return
        for v in _NUMBER.findall(text):
            self._push(self._texts["number"], float(v) if "." in v else int(v))
        for v in _QUOTED.findall(text) + _PHRASE.findall(text):
            self._push(self._texts["phrase"], v)

    def _observe(self, messages: Any) -> None:
        for m in messages:
            content = m.get("content") or ""
            role = m.get("role", "")
            if role == "tool":
                decoded = _decode(content)
                if decoded is not None:
                    self._walk(None, decoded)
            self._scan(content, role)

    def _values(self, name: str, schema: Mapping[str, Any]) -> list[Any]:
        k = self.config.values_per_argument
        if "enum" in schema:
            return list(schema["enum"])[:k]
        if schema.get("type") == "array":
            item = schema.get("items", {})
            pool = [v for v in self._key_values(_singular(name)) if _fits(v, item)]
            return [pool[: int(schema.get("maxItems", 8))]] if pool else []
        pool = self._key_values(name)
        lowered = name.lower()
        # A name that says what the value looks like draws only from that kind of value.
        hinted = [kind for kind, hint in (("date", "date"), ("time", "time"), ("time", "start"), ("email", "email"),
                                          ("id", "id")) if hint in lowered.split("_")]
        for kind in hinted:
            pool += self._texts[kind]
        if not hinted:
            if schema.get("type") in ("integer", "number"):
                pool += self._texts["number"]
            elif schema.get("type") == "string":
                pool += self._texts["phrase"]
            elif schema.get("type") == "boolean":
                pool += [True, False]
        out: list[Any] = []
        for v in pool:
            if _fits(v, schema) and v not in out:
                out.append(v)
        return out[:k]

    def _key_values(self, name: str) -> list[Any]:
        out = list(self._by_key.get(name, ()))
        for key, values in self._by_key.items():
            if key != name and (name.endswith("_" + key) or key.endswith("_" + name)):
                out += values
        return out

    def _build(self) -> list[str]:
        out: list[str] = []
        for tool in self._tools:
            params = tool.get("parameters", {}) or {}
            props: dict[str, Any] = params.get("properties", {}) or {}
            required = [p for p in params.get("required", ()) if p in props]
            choices = [self._values(p, props[p]) for p in required]
            if any(not c for c in choices):
                continue
            for combo in itertools.islice(itertools.product(*choices), self.config.calls_per_tool):
                out.append(call_text(tool["name"], **dict(zip(required, combo))))
        return out + list(PLAIN_REPLIES)


# ================================================================================== tool use
class ToolUseCandidates(CandidateBuilder):
    """Candidates for tool chains: each tool with arguments filled from what is known, the
    questions worth asking, and the final answer (see `agentgym.wrappers.tool_chains`)."""

    family = "tooluse"

    def _start(self, view: dict[str, Any]) -> None:
        from agentgym.wrappers.tool_chains import ToolChainCandidates

        brief = next((m["content"] for m in view.get("messages", ()) if m.get("role") == "system"), "")
        self._chain = ToolChainCandidates(self.config.max_entities, self.config.values_per_argument,
                                          self.config.calls_per_tool)
        self._chain.start(view.get("tools", ()), brief)

    def _acted(self, action: Any) -> None:
        self._chain.acted(action)

    def _observe(self, messages: Any) -> None:
        self._chain.observe([m for m in messages if m.get("role") != "system"])

    def _build(self) -> list[str]:
        from agentgym.wrappers.tool_chains import CHAIN_REPLIES

        return [*self._chain.calls(), *self._chain.questions(), *CHAIN_REPLIES]


# ================================================================================== cross-task
class CrossTaskCandidates(CandidateBuilder):
    """Candidates for a cross-task session: the builder of the active sub-task's family.

    The session's public boundaries (``info["segment"]`` at reset, ``info["segment_switch"]`` on
    the step a sub-task ends) say which family is active. Each sub-task gets a fresh builder of
    its family that sees the session brief, every tool and the new request; the messages of a
    step go to the builder of the sub-task they belong to (the result of the call that ended a
    sub-task to the old one, the user's switch message to the new one). A follow-up that returns
    to the dialog booking goes on with that dialog's builder, which remembers the places and the
    booking.
    """

    family = "crosstask"

    def _start(self, view: dict[str, Any]) -> None:
        self._brief = next((m for m in view.get("messages", ()) if m.get("role") == "system"), None)
        self._tools = list(view.get("tools", ()))
        self._task = dict(view.get("task") or {})
        self._dialogs: dict[str, CandidateBuilder] = {}
        self._active: CandidateBuilder | None = None
        self._switch_to(view.get("segment") or {})

    def _switch_to(self, segment: Mapping[str, Any]) -> None:
        family, domain = segment.get("family"), str(segment.get("domain") or "")
        if family == "followup" and domain in self._dialogs:
            self._active = self._dialogs[domain]
            return
        builder = make_builder("dialog" if family == "followup" else family, self.config)
        messages = [self._brief] if self._brief is not None else []
        own = _domain_tools(family, domain)
        tools = [t for t in self._tools if own is None or (t.get("function") or t).get("name") in own]
        builder.reset("", {"messages": messages, "tools": tools,
                           "task": {**self._task, "family": family, "domain": domain}})
        if family in ("dialog", "followup"):
            self._dialogs[domain] = builder
        self._active = builder

    def _observe(self, messages: Any) -> None:
        if self._active is not None:
            self._active._observe([m for m in messages if m.get("role") != "system"])

    def _acted(self, action: Any) -> None:
        if self._active is not None:
            self._active._acted(action)

    def _step_view(self, view: dict[str, Any]) -> None:
        messages = list(view.get("messages", ()))
        started = [s["started"] for s in view.get("segment_switch") or () if isinstance(s, dict) and s.get("started")]
        if not started:
            self._observe(messages)
            return
        # The user's message announces the switch: what comes before it belongs to the old sub-task.
        cut = next((i for i, m in enumerate(messages) if m.get("role") == "user"), len(messages))
        self._observe(messages[:cut])
        for segment in started:
            self._switch_to(segment)
        self._observe(messages[cut:])

    def _build(self) -> list[str]:
        return self._active._build() if self._active is not None else list(PLAIN_REPLIES)


def _domain_tools(family: str | None, domain: str) -> frozenset[str] | None:
    """The tool names of a tool-use domain the package ships (public: the domain's toolkit
    class), so a session's sub-task is offered its own tools; None for any other."""
    if family != "tooluse":
        return None
    from agentgym.envs.tooluse.domains import load_domains

    spec = load_domains().get(domain)
    return frozenset(spec.toolkit.tool_specs()) if spec is not None else None


# ================================================================================== registry
#: Task family -> "module:Class" of its builder; families without one get `GenericCandidates`.
BUILDERS: dict[str, str] = {
    "dialog": "agentgym.wrappers.candidates:DialogCandidates",
    "tooluse": "agentgym.wrappers.candidates:ToolUseCandidates",
    "crosstask": "agentgym.wrappers.candidates:CrossTaskCandidates",
}


def make_builder(family: str | None, config: CandidateConfig | Mapping[str, Any] | None = None) -> CandidateBuilder:
    """The builder of `family` (``"generic"`` or an unknown family: `GenericCandidates`)."""
    target = BUILDERS.get(family or "")
    if target is None:
        return GenericCandidates(config)
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)(config)


class ActionCandidates(gym.Wrapper[str, str, str, str], RecordConstructorArgs):
    """Adds ``info["candidates"]``, the candidate actions for the next step, to every info.

    The builder is chosen per episode from the public task family (``info["task"]["family"]``)
    unless `builder` names one; it sees only `public_view(info)` and the actions taken. Actions
    pass through unchanged: the env still takes any string.

    Args:
        env: the env to wrap (any env whose infos carry chat ``messages``).
        config: a `CandidateConfig` or a mapping of its fields.
        builder: a family whose builder to use always (``"generic"`` for `GenericCandidates`),
            or None to follow the task family.
    """

    def __init__(self, env: gym.Env, config: CandidateConfig | Mapping[str, Any] | None = None,
                 builder: str | None = None) -> None:
        cfg = CandidateConfig.of(config)
        RecordConstructorArgs.__init__(self, config=asdict(cfg), builder=builder)
        gym.Wrapper.__init__(self, env)
        self.config = cfg
        self.builder_family = builder
        self._builder: CandidateBuilder | None = None

    @property
    def builder(self) -> CandidateBuilder:
        """The current episode's builder."""
        if self._builder is None:
            raise gym.error.ResetNeeded("call reset() first")
        return self._builder

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        family = self.builder_family or (info.get("task") or {}).get("family")
        self._builder = make_builder(family, self.config)
        self._builder.reset(obs, info)
        info["candidates"] = self._builder.candidates()
        return obs, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        builder = self.builder
        builder.step(action, obs, info)
        info["candidates"] = [] if terminated or truncated else builder.candidates()
        return obs, reward, terminated, truncated, info
