"""What the adapters share: task specs, the version pins and their check, lazy imports, and the
turn-by-turn chat-template rendering."""

from __future__ import annotations

import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
from integrations_support import SPECS, byte_tokenizer

from agentgym.integrations import PINS, TaskSpec, task_specs
from agentgym.integrations._chat import TemplateError, TemplateRenderer, tools_system_prompt
from agentgym.integrations._requirements import require

ROOT = Path(__file__).resolve().parents[2]
TRAINER_MODULES = ("trl", "verl", "openrlhf", "skyrl_gym", "torch", "transformers", "ray", "vllm")


# ------------------------------------------------------------------------------------- specs
def test_a_spec_round_trips_through_a_row_and_json() -> None:
    spec = TaskSpec(env_id="AgentRL/Dialog-v0", seed=3, noise="tool_failure=0.2", difficulty="hard")
    assert TaskSpec.from_row(spec.to_row()) == spec
    assert TaskSpec.from_json(spec.to_json()) == spec
    assert spec.env_kwargs() == {"split": "train", "noise": "tool_failure=0.2", "difficulty": "hard"}
    assert task_specs("AgentRL/Dialog-v0", range(2), split="test") == [
        TaskSpec("AgentRL/Dialog-v0", 0, split="test"), TaskSpec("AgentRL/Dialog-v0", 1, split="test")]


def test_a_spec_refuses_unknown_fields_and_bad_seeds() -> None:
    with pytest.raises(ValueError, match="unknown task fields"):
        TaskSpec.from_row({"env_id": "AgentRL/Dialog-v0", "seed": 1, "dificulty": "easy"})
    with pytest.raises(ValueError, match="seed"):
        TaskSpec("AgentRL/Dialog-v0", -1)
    with pytest.raises(ValueError, match="seed"):
        TaskSpec("AgentRL/Dialog-v0", True)
    with pytest.raises(ValueError, match="JSON object"):
        TaskSpec.from_json("[1]")


def test_a_numpy_seed_from_a_parquet_row_is_taken_as_an_int() -> None:
    np = pytest.importorskip("numpy")
    assert TaskSpec.from_row({"env_id": "AgentRL/Dialog-v0", "seed": np.int64(4)}).seed == 4


# ------------------------------------------------------------------------------------- pins
@pytest.mark.parametrize("trainer", sorted(PINS))
def test_each_requirements_file_pins_the_verified_version(trainer: str) -> None:
    pin = PINS[trainer]
    lines = (ROOT / pin.requirements_file).read_text().splitlines()
    requirements = [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]
    assert f"{pin.distribution}=={pin.version}" in requirements
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[0-9][A-Za-z0-9.+]*", r) for r in requirements), requirements


def _fake_trainer(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    verl = types.ModuleType("verl")
    verl.__version__ = version  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "verl", verl)
    monkeypatch.setattr("agentgym.integrations._requirements._warned", set())


def test_require_says_what_to_install_when_the_trainer_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "verl", None)  # importing it raises ImportError
    with pytest.raises(ImportError, match=r"pip install -r requirements/integrations-verl.txt"):
        require("verl", "verl")


