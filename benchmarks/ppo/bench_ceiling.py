"""What the PPO baseline's candidate lists and features allow: two diagnostics, no training by PPO.

1. The candidates' ceiling (``ceiling``): along the heuristic agent's own episodes, how often its
   action is among the candidates (exactly: the same calls with the same arguments), and the
   success of a *picker* that plays the candidate equal to the heuristic's action, else the
   nearest one (`agentgym.baselines.ppo.demos.nearest`: the same tool with the most arguments
   equal; for a message, the candidate message sharing most words). A picker far below the heuristic would say the candidate builder is the
   gap; near it, the lists hold a path as good as the heuristic's.
2. The features' capacity (``features``): a fresh hash policy fitted by cross-entropy to the
   picker's choices on training seeds (behaviour cloning, a measurement only: no trained policy
   of the package is made this way), its step accuracy on held-out seeds and its greedy success
   on held-out train-split seeds and on the test split (unseen domains). High accuracy says the
   features can tell the chain's next step from the rest; what PPO then lacks is finding
   successful episodes to learn from. Success on the test split says what the features carry
   over to domains never seen, even with the heuristic's own choices to learn from;
   ``--no-words`` fits structural features only (no tool, key or value named).

    .venv/bin/python benchmarks/ppo/bench_ceiling.py ceiling --episodes 200 [--split test]
    .venv/bin/python benchmarks/ppo/bench_ceiling.py features --env AgentRL/ToolUse-v0 --train-episodes 1500 [--no-words]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any, Iterator

import gymnasium as gym
import numpy as np

import agentgym  # noqa: F401
from agentgym.agents.candidates import CandidateConfig, make_builder
from agentgym.agents.heuristic import HeuristicAgent
from agentgym.baselines.ppo.demos import FALLBACK, canonical, nearest
from agentgym.eval.episode import run_episode

ENVS = ("AgentRL/Dialog-v0", "AgentRL/ToolUse-v0", "AgentRL/CrossTask-v0")
EVAL_SEED = 5_000_000


def picker_episodes(env_id: str, seeds: range, split: str = "train"
                    ) -> Iterator[tuple[bool, dict[str, Any], list[str], str, str, bool, dict[str, Any]]]:
    """Per step of the picker's episodes: (whether it is the episode's first, the info it acts on,
    the candidates, the heuristic's action, the candidate played, whether the episode ended, the
    info the step returned)."""
    env = gym.make(env_id, split=split)
    for seed in seeds:
        obs, info = env.reset(seed=seed)
        agent = HeuristicAgent()
        agent.reset(obs, info)
        builder = make_builder(info["task"]["family"], CandidateConfig())
        builder.reset(obs, info)
        done, first = False, True
        while not done:
            try:
                wanted = agent.act(obs, info)
            except (KeyError, TypeError, IndexError):  # the picker took a turn the strategy did not plan
                wanted = FALLBACK
            candidates = builder.candidates()
            played = nearest(wanted, candidates)
            step_info = info
            obs, _, terminated, truncated, info = env.step(played)
            builder.step(played, obs, info)
            done = terminated or truncated
            yield first, step_info, candidates, wanted, played, done, info
            first = False
    env.close()


def ceiling(env_id: str, episodes: int, split: str = "train") -> dict[str, Any]:
    seeds = range(EVAL_SEED, EVAL_SEED + episodes)
    steps = hits = 0
    successes: list[bool] = []
    misses: Counter[str] = Counter()
    sizes: list[int] = []
    for _, _, candidates, wanted, played, done, info in picker_episodes(env_id, seeds, split):
        steps += 1
        sizes.append(len(candidates))
        if canonical(played) == canonical(wanted):
            hits += 1
        else:
            kind = canonical(wanted)
            misses[kind[1][0][0] if kind[0] == "call" else ("question" if "?" in wanted else "reply")] += 1
        if done:
            successes.append(bool(info["episode_summary"]["success"]))
    env = gym.make(env_id, split=split)
    heuristic = [run_episode(env, HeuristicAgent(), seed).success for seed in seeds]
    return {"env": env_id, "split": split, "episodes": episodes, "heuristic_success": float(np.mean(heuristic)),
            "picker_success": float(np.mean(successes)), "exact_share": hits / steps, "steps": steps,
            "mean_candidates": float(np.mean(sizes)), "max_candidates": int(max(sizes)),
            "misses": dict(misses.most_common(8))}


def features(env_id: str, train_episodes: int, test_episodes: int, epochs: int, words: bool = True) -> dict[str, Any]:
    import torch

    from agentgym.baselines.ppo.features import Transcript
    from agentgym.baselines.ppo.networks import HashPolicy

    torch.manual_seed(0)
    torch.set_num_threads(1)
    policy = HashPolicy(words=words)

    def collect(seeds: range) -> list[tuple[Any, int]]:
        data: list[tuple[Any, int]] = []
        transcript = Transcript()
        for first, step_info, candidates, wanted, played, done, info in picker_episodes(env_id, seeds):
            if first:
                transcript.reset(step_info)
            # Only the steps where the picker plays the heuristic's own choice (or a question).
            if canonical(played) == canonical(wanted) or (canonical(wanted)[0] == "msg" and "?" in wanted):
                data.append((policy.encode((transcript, candidates)), candidates.index(played)))
            if not done:
                transcript.add(played, info)
        return data

    train, test = collect(range(1000, 1000 + train_episodes)), collect(range(EVAL_SEED, EVAL_SEED + test_episodes))
    optimizer = torch.optim.Adam(policy.parameters(), lr=2.5e-3)

    def accuracy(data: list[tuple[Any, int]]) -> float:
        with torch.no_grad():
            right = 0
            for i in range(0, len(data), 256):
                chunk = data[i: i + 256]
                logits, _ = policy(policy.collate([d[0] for d in chunk]))
                right += int((logits.argmax(-1) == torch.tensor([d[1] for d in chunk])).sum())
        return right / max(len(data), 1)

    rng = np.random.default_rng(0)
    for _ in range(epochs):
        order = rng.permutation(len(train))
        for i in range(0, len(train), 64):
            chunk = [train[j] for j in order[i: i + 64]]
            logits, _ = policy(policy.collate([d[0] for d in chunk]))
            loss = torch.nn.functional.cross_entropy(logits, torch.tensor([d[1] for d in chunk]))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    greedy = {split: _greedy(policy, env_id, split, test_episodes) for split in ("train", "test")}
    return {"env": env_id, "words": words, "train_steps": len(train), "test_steps": len(test), "epochs": epochs,
            "train_accuracy": accuracy(train), "test_accuracy": accuracy(test),
            "greedy_success": greedy["train"], "greedy_success_test_split": greedy["test"], "episodes": test_episodes}


def _greedy(policy: Any, env_id: str, split: str, episodes: int) -> float:
    """The greedy success of `policy` on `episodes` fixed seeds of `split` (no calibration: the
    fitted policy's risk head is untrained)."""
    from agentgym.baselines.ppo import Args, evaluate

    args = Args(env=(env_id,), eval_episodes=episodes, eval_seed=EVAL_SEED, progress=False)
    return float(evaluate(policy, args, split=split, calibration="off")["success"])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("part", choices=("ceiling", "features"))
    p.add_argument("--env", action="append", help="env ids (default: every family's)")
    p.add_argument("--episodes", type=int, default=200, help="ceiling: seeds per env; features: held-out seeds")
    p.add_argument("--train-episodes", type=int, default=1500, help="features: training seeds")
    p.add_argument("--epochs", type=int, default=12, help="features: passes over the training steps")
    p.add_argument("--split", default="train", help="ceiling: the split played")
    p.add_argument("--no-words", action="store_true", help="features: structural features only (no words)")
    a = p.parse_args()
    for env_id in a.env or ENVS:
        out = (ceiling(env_id, a.episodes, a.split) if a.part == "ceiling"
               else features(env_id, a.train_episodes, a.episodes, a.epochs, not a.no_words))
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
