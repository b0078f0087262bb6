"""TRL: agentgym episodes as ``environment_factory`` environments of ``trl.GRPOTrainer``.

TRL (verified with trl 1.16.0) builds one environment instance per rollout from a factory, calls
``reset(**row)`` with the dataset row, shows the model the public methods of the environment's
class as tools (their schemas come from the type hints and Google docstrings, through
``transformers.utils.get_json_schema``), runs the tool calls the model makes, ends the rollout at
the first turn without a tool call, and scores it with ``get_reward()``. So here:

- each env tool is a typed public method, generated from the env's own tool schema: the same
  name, description, parameter names, types, enums, and required parameters (JSON-schema bounds,
  which ``get_json_schema`` cannot express, are still enforced by the env, which answers a call
  that breaks them with an INVALID_ARGS error). A method sends the call to the env as one step
  and returns the env's answer: the tool result, followed by anything the simulated user said;
- ``send_message`` (name configurable, or None to leave it out) is the way to talk to the
  simulated user, since in TRL a turn without a tool call ends the rollout;
- ``get_reward()`` is the episode's reward (the task score) once the episode has ended, and
  `unfinished_reward` (0.0 by default) when the rollout stopped first: the task was not done.

Tools differ between domains (and with the ``distractors`` noise), while TRL reads the tools
off the class, so `build` makes one class per distinct tool set and returns them as a dict
factory: each row's ``environment`` column names its class, and TRL shows each row its own
tools. ::

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer
    from agentgym.integrations.trl import build
    from agentgym.integrations import task_specs

    rows, factory = build(task_specs("AgentRL/ToolUse-v0", range(512), noise="tool_failure=0.2"))
    trainer = GRPOTrainer(model=..., args=GRPOConfig(...), train_dataset=Dataset.from_list(rows),
                          environment_factory=factory)

Without a dataset (TRL then calls ``reset()`` with no arguments), `environment_class` gives one
class for one env whose tools do not vary (fix its ``domain``); each reset draws a fresh task.
Nothing here imports TRL: the classes are plain Python, which is all TRL asks of them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import keyword
import re
from collections.abc import Iterable
from typing import Any, Literal, Optional

from agentgym.core.render import answer_messages
from agentgym.integrations._requirements import check_version
from agentgym.integrations._tasks import EnvSession, TaskSpec

__all__ = ["AgentGymEnvironment", "build", "environment_class", "method_for_tool"]

#: The message the user tool's result carries once the episode is over.
ENDED = "[The episode has ended.]"


class _NotGiven:
    """Default of an optional tool parameter: the env applies its own default when it is left out."""

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN: Any = _NotGiven()


class AgentGymEnvironment:
    """One rollout's environment for TRL's ``environment_factory``: a base that `environment_class`
    subclasses with the tool methods of one tool set.

    Every public function of the class is a tool to TRL, so everything else here is private or a
    property. TRL makes instances with no arguments and reuses them across rollouts (``reset``
    between), so the class attributes below hold the configuration.
    """

    #: The OpenAI schemas of the tools the generated methods stand for.
    _tools: list[dict[str, Any]] = []
    #: The env the class plays when a reset names none (no dataset, or rows without env_id).
    _default_spec: TaskSpec | None = None
    #: An env server to step episodes on, or None for in process.
    _remote_url: str | None = None
    #: The name of the method that sends a message to the user, or None.
    _user_tool: str | None = None
    #: The reward of a rollout that stopped before its episode ended.
    _unfinished_reward: float = 0.0

    def __init__(self) -> None:
        self._session = EnvSession(self._remote_url)
        self._calls = 0

    def reset(self, *, prompt: list[dict[str, Any]] | None = None, **row: Any) -> str | None:
        """Start the episode a dataset row names (TRL passes the row's columns as keywords).

        Args:
            prompt: the row's prompt; checked against the env's opening, which it must equal.
            **row: the episode's `TaskSpec` fields (a column that is no field is an error). Without
                ``env_id`` the class's own env is played, and ``seed`` alone may be given (none
                at all: TRL's placeholder rows, and a fresh task is drawn).

        Returns:
            None when the row has a prompt (the model sees it); else the env's opening as text,
            which TRL appends to its placeholder prompt.
        """
        if "env_id" in row:
            spec = TaskSpec.from_row(row)
        elif self._default_spec is None:
            raise ValueError(f"{type(self).__name__}.reset needs the row's env_id: the class has no default env")
        elif set(row) - {"seed"}:
            raise ValueError(f"a row without env_id may give only a seed, got {sorted(row)}: the class's env is used")
        else:
            spec = dataclasses.replace(self._default_spec, seed=row.get("seed"))
        obs, info = self._session.reset(spec)
        self._calls = 0
        if info.get("tools", []) != self._tools:
            offered = [t["function"]["name"] for t in info.get("tools", [])]
            raise ValueError(
                f"the episode of {spec} offers the tools {offered}, which are not those of {type(self).__name__} "
                f"({[t['function']['name'] for t in self._tools]}): route rows with agentgym.integrations.trl.build, "
                "or fix the env's domain")
        opening = [{"role": m["role"], "content": m["content"]} for m in info["messages"]]
        if prompt is None:
            return obs
        given_prompt = [{"role": m.get("role"), "content": m.get("content")} for m in prompt]
        if given_prompt != opening:
            raise ValueError(
                f"the row's prompt is not the opening of {spec}: the dataset was built with other env "
                "arguments or another agentgym version; rebuild it with agentgym.integrations.trl.build")
        return None

    def get_reward(self) -> float:
        """The episode's reward (the task score) once it has ended; `_unfinished_reward` before."""
        return self._session.total_reward if self._session.done else float(self._unfinished_reward)

    @property
    def episode(self) -> dict[str, Any] | None:
        """``info["episode_summary"]`` of the ended episode (metrics inputs), or None while it runs."""
        return self._session.episode

    # ------------------------------------------------------------------ steps
    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        if self._session.done:
            return ENDED
        self._calls += 1
        action = {"role": "assistant", "content": "", "tool_calls": [
            {"id": f"call_{self._calls}", "type": "function", "function": {"name": name, "arguments": arguments}}]}
        return self._answer(action)

    def _send_message(self, message: str) -> str:
        if self._session.done:
            return ENDED
        return self._answer({"role": "assistant", "content": message})

    def _answer(self, action: dict[str, Any]) -> str:
        _, _, _, _, info = self._session.step(action)
        parts = []
        for m in answer_messages(info["messages"]):
            if m["role"] == "tool" or "tool_calls" not in action:
                parts.append(m["content"])  # a tool's result; or the user's reply, the user tool's result
            else:
                parts.append(f"[{m['role']}] {m['content']}")
        if self._session.done:
            parts.append(ENDED)
        return "\n\n".join(parts)


# ---------------------------------------------------------------------------------------------
# Methods from schemas

_JSON_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}


