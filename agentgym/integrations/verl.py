"""verl: an agent loop that plays agentgym episodes in verl's rollouts.

verl (verified with verl 0.9.1, ``verl.experimental.agent_loop``) runs one agent loop per sample:
``AgentLoopBase.run(sampling_params, **kwargs)`` gets the dataset row's fields as keyword
arguments, generates with ``self.server_manager.generate(request_id=..., prompt_ids=...,
sampling_params=...)`` (a ``TokenOutput`` with ``token_ids``) and returns an ``AgentLoopOutput``
with the prompt and response token ids, the response mask (1 for the model's tokens, 0 for the
env's) and, here, ``reward_score``, which verl uses in place of a reward function.

`AgentGymAgentLoop` alternates the two: the opening of the episode named by the row's
``extra_info["agentgym"]`` (a `TaskSpec` as a dict) is rendered with the tokenizer's chat template
and the env's tools; each generated turn goes to ``env.step``; the env's answer is rendered and
appended (mask 0), until the episode ends or ``rollout.response_length`` is reached. The reward is
the episode's (the task score), or `unfinished_reward` (0.0) for a rollout that ran out of tokens
first. Rendering is `agentgym.integrations._chat.TemplateRenderer`: the whole sequence is what the
chat template gives for the conversation.

Use it from verl's config (``examples/train_verl.py`` writes both files)::

    # agent_loops.yaml, given as actor_rollout_ref.rollout.agent.agent_loop_config_path
    - name: agentgym
      _target_: agentgym.integrations.verl.AgentGymAgentLoop
      remote_url: null          # or an `agentgym serve` URL, or "ray": env actors on verl's Ray cluster

and a dataset whose rows have ``agent_name: agentgym``, ``extra_info: {"agentgym": spec}`` and a
``prompt`` (the opening; verl filters rows on its length): `dataset_rows` makes them.

The class is built when first used (``agentgym.integrations.verl.AgentGymAgentLoop``), so
importing this module needs no verl.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any
from uuid import uuid4

from agentgym.integrations._chat import TemplateRenderer
from agentgym.integrations._requirements import require
from agentgym.integrations._tasks import EnvSession, TaskSpec, episode_summary

# `AgentGymAgentLoop` is built on first access (module __getattr__), so it is not in __all__:
# a star import must not import verl.
__all__ = ["AGENT_NAME", "agent_loop_class", "agent_loop_config", "dataset_rows", "spec_from_extra_info"]

logger = logging.getLogger(__name__)

#: The name the loop registers under; a row selects it with ``agent_name``.
AGENT_NAME = "agentgym"


class _AgentGymLoop:
    """The agent loop's logic; `agent_loop_class` puts verl's ``AgentLoopBase`` under it.

    Args:
        remote_url: an ``agentgym serve`` server to step episodes on, ``"ray"`` for env actors on
            the Ray cluster verl runs on (`agentgym.rayenv`), or None for in process.
        unfinished_reward: the reward of a rollout that ran out of tokens before its episode ended.
        *args, **kwargs: ``AgentLoopBase``'s arguments, which verl passes.
    """

    #: verl's ``AgentLoopOutput`` (set by `agent_loop_class`).
    _agentgym_output: Any

    def __init__(self, *args: Any, remote_url: str | None = None, unfinished_reward: float = 0.0,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self.agentgym_remote_url = remote_url
        self.agentgym_unfinished_reward = float(unfinished_reward)
        rollout = self.rollout_config  # type: ignore[attr-defined]
        self.prompt_length = int(rollout.prompt_length)
        self.response_length = int(rollout.response_length)
        self.renderer = TemplateRenderer(self.tokenizer,  # type: ignore[attr-defined]
                                         getattr(self, "apply_chat_template_kwargs", None))

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> Any:
        """Play the episode of the row's ``extra_info["agentgym"]``; verl's other row fields
        (``raw_prompt``, ``index`` ...) are not needed: the env makes the prompt itself."""
        spec = spec_from_extra_info(kwargs.get("extra_info"))
        loop = asyncio.get_running_loop()
        renderer = self.renderer
        session = EnvSession(self.agentgym_remote_url)
        timing = {"generate_sequences": 0.0, "tool_calls": 0.0}
        want_logprobs = bool(sampling_params.get("logprobs"))
        response_ids: list[int] = []
        response_mask: list[int] = []
        response_logprobs: list[float] = []
        turns = answers = 0
        try:
            started = time.perf_counter()
            _, info = await loop.run_in_executor(None, session.reset, spec)
            tools = info.get("tools", [])
            prompt_ids = renderer.encode(renderer.prompt(info["messages"], tools))
            if len(prompt_ids) > self.prompt_length:
                logger.warning("the opening of %s is %d tokens, over rollout.prompt_length=%d; left-truncating",
                               spec, len(prompt_ids), self.prompt_length)
                prompt_ids = prompt_ids[-self.prompt_length:]
            timing["tool_calls"] += time.perf_counter() - started
            request_id = uuid4().hex
            while len(response_ids) < self.response_length:
                budget = self.response_length - len(response_ids)
                started = time.perf_counter()
                output = await self.server_manager.generate(  # type: ignore[attr-defined]
                    request_id=request_id, prompt_ids=prompt_ids + response_ids,
                    sampling_params={**sampling_params, "max_tokens": budget})
                timing["generate_sequences"] += time.perf_counter() - started
                ids = list(output.token_ids)[:budget]
                response_ids += ids
                response_mask += [1] * len(ids)
                if want_logprobs:
                    logprobs = list(output.log_probs or [])[: len(ids)]
                    response_logprobs += logprobs + [0.0] * (len(ids) - len(logprobs))
                turns += 1
                completion = renderer.decode(ids)
                if len(ids) >= budget and not renderer.ended(completion):
                    break  # the turn was cut at the length limit: it never reached its end
                # (A turn that stopped on a stop string is whole: its feedback closes it.)
                started = time.perf_counter()
                _, _, _, _, step_info = await loop.run_in_executor(None, session.step, renderer.action(completion))
                if session.done:
                    timing["tool_calls"] += time.perf_counter() - started
                    break
                feedback = renderer.encode(renderer.feedback(completion, step_info["messages"], tools))
                timing["tool_calls"] += time.perf_counter() - started
                if len(response_ids) + len(feedback) >= self.response_length:
                    break  # no room left to generate after the env's answer
                answers += 1
                response_ids += feedback
                response_mask += [0] * len(feedback)
                if want_logprobs:
                    response_logprobs += [0.0] * len(feedback)
        finally:
            await loop.run_in_executor(None, session.close)
        reward = session.total_reward if session.done else self.agentgym_unfinished_reward
        return self._agentgym_output(
            prompt_ids=prompt_ids,
            response_ids=response_ids,
            response_mask=response_mask,
            response_logprobs=response_logprobs if want_logprobs else None,
            reward_score=reward,
            num_turns=1 + turns + answers,
            metrics=timing,
            extra_fields={"turn_scores": [], "tool_rewards": [],
                          "reward_extra_info": {f"agentgym/{k}": v for k, v in episode_summary(session).items()}},
        )


def spec_from_extra_info(extra_info: Any) -> TaskSpec:
    """The `TaskSpec` a verl row carries in ``extra_info["agentgym"]``."""
    if not isinstance(extra_info, dict) or not isinstance(extra_info.get("agentgym"), dict):
        raise ValueError("an agentgym row needs extra_info['agentgym']: a TaskSpec as a dict "
                         "(agentgym.integrations.verl.dataset_rows makes such rows)")
    return TaskSpec.from_row(extra_info["agentgym"])


def dataset_rows(specs: Iterable[TaskSpec], *, remote_url: str | None = None,
                 data_source: str = "agentgym") -> list[dict[str, Any]]:
    """verl dataset rows (write them to parquet): ``prompt`` (the env's opening, for verl's length
    filter), ``agent_name``, ``data_source``, ``reward_model`` and ``extra_info["agentgym"]``."""
    session = EnvSession(remote_url)
    rows = []
    try:
        for i, spec in enumerate(specs):
            _, info = session.reset(spec)
            rows.append({
                "data_source": data_source,
                "agent_name": AGENT_NAME,
                "prompt": [{"role": m["role"], "content": m["content"]} for m in info["messages"]],
                # The loop's reward_score stands in for a reward function; verl's schema still has the field.
                "reward_model": {"style": "rule", "ground_truth": ""},
                "extra_info": {"index": i, "agentgym": spec.to_row()},
            })
    finally:
        session.close()
    return rows


def agent_loop_config(remote_url: str | None = None, unfinished_reward: float = 0.0) -> list[dict[str, Any]]:
    """The entries of the YAML file ``actor_rollout_ref.rollout.agent.agent_loop_config_path`` names."""
    return [{"name": AGENT_NAME, "_target_": f"{__name__}.AgentGymAgentLoop", "remote_url": remote_url,
             "unfinished_reward": float(unfinished_reward)}]


def _agent_loop_module() -> Any:
    return require("verl", "verl.experimental.agent_loop")


_CLASSES: dict[type, type] = {}


def agent_loop_class() -> type:
    """`AgentGymAgentLoop` over the installed verl's ``AgentLoopBase``, registered as ``agentgym``."""
    module = _agent_loop_module()
    base = module.AgentLoopBase
    cls = _CLASSES.get(base)
    if cls is None:
        cls = _CLASSES[base] = type("AgentGymAgentLoop", (_AgentGymLoop, base),
                                    {"__module__": __name__, "__qualname__": "AgentGymAgentLoop",
                                     "__doc__": __doc__, "_agentgym_output": module.AgentLoopOutput})
        register = getattr(getattr(module, "agent_loop", None), "register", None)
        if register is not None:
            register(AGENT_NAME)(cls)
    return cls


def __getattr__(name: str) -> Any:
    if name == "AgentGymAgentLoop":
        return agent_loop_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
