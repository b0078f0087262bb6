"""A look at what the writes left counts as useful in every tool-use task, as Dialog's
`list_bookings` does: once a write of the plan went through, and again after each later write;
never twice with no write between (`agentgym.envs.tooluse.read_backs`). The lists a write adds
to (meetings, incidents, reports, transfers) count once before the first write too: a look that
the work is not done already. Playtests' players read back the meeting, the incident, the
transfer and the order after writing them and were charged for it (ToolUse 9340 T6, and most
rounds before), and were charged for the look before paying or filing (ToolUse 9415 T2, 9425 T2,
9455 T2)."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

from agentgym.agents import make_agent
from agentgym.eval.episode import run_episode
from agentgym.eval.judging import judge_episode


def _judged(env: Any, seed: int, actions: list[str]) -> tuple[dict[str, Any], list[Any]]:
    env.reset(seed=seed)
    info: dict[str, Any] = {}
    for action in actions:
        *_, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    summary = info["episode_summary"]
    return summary, judge_episode({"metrics": summary, "steps": [], "agent_error": None}).calls


@pytest.mark.parametrize(("domain", "difficulty", "seed"), [
    ("calendar", "easy", 0), ("calendar", "hard", 1), ("ops", "easy", 0), ("ops", "hard", 2),
    ("finance", "medium", 0), ("finance", "hard", 2), ("orders", "easy", 0), ("orders", "hard", 1),
])
def test_a_read_back_after_the_writes_is_useful_once(domain: str, difficulty: str, seed: int) -> None:
    env = gym.make("AgentRL/ToolUse-v0", split="train", difficulty=difficulty, domain=domain)
    actions = [str(a) for a in run_episode(env, make_agent("oracle"), seed).actions]
    env.reset(seed=seed)
    gold = env.unwrapped.task.gold.to_dict()
    backs = [{"name": c["name"], "arguments": c["arguments"]} for c in gold.get("useful_calls", [])
             if c.get("after_plan_write")]
    assert backs, gold["kind"]
    last_call = max(k for k, a in enumerate(actions) if a.lstrip().startswith(("{", "[")))
    back = json.dumps(backs)
    before = [b for b in backs if not any(s["name"] == b["name"] for s in gold["plan"])]
    played = [*([json.dumps(before + before)] if before else []), *actions[:last_call + 1], back, back,
              *actions[last_call + 1:]]
    summary, calls = _judged(env, seed, played)
    assert summary["success"], summary
    first_turn = 1 if before else None
    after = [c for c in calls if c.turn > (first_turn or 0) and any(
        c.name == b["name"] and (summary["calls"][c.index].get("arguments") or {}) == b["arguments"] for b in backs)]
    once, again = after[-2 * len(backs):-len(backs)], after[-len(backs):]
    assert once and all(c.useful for c in once), once
    assert all(not c.useful for c in again), again
    if before:
        early = [c for c in calls if c.turn == first_turn]
        # a look that the work is not done already, once: the same read again in that turn is a repeat
        assert len(early) == 2 * len(before), early
        assert all(c.useful for c in early[:len(before)]) and not any(c.useful for c in early[len(before):]), early


def test_a_combined_job_s_read_back_counts_in_a_session() -> None:
    """CrossTask 9348 (a playtest of 0.35.0, `medium` noise): after the exchange and the store
    credit of one order ("exchange+return", a job of two kinds), `get_order` of it at turn 11 was
    charged as a repeat; the read-backs are read off the plan's own writes."""
    from test_useful_calls import _of, _verdicts

    summary, calls = _verdicts("crosstask-9348-train.jsonl")
    assert summary["success"]
    reads = _of(summary, calls, "get_order", order_id="O-35445")
    assert len(reads) == 3 and all(c.useful for c in reads), reads  # the read, its check, the read-back


def test_a_rollback_s_read_back_is_the_service_s_deploy_history() -> None:
    """CrossTask 9363 (a playtest of 0.35.0, `medium` noise): `get_deploys(checkout)` after the
    rollback went through was charged as a repeat, where `list_incidents` after the incident counted;
    the deploy history is the one read that shows a rollback."""
    from test_useful_calls import _of, _verdicts

    summary, calls = _verdicts("crosstask-9363-test.jsonl")
    assert summary["success"]
    reads = _of(summary, calls, "get_deploys", service="checkout")
    assert reads[-1].repeat and reads[-1].useful, reads[-1]