def _python_type(schema: dict[str, Any], where: str) -> Any:
    """The type hint that ``get_json_schema`` turns back into `schema` (bounds aside)."""
    enum = schema.get("enum")
    t = schema.get("type")
    types = [t] if isinstance(t, str) else list(t or [])
    nullable = "null" in types or (enum is not None and None in enum)
    types = [x for x in types if x != "null"]
    if enum is not None:
        values = tuple(v for v in enum if v is not None)
        hint: Any = Literal.__getitem__(values)
    elif len(types) == 1 and types[0] in _JSON_TYPES:
        hint = _JSON_TYPES[types[0]]
    elif len(types) == 1 and types[0] == "array":
        items = schema.get("items")
        hint = list[_python_type(items, where)] if items is not None else list
    else:
        raise TypeError(f"{where}: no Python type for the schema {schema!r}")
    return Optional[hint] if nullable else hint  # noqa: UP045  (Optional[Literal] reads the same to both)


def method_for_tool(tool: dict[str, Any], call: Any) -> Any:
    """A public method whose signature and docstring give back `tool`'s schema, and which runs
    ``call(self, name, arguments)`` with the arguments the model passed (the env validates them).

    Args:
        tool: an OpenAI tool schema, ``{"type": "function", "function": {...}}``.
        call: ``(self, name, arguments) -> str``.
    """
    fn = tool["function"]
    name = fn["name"]
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_") or name in ("reset", "get_reward"):
        raise ValueError(f"tool {name!r} cannot be a public method name")
    params = fn.get("parameters", {})
    required = set(params.get("required", ()))
    signature_params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    doc_args = []
    for pname, pschema in params.get("properties", {}).items():
        if not pname.isidentifier() or keyword.iskeyword(pname):
            raise ValueError(f"tool {name!r}: parameter {pname!r} cannot be a Python parameter name")
        annotations[pname] = _python_type(pschema, f"tool {name!r}, parameter {pname!r}")
        default = inspect.Parameter.empty if pname in required else NOT_GIVEN
        signature_params.append(inspect.Parameter(pname, inspect.Parameter.KEYWORD_ONLY, default=default,
                                                  annotation=annotations[pname]))
        description = " ".join(str(pschema.get("description", pname)).split())
        doc_args.append(f"    {pname}: {description}")

    def method(self: Any, *args: Any, **arguments: Any) -> str:
        # The model's arguments go to the env as they are, not checked against the signature: the
        # env validates them and answers a bad call with an error the agent sees and the metrics
        # count, as it does for every agent. Keyword-only, as the signature says (TRL calls tools
        # with the parsed arguments as keywords).
        if args:
            raise TypeError(f"{name}() takes keyword arguments only")
        return call(self, name, arguments)

    method.__name__ = method.__qualname__ = name
    description = str(fn.get("description", "")).strip() or name
    method.__doc__ = description + ("\n\nArgs:\n" + "\n".join(doc_args) if doc_args else "")
    # No return hint: get_json_schema would add a "return" entry the env's schema does not have.
    method.__signature__ = inspect.Signature(signature_params)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    return method


