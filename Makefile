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

bench: venv
	$(PY) -m agentgym.cli bench-agents

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .benchmarks
