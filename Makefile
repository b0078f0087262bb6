# The two commands of the README: `make bench` (the main job) and `make test`.
# Both create .venv themselves, so they work from a clean clone.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
# The CPU build of torch lies on this machine's disk; any other version pulls a CUDA build.
TORCH  := torch==2.13.0

.PHONY: test bench venv dev-venv clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# The runtime install: enough for the benchmark suite with the built-in agents.
$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(PIP) install --quiet -e .
	touch $@

# The dev install: torch first (so no extra asks for a CUDA build), then the dev extras.
$(VENV)/.installed-dev: pyproject.toml | $(VENV)/bin/python
	$(PIP) install --quiet $(TORCH)
	$(PIP) install --quiet -e '.[dev]'
	touch $(VENV)/.installed $@

venv: $(VENV)/.installed
dev-venv: $(VENV)/.installed-dev

test: dev-venv
	$(PY) -m pytest -q -p no:cacheprovider

# The main job: the built-in agents on the core-v0 suite (every family, unseen test domains,
# with and without noise), then one report with confidence intervals and plots.
BENCH_SUITE  ?= core-v0
BENCH_AGENTS ?= random heuristic oracle
BENCH_DIR    ?= runs/$(BENCH_SUITE)

bench: venv
	rm -rf $(BENCH_DIR)
	for agent in $(BENCH_AGENTS); do \
		$(PY) -m agentgym.cli bench $(BENCH_SUITE) --agent $$agent --out $(BENCH_DIR)/$$agent --no-report || exit 1; \
	done
	$(PY) -m agentgym.cli report $(addprefix $(BENCH_DIR)/,$(BENCH_AGENTS)) --out $(BENCH_DIR)/report

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .benchmarks
