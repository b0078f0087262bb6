"""Tests for agentgym.testing: the checks pass a correct third-party env and catch each bug.

Every fake below is a small, complete env on the agentgym contract (not built on AgentEnv, to
show the checks are generic) with exactly one planted bug; `check_agent_env` must fail on it
with a message naming the check that caught it.
"""

from __future__ import annotations

import json
import random
import warnings
from collections.abc import Iterator
from typing import Annotated, Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded

from agentgym.core.env import AgentEnv
from agentgym.core.spaces import UnicodeText
from agentgym.core.task import Score, SimulatedUser, Task, UserTurn
from agentgym.core.tools import WRITE, MaxLen, Toolkit, tool
from agentgym.testing import (
    GARBAGE_ACTIONS,
    TrajectoryHasher,
    canonical_json,
    check_agent_env,
    fresh_process_hashes,
    probe_actions,
    trajectory_hash,
)

DIALOG_ID = "AgentRL/Dialog-v0"


class GuessEnv(gym.Env[str, str]):
    """Guess a number from 0 to 9 in three turns: a correct third-party agentgym-contract env."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}
    max_turns = 3

    def __init__(self, render_mode: str | None = None) -> None:
        self.observation_space = UnicodeText(4096)
        self.action_space = UnicodeText(65536)
        self.render_mode = render_mode
        self._started = False
        self._done = True
        self._turn = 0
        self._log: list[str] = []

    def _task(self, episode_seed: int) -> dict[str, Any]:
        return {"family": "guess", "domain": "digits", "difficulty": "easy", "split": "train",
                "id": f"guess/{episode_seed}"}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        episode_seed = int(seed) if seed is not None else int(self.np_random.integers(0, 2**62))
        self._episode_seed = episode_seed
        self._secret = int(np.random.default_rng(episode_seed).integers(10))
        self._started, self._done, self._turn = True, False, 0
        messages = [{"role": "system", "content": "Guess the digit."},
                    {"role": "user", "content": f"I picked a digit (game {episode_seed % 97})."}]
        self._log = [m["content"] for m in messages]
        info = {"messages": messages, "tools": [], "task": self._task(episode_seed), "seed": episode_seed}
        return "\n".join(self._log), info

    def _reply(self, text: str) -> str:
        try:
            guess = int(text.strip())
        except ValueError:
            return "Please send one digit."
        if guess == self._secret:
            return "Right!"
        return "Higher." if guess < self._secret else "Lower."

    def _reward(self, won: bool) -> Any:
        return 1.0 if won else 0.0

    def _flag(self, value: bool) -> Any:
        return value

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if not self._started or self._done:
            raise ResetNeeded("reset first")
        self._turn += 1
        reply = self._reply(action if isinstance(action, str) else "")
        won = reply == "Right!"
        truncated = not won and self._turn >= self.max_turns
        turn = {"role": "assistant", "content": action if isinstance(action, str) else ""}
        info: dict[str, Any] = {"messages": [turn, {"role": "user", "content": reply}], "turn": self._turn}
        reward = 0.0
        if won or truncated:
            self._done = True
            reward = self._reward(won)
            info["episode"] = info["episode_summary"] = {"success": won, "score": reward, "turns": self._turn,
                                                         "tool_calls": 0}
        self._log.append(reply)
        return reply, reward, self._flag(won), self._flag(truncated), info

    def render(self) -> str | None:
        return "\n".join(self._log) if self.render_mode == "ansi" else None


# ------------------------------------------------------------------ one planted bug each
class NumpyTerminatedEnv(GuessEnv):
    """terminated as np.bool_ (gymnasium's check_env lets this one through)."""

    def step(self, action: str) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward, np.bool_(terminated), truncated, info


class NumpyTruncatedEnv(GuessEnv):
    def _flag(self, value: bool) -> Any:
        return np.bool_(value)


class NumpyRewardEnv(GuessEnv):
    def step(self, action: str) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, np.float64(reward), terminated, truncated, info


class NoSeedEnv(GuessEnv):
    def reset(self, **kwargs: Any) -> Any:
        obs, info = super().reset(**kwargs)
        del info["seed"]
        return obs, info


class FixedEchoEnv(GuessEnv):
    """Echoes seed 0 when reset got no seed, although it played another episode."""

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        obs, info = super().reset(seed=seed, options=options)
        if seed is None:
            info["seed"] = 0
            info["task"]["id"] = "guess/0"
        return obs, info


class GoldLeakEnv(GuessEnv):
    def _task(self, episode_seed: int) -> dict[str, Any]:
        return {**super()._task(episode_seed), "gold": "the digit"}


class GlobalRandomEnv(GuessEnv):
    """Draws from the process-global `random` (the peer bug DESIGN.md warns about), from the
    second turn on: gymnasium's check_env, which compares first steps only, misses it."""

    def _reply(self, text: str) -> str:
        noise = f" ({random.random():.9f})" if self._turn >= 2 else ""
        return super()._reply(text) + noise


class HashSeedEnv(GuessEnv):
    """Lets hash() of a string reach the observation: changes with PYTHONHASHSEED only."""

    def _reply(self, text: str) -> str:
        return super()._reply(text) + f" ({hash('guess')})"


class SharedStateEnv(GuessEnv):
    """Instances share a class attribute, so a second env changes the first one's episode."""

    last_seed = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        out = super().reset(seed=seed, options=options)
        SharedStateEnv.last_seed = self._episode_seed
        return out

    def _reply(self, text: str) -> str:
        return super()._reply(text) + f" #{SharedStateEnv.last_seed % 10}"


class MutatingInfoEnv(GuessEnv):
    """Hands out the same history list in every info and keeps appending to it."""

    def reset(self, **kwargs: Any) -> Any:
        obs, info = super().reset(**kwargs)
        self._history: list[int] = []
        info["history"] = self._history
        return obs, info

    def step(self, action: str) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        self._history.append(self._turn)
        info["history"] = self._history
        return obs, reward, terminated, truncated, info


class RaisingEnv(GuessEnv):
    def _reply(self, text: str) -> str:
        # Raises on the garbage probe "{" alone: a random sample of the action space that opens
        # with "{" (gymnasium's check_env steps one) must not be the check that finds it first.
        if text == "{":
            return json.dumps(json.loads(text))
        return super()._reply(text)


class NoResetNeededEnv(GuessEnv):
    def step(self, action: str) -> Any:
        if self._started and self._done:
            return "over", 0.0, True, False, {"messages": [{"role": "assistant", "content": ""}],
                                              "episode_summary": {"success": False, "score": 0.0,
                                                                  "turns": 0, "tool_calls": 0}}
        return super().step(action)


class RngAfterEndEnv(GuessEnv):
    """Draws from np_random before refusing a step after the end."""

    def step(self, action: str) -> Any:
        if self._started and self._done:
            self.np_random.random()
        return super().step(action)


class CounterAfterEndEnv(GuessEnv):
    """Counts the turn before checking whether the episode is over."""

    def step(self, action: str) -> Any:
        if self._started and self._done:
            self._turn += 1
        return super().step(action)


class StepBeforeResetEnv(GuessEnv):
    def step(self, action: str) -> Any:
        if not self._started:
            raise RuntimeError("not started")
        return super().step(action)


class UnboundedObsEnv(GuessEnv):
    """Echoes the action into the observation without a cap."""

    def _reply(self, text: str) -> str:
        return super()._reply(text) + " You said: " + text


class EarlyRewardEnv(GuessEnv):
    def step(self, action: str) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, (reward if terminated or truncated else 0.1), terminated, truncated, info


class NoEpisodeInfoEnv(GuessEnv):
    def step(self, action: str) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        info.pop("episode_summary", None)
        return obs, reward, terminated, truncated, info


class NoEpisodeKeyEnv(GuessEnv):
    """Ends with its summary under ``episode_summary`` alone, not under ``episode``, the key every
    Gymnasium loop reads."""

    def step(self, action: str) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        info.pop("episode", None)
        return obs, reward, terminated, truncated, info


class NoAssistantTurnEnv(GuessEnv):
    """A step's messages hold only the env's answer: a conversation built from them has no
    assistant turns."""

    def step(self, action: str) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        info["messages"] = info["messages"][1:]
        return obs, reward, terminated, truncated, info


class OrphanToolResultEnv(GuessEnv):
    """Answers with a tool message whose call the assistant's turn does not make."""

    def step(self, action: str) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        info["messages"].insert(1, {"role": "tool", "tool_call_id": "call_x", "name": "guess", "content": "{}"})
        return obs, reward, terminated, truncated, info


class NumpyInfoEnv(GuessEnv):
    def step(self, action: str) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        info["turn"] = np.int64(self._turn)
        return obs, reward, terminated, truncated, info


@pytest.fixture
def register() -> Iterator[Any]:
    """``register(cls) -> id``: registers a fake under a test namespace, removed at teardown."""
    ids: list[str] = []

    def reg(cls: type) -> str:
        env_id = f"AgentGymTest/{cls.__name__}-v0"
        gym.register(id=env_id, entry_point=f"{__name__}:{cls.__name__}", disable_env_checker=True)
        ids.append(env_id)
        return env_id

    yield reg
    for env_id in ids:
        del gym.registry[env_id]


# ------------------------------------------------------------------ a user's family built on AgentEnv
class NotesToolkit(Toolkit):
    def __init__(self) -> None:
        self.notes: list[str] = []

    @tool(kind=WRITE)
    def add_note(self, text: Annotated[str, MaxLen(100)]) -> dict[str, int]:
        """Add a note.

        Args:
            text: The note's text.
        """
        self.notes.append(text)
        return {"count": len(self.notes)}


class NotesUser(SimulatedUser):
    def opening(self) -> str:
        return "Please add a note that says hello."

    def reply(self, message: str, turn: int) -> UserTurn:
        return UserTurn("Thanks.")


def _notes_task(seed: int, options: dict[str, Any]) -> Task:
    return Task(family="notes", domain="notes", difficulty=options.get("difficulty") or "easy",
                split=options.get("split", "train"), seed=seed, task_id=f"notes/{seed}",
                brief="Take notes with the add_note tool.", world=None, goal="hello", gold="hello", max_turns=3)


def _notes_score(task: Task, toolkit: NotesToolkit) -> Score:
    return Score(1.0, True) if task.goal in toolkit.notes else Score(0.0, False)


def make_notes_env(render_mode: str | None = None) -> AgentEnv:
    """A third party's family: AgentEnv with its four parts injected (STYLE rule 5)."""
    return AgentEnv(task_generator=_notes_task, toolkit_factory=lambda task: NotesToolkit(),
                    user_factory=lambda task, rng: NotesUser(), scorer=_notes_score, render_mode=render_mode)


def test_a_users_agentenv_family_passes_as_instance_and_as_registered_id() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no spec: the fresh-process part is skipped with a warning
        check_agent_env(make_notes_env(), n_garbage=60)
    gym.register(id="AgentGymTest/Notes-v0", entry_point=f"{__name__}:make_notes_env", disable_env_checker=True)
    try:
        check_agent_env("AgentGymTest/Notes-v0", n_garbage=60)
    finally:
        del gym.registry["AgentGymTest/Notes-v0"]


# ------------------------------------------------------------------ the checks pass correct envs
def test_correct_third_party_env_passes_by_id_with_fresh_process(register: Any) -> None:
    check_agent_env(register(GuessEnv))


def test_correct_env_passes_as_instance_without_spec() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_agent_env(GuessEnv(), fresh_process=True)
    assert any("fresh-process replay skipped" in str(w.message) for w in caught)


def test_dialog_passes_as_id_and_as_configured_instance() -> None:
    check_agent_env(DIALOG_ID, fresh_process=False)
    env = gym.make(DIALOG_ID, difficulty="hard", split="test")
    check_agent_env(env, seeds=(5,), n_garbage=50)  # fresh process from the instance's spec
    env.close()


# ------------------------------------------------------------------ each planted bug is caught
@pytest.mark.parametrize(
    ("cls", "check", "needle"),
    [
        (NumpyTerminatedEnv, "step-types", "terminated must be a Python bool"),
        (NumpyTruncatedEnv, "gymnasium-check_env", "truncates after 1 step"),
        (NumpyRewardEnv, "step-types", "reward must be a Python float"),
        (NoSeedEnv, "reset-info", "lacks 'seed'"),
        (FixedEchoEnv, "seed-echo", "plays another episode"),
        (GoldLeakEnv, "reset-info", "hidden key 'gold'"),
        (GlobalRandomEnv, "determinism", "reseeded"),
        (SharedStateEnv, "determinism", "second env"),
        (MutatingInfoEnv, "aliasing", "changed by a later step"),
        (RaisingEnv, "garbage", "raised JSONDecodeError"),
        (NoResetNeededEnv, "step-after-end", "did not raise ResetNeeded"),
        (RngAfterEndEnv, "step-after-end", "<np_random state>"),
        (CounterAfterEndEnv, "step-after-end", "_turn"),
        (StepBeforeResetEnv, "step-before-reset", "RuntimeError"),
        (UnboundedObsEnv, "garbage", "outside"),
        (EarlyRewardEnv, "step-types", "before the episode ended"),
        (NoEpisodeInfoEnv, "step-types", "lacks 'episode_summary'"),
        (NoEpisodeKeyEnv, "step-types", "lacks 'episode'"),
        (NoAssistantTurnEnv, "step-types", "must open with the assistant's turn"),
        (OrphanToolResultEnv, "step-types", "'call_x', which is not the id"),
        (NumpyInfoEnv, "step-types", "not plain JSON"),
    ],
)
def test_planted_bug_is_caught(register: Any, cls: type, check: str, needle: str) -> None:
    with pytest.raises(AssertionError) as excinfo:
        check_agent_env(register(cls), fresh_process=False, n_garbage=80)
    message = str(excinfo.value)
    assert message.startswith(f"check_agent_env[{check}] AgentGymTest/{cls.__name__}-v0"), message
    assert needle in message, message


def test_hash_seed_dependence_is_caught_only_by_the_fresh_process(register: Any) -> None:
    env_id = register(HashSeedEnv)
    check_agent_env(env_id, fresh_process=False, n_garbage=10)
    with pytest.raises(AssertionError, match=r"check_agent_env\[determinism\].*PYTHONHASHSEED"):
        check_agent_env(env_id, fresh_process=True, n_garbage=10)


# ------------------------------------------------------------------ hashing
def test_trajectory_hash_is_stable_and_sensitive() -> None:
    actions = ["Hello!", '{"name": "search", "arguments": {}}', "Which area?"]
    a = trajectory_hash(DIALOG_ID, 3, actions)
    assert a == trajectory_hash(DIALOG_ID, 3, actions)
    assert len(a) == 64 and int(a, 16) >= 0
    assert a != trajectory_hash(DIALOG_ID, 4, actions)
    assert a != trajectory_hash(DIALOG_ID, 3, actions[:2])
    hard = gym.make(DIALOG_ID, difficulty="hard")
    assert trajectory_hash(DIALOG_ID, 3, actions, difficulty="hard") == trajectory_hash(hard, 3, actions)
    hard.close()
    env = gym.make(DIALOG_ID)
    assert trajectory_hash(env, 3, actions) == a  # an instance and an id agree
    with pytest.raises(TypeError, match="make_kwargs"):
        trajectory_hash(env, 3, actions, difficulty="hard")
    env.close()


def test_trajectory_hash_stops_at_the_end_of_the_episode() -> None:
    env = gym.make(DIALOG_ID, max_turns=2)
    short = trajectory_hash(env, 0, ["OK.", "OK."])
    assert trajectory_hash(env, 0, ["OK.", "OK.", "ignored", "ignored"]) == short
    env.close()


def test_hasher_matches_trajectory_hash_and_serialises_at_once() -> None:
    env = gym.make(DIALOG_ID)
    hasher = TrajectoryHasher(keep_lines=True)
    obs, info = env.reset(seed=9)
    hasher.reset(obs, info)
    step = env.step("Hello")
    hasher.step(*step)
    digest = hasher.hexdigest()
    step[4]["messages"].append({"role": "user", "content": "mutated afterwards"})
    assert hasher.hexdigest() == digest == trajectory_hash(DIALOG_ID, 9, ["Hello"])
    assert hasher.records == 2 and hasher.lines is not None and len(hasher.lines) == 2
    env.close()


def test_canonical_json_is_strict_and_ascii() -> None:
    assert canonical_json({"b": 1, "a": "\ud800é"}) == '{"a":"\\ud800\\u00e9","b":1}'
    with pytest.raises(TypeError):
        canonical_json({"x": np.int64(1)})
    with pytest.raises(TypeError):
        canonical_json({"x": np.bool_(True)})
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_fresh_process_hashes_batch_equals_in_process() -> None:
    env = gym.make(DIALOG_ID)
    _, info = env.reset(seed=0)
    episodes = [(seed, probe_actions(info["tools"], seed)) for seed in (0, 1, 2)]
    expected = [trajectory_hash(DIALOG_ID, seed, actions) for seed, actions in episodes]
    assert fresh_process_hashes(DIALOG_ID, episodes, hash_seed="0") == expected
    assert fresh_process_hashes(env, episodes[:1]) == expected[:1]  # from the instance's spec
    env.close()


def test_fresh_process_needs_a_spec() -> None:
    with pytest.raises(ValueError, match="no spec"):
        fresh_process_hashes(GuessEnv(), [(0, ["1"])])


def test_fresh_process_failure_is_reported() -> None:
    with pytest.raises(RuntimeError, match="fresh-process replay failed"):
        fresh_process_hashes("AgentRL/Dialog-v0", [(0, ["OK."])], make_kwargs={"difficulty": "impossible"})


# ------------------------------------------------------------------ corpus and probes
def test_garbage_corpus_covers_the_brief() -> None:
    corpus = set(GARBAGE_ACTIONS)
    for needed in ("", "{}", "{", "[", "null", "<tool_call>", "\ud800", "\x00"):
        assert needed in corpus
    assert any(len(a) == 64 * 1024 + 1 for a in corpus)
    assert any(a.count("[") >= 100_000 for a in corpus)
    assert any(a.count("{") >= 5_000 for a in corpus)


def test_probe_actions_are_deterministic_and_call_every_tool() -> None:
    env = gym.make(DIALOG_ID)
    _, info = env.reset(seed=0)
    a = probe_actions(info["tools"], 7, n=20)
    assert a == probe_actions(info["tools"], 7, n=20)
    assert a != probe_actions(info["tools"], 8, n=20)
    called = {json.loads(x)["name"] for x in a if x.startswith("{")}
    assert called == {t["function"]["name"] for t in info["tools"]}
    assert probe_actions([], 0, n=3) and all(not x.startswith("{") for x in probe_actions([], 0, n=3))
    env.close()
