"""The state agentgym shares across envs in one process (module-level caches and tables) is safe
when envs run in threads, as the leaderboard's verification does: every cache is accounted for
below, none changes while episodes run (in threads, or with agents that edit all they are given),
and episodes played in 8 threads hash exactly as the same episodes played one by one."""

from __future__ import annotations

import dataclasses
import gc
import importlib
import json
import subprocess
import sys
import threading
import types
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from golden_play import cases, episode_digest, make

import agentgym
from agentgym.agents import make_agent
from agentgym.core.tools import Toolkit
from agentgym.users.understanding import Understanding
from agentgym.users.understanding.words import _TOKEN

#: Every module-level cache in the packages that episodes run through, and why sharing it across
#: threads is safe. A new one must be added here (the first test finds them); tables of constants
#: need not be, but every module-level container is checked unchanged after the episodes below.
SHARED: dict[str, str] = {
    # Filled once per key, idempotently (a race builds the same value twice); values are makers
    # or are only ever read; what leaves the env is a copy.
    "agentgym.core._fast._SCHEMA_MAKERS": "makers per schema set (emptied when full); each reset makes a "
                                           "fresh copy",
    "agentgym.core._fast._MAKER_OF_SCHEMA": "a maker per schema (kept alive, never mutated); it makes copies",
    "agentgym.envs.tooluse.asking._PROPOSES": "a bool per (text, engine), a pure function of both (a race stores "
                                              "an equal value twice); emptied when full",
    "agentgym.envs.tooluse.findings._MEMO": "per domain, a per_text-memoised pure function of the text (a "
                                            "race makes or stores an equal value twice); each table emptied "
                                            "when full",
    "agentgym.envs.crosstask.toolkit._LAYOUTS": "one layout per sub-toolkit mix, read only; schemas copied",
    # lru_cache is thread-safe; each of these is a pure function of its arguments (the
    # package's data files) whose result is only read.
    "agentgym.envs.dialog.domain.load_domains": "parsed data files, read only",
    "agentgym.envs.dialog.domain.load_lexicon": "parsed data file, read only",
    "agentgym.envs.dialog.tasks._tables": "tuples",
    "agentgym.envs.dialog.tasks.brief_for": "a str",
    "agentgym.envs.dialog.tasks.domains_for": "a tuple",
    "agentgym.envs.tooluse.findings.finding_words": "a compiled pattern per domain, read only",
    "agentgym.users.understanding.words._phrase_stems": "a tuple of str per phrase",
    "agentgym.agents.transcript.key_stem": "a str from a key name",
    "agentgym.agents.candidates.tool_chains._diverse_ranks": "tuples of index tuples",
    # A compiled understanding engine per domain: its phrase tables are only read; its memos
    # (text -> an immutable Reading, word -> its immutable analysis) fill as episodes run, each
    # entry a pure function of its key (a race stores an equal value twice), and only ever hold
    # what a freshly compiled engine computes (`test_episodes_in_threads...` checks every entry).
    "agentgym.users.understanding.grammar._grammar": "the parsed grammar.json, read only",
    "agentgym.users.understanding.compromise._words": "the parsed compromise.json, read only",
    "agentgym.users.understanding.compromise.read_compromise": "a frozen Compromise per message text",
    "agentgym.users.understanding.compromise._repair": "a str per word",
    "agentgym.users.understanding.compromise._stem": "a str per word",
    "agentgym.users.understanding.compromise._token_words": "two tuples of str per raw token",
    "agentgym.envs.dialog.user.understanding": "an engine per domain; see above",
    "agentgym.envs.tooluse.user_words.understanding": "an engine per domain; see above",
    "agentgym.envs.tooluse.data.load_lexicon": "parsed data file, read only",
    "agentgym.envs.tooluse.domains.load_domains": "the domain modules' specs, read only",
    "agentgym.envs.tooluse.user_words.write_tools": "two frozensets of tool names",
    "agentgym.envs.tooluse.domains.calendar.vocab": "parsed data file, read only",
    "agentgym.envs.tooluse.domains.calendar._fits": "a tuple",
    "agentgym.envs.tooluse.domains.calendar._fits_set": "a frozenset",
    "agentgym.envs.tooluse.domains.calendar._fit_table": "a dict of tuples per duration, read only (`_fits` only gets from it)",
    "agentgym.envs.tooluse.domains.finance.vocab": "parsed data file, read only",
    "agentgym.envs.tooluse.domains.ops.vocab": "parsed data file, read only",
    "agentgym.envs.tooluse.domains.orders.vocab": "parsed data file, read only",
    "agentgym.envs.tooluse.policies.load_policies": "parsed data file, read only",
    "agentgym.envs.tooluse.policies.policy_lines": "a str",
    "agentgym.envs.tooluse.policies._rows": "read only; policy_rows hands out copies",
    "agentgym.envs.tooluse.tasks.domains_for": "a tuple",
    "agentgym.noise.distractors._decoys_of": "frozen specs and stateless handlers",
    "agentgym.noise.distractors._extra_tools": "a tuple of the above",
    "agentgym.noise.distractors._BY_KEY": "the same tuples, by toolkit key; filled once per key, emptied when "
                                          "full",
    "agentgym.noise.spec._parse_text": "parsed noise specs, read only; parse_noise hands out copies",
    "agentgym.envs.tooluse.user_words.protected_words": "a compiled pattern per domain, read only",
    "agentgym.envs.tooluse.detail_values.statement_words": "a str per statement",
    "agentgym.envs.tooluse.plan_values._salient": "a tuple of str per statement",
    "agentgym.envs.tooluse.plan_values._choice_patterns": "a tuple of compiled patterns per tuple of an item's "
                                                          "variants, read only",
    "agentgym.envs.tooluse.asking.spoken": "a compiled pattern per slot word of the lexicon, read only",
    "agentgym.envs.dialog.typos._kept": "a compiled pattern per domain, read only",
    "agentgym.envs.dialog.options._name_pattern": "a compiled pattern per place name, read only",
    "agentgym.envs.dialog.options._key_order": "a tuple of (str, int) per tuple of place names and ids",
    "agentgym.core.english_words.english_words": "the English word list the typo noise keeps its slips off, read "
                                                 "once from the package's data, never written",
    "agentgym.users.typos._held_out": "a str and a tuple of str per (patterns, text)",
    # A pure function of a message's text (and a tuple of str), memoised: every reader of the
    # message shares one answer, immutable.
    "agentgym.users.rule_based.spelled_out": "a str per message text",
    "agentgym.envs.tooluse.done_said.says_done": "a bool per text",
    "agentgym.envs.tooluse.asking.options_asked": "a str or None per message text",
    "agentgym.users.understanding.look_up.asks_leave_to_look": "a bool per message text",
    "agentgym.envs.tooluse.consent.amounts_in": "a frozenset of ints per text",
    "agentgym.envs.tooluse.consent._norm": "a str per text",
    "agentgym.envs.tooluse.consent._parts": "a tuple of str per (message, anchors); parts hands out lists, "
                                            "a consent keeps the tuple (immutable)",
    "agentgym.envs.tooluse.consent._outcome_of": "a bool per (parts, names, outcomes)",
    "agentgym.envs.dialog.tools._value_ranges": "a MappingProxyType per domain, read only",
    "agentgym.envs.dialog.wording.stock": "a frozenset per domain",
    "agentgym.agents.experts.words.near": "a bool per pair of words",
    # Loaded models: behind a lock, shared on purpose (inference only).
    "agentgym.agents.transformers_agent._MODELS": "guarded by _MODELS_LOCK",
}
_AREAS = ("core", "users", "envs", "noise", "agents", "wrappers")
#: Memo tables inside shared objects: compared for soundness (`_check_memos`), not for being
#: unchanged, since filling them is what they are for.
_MEMOS: dict[type, tuple[str, ...]] = {Understanding: ("_memo", "_words", "_pieces")}