def _send_message_method(name: str) -> Any:
    # No hint on self or the return: get_json_schema would put them in the schema the model sees.
    def send_message(self, message: str):  # type: ignore[no-untyped-def]  # noqa: ANN001, ANN202
        return self._send_message(message)

    send_message.__name__ = send_message.__qualname__ = name
    send_message.__doc__ = (
        "Send a message to the user (a question, a proposal, an answer) and get their reply.\n\n"
        "Args:\n    message: The text to send to the user.")
    return send_message


def environment_class(tools: list[dict[str, Any]], *, name: str = "AgentGymEnv",
                      default_spec: TaskSpec | None = None, remote_url: str | None = None,
                      user_tool: str | None = "send_message", unfinished_reward: float = 0.0) -> type:
    """A subclass of `AgentGymEnvironment` with one method per tool of `tools`.

    Args:
        tools: the episode's tool schemas (``info["tools"]``); episodes that offer others are refused.
        name: the class name (TRL logs the reward under it).
        default_spec: the env of resets that name none (its seed is ignored).
        remote_url: an env server to step episodes on, or None for in process.
        user_tool: the name of the method that messages the user, or None for no such method.
        unfinished_reward: the reward of a rollout that stopped before its episode ended.
    """
    namespace: dict[str, Any] = {
        "__module__": __name__, "__qualname__": name, "_tools": json.loads(json.dumps(tools)),
        "_default_spec": default_spec, "_remote_url": remote_url, "_user_tool": user_tool,
        "_unfinished_reward": float(unfinished_reward),
    }
    for tool in tools:
        method = method_for_tool(tool, AgentGymEnvironment._call_tool)
        if method.__name__ in namespace:
            raise ValueError(f"tool {method.__name__!r} appears twice")
        namespace[method.__name__] = method
    if user_tool is not None:
        if user_tool in namespace:
            raise ValueError(f"the user tool {user_tool!r} has the name of an env tool; pass another user_tool")
        namespace[user_tool] = _send_message_method(user_tool)
    return type(name, (AgentGymEnvironment,), namespace)


