"""The TRL adapter: its classes as ``GRPOTrainer(environment_factory=...)`` uses them.

TRL itself (pinned in requirements/integrations-trl.txt, which the Makefile's dev install adds,
so `make test` runs it) drives a few GRPO steps at the end; the other tests use a stub that
mirrors how trl 1.16.0's ``GRPOTrainer`` treats environments (``trl/trainer/grpo_trainer.py``): it makes one instance per factory up front and reads its tools off the class
(``inspect.getmembers(type(env), inspect.isfunction)``, public names but ``reset`` and
``get_reward``), calls ``reset(**row)`` without the ``environment`` column, calls each tool the
model names with ``tool(**arguments)`` (an exception becomes ``{"error": str(e)}``), and scores
the rollout with ``get_reward()``. The schema check uses transformers' own ``get_json_schema``,
which is how TRL shows the tools to the model.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
from typing import Any

import pytest
from integrations_support import SPECS, env_server_url, reference_episode, tool_call_text

from agentgym.integrations import TaskSpec, task_specs
from agentgym.integrations.trl import ENDED, build, single_environment

REAL_TRL = importlib.util.find_spec("trl") is not None


class TRLStub:
    """How trl 1.16.0's GRPOTrainer handles ``environment_factory`` (one rollout at a time)."""

    def __init__(self, environment_factory: Any) -> None:
        factories = environment_factory if isinstance(environment_factory, dict) else {None: environment_factory}
        self.multi = isinstance(environment_factory, dict)
        self.tools: dict[Any, list[Any]] = {}
        self.pool: dict[Any, list[Any]] = {}
        for name, factory in factories.items():
            instance = factory()
            members = [n for n, _ in inspect.getmembers(type(instance), predicate=inspect.isfunction)]
            assert "reset" in members
            self.tools[name] = [getattr(instance, n) for n in members
                                if n not in ("reset", "get_reward") and not n.startswith("_")]
            self.pool[name] = [instance]

    def rollout(self, row: dict[str, Any], turns: list[dict[str, Any] | None]) -> tuple[float, list[dict[str, Any]]]:
        """Play `turns` (each a tool call, or None for a turn without one) from `row`."""
        name = row.get("environment") if self.multi else None
        env = self.pool[name][0]
        kwargs = {k: v for k, v in row.items() if k != "environment"} if self.multi else row
        observation = env.reset(**kwargs)
        messages = list(row.get("prompt", [{"role": "user", "content": ""}]))
        if observation is not None:
            messages[-1] = {**messages[-1], "content": messages[-1]["content"] + observation}
        tools = {m.__name__: getattr(env, m.__name__) for m in self.tools[name]}
        for call in turns:
            if call is None:
                break
            try:
                result: Any = tools[call["name"]](**call["arguments"])
            except Exception as e:  # noqa: BLE001  (what TRL does with a failing tool)
                result = {"error": str(e)}
            messages.append({"role": "tool", "name": call["name"], "content": str(result)})
        return env.get_reward(), messages


def as_tool_calls(actions: list[str]) -> list[dict[str, Any]]:
    """The reference agent's turns as the tool calls a TRL model makes: messages go through the
    user tool."""
    calls = []
    for action in actions:
        parsed = tool_call_text(action)
        name, arguments = parsed if parsed is not None else ("send_message", {"message": action})
        calls.append({"name": name, "arguments": arguments})
    return calls


# ------------------------------------------------------------------------------------- schemas
def _as_get_json_schema_writes(tool: dict[str, Any]) -> dict[str, Any]:
    """An env tool schema as ``get_json_schema`` writes the same signature: nullable as a flag,
    no bounds (the env enforces them), ``required`` only when non-empty."""

    def prop(schema: dict[str, Any], with_description: bool = True) -> dict[str, Any]:
        t = schema.get("type")
        types_ = [t] if isinstance(t, str) else list(t or [])
        base = [x for x in types_ if x != "null"]
        out: dict[str, Any] = {}
        if "enum" in schema:
            values = [v for v in schema["enum"] if v is not None]
            kinds = list(dict.fromkeys({str: "string", int: "integer", float: "number"}[type(v)] for v in values))
            out["type"] = kinds[0] if len(kinds) == 1 else kinds
            out["enum"] = values
        else:
            out["type"] = base[0]
        if base == ["array"]:
            out["items"] = prop(schema["items"], with_description=False)
        if "null" in types_:
            out["nullable"] = True
        if with_description:
            out["description"] = schema["description"]
        return out

    fn = tool["function"]
    params = fn["parameters"]
    parameters: dict[str, Any] = {"type": "object",
                                  "properties": {k: prop(v) for k, v in params["properties"].items()}}
    if params.get("required"):
        parameters["required"] = list(params["required"])
    return {"type": "function", "function": {"name": fn["name"], "description": fn["description"],
                                             "parameters": parameters}}


