"""The ToolUse user and the grader never disagree, whatever the agent does.

Over many seeds of both splits and every difficulty, for the heuristic (noise off and `medium`),
the oracle, the random agent and scripted agents that err in the ways agents err (a wrong write
put right or not, a write sent twice, "done" claimed before anything is done), every episode
holds to:

* the user accepts exactly when the grader says success (a submitted answer ends the task as
  "committed", and the user's word on it agrees too);
* the user's words of acceptance appear only in the step that ends the episode with success;
* the user never invites more work ("could you put it right?", "not quite yet: ...") once no
  fix could make the task succeed (a policy broken, a wrong record no tool can undo);
* once no fix could succeed, the user's next word ends the episode.

The counts are printed for the record (the figures of issue 26).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Callable

import gymnasium as gym
import pytest

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.core.render import to_json
from agentgym.envs.tooluse.domains import load_domains
from agentgym.envs.tooluse.oracle import ToolUseOracle
from agentgym.envs.tooluse.review import review
from agentgym.eval.episode import agent_view, run_episode
from agentgym.eval.judging import judge_record

ENV_ID = "AgentRL/ToolUse-v0"
ACCEPT_WORDS = ("that's everything I needed", "that's all done")
INVITES = ("Could you put it right?", "Not quite yet:", "not done on my side yet:")
COUNTS: Counter[str] = Counter()


def _stuck(env: gym.Env) -> bool:
    """Whether no fix can make the task succeed any more (the review the user makes)."""
    base = env.unwrapped
    task = base.task
    spec = load_domains()[task.domain]
    return review(task.gold, task.world, spec.review, spec.undoable, frozenset(), spec.names).stuck


def _user_words(info: dict[str, Any]) -> list[str]:
    return [m["content"] for m in info["messages"] if m["role"] == "user" and not m["content"].startswith("[error")]


# ------------------------------------------------------------------------------------ agents
class _Scripted:
    """The oracle with one kind of mistake mixed in; privileged, as it reads the gold."""

    def __init__(self, env: gym.Env, mistake: str) -> None:
        self.oracle = ToolUseOracle(env.unwrapped)
        self.env = env
        self.mistake = mistake
        self.pending: str | None = None
        self.claims = 0
        self.done = False

    def act(self, obs: str, info: dict[str, Any]) -> str:
        if self.mistake == "claim" and self.claims < 2:
            self.claims += 1
            return "All done, it's finished."
        if self.pending is not None:
            action, self.pending = self.pending, None
            return action
        action = self.oracle.act(obs, info)
        if self.done or not action.startswith("{"):
            return action
        call = json.loads(action)
        if self.mistake == "twice" and _is_write(self.env, call["name"]):
            self.done = True
            self.pending = action
            return action
        if self.mistake in ("wrong", "wrong-late") and (wrong := _wrong(call)) is not None:
            if self.mistake == "wrong-late" and not self._has_write():
                return action
            self.done = True
            self.pending = action  # the right call follows; the oracle undoes what it can
            return to_json(wrong)
        return action

    def _has_write(self) -> bool:
        return any(r.active for r in self.env.unwrapped.task.world.records)


def _is_write(env: gym.Env, name: str) -> bool:
    spec = load_domains()[env.unwrapped.task.domain].toolkit.tool_specs().get(name)
    return spec is not None and spec.kind.value == "write"


#: A wrong variant of each write that makes a record: (argument, how it is changed).
_WRONG: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "create_transfer": ("amount", lambda v: round(v + 0.01, 2)),
    "file_expense_report": ("total", lambda v: round(v + 0.01, 2)),
    "submit_answer": ("amount", lambda v: round(v + 0.01, 2)),
    "book_meeting": ("start_utc", lambda v: f"{(int(v[:2]) + 1) % 24:02d}{v[2:]}"),
    "refund_item": ("amount", lambda v: round(v - 1, 2)),
    "issue_store_credit": ("amount", lambda v: round(v - 1, 2)),
    "exchange_item": ("new_variant", lambda v: v + "x"),
    "file_incident": ("severity", lambda v: {"sev1": "sev2", "sev2": "sev3", "sev3": "sev1"}[v]),
    "rollback": ("to_version", lambda v: v[:-1] + str((int(v[-1]) + 1) % 10)),
}


def _wrong(call: dict[str, Any]) -> dict[str, Any] | None:
    how = _WRONG.get(call["name"])
    if how is None:
        return None
    key, change = how
    return {"name": call["name"], "arguments": {**call["arguments"], key: change(call["arguments"][key])}}


# ------------------------------------------------------------------------------------ the check
def _play(env: gym.Env, make: Callable[[gym.Env, str, dict[str, Any]], Any], seed: int, split: str, label: str) -> None:
    obs, info = env.reset(seed=seed, options=None)
    agent = make(env, obs, info)
    stuck_before = False
    while True:
        obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
        words = _user_words(info)
        stuck = _stuck(env)
        said = " ".join(words)
        if any(w in said for w in ACCEPT_WORDS):
            assert terminated and info["episode_summary"]["success"], (label, seed, said)
        if stuck and any(w in said for w in INVITES):
            raise AssertionError(f"{label} seed {seed}: invites a fix no fix can make succeed: {said!r}")
        if stuck and words and env.unwrapped.task.gold.kind != "quote":
            assert terminated, (label, seed, said)  # once stuck, the user's next word ends it
        COUNTS[f"{label}: invitations"] += sum(w in said for w in INVITES)
        stuck_before = stuck_before or stuck
        if terminated or truncated:
            break
    episode = info["episode_summary"]
    outcome, success = episode["outcome"], episode["success"]
    assert (outcome == "accepted") <= success, (label, seed, outcome)
    assert success <= (outcome in ("accepted", "committed")), (label, seed, outcome)
    COUNTS[f"{label}: episodes"] += 1
    COUNTS[f"{label}: {outcome}{' (success)' if success else ''}"] += 1
    COUNTS[f"{label}: left when no fix could succeed"] += stuck_before and outcome == "gave_up"


def _builtin(name: str) -> Callable[[gym.Env, str, dict[str, Any]], Any]:
    def make(env: gym.Env, obs: str, info: dict[str, Any]) -> Any:
        agent = make_agent(name)
        if getattr(agent, "privileged", False):
            agent.bind(env.unwrapped)
        agent.reset(obs, agent_view(info) if not getattr(agent, "privileged", False) else info)
        return _View(agent)
    return make


class _View:
    def __init__(self, agent: Any) -> None:
        self.agent = agent

    def act(self, obs: str, info: dict[str, Any]) -> str:
        return self.agent.act(obs, info if getattr(self.agent, "privileged", False) else agent_view(info))


def _scripted(mistake: str) -> Callable[[gym.Env, str, dict[str, Any]], Any]:
    return lambda env, obs, info: _Scripted(env, mistake)


AGENTS = {
    "heuristic": _builtin("heuristic"),
    "random": _builtin("random"),
    "oracle": _scripted("none"),
    "wrong first write": _scripted("wrong"),
    "wrong later write": _scripted("wrong-late"),
    "a write twice": _scripted("twice"),
    "claims done first": _scripted("claim"),
}


@pytest.mark.parametrize("label", list(AGENTS))
@pytest.mark.parametrize("noise", [None, "medium"])
def test_the_user_accepts_exactly_when_the_grader_says_success(label: str, noise: str | None) -> None:
    if noise is not None and label not in ("heuristic", "random"):
        pytest.skip("the scripted agents read the gold: noise would only make them retry")
    seeds = range(120) if label != "random" else range(40)
    for split in ("train", "test"):
        for difficulty in ("easy", "medium", "hard"):
            env = gym.make(ENV_ID, split=split, difficulty=difficulty, **({"noise": noise} if noise else {}))
            for seed in seeds:
                _play(env, AGENTS[label], seed, split, f"{label}{'/' + noise if noise else ''}")
    keys = sorted(k for k in COUNTS if k.startswith(f"{label}{'/' + noise if noise else ''}:"))
    print("\n" + "\n".join(f"{k} {COUNTS[k]}" for k in keys))


class _ReorderingOracle:
    """The oracle, listing the items of every order-free list argument in reverse."""

    name = "reordering-oracle"
    privileged = True

    def __init__(self) -> None:
        from agentgym.agents.oracle import OracleAgent

        self._oracle = OracleAgent()
        self.reordered = 0

    def bind(self, env: Any) -> None:
        self._oracle.bind(env)

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self._oracle.reset(obs, info)

    def act(self, obs: str, info: dict[str, Any]) -> str:
        from agentgym.envs.tooluse.base import UNORDERED_ARGUMENTS

        action = self._oracle.act(obs, info)
        if not action.startswith("{"):
            return action
        call = json.loads(action)
        for key in UNORDERED_ARGUMENTS & set(call["arguments"]):
            if len(set(map(json.dumps, call["arguments"][key]))) > 1:
                call["arguments"][key] = call["arguments"][key][::-1]
                self.reordered += 1
        return json.dumps(call)


@pytest.mark.parametrize("domain", ["finance", "calendar"])
def test_a_list_in_another_order_is_the_same_step(domain: str) -> None:
    # Amounts to add up, a report's expenses, a meeting's people: their order means nothing, so a
    # call listing them otherwise is the plan's step, judged right (a playtest's sum_amounts was
    # "no step of the plan" and its step "not done": CrossTask 8974 T17).
    reordered = 0
    for seed in range(12):
        agent = _ReorderingOracle()
        env = gym.make("AgentRL/ToolUse-v0", domain=domain, difficulty=("easy", "medium", "hard")[seed % 3])
        result = run_episode(env, agent, seed)
        tools = judge_record({"metrics": result.episode}).tools
        assert result.episode["success"], (domain, seed)
        assert tools.done == tools.gold and tools.right == tools.judged and tools.useful == tools.spent, (domain, seed)
        reordered += agent.reordered
    assert reordered >= 6


def test_a_total_added_up_by_hand_loses_no_recall() -> None:
    # The policies say to add the converted amounts up, not to call sum_amounts: a player who
    # added them by hand to the cent lost recall for the "gold step not done" (CrossTask 8992 T7).
    from optional_steps import SkippingOracle

    summed = 0
    for seed in range(40):
        env = gym.make("AgentRL/ToolUse-v0", domain="finance", difficulty=("medium", "hard")[seed % 2])
        env.reset(seed=seed)
        if not any(s.name == "sum_amounts" for s in env.unwrapped.task.gold.plan):
            continue
        summed += 1
        result = run_episode(env, SkippingOracle(), seed)
        tools = judge_record({"metrics": result.episode}).tools
        assert result.episode["success"] and tools.done == tools.gold, seed
        assert not any(c["name"] == "sum_amounts" for c in result.episode["calls"])
    assert summed >= 5
