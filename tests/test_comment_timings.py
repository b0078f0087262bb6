"""Comments and docstrings in agentgym/ give reasons, not timings: a figure such as "about 75 us"
or "sixty times faster" goes stale with the next machine or change, and belongs with its
measurement in benchmarks/*RESULTS*.md (benchmarks/RESULTS-code-figures.md holds those that
comments once gave). Simulated time (the latency noise's milliseconds) and configured limits are
not timings of the code, and are not matched."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "agentgym"

TIMING = re.compile(
    r"\b\d[\d.,]*\s?(?:us|µs|ns)\b"  # microseconds and nanoseconds are only ever measured
    r"|\b(?:micro|nano)seconds?\b"
    r"|\b\d[\d.,]*\s?x\s+(?:faster|slower)\b"
    r"|\b(?:\d+|two|three|four|five|ten|twenty|fifty|sixty|a hundred) times (?:faster|slower)\b"
    r"|\bmeasured (?:faster|slower)\b"
    r"|\b(?:costs?|took|takes?) (?:about |some |roughly |around |~)?\d[\d.,]*\s?(?:ms|s|seconds?|minutes?)\b"
    r"|\bwas (?:too )?slow\b",
    re.IGNORECASE,
)


def _texts(source: str) -> list[tuple[int, str]]:
    """Every comment and every string statement (docstrings, attribute docs) with its line."""
    out = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(source).readline)
           if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            out.append((node.lineno, node.value.value))
    return out


def test_the_pattern_finds_what_it_is_for() -> None:
    for text in ("# costs about 75 us a step", "some sixty times faster", "takes 3.5x slower", "microseconds",
                 "costs 40 ms", "a reset takes about 2 s", "it was slow"):
        assert TIMING.search(text), text
    for text in ("# simulated milliseconds", "between 50 ms and 1 s", "use 2 threads", "a status 200 answer"):
        assert not TIMING.search(text), text


def test_no_comment_states_a_timing() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if not TIMING.search(source):  # most files: nothing to read closer
            continue
        for line, text in _texts(source):
            match = TIMING.search(text)
            if match:
                where = line + text.count("\n", 0, match.start())
                found.append(f"{path.relative_to(PACKAGE.parent)}:{where}: {match.group(0)!r}")
    assert not found, "state the reason, and move the figure to benchmarks/*RESULTS*.md:\n" + "\n".join(found)
