"""Play the heuristic agent on an env served over HTTP, and check it matches the same episode in process.

    python examples/remote_env.py            # starts a server in this process
    python examples/remote_env.py --url http://127.0.0.1:8100   # or uses one started by `agentgym serve`
"""

from __future__ import annotations

import argparse
import json

import gymnasium as gym

import agentgym  # noqa: F401  (registers the AgentRL/* ids)
from agentgym.agents import make_agent
from agentgym.eval.episode import run_episode
from agentgym.server import RemoteEnv, ServerThread


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=None, help="a running server (default: start one here)")
    parser.add_argument("--env", default="AgentRL/Dialog-v0")
    parser.add_argument("--transport", choices=("http", "ws"), default="ws")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    server = None if args.url else ServerThread().start()
    url = args.url or server.url
    try:
        remote = RemoteEnv(url, args.env, transport=args.transport, difficulty="easy")
        local = gym.make(args.env, difficulty="easy")
        for seed in range(args.seed, args.seed + 3):
            there = run_episode(remote, make_agent("heuristic"), seed)
            here = run_episode(local, make_agent("heuristic"), seed)
            same = json.dumps(there.episode, sort_keys=True) == json.dumps(here.episode, sort_keys=True)
            print(f"seed {seed}: {'success' if there.success else 'failure'} in {len(there.actions)} turns, "
                  f"score {there.score:.2f} over {url} ({args.transport}); identical to in process: {same}")
        remote.close()
        local.close()
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
