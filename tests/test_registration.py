"""Registration, import cost, and the two Gymnasium traps the text spaces and flags avoid."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings
from hypothesis import strategies as st

import agentgym
from agentgym.core.spaces import UnicodeText

HEAVY = ("torch", "pandas", "transformers", "fastapi", "ray")
ID_RE = re.compile(r"^AgentRL/[A-Z][A-Za-z0-9]*-v\d+$")
LIVE_IDS = sorted(i for i in gym.registry if i.startswith("AgentRL/") and "Remote" not in i)


def _python(code: str, **env_overrides: str) -> Any:
    """Run `code` in a fresh interpreter; it prints one JSON line last, which is returned."""
    env = {**os.environ, **env_overrides}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


_IMPORT_PROBE = """
import json, sys, time
t, c = time.perf_counter(), time.process_time()
import agentgym
dt, dc = time.perf_counter() - t, time.process_time() - c
print(json.dumps({"seconds": dt, "cpu": dc, "modules": sorted({m.split(".")[0] for m in sys.modules})}))
"""


def test_import_is_light() -> None:
    """`import agentgym` loads none of the heavy libraries (torch, transformers, fastapi, ray, ...).

    How long the import takes is a `make perf` target (benchmarks/perf/imports.py), measured on
    a quiet machine; here the time is only printed.
    """
    run = _python(_IMPORT_PROBE)
    print(f"\nimport agentgym: {run['seconds'] * 1000:.0f} ms wall ({run['cpu'] * 1000:.0f} ms CPU)")
    heavy = sorted(set(HEAVY) & set(run["modules"]))
    assert not heavy, f"import agentgym imports {heavy}"


def test_make_with_module_prefix_needs_no_import() -> None:
    out = _python(
        "import json, sys\n"
        "import gymnasium as gym\n"
        "before = 'agentgym' in sys.modules\n"
        "env = gym.make('agentgym:AgentRL/Dialog-v0')\n"
        "obs, info = env.reset(seed=11)\n"
        "print(json.dumps({'before': before, 'obs': obs, 'task': info['task']}))\n"
    )
    assert out["before"] is False
    env = gym.make("AgentRL/Dialog-v0")
    obs, info = env.reset(seed=11)
    assert out["obs"] == obs and out["task"] == info["task"]
    env.close()


def test_import_registers_only_versioned_agentrl_ids() -> None:
    out = _python(
        "import json\n"
        "import gymnasium as gym\n"
        "before = set(gym.registry)\n"
        "import agentgym\n"
        "new = sorted(set(gym.registry) - before)\n"
        "specs = {i: [str(gym.registry[i].entry_point), gym.registry[i].version] for i in new}\n"
        "print(json.dumps({'new': new, 'ids': list(agentgym.ENV_IDS), 'specs': specs}))\n"
    )
    assert out["new"], "import agentgym registered nothing"
    # ENV_IDS lists the task families; the import also registers the env-server client.
    assert sorted([*out["ids"], "AgentRL/Remote-v0"]) == out["new"], \
        "agentgym.ENV_IDS must list exactly the task-family ids the import registers"
    for env_id, (entry_point, version) in out["specs"].items():
        assert ID_RE.match(env_id), f"{env_id} is not AgentRL/<Name>-v<N>"
        assert isinstance(version, int), env_id
        assert isinstance(entry_point, str) and entry_point.startswith("agentgym."), (env_id, entry_point)


def test_registry_in_this_process_is_consistent() -> None:
    # Our families' ids; `agentgym.register_env` lets others register ids of their own namespace
    # through the same factory.
    ours = sorted(i for i, s in gym.registry.items()
                  if str(s.kwargs.get("env_entry_point", s.entry_point)).startswith("agentgym."))
    assert ours and all(ID_RE.match(i) for i in ours), ours
    assert set(agentgym.ENV_IDS) <= set(gym.registry)
    assert "AgentRL/Dialog-v0" in ours


# ------------------------------------------------------------------ the Text trap
def test_gymnasium_text_rejects_chat_text_but_unicode_text_accepts_it() -> None:
    assert "hello, world!" not in gym.spaces.Text(100)  # the known trap: no spaces, no punctuation
    assert "hello" in gym.spaces.Text(100)
    space = UnicodeText(100)
    for text in ("hello, world!", "", "naïve café — 日本語 🙂", "\ud800", "a\x00b", "\u202eevil", "line\nbreak"):
        assert text in space, repr(text)
    assert "x" * 101 not in space
    assert b"hello" not in space and None not in space and 5 not in space


@settings(max_examples=300, deadline=None, database=None)
@given(st.text(alphabet=st.characters(exclude_categories=()), max_size=200))
def test_unicode_text_accepts_any_unicode(text: str) -> None:
    assert text in UnicodeText(200)


def test_unicode_text_samples_are_contained_and_seeded() -> None:
    a, b = UnicodeText(64, seed=3), UnicodeText(64, seed=3)
    samples = [a.sample() for _ in range(50)]
    assert samples == [b.sample() for _ in range(50)]
    assert all(s in a and s in gym.spaces.Text(64, min_length=0, charset=a.character_set) for s in samples)


# ------------------------------------------------------------------ the np.bool_ trap
class _NumpyFlagsEnv(gym.Env[str, str]):
    """Returns truncated as np.bool_, as code that compares numpy values easily does."""

    metadata = {"render_modes": []}

    def __init__(self) -> None:
        self.observation_space = UnicodeText(100)
        self.action_space = UnicodeText(100)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        return "hi", {}

    def step(self, action: str) -> tuple[str, float, bool, Any, dict]:
        turn_limit = np.int64(10)
        return "ok", 0.0, False, np.int64(1) >= turn_limit, {}


def test_check_env_fails_on_numpy_bool_truncated() -> None:
    flag = _NumpyFlagsEnv().step("x")[3]
    assert type(flag) is np.bool_ and not flag
    with pytest.raises(AssertionError, match="truncates after 1 step"):
        check_env(_NumpyFlagsEnv(), skip_render_check=True)


@pytest.mark.parametrize("env_id", LIVE_IDS)
def test_every_env_returns_python_bools(env_id: str) -> None:
    env = gym.make(env_id)
    seen_terminated = seen_truncated = False
    for seed in range(6):
        env.reset(seed=seed)
        actions = ["OK."] * 200 if seed % 2 else ['{"name": "book", "arguments": {}}', "Hello", "OK."] * 70
        for action in actions:
            _, reward, terminated, truncated, _ = env.step(action)
            assert type(terminated) is bool and type(truncated) is bool, (env_id, seed)
            assert type(reward) is float
            if terminated or truncated:
                seen_terminated |= terminated
                seen_truncated |= truncated
                break
        else:
            pytest.fail(f"{env_id} seed {seed}: no end within 200 steps")
    assert seen_truncated, f"{env_id}: no episode was truncated"
    env.close()


# ------------------------------------------------------------------ string entry points, and the card
FAMILY_IDS = sorted(agentgym.ENV_IDS)
CARD_SECTIONS = ("## Description", "## Observation", "## Actions and tools", "## Reward", "## Termination",
                 "## Noise", "## Registered ids", "## Version history")


@pytest.mark.parametrize("env_id", FAMILY_IDS)
def test_the_card_is_the_env_class_docstring_and_help_of_the_env_shows_it(env_id: str) -> None:
    import contextlib
    import io

    from agentgym.registration import spec_card

    card = spec_card(gym.spec(env_id))
    assert all(section in card for section in CARD_SECTIONS), card[:500]
    assert f"`{env_id}`" in card and "noise" in card
    assert "make_env(*, env_entry_point" not in card  # not the factory's own documentation
    env = gym.make(env_id)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        help(env.unwrapped)
    assert all(section in out.getvalue() for section in CARD_SECTIONS)
    env.close()


def test_the_card_of_the_remote_id_shows_the_client() -> None:
    from agentgym.registration import spec_card

    text = spec_card(gym.spec("AgentRL/Remote-v0"))
    assert "agentgym serve" in text and "RemoteEnv(url=None" in text


def test_the_spec_is_light_until_the_env_is_made_or_documented() -> None:
    out = _python(
        "import json, sys, copy, pickle\n"
        "import gymnasium as gym\n"
        "import agentgym\n"
        "from agentgym.registration import spec_card\n"
        "def envs(): return sorted(m for m in sys.modules if m.startswith(('agentgym.envs', 'agentgym.noise',"
        " 'agentgym.server')))\n"
        "spec = gym.spec('AgentRL/Dialog-v0')\n"
        "seen = [repr(spec), str(spec.entry_point), spec.to_json(), copy.deepcopy(spec), pickle.dumps(spec)]\n"
        "quiet = envs()\n"
        "card = spec_card(spec)\n"
        "print(json.dumps({'quiet': quiet, 'after': envs()}))\n"
    )
    assert out["quiet"] == []
    assert "agentgym.envs.dialog.env" in out["after"]


@pytest.mark.parametrize("env_id", [*FAMILY_IDS, "AgentRL/Remote-v0"])
def test_the_entry_point_is_a_plain_string_that_serialises_pickles_and_copies(env_id: str) -> None:
    import copy
    import pickle

    from gymnasium.envs.registration import EnvSpec

    spec = gym.spec(env_id)
    target = spec.entry_point
    assert type(target) is str and target.startswith("agentgym.") and ":" in target
    assert type(copy.deepcopy(spec).entry_point) is str
    restored = EnvSpec.from_json(spec.to_json())
    assert restored.entry_point == target and restored == spec
    assert json.loads(spec.to_json())["entry_point"] == target
    assert pickle.loads(pickle.dumps(spec)) == spec


@pytest.mark.parametrize("env_id", FAMILY_IDS)
def test_an_env_made_from_the_json_spec_is_the_same_env(env_id: str) -> None:
    from gymnasium.envs.registration import EnvSpec

    from agentgym.eval.records import spec_dict

    env = gym.make(env_id, noise="medium")
    again = gym.make(EnvSpec.from_json(env.spec.to_json()))
    assert again.reset(seed=3) == env.reset(seed=3)
    assert again.step("Hello?")[:4] == env.step("Hello?")[:4]
    # Records write the entry point as the plain string, wrapped or not.
    assert spec_dict(env)["entry_point"] == spec_dict(env.unwrapped)["entry_point"] == "agentgym.noise.factory:make_env"
    env.close()
    again.close()


@pytest.mark.parametrize("env_id", FAMILY_IDS)
def test_vector_envs_and_the_checker_take_the_entry_point(env_id: str) -> None:
    venv = gym.make_vec(env_id, 2, vectorization_mode="async")
    obs, _ = venv.reset(seed=[0, 1])
    assert all(isinstance(o, str) and o for o in obs)
    venv.close()
    check_env(gym.make(env_id).unwrapped, skip_render_check=True)