def build(specs: Iterable[TaskSpec], *, remote_url: str | None = None, user_tool: str | None = "send_message",
          unfinished_reward: float = 0.0) -> tuple[list[dict[str, Any]], dict[str, type]]:
    """Dataset rows and the ``environment_factory`` for ``GRPOTrainer``, for these episodes.

    Each row holds the episode's spec (the `TaskSpec` fields), its ``prompt`` (the env's opening
    messages) and its ``environment`` (the name of the class of its tool set). Opening each
    episode once here is how its tools are known; the openings are deterministic, so each
    rollout's ``reset`` finds the same one (and checks it).

    Args:
        specs: the episodes, e.g. `agentgym.integrations.task_specs(...)`.
        remote_url: an env server to step episodes on (also used here), or None for in process.
        user_tool: the name of the method that messages the user, or None for no such method.
        unfinished_reward: the reward of a rollout that stopped before its episode ended.

    Returns:
        The rows (``datasets.Dataset.from_list(rows)``) and ``{name: class}`` for ``environment_factory``.
    """
    _check_trl_version()
    session = EnvSession(remote_url)
    rows: list[dict[str, Any]] = []
    factory: dict[str, type] = {}
    names: dict[str, str] = {}
    try:
        for spec in specs:
            _, info = session.reset(spec)
            key = json.dumps(info["tools"], sort_keys=True)
            name = names.get(key)
            if name is None:
                family = re.sub(r"[^A-Za-z0-9]", "", spec.env_id.split("/")[-1].split("-v")[0]) or "Env"
                name = names[key] = f"AgentGym{family}_{hashlib.sha1(key.encode()).hexdigest()[:8]}"
                factory[name] = environment_class(info["tools"], name=name, remote_url=remote_url,
                                                  user_tool=user_tool, unfinished_reward=unfinished_reward)
            opening = [{"role": m["role"], "content": m["content"]} for m in info["messages"]]
            rows.append({"prompt": opening, "environment": name, **spec.to_row()})
    finally:
        session.close()
    return rows, factory


def single_environment(env_id: str, *, remote_url: str | None = None, user_tool: str | None = "send_message",
                       unfinished_reward: float = 0.0, **env_kwargs: Any) -> type:
    """One class for training without a dataset: every reset draws a fresh task of `env_id`.

    The env's tools must not vary between episodes (fix ``domain``, and no ``distractors``
    noise); an episode that offers other tools is refused at its reset.

    Args:
        env_id: the env.
        remote_url: an env server to step episodes on, or None for in process.
        user_tool: the name of the method that messages the user, or None for no such method.
        unfinished_reward: the reward of a rollout that stopped before its episode ended.
        **env_kwargs: the env's arguments (`TaskSpec` fields: noise, split, difficulty, domain ...).
    """
    _check_trl_version()
    spec = TaskSpec(env_id=env_id, seed=0, **env_kwargs)
    session = EnvSession(remote_url)
    try:
        _, info = session.reset(spec)
    finally:
        session.close()
    family = re.sub(r"[^A-Za-z0-9]", "", env_id.split("/")[-1].split("-v")[0]) or "Env"
    return environment_class(info["tools"], name=f"AgentGym{family}", default_spec=spec, remote_url=remote_url,
                             user_tool=user_tool, unfinished_reward=unfinished_reward)


def _check_trl_version() -> None:
    """Check an installed TRL against the pin; the classes need no TRL, so its absence is no error."""
    check_version("trl", missing_ok=True)