def _modules() -> Iterator[types.ModuleType]:
    # By file, not pkgutil.walk_packages: agentgym.core is a namespace package, which it skips.
    root = Path(agentgym.__file__).parent
    for area in _AREAS:
        for path in sorted((root / area).rglob("*.py")):
            parts = path.relative_to(root.parent).with_suffix("").parts
            yield importlib.import_module(".".join(parts[:-1] if parts[-1] == "__init__" else parts))


def _shared_objects() -> dict[str, Any]:
    """Every module-level lru_cache (as its cache dict, key -> result) and mutable container,
    by qualified name; plus each Toolkit class's specs and schemas (shared by all its envs)."""
    found: dict[str, Any] = {}
    for module in _modules():
        for name, value in vars(module).items():
            where = f"{module.__name__}.{name}"
            if hasattr(value, "cache_info") and getattr(value, "__module__", None) == module.__name__:
                found[where] = _cache_dict(value)
            elif isinstance(value, (dict, list, set)) and not name.startswith("__"):
                found[where] = value
    pending = list(Toolkit.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        found[f"{cls.__module__}.{cls.__qualname__} specs"] = (cls.tool_specs(), cls._agentgym_schemas)
    return found


def _cache_dict(cached: Any) -> dict[Any, Any]:
    # CPython's lru_cache keeps its entries in a dict among its GC referents: key -> result
    # when unbounded; when bounded, key -> a list node, so the result is asked for again (a
    # hit). A key is the lone str or int argument itself, else the tuple of the arguments.
    for ref in gc.get_referents(cached):
        if isinstance(ref, dict) and "__wrapped__" not in ref:
            if cached.cache_info().maxsize is None:
                return dict(ref)
            return {k: cached(*k) if isinstance(k, tuple) else cached(k) for k in list(ref)}
    raise AssertionError(f"no cache dict found in {cached!r}")


def _canon(value: Any, depth: int = 0) -> Any:
    """A value-comparable form of `value` (dataclasses, objects and containers by content)."""
    if depth > 40:
        return "..."
    if isinstance(value, (str, int, float, bool, type(None), bytes)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return type(value).__qualname__, tuple((f.name, _canon(getattr(value, f.name), depth + 1))
                                               for f in dataclasses.fields(value))
    if isinstance(value, (dict, types.MappingProxyType)):
        return "dict", tuple(sorted((repr(k), _canon(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return type(value).__name__, tuple(_canon(v, depth + 1) for v in value)
    if isinstance(value, (set, frozenset)):
        return "set", tuple(sorted(repr(_canon(v, depth + 1)) for v in value))
    if callable(value):
        return "callable", getattr(value, "__qualname__", type(value).__qualname__)
    if hasattr(value, "__dict__"):
        memos = _MEMOS.get(type(value), ())
        return type(value).__qualname__, _canon({k: v for k, v in vars(value).items() if k not in memos}, depth + 1)
    return repr(value)


def _check_memos(shared: dict[str, Any]) -> int:
    """Every memo entry of every shared engine equals what a freshly compiled one computes for
    its key (the cached function's ``__wrapped__``, called anew); returns the entries checked."""
    checked = 0
    for where, value in shared.items():
        if not isinstance(value, dict):
            continue
        for key, engine in value.items():
            if not isinstance(engine, Understanding):
                continue
            module, _, name = where.rpartition(".")
            args = tuple(key) if isinstance(key, (tuple, list)) else (key,)  # as `_cache_dict` keys them
            fresh = getattr(importlib.import_module(module), name).__wrapped__(*args)
            for text, reading in list(engine._memo.items()):
                assert fresh.read_uncached(text) == reading, (where, key, text)
            for raw, analysis in list(engine._words.items()):
                assert fresh._word(raw) == analysis, (where, key, raw)
            for piece, analysis in list(engine._pieces.items()):  # a piece of normalised text
                assert tuple(w for raw in _TOKEN.findall(piece) for w in fresh._word(raw)) == analysis, (where, piece)
            checked += len(engine._memo) + len(engine._words) + len(engine._pieces)
    return checked


def _entries(shared: dict[str, Any]) -> dict[tuple[str, str], Any]:
    """Each shared object's entries (a cache's per key), in comparable form."""
    out = {}
    for where, value in shared.items():
        items = value.items() if isinstance(value, dict) else [("", value)]
        for key, item in items:
            out[(where, repr(key))] = _canon(item)
    return out


_GROWN = """
import json, sys
sys.path.insert(0, {here!r})
import test_shared_state as t
from golden_play import make
def sizes():
    return {{name: len(v) for name, v in t._shared_objects().items() if isinstance(v, (dict, list, set))}}
before = sizes()
for env_id in t.agentgym.ENV_IDS:
    for noise in (None, "heavy", "distractors=4"):
        env = make(env_id, noise, {{}})
        for seed in range(3):
            env.reset(seed=seed)
            env.step("hello")
print(json.dumps(sorted(name for name, n in sizes().items() if n > before.get(name, 0))))
"""


def test_every_cache_filled_at_run_time_is_accounted_for() -> None:
    # In a fresh process: what episodes fill is a cache, whatever its kind (every lru_cache is
    # one by definition; a module-level container that grows is one too).
    here = str(Path(__file__).parent)
    out = subprocess.run([sys.executable, "-c", _GROWN.format(here=here)], capture_output=True, text=True,
                         check=True, cwd=here)
    grown = set(json.loads(out.stdout.splitlines()[-1]))
    lru = {name for name, value in _shared_objects().items() if isinstance(value, dict) and name in _lru_names()}
    caches = grown | lru
    assert caches - SHARED.keys() == set(), "a cache filled at run time: say here why sharing it is safe"
    assert SHARED.keys() - caches - {"agentgym.agents.transformers_agent._MODELS"} == set(), "gone: drop it here"


def _lru_names() -> set[str]:
    return {f"{module.__name__}.{name}" for module in _modules() for name, value in vars(module).items()
            if hasattr(value, "cache_info") and getattr(value, "__module__", None) == module.__name__}


# Small: two seeds of every (id, noise, variant, agent) group of the golden lock (252 episodes).
_CASES = list(cases(2))


def _digests(threads: int) -> list[str]:
    local = threading.local()

    def play(case: tuple[str, str, str | None, dict[str, Any], int]) -> str:
        key, env_id, noise, kwargs, seed = case
        envs = local.__dict__.setdefault("envs", {})  # each thread its own envs, as a verifier has
        group = key.rsplit("|", 2)[0]
        if group not in envs:
            envs[group] = make(env_id, noise, kwargs)
        return episode_digest(envs[group], kwargs["_agent"], seed)

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(play, _CASES))


def _scribble(value: Any, depth: int = 0) -> None:
    """Edit every container in `value` in place, as a careless agent might."""
    if depth > 10:
        return
    if isinstance(value, dict):
        for key in list(value):
            item = value[key]
            if isinstance(item, (dict, list)):
                _scribble(item, depth + 1)
            elif isinstance(item, str):
                value[key] = item + "!"
            elif isinstance(item, int) and not isinstance(item, bool):
                value[key] = item + 1
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in value:
            _scribble(item, depth + 1)
        value.append("scribbled")


def _play_and_scribble() -> int:
    """Oracle episodes (every id, noise heavy and per kind) whose every info is edited after use."""
    steps = 0
    for env_id in agentgym.ENV_IDS:
        for noise in (None, "heavy", "distractors=4", "corruption=1.0", "tool_failure=0.5"):
            env = make(env_id, noise, {})
            for seed in range(3):
                agent = make_agent("oracle")
                obs, info = env.reset(seed=seed)
                agent.bind(env.unwrapped)
                agent.reset(obs, info)
                for _ in range(60):
                    action = agent.act(obs, info)
                    _scribble(info)
                    obs, _, terminated, truncated, info = env.step(action)
                    steps += 1
                    if terminated or truncated:
                        _scribble(info)
                        break
            env.close()
    return steps


def test_episodes_in_threads_hash_as_one_by_one_and_leave_shared_state_unchanged() -> None:
    one_by_one = _digests(1)
    before = _entries(_shared_objects())
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads as often as the interpreter allows
    try:
        threaded = _digests(8)
    finally:
        sys.setswitchinterval(interval)
    steps = _play_and_scribble()
    after = _entries(_shared_objects())
    differ = sum(a != b for a, b in zip(one_by_one, threaded))
    changed = sorted({where for where, key in before if before[(where, key)] != after.get((where, key))})
    print(f"\nshared state: {len(_CASES)} episodes in 8 threads, {differ} hash differently; "
          f"{len(before)} shared entries, {len(changed)} changed after {steps} edited oracle steps")
    assert differ == 0
    assert not changed, changed
    assert len(before) > 100
    assert _check_memos(_shared_objects()) > 100


def test_a_dict_action_edited_after_the_step_changes_nothing_recorded() -> None:
    env = make("AgentRL/Dialog-v0", None, {})
    env.reset(seed=1)
    arguments: dict[str, Any] = {"amenities": ["wifi"]}
    action = {"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": arguments}}]}
    _, _, _, _, info = env.step(action)
    assert info["calls"][0]["valid"]
    recorded = repr(env.unwrapped._calls)
    arguments["amenities"].append("parking")
    arguments["page"] = 2
    action["tool_calls"].append({"function": {"name": "search", "arguments": {}}})
    assert repr(env.unwrapped._calls) == recorded
    assert info["messages"][0]["tool_calls"][0]["function"]["arguments"] == '{"amenities": ["wifi"]}'
    env.close()
