"""No two modules of the package import each other, directly or round a circle, counting the
imports made only for type checking (which import-linter's contracts leave out): a circle there is
two modules that cannot be read, or moved, apart."""

from __future__ import annotations

import sys
from collections.abc import Iterable

import pytest

#: Circles known and owned elsewhere, each to be broken by moving the type it is for; the test
#: fails on any other circle, and on one of these once it is gone (so the entry goes too).
KNOWN: set[frozenset[str]] = set()


def _circles(modules: Iterable[str], imports: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in imports.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(frozenset(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10_000))
    try:
        for m in sorted(modules):
            if m not in index:
                visit(m)
    finally:
        sys.setrecursionlimit(limit)
    return out


def test_the_circle_finder_finds_circles() -> None:
    imports = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert _circles("abcde", imports) == [frozenset("abc")]


def test_no_module_imports_itself_round_a_circle() -> None:
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("agentgym", exclude_type_checking_imports=False, cache_dir=None)
    imports = {m: set(graph.find_modules_directly_imported_by(m)) & graph.modules for m in graph.modules}
    found = set(_circles(graph.modules, imports))
    assert found - KNOWN == set(), "import circles: " + "; ".join(" <-> ".join(sorted(c)) for c in found - KNOWN)
    assert KNOWN - found == set(), "a known circle is gone: remove it from KNOWN"
