"""A digest of many whole episodes, to show that a speed change leaves every episode as it was.

Plays the `heuristic`, `expert` and `lm-mix` agents (`perf.lm_mix`) on seeds 0..N-1 of every id
with noise off and `medium`, and prints one SHA-256 per (id, noise, agent) and one over all:
each episode's observations, rewards, end flags and infos (JSON, sorted keys), and the actions
played; then one over the kept playtests (`benchmarks/playtests/`: a language model's own turns,
replayed as `playtests/replay.py` does), one SHA-256 per id. Run it on two checkouts
(``PYTHONPATH``) and compare the lines.

    python benchmarks/episode_digests.py [SEEDS]
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gymnasium as gym  # noqa: E402

IDS = ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0")
AGENTS = ("heuristic", "expert", "lm-mix")


class _Digesting(gym.Wrapper):
    """Feeds everything the env returns, and every action, to a running hash."""

    def __init__(self, env: gym.Env, h: Any) -> None:
        super().__init__(env)
        self.h = h

    def _add(self, *values: Any) -> None:
        self.h.update(json.dumps(values, sort_keys=True, default=repr).encode())

    def reset(self, **kwargs: Any) -> Any:
        out = self.env.reset(**kwargs)
        self._add("reset", kwargs.get("seed"), *out)
        return out

    def step(self, action: Any) -> Any:
        out = self.env.step(action)
        self._add("step", action, *out)
        return out


def main(seeds: int) -> None:
    from perf.episodes import make_player

    import agentgym  # noqa: F401
    from agentgym.eval.episode import run_episode

    total = hashlib.sha256()
    for env_id in IDS:
        for noise in ("off", "medium"):
            for agent_name in AGENTS:
                h = hashlib.sha256()
                base = gym.make(env_id) if noise == "off" else gym.make(env_id, noise=noise)
                env, agent = _Digesting(base, h), make_player(agent_name)
                wins = 0
                for seed in range(seeds):
                    result = run_episode(env, agent, seed)
                    wins += bool(getattr(result, "success", False))
                line = f"{env_id} {noise} {agent_name} success={wins}/{seeds} {h.hexdigest()}"
                total.update(line.encode())
                print(line, flush=True)
    for line in playtest_lines():
        total.update(line.encode())
        print(line, flush=True)
    print(f"all {total.hexdigest()}")


def playtest_lines() -> list[str]:
    """One digest line per id over the kept playtests' episodes, replayed from their turns."""
    sys.path.insert(0, str(Path(__file__).resolve().parent / "playtests"))
    from replay import env_kwargs, play_kept  # benchmarks/playtests/replay.py

    episodes = json.loads((Path(__file__).resolve().parent / "playtests" / "episodes.json").read_text("utf-8"))
    hashes: dict[str, Any] = {}
    for ep in episodes:
        h = hashes.setdefault(ep["env"], hashlib.sha256())
        play_kept(_Digesting(gym.make(ep["env"], **env_kwargs(ep)), h), ep)
    return [f"{env_id} playtests episodes={sum(e['env'] == env_id for e in episodes)} {h.hexdigest()}"
            for env_id, h in sorted(hashes.items())]


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
