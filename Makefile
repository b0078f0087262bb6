# The two commands of the README: `make bench` (the main job) and `make test`.
# Both create .venv themselves, so they work from a clean clone.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
# The CPU build of torch lies on this machine's disk; any other version pulls a CUDA build.
TORCH  := torch==2.13.0

.PHONY: test bench venv dev-venv clean chromium leaderboard perf validity
SUDO  := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# The runtime install: enough for the benchmark suite with the built-in agents.
$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(PIP) install --quiet -e .
	touch $@

# The dev install: torch first with pip (so no extra asks for a CUDA build: pip takes the CPU
# build from this machine's disk), then the dev extras and the pinned TRL set, so `make test` runs
# a real GRPOTrainer on the TRL adapter. The extras go through uv, which installs the hundred
# packages in parallel; torch is then installed and satisfies every range, so uv leaves it as it
# is. Where uv cannot run, pip installs them.
TRL_REQUIREMENTS := requirements/integrations-trl.txt
UV := uv>=0.13,<0.14

$(VENV)/.installed-dev: pyproject.toml $(TRL_REQUIREMENTS) | $(VENV)/bin/python
	$(PIP) install --quiet $(TORCH) '$(UV)'
	$(PY) -m uv pip install --quiet --python $(PY) -e '.[dev]' -r $(TRL_REQUIREMENTS) || \
		{ $(PIP) install --quiet -e '.[dev]' && $(PIP) install --quiet -r $(TRL_REQUIREMENTS); }
	$(PY) -c 'import torch; assert torch.__version__.startswith("2.13.0"), torch.__version__'
	touch $(VENV)/.installed $@

venv: $(VENV)/.installed
dev-venv: $(VENV)/.installed-dev

# The leaderboard's browser test (docs/RELIABILITY.md, L5) loads the board in Debian's headless Chromium.
chromium:
	@command -v chromium >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } || \
		echo "chromium could not be installed: tests/leaderboard/test_lb_browser.py will be skipped"

# One pytest worker a core (pytest-xdist). A test module stays on one worker, so what its tests
# share (module fixtures such as the defect matrix, caches of run folders) is built once per module.
# Bytecode caches are written even where the shell says not to (PYTHONDONTWRITEBYTECODE): hundreds
# of tests start a Python process (the command, servers, workers, Ray), and without caches each one
# compiles the package and its dependencies from source again, half a second a start.
test: dev-venv chromium
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -p no:cacheprovider -n auto --dist loadfile

# The main job: the built-in agents on each suite of BENCH_SUITES (core-v0: every family, unseen
# test domains, with and without noise; hard-v0: the same on the hard tier), one report a suite
# with confidence intervals and plots, then every run submitted to a local board (a section a
# suite). `make bench BENCH_SUITES=core-v0` runs the quick start alone.
BENCH_SUITES ?= core-v0 hard-v0
BENCH_AGENTS ?= random heuristic expert oracle
BENCH_ROOT   ?= runs
LB_DB        ?= $(BENCH_ROOT)/leaderboard.sqlite
AG_VERSION    = $(shell $(PY) -c 'import agentgym; print(agentgym.__version__)')

bench: venv
	for suite in $(BENCH_SUITES); do \
		rm -rf $(BENCH_ROOT)/$$suite; \
		for agent in $(BENCH_AGENTS); do \
			$(PY) -m agentgym.cli bench $$suite --agent $$agent --out $(BENCH_ROOT)/$$suite/$$agent --no-report || exit 1; \
		done; \
		$(PY) -m agentgym.cli report $(addprefix $(BENCH_ROOT)/$$suite/,$(BENCH_AGENTS)) --out $(BENCH_ROOT)/$$suite/report || exit 1; \
	done
	rm -f $(LB_DB)
	for suite in $(BENCH_SUITES); do \
		for agent in $(BENCH_AGENTS); do \
			$(PY) -m agentgym.cli submit $(BENCH_ROOT)/$$suite/$$agent --db $(LB_DB) --model agentgym/$$agent \
				--revision $(AG_VERSION) --org agentgym --description "the built-in $$agent baseline" || exit 1; \
		done; \
	done
	$(PY) -m agentgym.cli leaderboard show --db $(LB_DB)

# The metrics' sensitivity matrix: every defect agent against the heuristic on the same seeds of every
# family, written into docs/METRICS.md (fails when a metric does not move for its own defect).
VALIDITY_SEEDS ?= 500
validity: venv
	$(PY) -m agentgym.cli validate-metrics --seeds $(VALIDITY_SEEDS) --check

# Refresh the published board in leaderboard/ from fresh baseline runs: a file per suite and agent
# (SUITE-AGENT.agentgym.gz), so the board has a section per suite.
leaderboard: bench
	rm -f leaderboard/submissions/*.agentgym.gz
	for suite in $(BENCH_SUITES); do \
		for agent in $(BENCH_AGENTS); do \
			$(PY) -m agentgym.cli submit $(BENCH_ROOT)/$$suite/$$agent \
				--out leaderboard/submissions/$$suite-$$agent.agentgym.gz --model agentgym/$$agent \
				--revision $(AG_VERSION) --org agentgym --description "the built-in $$agent baseline" || exit 1; \
		done; \
	done
	$(PY) -m agentgym.cli leaderboard render --out leaderboard/

# Environment cost: whole episodes of the heuristic, expert and lm-mix agents replayed with every
# reset and step timed against a Gymnasium floor, memory and harness overhead on them, py-spy
# profiles, the best case beside TextArena and GEM, and the env server's and PPO's figures
# re-measured with the dev venv (skipped, saying why, without it): writes benchmarks/RESULTS.md and
# benchmarks/RESULTS-profiles.md. Options: make perf PERF_ARGS="--quick --skip server,ppo --out /tmp/r.md"
# (benchmarks/peers/run.py --help lists them all).
PERF_VENV := benchmarks/peers/.venv
PERF_PY   := $(PERF_VENV)/bin/python

$(PERF_PY):
	$(PYTHON) -m venv $(PERF_VENV)
	$(PERF_PY) -m pip install --quiet --upgrade pip

$(PERF_VENV)/.installed: benchmarks/peers/requirements.txt pyproject.toml | $(PERF_PY)
	$(PERF_PY) -m pip install --quiet -r benchmarks/peers/requirements.txt
	$(PERF_PY) -m pip install --quiet -e .
	touch $@

PERF_ARGS ?=
perf: $(PERF_VENV)/.installed
	$(PERF_PY) benchmarks/peers/run.py --project-python $(PY) $(PERF_ARGS)

clean:
	rm -rf $(VENV) $(PERF_VENV) build dist *.egg-info .pytest_cache .benchmarks
