"""The `expert` agent's strategies, one module per family (named in `agentgym.families`)."""
