"""OpenRLHF: an agent executor that plays agentgym episodes, for ``--train.agent_func_path``.

OpenRLHF (verified with openrlhf 0.11.2, ``openrlhf.utils.agent``) loads the Python file that
``--train.agent_func_path`` names and makes its ``AgentExecutor`` with no arguments. The
``MultiTurnAgentExecutor`` it derives from makes one ``AgentInstance`` per prompt and drives it:
``await reset({"observation": prompt, "label": label})`` returns ``{"observation": text}``, then
for each generated turn ``await step({"observation_text", "action_text", "label",
"sampling_params"})`` returns ``{"rewards", "scores", "environment_feedback", "done",
"sampling_params", "extra_logs"}``; the feedback text is tokenized and appended to the sequence
(outside the action mask), the rewards are summed.

Here the row's label is the episode's `TaskSpec` as JSON. ``reset`` opens the episode and renders
its opening with the tokenizer's chat template and the env's tools; ``step`` sends the turn to the
env and renders its answer with the template (`agentgym.integrations._chat.TemplateRenderer`), so
the whole sequence is what the template gives for the conversation. The step reward is the env's
(the task score when the episode ends, 0 before); a rollout that runs out of tokens first ends with
`unfinished_reward` (0.0 by default).

This file is itself an agent file::

    python -m openrlhf.cli.train_ppo_ray ... \\
        --train.agent_func_path "$(python -c 'import agentgym.integrations.openrlhf as m; print(m.__file__)')" \\
        --data.prompt_dataset agentgym_rows.jsonl --data.input_key prompt --data.label_key label

with rows from `dataset_rows` (the prompt text is already templated: no ``--data.apply_chat_template``).
Its ``AgentExecutor`` steps envs in process, or on the server in ``AGENTGYM_REMOTE_URL`` when that is
set (a variable, since OpenRLHF passes the executor nothing); `make_agent_executor` builds one with
other settings for a file of your own. The classes are built when first used, so importing this
module needs no OpenRLHF.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from typing import Any

from agentgym.integrations._chat import TemplateRenderer
from agentgym.integrations._requirements import require
from agentgym.integrations._tasks import EnvSession, TaskSpec, episode_summary

# `AgentExecutor` is built on first access (module __getattr__), so it is not in __all__:
# a star import must not import OpenRLHF.
__all__ = ["REMOTE_URL_VARIABLE", "dataset_rows", "make_agent_executor"]

#: The environment variable the module-level `AgentExecutor` reads its env server URL from.
REMOTE_URL_VARIABLE = "AGENTGYM_REMOTE_URL"


class _Settings:
    """What an executor's instances share: the settings and the renderer of the tokenizer in use."""

    def __init__(self, remote_url: str | None, unfinished_reward: float) -> None:
        self.remote_url = remote_url
        self.unfinished_reward = float(unfinished_reward)
        self.renderer: TemplateRenderer | None = None

    def use_tokenizer(self, tokenizer: Any) -> None:
        if self.renderer is None or self.renderer.tokenizer is not tokenizer:
            self.renderer = TemplateRenderer(tokenizer)


