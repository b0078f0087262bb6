"""Features version 5 (`agentgym.baselines.ppo.relations`) read what they claim on real ToolUse
observations: the limit a line of the brief ties to its tools, and the call whose record holds what
the user asked for. Each test plays the heuristic on train seeds until the step it needs (a bounded
search), then reads the candidates' features there."""

from __future__ import annotations

import json
from typing import Any, Callable, Iterator

import pytest

pytest.importorskip("torch")

from agentgym.agents import make_agent  # noqa: E402
from agentgym.baselines.ppo import Args  # noqa: E402
from agentgym.baselines.ppo.acting import make_env  # noqa: E402
from agentgym.baselines.ppo.demos import demonstrated  # noqa: E402
from agentgym.baselines.ppo.features import HashFeaturizer, Transcript, _as_call  # noqa: E402
from agentgym.baselines.ppo.relations import Call, sibling_features, tool_limits  # noqa: E402


def _steps(domain: str, seeds: range) -> Iterator[tuple[Transcript, list[str], str]]:
    """Every step of the heuristic's ToolUse episodes in `domain`: the transcript, the candidates
    and the candidate the heuristic plays."""
    env = make_env("AgentRL/ToolUse-v0", Args(env=("AgentRL/ToolUse-v0",)), split="train")
    try:
        for seed in seeds:
            obs, info = env.reset(seed=seed, options={"domain": domain})
            agent = make_agent("heuristic")
            agent.reset(obs, info)
            t = Transcript()
            t.reset(info)
            done = False
            while not done:
                target = demonstrated(agent, obs, info)[1]
                yield t, list(info["candidates"]), target
                obs, _, terminated, truncated, info = env.step(target)
                done = bool(terminated or truncated)
                if not done:
                    t.add(target, info)
    finally:
        env.close()


def _first(domain: str, want: Callable[[Transcript, list[str], str], bool]) -> tuple[Transcript, list[str], str]:
    for t, candidates, target in _steps(domain, range(40)):
        if want(t, candidates, target):
            return t, candidates, target
    raise AssertionError(f"no step of 40 {domain} episodes fits")


def _tool(text: str) -> str:
    call = _as_call(text)
    return call[0] if call else ""


def _has(f: HashFeaturizer, shape: Any, feature: str) -> bool:
    return set(f._ids([feature])) <= set(shape.tolist())


def test_the_brief_ties_its_refund_limit_to_the_tools_its_line_names() -> None:
    t, candidates, _ = _first("orders", lambda t, c, _: any(_tool(x) == "refund_item" for x in c))
    brief = [m.lower for m in t.messages if m.role == "system"]
    limits = tool_limits(brief, t.needs.vocabulary)
    assert (150.0, frozenset({"request_refund_approval", "refund_item"})) in limits
    # The real refund call at amounts either side of the limit: only its amount differs.
    call = next(json.loads(x) for x in candidates if _tool(x) == "refund_item")
    low = json.dumps({**call, "arguments": {**call["arguments"], "amount": 69.0}})
    high = json.dumps({**call, "arguments": {**call["arguments"], "amount": 240.0}})
    f = HashFeaturizer()
    shapes = f.candidates([low, high], t).shape
    assert _has(f, shapes[0], "s:toollimit:within") and not _has(f, shapes[0], "s:toollimit:over")
    assert _has(f, shapes[1], "s:toollimit:over") and not _has(f, shapes[1], "s:toollimit:within")
    assert _has(f, shapes[1], "s:toollimit:refund_item:over")
    other = next(x for x in candidates if _tool(x) and _tool(x) not in ("refund_item", "request_refund_approval"))
    assert not any(_has(f, f.candidates([other], t).shape[0], s) for s in ("s:toollimit:over", "s:toollimit:within"))


def test_the_order_whose_record_holds_what_the_user_asked_for_is_marked() -> None:
    def reading_an_order(t: Transcript, candidates: list[str], target: str) -> bool:
        return _tool(target) == "get_order" and sum(_tool(x) == "get_order" for x in candidates) > 1

    t, candidates, target = _first("orders", reading_an_order)
    f = HashFeaturizer()
    shapes = f.candidates(candidates, t).shape
    for text, shape in zip(candidates, shapes):
        if _tool(text) == "get_order":
            assert _has(f, shape, "s:sib:asked:top" if text == target else "s:sib:asked:below"), text


def test_siblings_are_compared_on_the_values_they_do_not_share() -> None:
    calls = [Call("get", ["shop", "o-1"], [5, 2]), Call("get", ["shop", "o-2"], [5, 0]),
             Call("get", ["shop", "o-3"], [5, 0]), Call("ping", [], []), Call("", [], [])]
    out = sibling_features(calls)
    assert out[:3] == [["s:sib:asked:top"], ["s:sib:asked:below"], ["s:sib:asked:below"]], \
        "the shared value's record says nothing between them"
    assert out[3] == ["s:sib:alone"] and out[4] == []
    assert sibling_features([Call("get", ["o-1"], [1]), Call("get", ["o-2"], [1])]) == [[], []], \
        "where every sibling's record holds as much, none is marked"
