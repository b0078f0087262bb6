"""The careful layers around a policy: retries of transient failures, re-reads of ids that fail."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentgym.agents.careful import HOLD, RecheckIds, RetryTransient
from agentgym.agents.heuristic import HeuristicAgent
from agentgym.agents.turns import calls_of, is_transient

TIMEOUT = "[error TOOL_ERROR] search: the request timed out after 30 s without a response"
REFUSED = "[error TOOL_ERROR] no place with id 'p_9001'"


def call(name: str, **arguments: Any) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def step(*tool_contents: str, user: str | None = None, name: str = "search", turn: int = 1) -> dict[str, Any]:
    """A step info as the env gives it: the assistant's turn, then one tool message (and call
    record) per content."""
    assistant = {"role": "assistant", "content": "", "tool_calls": [
        {"id": f"call_{turn}_{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        for i in range(len(tool_contents))]}
    messages = [assistant] + [{"role": "tool", "tool_call_id": f"call_{turn}_{i}", "name": name, "content": c}
                              for i, c in enumerate(tool_contents)]
    calls = [{"turn": turn, "id": f"call_{turn}_{i}", "name": name, "valid": True, "kind": "read",
              "error": "TOOL_ERROR" if c.startswith("[error") else None, "arguments": {}}
             for i, c in enumerate(tool_contents)]
    if user is not None:
        messages.append({"role": "user", "content": user})
    return {"messages": messages, "calls": calls, "turn": turn}


def said(text: str, turn: int) -> dict[str, Any]:
    """A step info of a message turn (the careful layer's hold) that the user answered."""
    return {"messages": [{"role": "assistant", "content": HOLD}, {"role": "user", "content": text}],
            "calls": [], "turn": turn}


class Searcher:
    """A policy that searches, then uses the first id it was shown; it keeps what it saw."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def reset(self, obs: str, info: dict[str, Any]) -> None:
        self.seen = []

    def act(self, obs: str, info: dict[str, Any]) -> str:
        self.seen.append(info)
        results = [m for m in info.get("messages", ()) if m.get("role") == "tool" and m["content"].startswith("{")]
        if not results:
            return call("search")
        return call("use", item_id=json.loads(results[0]["content"])["results"][0]["id"])


def test_a_transient_failure_is_retried_and_the_policy_sees_only_the_result() -> None:
    inner = Searcher()
    layer = RetryTransient(inner)
    layer.reset("", {"messages": []})
    assert calls_of(layer.act("", {"messages": []}))[0].name == "search"
    assert layer.act("", step(TIMEOUT)) == call("search")  # the retry, not the policy's move
    ok = json.dumps({"results": [{"id": "p_1"}]})
    assert layer.act("", step(ok, turn=2)) == call("use", item_id="p_1")
    seen = inner.seen[-1]["messages"]
    assert [m["content"] for m in seen[1:]] == [ok]  # one answer, as if no failure
    # ... after one assistant turn that makes the policy's call, with the id of the answer.
    assert seen[0]["role"] == "assistant" and [c["id"] for c in seen[0]["tool_calls"]] == [seen[1]["tool_call_id"]]
    assert seen[0]["tool_calls"][0]["function"] == {"name": "search", "arguments": "{}"}


def test_a_slow_retry_holds_on_and_passes_the_users_words_on() -> None:
    inner = Searcher()
    layer = RetryTransient(inner, delay=2)
    layer.reset("", {"messages": []})
    layer.act("", {"messages": []})
    assert layer.act("", step(TIMEOUT)) == HOLD
    assert layer.act("", said("Sure.", turn=2)) == HOLD
    assert layer.act("", said("Go ahead.", turn=3)) == call("search")
    ok = json.dumps({"results": [{"id": "p_1"}]})
    layer.act("", step(ok, turn=4))
    assert [m["content"] for m in inner.seen[-1]["messages"][1:]] == [ok, "Sure.", "Go ahead."]


@pytest.mark.parametrize("retries, content", [(0, TIMEOUT), (3, REFUSED)])
def test_no_retry_and_refusals_reach_the_policy(retries: int, content: str) -> None:
    inner = Searcher()
    layer = RetryTransient(inner, retries=retries)
    layer.reset("", {"messages": []})
    layer.act("", {"messages": []})
    assert layer.act("", step(content)) == call("search")  # the policy's own move: it saw the failure
    assert inner.seen[-1]["messages"][1]["content"] == content


def test_retries_are_bounded() -> None:
    inner = Searcher()
    layer = RetryTransient(inner, retries=2)
    layer.reset("", {"messages": []})
    layer.act("", {"messages": []})
    layer.act("", step(TIMEOUT))
    layer.act("", step(TIMEOUT, turn=2))
    layer.act("", step(TIMEOUT, turn=3))
    assert len(inner.seen) == 2 and inner.seen[-1]["messages"][1]["content"] == TIMEOUT


def test_transient_texts() -> None:
    assert is_transient({"content": TIMEOUT})
    assert is_transient({"content": "[error TOOL_ERROR] book: 429 Too Many Requests: rate limit exceeded"})
    assert is_transient({"content": "[error TOOL_ERROR] search: 503 Service Unavailable"})
    assert not is_transient({"content": REFUSED}) and not is_transient({"content": "[error INVALID_ARGS] x"})
    # A status code counts as a word of its own, not as digits inside an id.
    assert not is_transient({"content": "[error TOOL_ERROR] get_customer: no customer with id 'C-42931'"})
    assert not is_transient({"content": "[error TOOL_ERROR] get_order: no order 'O-15033'"})


def _recheck() -> tuple[RecheckIds, list[Searcher]]:
    made: list[Searcher] = []

    def make() -> Searcher:
        made.append(Searcher())
        return made[-1]
    layer = RecheckIds(make)
    layer.reset("", {"messages": []})
    return layer, made


def test_an_id_that_does_not_resolve_is_read_again_and_the_policy_rewound() -> None:
    layer, made = _recheck()
    layer.act("", {"messages": []})
    assert layer.act("", step(json.dumps({"results": [{"id": "p_9001"}]}))) == call("use", item_id="p_9001")
    assert layer.act("", step(REFUSED, name="use", turn=2)) == call("search")  # read it again
    fresh = json.dumps({"results": [{"id": "p_001"}]})
    assert layer.act("", step(fresh, turn=3)) == call("use", item_id="p_001")  # rewound with the true result
    assert len(made) == 2 and all(REFUSED not in json.dumps(i) for i in made[-1].seen)


def test_the_same_result_again_lets_the_failure_through() -> None:
    layer, made = _recheck()
    layer.act("", {"messages": []})
    same = json.dumps({"results": [{"id": "p_9001"}]})
    layer.act("", step(same))
    layer.act("", step(REFUSED, name="use", turn=2))
    layer.act("", step(same, turn=3))
    assert len(made) == 1 and made[0].seen[-1]["messages"][1]["content"] == REFUSED


def test_no_rewind_past_a_write_that_took_effect() -> None:
    layer, made = _recheck()
    layer.act("", {"messages": []})
    layer.act("", step(json.dumps({"results": [{"id": "p_9001"}]})))
    failing = step(REFUSED, name="use", turn=2)
    failing["calls"].append({"turn": 2, "id": "call_2_1", "name": "book", "valid": True, "kind": "write",
                             "error": None, "arguments": {}})
    layer.act("", failing)
    assert len(made) == 1 and made[0].seen[-1] is failing  # the policy itself saw the failure


def test_the_heuristic_records_its_settings_and_checks_them() -> None:
    assert HeuristicAgent().config() == {"retries": 3, "retry_delay": 0, "recheck_ids": True}
    assert HeuristicAgent(retries=0, recheck_ids=False).config()["retries"] == 0
    with pytest.raises(ValueError, match="retry_delay"):
        HeuristicAgent(retry_delay=-1)


def test_every_injected_failure_mode_reads_as_transient() -> None:
    from agentgym.noise.calls import FAILURE_MODES

    for text in FAILURE_MODES.values():
        assert is_transient({"content": f"[error TOOL_ERROR] {text.format(tool='search')}"}), text
