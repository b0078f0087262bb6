"""SkyRL: agentgym episodes as a SkyRL-gym ``BaseTextEnv``.

SkyRL (verified with skyrl-gym 0.4.0, and the generator of its trainer, skyrl 0.3.0, which
needs Python >= 3.12) makes one env per trajectory with
``skyrl_gym.make(env_class, env_config=..., extras=...)``, where ``extras`` holds the dataset
row's fields. ``init(prompt)`` returns the conversation to start from; each ``step(action)``
takes the model's turn as text and returns ``BaseTextEnvStepOutput(observations, reward, done,
metadata)``, whose observations (chat messages) the generator appends to the conversation and
tokenizes with the model's chat template.

`AgentGymTextEnv` plays the episode named by the row's ``agentgym`` field (a `TaskSpec` as a dict).
Since SkyRL applies the chat template without tools, ``init`` returns the env's opening with the
tool schemas written into the system message in the Hermes/Qwen form (``<tools>`` and
``<tool_call>`` tags, which the envs parse). Each step's observations are the env's new messages
(tool results as ``tool`` messages, the user's as ``user``); the reward is the env's (the task
score at the end, 0 before); ``done`` is the episode's end; the metadata and ``get_metrics()``
carry the episode's summary.

Register it, and give rows from `dataset_rows` (``env_class: agentgym``)::

    from agentgym.integrations.skyrl import register
    register()      # skyrl_gym.register(id="agentgym", entry_point="agentgym.integrations.skyrl:AgentGymTextEnv")

Episodes step on an ``agentgym serve`` server when ``AGENTGYM_REMOTE_URL`` is set (or the env
config, where SkyRL passes a mapping, sets ``remote_url``); set to ``ray``, they step on env
actors of the Ray cluster SkyRL runs on (`agentgym.rayenv`). SkyRL's ``generator.max_turns`` (1 by
default) limits the turns of a rollout: set it to at least the env's turn budget. The class is
built when first used, so importing this module needs no SkyRL.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from agentgym.core.render import answer_messages
from agentgym.integrations._chat import tools_system_prompt
from agentgym.integrations._requirements import require
from agentgym.integrations._tasks import EnvSession, TaskSpec, episode_summary

# `AgentGymTextEnv` is built on first access (module __getattr__), so it is not in __all__:
# a star import must not import SkyRL-gym.
__all__ = ["ENV_CLASS", "REMOTE_URL_VARIABLE", "dataset_rows", "opening_messages", "register", "text_env_class"]

#: The id the env registers under; a row selects it with ``env_class``.
ENV_CLASS = "agentgym"
#: The environment variable an env server URL may come from (SkyRL's typed config has no place for it).
REMOTE_URL_VARIABLE = "AGENTGYM_REMOTE_URL"


def opening_messages(info: dict[str, Any]) -> list[dict[str, str]]:
    """The conversation an episode opens with, the tools written into the system message."""
    messages = [{"role": m["role"], "content": m["content"]} for m in info["messages"]]
    tools = info.get("tools", [])
    if messages and messages[0]["role"] == "system":
        messages[0]["content"] = tools_system_prompt(messages[0]["content"], tools)
    elif tools:
        messages.insert(0, {"role": "system", "content": tools_system_prompt("", tools).lstrip()})
    return messages


class _TextEnv:
    """The env's logic; `text_env_class` puts SkyRL-gym's ``BaseTextEnv`` under it.

    Args:
        env_config: SkyRL's config of this env class. Where it is a mapping (SkyRL versions with
            free-form env configs) it may set ``remote_url`` and ``unfinished_reward``; SkyRL 0.3's
            typed config has no entry for this env, so the URL may come from ``AGENTGYM_REMOTE_URL``.
        extras: the row's fields; ``extras["agentgym"]`` is the episode's `TaskSpec` as a dict.
            SkyRL adds ``max_turns`` (its generator's turn limit): a rollout that reaches it before
            the episode ends is over, with the unfinished reward.
    """

    _step_output: Any

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None) -> None:
        super().__init__()  # type: ignore[call-arg]
        extras = extras or {}
        if not isinstance(extras.get("agentgym"), Mapping):
            raise ValueError("an agentgym row needs an 'agentgym' field: a TaskSpec as a dict "
                             "(agentgym.integrations.skyrl.dataset_rows makes such rows)")
        # Not `spec`: skyrl_gym.make sets env.spec to its own EnvSpec after construction.
        self.task_spec = TaskSpec.from_row(dict(extras["agentgym"]))
        config = env_config if isinstance(env_config, Mapping) else {}
        self.session = EnvSession(config.get("remote_url") or os.environ.get(REMOTE_URL_VARIABLE) or None)
        self.unfinished_reward = float(config.get("unfinished_reward", 0.0))
        limit = extras.get("max_turns")
        self.turn_limit = int(limit) if limit is not None else None
        self.chat_history: list[dict[str, Any]] = []

    def init(self, prompt: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Open the episode; the env's opening replaces `prompt` (the row's copy of it)."""
        _, info = self.session.reset(self.task_spec)
        budget = int(info.get("max_turns", 1))
        self.max_turns = budget if self.turn_limit is None else min(budget, self.turn_limit)
        self.turns = 0
        self.chat_history = opening_messages(info)
        return [dict(m) for m in self.chat_history], {"task": info.get("task", {}), "seed": info.get("seed")}

    def step(self, action: str) -> Any:
        """Send the model's turn to the env; its answer, as messages, is the observation."""
        self.turns += 1
        _, reward, terminated, truncated, info = self.session.step(action)
        observations = [_observation(m) for m in answer_messages(info["messages"])]
        self.chat_history.append({"role": "assistant", "content": action})
        self.chat_history.extend(observations)
        done = bool(terminated or truncated)
        metadata: dict[str, Any] = {"errors": list(info.get("errors", [])), "noise": list(info.get("noise", []))}
        if not done and self.turn_limit is not None and self.turns >= self.turn_limit:
            done, reward = True, float(reward) + self.unfinished_reward
            metadata["unfinished"] = True  # SkyRL's turn limit came before the episode's end
        if done:
            metadata["episode_summary"] = info.get("episode_summary")
            observations = []  # nothing follows the last turn
        return self._step_output(observations=observations, reward=float(reward), done=done, metadata=metadata)

    def get_metrics(self) -> dict[str, Any]:
        """The episode's summary: success, score, turns, tool calls, and whether it ended."""
        return episode_summary(self.session)

    def close(self) -> None:
        """Close the env (a remote one frees its server session)."""
        self.session.close()


def _observation(message: dict[str, Any]) -> dict[str, Any]:
    if message["role"] == "tool":
        return {"role": "tool", "content": message["content"], "name": message.get("name", ""),
                "tool_call_id": message.get("tool_call_id", "")}
    return {"role": message["role"], "content": message["content"]}


def dataset_rows(specs: Iterable[TaskSpec], *, remote_url: str | None = None,
                 data_source: str = "agentgym") -> list[dict[str, Any]]:
    """SkyRL dataset rows (write them to parquet): ``prompt`` (the opening `init` returns),
    ``env_class``, ``data_source`` and ``agentgym`` (the spec)."""
    session = EnvSession(remote_url)
    rows = []
    try:
        for spec in specs:
            _, info = session.reset(spec)
            rows.append({"data_source": data_source, "env_class": ENV_CLASS, "prompt": opening_messages(info),
                         "agentgym": spec.to_row()})
    finally:
        session.close()
    return rows


_CLASSES: dict[type, type] = {}


def text_env_class() -> type:
    """`AgentGymTextEnv` over the installed SkyRL-gym's ``BaseTextEnv``."""
    module = require("skyrl", "skyrl_gym.envs.base_text_env")
    base = module.BaseTextEnv
    cls = _CLASSES.get(base)
    if cls is None:
        cls = _CLASSES[base] = type("AgentGymTextEnv", (_TextEnv, base),
                                    {"__module__": __name__, "__qualname__": "AgentGymTextEnv",
                                     "__doc__": __doc__, "_step_output": module.BaseTextEnvStepOutput})
    return cls


def register(env_id: str = ENV_CLASS) -> None:
    """Register `AgentGymTextEnv` with SkyRL-gym as `env_id` (once; again is a no-op)."""
    skyrl_gym = require("skyrl", "skyrl_gym")
    text_env_class()
    if env_id not in skyrl_gym.registry:
        skyrl_gym.register(id=env_id, entry_point=f"{__name__}:AgentGymTextEnv")


def __getattr__(name: str) -> Any:
    if name == "AgentGymTextEnv":
        return text_env_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