class _Instance:
    """One prompt's episode; `make_agent_executor` puts OpenRLHF's ``AgentInstanceBase`` under it."""

    _settings: _Settings

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__} takes no arguments")
        self.session = EnvSession(self._settings.remote_url)
        self.tools: list[dict[str, Any]] = []
        #: The rewards returned so far (the episode's return once done).
        self.returned = 0.0

    @property
    def renderer(self) -> TemplateRenderer:
        if self._settings.renderer is None:
            raise RuntimeError("the executor has not seen a tokenizer yet (execute() sets it)")
        return self._settings.renderer

    async def reset(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Open the episode of the label's spec; its opening, templated, is the observation."""
        spec = TaskSpec.from_json(states["label"])
        _, info = await asyncio.to_thread(self.session.reset, spec)
        self.tools = info.get("tools", [])
        self.returned = 0.0
        return {"observation": self.renderer.prompt(info["messages"], self.tools)}

    async def step(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Send the turn to the env; its answer, templated, is the feedback."""
        import torch  # an OpenRLHF dependency; rewards go back as tensors

        renderer = self.renderer
        completion = states["action_text"]
        sampling_params = states.get("sampling_params")
        feedback = ""
        budget = getattr(sampling_params, "max_tokens", None)  # this turn's; the executor sets it
        if not renderer.ended(completion) and (budget is None or len(renderer.encode(completion)) >= budget):
            # Cut at the length limit: the executor has no room for another turn. (A turn that
            # stopped on a stop string is whole: its feedback closes it.)
            reward, done = self._settings.unfinished_reward, True
        else:
            _, reward, _, _, info = await asyncio.to_thread(self.session.step, renderer.action(completion))
            done = self.session.done
            if not done:
                feedback = renderer.feedback(completion, info["messages"], self.tools)
                # The executor stops once the sequence fills max_length; this turn's budget was
                # sampling_params.max_tokens. Re-encoding the turn counts its tokens (near enough).
                used = len(renderer.encode(renderer.action(completion))) + len(renderer.encode(feedback))
                if budget is not None and used >= budget:
                    reward, done, feedback = float(reward) + self._settings.unfinished_reward, True, ""
        self.returned += float(reward)
        if done:
            await asyncio.to_thread(self.session.close)
        logs = {f"agentgym/{k}": v for k, v in episode_summary(self.session).items()}
        return {
            "rewards": torch.tensor(float(reward)),
            "scores": torch.tensor(self.returned),
            "environment_feedback": feedback,
            "done": done,
            "sampling_params": sampling_params,
            "extra_logs": logs,
        }


def make_agent_executor(remote_url: str | None = None, unfinished_reward: float = 0.0) -> type:
    """An ``AgentExecutor`` class (OpenRLHF makes it with no arguments) with these settings.

    Args:
        remote_url: an ``agentgym serve`` server to step episodes on, or None for in process.
        unfinished_reward: the reward of a rollout that ran out of tokens before its episode ended.
    """
    agent = require("openrlhf", "openrlhf.utils.agent")
    settings = _Settings(remote_url, unfinished_reward)
    instance_cls = type("AgentInstance", (_Instance, agent.AgentInstanceBase),
                        {"__module__": __name__, "_settings": settings})

    async def execute(self: Any, prompt: Any, label: Any, sampling_params: Any, max_length: int,
                      hf_tokenizer: Any, llm_engine: Any, images: Any = None) -> Any:
        settings.use_tokenizer(hf_tokenizer)
        return await agent.MultiTurnAgentExecutor.execute(self, prompt, label, sampling_params, max_length,
                                                         hf_tokenizer, llm_engine, images)

    def __init__(self: Any) -> None:
        agent.MultiTurnAgentExecutor.__init__(self, instance_cls)

    return type("AgentExecutor", (agent.MultiTurnAgentExecutor,),
                {"__module__": __name__, "__init__": __init__, "execute": execute,
                 "__doc__": "Plays agentgym episodes named by the rows' labels (see agentgym.integrations.openrlhf)."})


def dataset_rows(specs: Iterable[TaskSpec], tokenizer: Any, *, remote_url: str | None = None) -> list[dict[str, str]]:
    """Rows for ``--data.prompt_dataset`` (as JSON lines): ``prompt``, the opening templated with
    `tokenizer` (the same text ``reset`` returns), and ``label``, the spec as JSON."""
    renderer = TemplateRenderer(tokenizer)
    session = EnvSession(remote_url)
    rows = []
    try:
        for spec in specs:
            _, info = session.reset(spec)
            rows.append({"prompt": renderer.prompt(info["messages"], info.get("tools", [])), "label": spec.to_json()})
    finally:
        session.close()
    return rows


_EXECUTORS: dict[Any, type] = {}


def __getattr__(name: str) -> Any:
    # OpenRLHF looks the class up on the module it loads from this file: build it then.
    if name == "AgentExecutor":
        agent = require("openrlhf", "openrlhf.utils.agent")
        key = (agent.MultiTurnAgentExecutor, os.environ.get(REMOTE_URL_VARIABLE))
        if key not in _EXECUTORS:
            _EXECUTORS[key] = make_agent_executor(remote_url=key[1])
        return _EXECUTORS[key]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
