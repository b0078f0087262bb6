"""The package's layers and lint rules hold (docs/ARCHITECTURE.md): import-linter's contracts in
pyproject.toml (lower layers never import higher ones, no import cycles in any package) and ruff's
rule set, both over the working tree."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    """The console script `name` of this interpreter's environment (the dev extras install it)."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def test_the_import_contracts_are_kept() -> None:
    pytest.importorskip("importlinter")
    done = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_ruff_finds_nothing() -> None:
    done = subprocess.run([_tool("ruff"), "check", "--no-cache", "--output-format", "concise", "."], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def _layers() -> list[str]:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return next(c["layers"] for c in config["contracts"] if c["type"] == "layers")


def test_every_package_and_top_level_module_has_a_layer() -> None:
    layers = _layers()
    placed = {name.strip() for layer in layers for name in layer.split("|")}
    package = ROOT / "agentgym"
    present = {f"agentgym.{p.stem}" for p in package.glob("*.py") if p.stem != "__init__"}
    present |= {f"agentgym.{p.parent.name}" for p in package.glob("*/__init__.py")}
    assert present - placed == set(), "place these in a layer in pyproject.toml and docs/ARCHITECTURE.md"
    assert placed - present == set(), "these layers name nothing"


def test_the_architecture_page_lists_the_layers_of_the_contract() -> None:
    layers = _layers()
    page = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    block = page.split("<!-- layers: begin")[1].split("<!-- layers: end -->")[0]
    listed = [line.strip() for line in block.split("```")[1].strip().splitlines()]
    assert listed == layers
