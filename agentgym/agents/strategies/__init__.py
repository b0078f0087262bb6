"""Per-family strategies of the heuristic agent: each has reset(obs, info) and act(obs, info)."""