def test_methods_give_back_the_env_tool_schemas() -> None:
    transformers_utils = pytest.importorskip("transformers.utils")
    import agentgym

    specs = [spec for env_id in agentgym.ENV_IDS for spec in task_specs(env_id, range(6))]
    specs += task_specs("AgentRL/ToolUse-v0", range(3), noise="distractors=2")
    rows, factory = build(specs)
    assert len(factory) > 4
    seen = 0
    for row in rows:
        stub = TRLStub({row["environment"]: factory[row["environment"]]})
        env_tools = factory[row["environment"]]._tools
        methods = {m.__name__: m for m in stub.tools[row["environment"]]}
        assert set(methods) == {t["function"]["name"] for t in env_tools} | {"send_message"}
        for tool in env_tools:
            got = transformers_utils.get_json_schema(methods[tool["function"]["name"]])
            assert got == _as_get_json_schema_writes(tool)
            seen += 1
    assert seen > 50


# ------------------------------------------------------------------------------------- rollouts
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.env_id)
def test_a_rollout_plays_the_reference_episode(spec: TaskSpec) -> None:
    reference = reference_episode(spec)
    rows, factory = build([spec])
    reward, messages = TRLStub(factory).rollout(rows[0], as_tool_calls(reference.actions))
    assert reward == pytest.approx(reference.score) and reward == 1.0
    assert messages[-1]["content"].endswith(ENDED)
    env = TRLStub(factory)  # a fresh pool: the episode record of a finished rollout
    env.rollout(rows[0], as_tool_calls(reference.actions))
    instance = env.pool[rows[0]["environment"]][0]
    assert instance.episode["success"] is True and instance.episode["turns"] == len(reference.actions)


def test_the_user_tool_returns_the_users_reply_and_tools_their_result() -> None:
    spec = SPECS[0]
    rows, factory = build([spec])
    stub = TRLStub(factory)
    reward, messages = stub.rollout(rows[0], [{"name": "send_message", "arguments": {"message": "Which area?"}},
                                              {"name": "search", "arguments": {"page": 1}}, None])
    assert reward == 0.0  # the rollout stopped before the episode ended
    assert not messages[-2]["content"].startswith("[") and messages[-1]["content"].startswith('{"results"')


def test_bad_calls_reach_the_env_which_answers_with_an_error() -> None:
    rows, factory = build([SPECS[0]])
    stub = TRLStub(factory)
    calls = [{"name": "search", "arguments": {"area": 3}}, {"name": "search", "arguments": {"color": "red"}},
             {"name": "book", "arguments": {}}]
    _, messages = stub.rollout(rows[0], calls)
    assert [m["content"].split("]")[0] for m in messages[-3:]] == ["[error INVALID_ARGS"] * 3
    instance = stub.pool[rows[0]["environment"]][0]
    with pytest.raises(TypeError, match="keyword arguments only"):  # the signature is keyword-only
        instance.search(None, "Harbor")


def test_a_finished_episode_answers_every_further_call_with_its_end() -> None:
    spec = SPECS[1]
    rows, factory = build([spec])
    stub = TRLStub(factory)
    calls = as_tool_calls(reference_episode(spec).actions) + [{"name": "list_policies", "arguments": {}}]
    reward, messages = stub.rollout(rows[0], calls)
    assert reward == 1.0 and messages[-1]["content"] == ENDED


def test_unfinished_reward_is_configurable() -> None:
    rows, factory = build([SPECS[0]], unfinished_reward=-0.5, user_tool="ask_user")
    stub = TRLStub(factory)
    reward, messages = stub.rollout(rows[0], [{"name": "ask_user", "arguments": {"message": "Hi?"}}])
    assert reward == -0.5
    assert "send_message" not in {m.__name__ for m in stub.tools[rows[0]["environment"]]}


def test_rows_that_do_not_match_their_class_are_refused() -> None:
    rows, factory = build([SPECS[0], SPECS[1]])
    dialog, tooluse = rows
    with pytest.raises(ValueError, match="not those of"):
        TRLStub({"x": factory[dialog["environment"]]}).rollout({**tooluse, "environment": "x"}, [])
    wrong_prompt = {**dialog, "prompt": [dialog["prompt"][0], {"role": "user", "content": "something else"}]}
    with pytest.raises(ValueError, match="not the opening"):
        TRLStub(factory).rollout(wrong_prompt, [])
    with pytest.raises(ValueError, match="unknown task fields"):
        TRLStub(factory).rollout({**dialog, "colour": "red"}, [])


def test_without_a_dataset_each_reset_draws_a_fresh_task() -> None:
    cls = single_environment("AgentRL/Dialog-v0", domain="restaurants", difficulty="easy")
    stub = TRLStub(cls)
    env = stub.pool[None][0]
    # Fresh: a seed drawn anew each time (two tasks may still open with the same words, since a
    # domain's openings are few: the seed, not the text, tells a fresh draw).
    openings, seeds = [], set()
    for _ in range(3):
        openings.append(env.reset())
        seeds.add(env._session.reset_info["seed"])
    assert len(seeds) == 3 and all(o.startswith("[system] ") for o in openings)
    with pytest.raises(ValueError, match="may give only a seed"):
        env.reset(noise="tool_failure=0.5")
    assert env.reset(seed=7) == env.reset(seed=7)


