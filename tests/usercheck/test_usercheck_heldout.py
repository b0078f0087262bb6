"""The simulated users against a held-out corpus (``data/heldout_*.jsonl``): phrasings written
apart from the shipped corpus, in the style of real task-oriented assistants (terse slot prompts,
"Do you have a preference for X?", offers, confirmations, domain wording, typos) and 150+
negatives and small talk. Nothing in the engine, grammar or lexicons was written from these
sentences; they check that what was built for the shipped corpus holds on phrasings it never saw.

Targets as the issue states them: answered with the asked slot's value >= 95% overall and >= 90%
per concept; a slot that was not asked revealed in <= 1% of the trials where one could be,
negatives and small talk included.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym.usercheck.corpus import MEASURED, load_corpus
from agentgym.usercheck.summary import TARGETS, clean, summarise
from agentgym.usercheck.trials import Settings, run_trials

HELDOUT = Path(__file__).with_name("data")
#: A fast sample of episodes: every phrasing, two users that hold what it asks, one that does not.
SAMPLE = Settings(pool=30, matched=2, cross=1)


@pytest.fixture(scope="module")
def heldout():
    return load_corpus(HELDOUT)


def test_the_heldout_corpus_is_large_and_independent_of_the_shipped_one(heldout) -> None:
    positives = [p for p in heldout if not p.negative]
    assert len(positives) >= 600 and sum(p.negative for p in heldout) >= 150
    for family, concepts in MEASURED.items():
        for concept in concepts:
            assert sum(p.asks == (concept,) for p in positives if p.family == family) >= 30, (family, concept)
    shipped = {" ".join(p.text.lower().split()) for p in load_corpus()}
    assert not [p.text for p in heldout if " ".join(p.text.lower().split()) in shipped]


@pytest.mark.parametrize("family", ["dialog", "tooluse", "crosstask"])
def test_the_users_meet_the_targets_on_the_heldout_corpus(family: str, heldout) -> None:
    trials = run_trials(family, heldout, SAMPLE)
    summary = summarise(trials)
    overall = summary.overall[family]
    assert overall["understanding"].value >= TARGETS["overall"], overall["understanding"]
    for row in summary.concepts:
        assert row.understanding.value >= TARGETS["concept"], row
    # Wrong slots: asked phrasings revealing another slot, and negatives revealing anything.
    negatives = [t for t in trials if t.phrasing.negative]
    wrong = overall["wrong_slot"].k + sum(not clean(t) for t in negatives)
    chances = overall["wrong_slot"].n + len(negatives)
    assert wrong <= TARGETS["wrong"] * chances, (wrong, chances)
