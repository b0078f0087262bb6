"""`make perf`'s measurements, one module each; `benchmarks/peers/run.py` is their command line.

Importable as ``perf`` with ``benchmarks/`` on ``sys.path`` (run.py and every child process it
starts put it there), beside ``envbench``, the pytest benchmarks' helpers.

- `config`: the options of a run (one dataclass; the command line is derived from it).
- `floor`: the minimal Gymnasium env every ratio is taken against.
- `subjects`, `steps`: the best case, one repeated call per unit, beside TextArena and GEM.
- `lm_mix`, `episodes`: agents' whole episodes, played and recorded (the agent's time never counts).
- `real_episodes`: those episodes replayed in fresh envs, every reset and step timed.
- `tiers`: the hard tier's reset and step medians beside the easy tier's, from those replays.
- `memory`, `imports`, `harness`: bytes per live env, import time, the harness's overhead.
- `spy`, `profiles`, `real_profiles`: where the time goes (py-spy, or cProfile without it).
- `remeasure`: the env server's and PPO's figures, from their own scripts.
- `targets`, `tables`, `render`: pass/MISS against the targets and the Markdown of the results.
- `child`: a function of these modules run in a fresh interpreter.
"""