def test_a_user_tool_named_like_an_env_tool_is_refused() -> None:
    with pytest.raises(ValueError, match="user tool"):
        build([SPECS[0]], user_tool="search")


def test_remote_env_gives_the_same_rollout() -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("uvicorn")
    spec = SPECS[0]
    calls = as_tool_calls(reference_episode(spec).actions)
    rows, factory = build([spec])
    here = TRLStub(factory).rollout(rows[0], calls)
    remote_rows, remote_factory = build([spec], remote_url=env_server_url())
    assert remote_rows == rows
    there = TRLStub(remote_factory).rollout(remote_rows[0], calls)
    assert there == here


# ------------------------------------------------------------------------------------- real TRL
@pytest.mark.skipif(not REAL_TRL, reason="trl is not installed (pip install -r requirements/integrations-trl.txt)")
def test_grpo_trainer_rolls_out_in_our_env_and_changes_the_weights(tmp_path: Any) -> None:
    """GRPOTrainer itself, a few optimisation steps on CPU with a tiny model built here.

    The model's generations are scripted (its own would be garbage): of the two generations of
    each prompt, one plays the reference episode's calls and the other answers "Done." at once.
    TRL's own tool-call parsing, tool loop and reward plumbing run on the adapter's classes, so
    the rewards (1 for the played episode, 0 for the abandoned one) can only come from our env,
    and the advantages they give are non-zero, so the update changes the model's weights.
    """
    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer
    from trl.chat_template_utils import qwen2_5_chat_template

    from agentgym.testing.models import build_tiny_causal_lm

    path = build_tiny_causal_lm(tmp_path / "tiny", chat_template=qwen2_5_chat_template, arch="qwen2")
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    rows, factory = build(SPECS)
    scripts = {row["prompt"][1]["content"]: as_tool_calls(reference_episode(spec).actions)
               for row, spec in zip(rows, SPECS, strict=True)}
    openings_seen: dict[str, int] = {}

    def scripted_generate(input_ids: Any, attention_mask: Any = None, **kwargs: Any) -> Any:
        completions = []
        for ids in input_ids:
            text = tokenizer.decode(ids, skip_special_tokens=False)
            opening, script = next((o, calls) for o, calls in scripts.items() if o in text)
            turn = text.count("<|im_start|>assistant") - 1
            if turn == 0:
                openings_seen[opening] = openings_seen.get(opening, 0) + 1
                plays = openings_seen[opening] % 2 == 1  # the first of each pair plays, the second gives up
            else:
                plays = True  # only a playing rollout reaches a later turn
            if plays and turn < len(script):
                body = json.dumps(script[turn], ensure_ascii=False)
                completions.append(f"<tool_call>\n{body}\n</tool_call><|im_end|>")
            else:
                completions.append("Done.<|im_end|>")
        encoded = [tokenizer.encode(c, add_special_tokens=False) for c in completions]
        width = max(len(e) for e in encoded)
        pad = tokenizer.pad_token_id
        tail = torch.tensor([e + [pad] * (width - len(e)) for e in encoded], dtype=input_ids.dtype)
        return torch.cat([input_ids, tail.to(input_ids.device)], dim=1)

    model.generate = scripted_generate  # type: ignore[method-assign]
    steps = 2
    args = GRPOConfig(output_dir=str(tmp_path / "out"), per_device_train_batch_size=4, num_generations=2,
                      max_completion_length=6144, max_tool_calling_iterations=8, max_steps=steps, logging_steps=1,
                      learning_rate=1e-3, report_to="none", use_cpu=True, save_strategy="no", shuffle_dataset=False)
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=args, train_dataset=Dataset.from_list(rows),
                          environment_factory=factory)
    trainer.train()
    logs = [row for row in trainer.state.log_history if "reward" in row]
    assert len(logs) == steps and trainer.state.global_step == steps
    for row in logs:  # half the rollouts played their episode to success in our env, half gave up
        assert row["reward"] == pytest.approx(0.5) and row["reward_std"] > 0
        assert row["tools/call_frequency"] > 0 and row["tools/failure_frequency"] == 0
    envs = [env for pool in trainer._environment_pool.values() for env in pool]
    played = [env for env in envs if env.episode is not None]
    assert played and all(env.episode["success"] for env in played)
    assert all(env.episode["turns"] == len(scripts[env._session.reset_info["messages"][-1]["content"]])
               for env in played), "every scripted call was a step of our env"
    assert sum(openings_seen.values()) == 2 * steps * 2  # two prompts, two generations each, per step
    after = model.state_dict()
    changed = [k for k in before if not torch.equal(before[k], after[k].detach().cpu())]
    assert changed, "the GRPO update changed the model's weights"