def test_require_refuses_an_older_trainer_and_warns_on_a_newer_one(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.metadata

    pytest.importorskip("packaging")  # a dependency of every trainer, used for the comparison
    try:
        importlib.metadata.version("verl")
    except importlib.metadata.PackageNotFoundError:
        pass
    else:
        pytest.skip("verl is installed: its own metadata gives the version")
    _fake_trainer(monkeypatch, "0.8.0")
    with pytest.raises(ImportError, match="older"):
        require("verl", "verl")
    _fake_trainer(monkeypatch, "0.10.0")
    with pytest.warns(UserWarning, match="verified with verl 0.9.1"):
        require("verl", "verl")
    _fake_trainer(monkeypatch, PINS["verl"].version)
    require("verl", "verl")


def test_adapters_import_without_their_trainers_and_agentgym_imports_none() -> None:
    code = (
        "import sys\n"
        "import agentgym\n"
        "assert not any(m.startswith('agentgym.integrations') for m in sys.modules), 'import agentgym'\n"
        "import agentgym.integrations.trl, agentgym.integrations.verl\n"
        "import agentgym.integrations.openrlhf, agentgym.integrations.skyrl\n"
        f"loaded = sorted(m for m in {TRAINER_MODULES!r} if m in sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_using_an_adapter_without_its_trainer_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import agentgym.integrations.openrlhf as openrlhf
    import agentgym.integrations.skyrl as skyrl
    import agentgym.integrations.verl as verl

    for name in ("verl", "openrlhf", "skyrl_gym"):
        monkeypatch.setitem(sys.modules, name, None)
    for module, attr, trainer in ((verl, "AgentGymAgentLoop", "verl"), (openrlhf, "AgentExecutor", "openrlhf"),
                                  (skyrl, "AgentGymTextEnv", "skyrl")):
        with pytest.raises(ImportError, match=f"requirements/integrations-{trainer}.txt"):
            getattr(module, attr)
    with pytest.raises(AttributeError):
        verl.NoSuchThing  # noqa: B018


# ------------------------------------------------------------------------------------- rendering
def test_the_turn_end_and_what_a_turn_leaves_of_it() -> None:
    renderer = TemplateRenderer(byte_tokenizer())
    assert renderer.turn_end == "<|im_end|>\n"
    assert renderer.closing("hi<|im_end|>") == "\n"
    assert renderer.closing("hi<|im_end|>\n") == ""
    assert renderer.closing("cut mid-sentence") == "<|im_end|>\n"
    assert renderer.ended("hi<|im_end|>") and renderer.ended("hi<|endoftext|>") and not renderer.ended("hi")
    assert renderer.action('<tool_call>\n{"name": "a"}\n</tool_call><|im_end|>') == \
        '<tool_call>\n{"name": "a"}\n</tool_call>'


def test_the_env_answer_is_rendered_as_the_template_continues_the_conversation() -> None:
    import gymnasium as gym

    tokenizer = byte_tokenizer()
    renderer = TemplateRenderer(tokenizer)
    spec = SPECS[1]
    env = gym.make(spec.env_id, **spec.env_kwargs())
    _, info = env.reset(seed=spec.seed)
    action = '{"name": "list_policies", "arguments": {}}'
    _, _, _, _, step = env.step(action)
    feedback = renderer.feedback(action + "<|im_end|>", step["messages"], info["tools"])
    assert feedback.startswith("\n<|im_start|>user\n<tool_response>\n") and feedback.endswith("<|im_start|>assistant\n")
    full = tokenizer.apply_chat_template(
        [*info["messages"], {"role": "assistant", "content": action}, *step["messages"][1:]], tools=info["tools"],
        tokenize=False, add_generation_prompt=True)
    assert renderer.prompt(info["messages"], info["tools"]) + action + "<|im_end|>" + feedback == full


def test_a_template_that_rewrites_the_past_is_refused() -> None:
    # Renders only the last message: what came before changes once a message follows.
    template = "{{ '<|im_start|>' + messages[-1]['role'] + '\\n' + messages[-1]['content'] + '<|im_end|>\\n' }}"
    renderer = TemplateRenderer(byte_tokenizer(template))
    with pytest.raises(TemplateError, match="prefix-preserving"):
        renderer.continuation([{"role": "assistant", "content": "a"}, {"role": "user", "content": "b"}], None)
    tokenizer = byte_tokenizer()
    tokenizer.chat_template = None
    with pytest.raises(TemplateError, match="no chat template"):
        TemplateRenderer(tokenizer)


def test_the_tools_go_into_the_system_message_for_trainers_that_template_without_them() -> None:
    tools = [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}]
    text = tools_system_prompt("Brief.", tools)
    assert text.startswith("Brief.\n\n# Tools") and '"name": "f"' in text and "<tool_call>" in text
    assert tools_system_prompt("Brief.", []) == "Brief."


#: ChatML whose last assistant turn opens with an empty think block, as Qwen3's template writes it:
#: the same turn renders differently once it is no longer the last.
THINKING_TEMPLATE = (
    "{%- for m in messages %}"
    "{%- if m['role'] == 'assistant' and loop.last %}"
    "{{- '<|im_start|>assistant\\n<think>\\n\\n</think>\\n\\n' + m['content'] + '<|im_end|>\\n' }}"
    "{%- else %}{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)
#: ChatML that refuses two user (or tool) turns in a row after the opening, as Mistral's and Gemma's
#: templates do.
ALTERNATING_TEMPLATE = (
    "{%- for m in messages %}"
    "{%- if loop.index0 > 1 and m['role'] != 'assistant' and messages[loop.index0 - 1]['role'] != 'assistant' %}"
    "{{- raise_exception('Conversation roles must alternate') }}{%- endif %}"
    "{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


@pytest.mark.parametrize("template", [THINKING_TEMPLATE, ALTERNATING_TEMPLATE], ids=["thinking", "alternating"])
def test_the_env_answer_suits_templates_that_are_particular_about_context(template: str) -> None:
    renderer = TemplateRenderer(byte_tokenizer(template))
    assistant = {"role": "assistant", "content": "Which day?"}
    reply = [{"role": "user", "content": "Sunday."}]
    expected = "<|im_start|>user\nSunday.<|im_end|>\n<|im_start|>assistant\n"
    assert renderer.continuation([assistant, *reply], None) == expected
