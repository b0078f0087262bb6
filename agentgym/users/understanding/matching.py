"""Compiled matchers for word lists that are searched in every message: which of many phrases
occur in a sentence's stems, and which listed word a typo stands for.

Each matcher equals one line of plain code, named in its docstring; `tests/users/test_matching.py`
checks both against that line on many inputs. They are built once per word list and never change.
"""

from __future__ import annotations

from typing import Collection, Iterable, Iterator, Sequence

from agentgym.users.understanding.words import _one_edit

__all__ = ["Cuts", "PhraseSet", "NearWords"]

#: A phrase as stems: its parts (one, or two around a gap).
Phrase = tuple[tuple[str, ...], ...]


class PhraseSet:
    """Phrases of stems, each one part or two around a gap of 0 to `gap_max` words.

    Plain code: ``any(occurs(stems, p) for p in phrases)``, where a phrase occurs when its first
    part stands at some position and its second part, if any, starts 0 to `gap_max` words after
    the first part's end. Here the phrases are indexed by their first stem, so a sentence costs a
    dict look-up per word rather than a comparison per phrase and word; a phrase whose first part
    has no stem matches anywhere and is kept apart (`_anywhere`).
    """

    def __init__(self, phrases: Iterable[Phrase], gap_max: int) -> None:
        self.phrases = tuple(phrases)
        self.gap_max = gap_max
        by_first: dict[str, list[tuple[tuple[str, ...], tuple[str, ...] | None]]] = {}
        self._anywhere = False
        for p in self.phrases:
            head, tail = p[0], (p[1] if len(p) > 1 else None)
            if not head:
                self._anywhere = True
                continue
            by_first.setdefault(head[0], []).append((head, tail))
        self._by_first = {k: tuple(v) for k, v in by_first.items()}

    def may_occur(self, stems: Collection[str]) -> bool:
        """Whether any of the phrases may occur among `stems` (in any order): some phrase's first
        stem is one of them. `found` of any sequence of these stems is False where this is."""
        return self._anywhere or not self._by_first.keys().isdisjoint(stems)

    def found(self, stems: Sequence[str]) -> bool:
        """Whether any of the phrases occurs in `stems`."""
        if self._anywhere:
            return True
        if self._by_first.keys().isdisjoint(stems):
            return False  # no phrase starts anywhere: one look-up each, in C
        st = tuple(stems)
        n, gap, by_first = len(st), self.gap_max, self._by_first
        for i, s in enumerate(st):
            cands = by_first.get(s)
            if cands is None:
                continue
            for head, tail in cands:
                end = i + len(head)
                if end > n or st[i:end] != head:
                    continue
                if tail is None:
                    return True
                lt = len(tail)
                for j in range(end, min(end + gap, n) + 1):
                    if st[j:j + lt] == tail:
                        return True
        return False


class Cuts:
    """Gapless phrases of stems, each taken out of a clause wherever it stands, in list order.

    Plain code: `agentgym.users.understanding.compromise._without(clause, phrases)`: phrase by
    phrase, every occurrence removed left to right. Here only the phrases whose first stem the
    clause holds are tried (found by an index of first stems), in their list order: taking words
    out never brings one in, so the others remove nothing, as the plain code finds too.
    """

    def __init__(self, phrases: Iterable[Phrase]) -> None:
        self.phrases = tuple(phrases)
        by_head: dict[str, list[int]] = {}
        for k, p in enumerate(self.phrases):
            by_head.setdefault(p[0][0], []).append(k)
        self._by_head = {head: tuple(ks) for head, ks in by_head.items()}

    def __iter__(self) -> Iterator[Phrase]:
        return iter(self.phrases)

    def without(self, clause: list[str]) -> list[str]:
        """`clause` with every occurrence of the phrases taken out."""
        by_head = self._by_head
        if by_head.keys().isdisjoint(clause):
            return clause  # most clauses: no phrase starts anywhere
        tried = sorted(k for head in set(clause) for k in by_head.get(head, ()))
        for k in tried:
            part = self.phrases[k][0]
            head, size = part[0], len(part)
            i = 0
            while i <= len(clause) - size:
                if clause[i] == head and tuple(clause[i:i + size]) == part:
                    clause = clause[:i] + clause[i + size:]
                else:
                    i += 1
        return clause


class NearWords:
    """Listed words a typo may stand for.

    Plain code: ``next((c for c in words if _one_edit(word, c)), None)``: the first listed word at
    most one edit from `word`. Here each listed word is indexed under itself and each one-letter
    deletion of it; two words one edit apart (a letter dropped, added or changed, or two
    neighbours swapped) always share such a key, so only the words under `word`'s own keys are
    tested, and the first of them in list order wins.
    """

    def __init__(self, words: Iterable[str]) -> None:
        self.words = tuple(words)
        self._rank: dict[str, int] = {}
        self._keys: dict[str, list[str]] = {}
        for k, w in enumerate(self.words):
            if w in self._rank:
                continue
            self._rank[w] = k
            for key in {w, *_deletions(w)}:
                self._keys.setdefault(key, []).append(w)

    def __contains__(self, word: object) -> bool:
        return word in self._rank

    def first(self, word: str) -> str | None:
        """The first listed word at most one edit from `word`, or None."""
        keys = self._keys
        cands = {c for key in (word, *_deletions(word)) for c in keys.get(key, ())}
        hits = [c for c in cands if _one_edit(word, c)]
        return min(hits, key=self._rank.__getitem__) if hits else None


def _deletions(word: str) -> list[str]:
    return [word[:i] + word[i + 1:] for i in range(len(word))]
