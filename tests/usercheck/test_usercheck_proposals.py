"""Proposals (`agentgym.usercheck.proposals`): the corpus parsed strictly, and the booking users
hearing which place a message proposes, on the shipped phrasings and on held-out ones
(``data/heldout_proposals``, written apart from the shipped corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentgym.usercheck.proposals import (
    _named,
    load_proposals,
    meets_proposal_targets,
    parse_proposal,
    proposal_problems,
    proposal_rates,
    run_proposals,
)
from agentgym.usercheck.summary import TARGETS

HELDOUT = Path(__file__).with_name("data") / "heldout_proposals"


def test_the_shipped_proposals_keep_their_promise_and_the_heldout_ones_are_new() -> None:
    shipped = load_proposals()
    assert proposal_problems(shipped) == []
    heldout = load_proposals(HELDOUT)
    texts = {" ".join(p.text.lower().split()) for p in shipped}
    assert heldout and not [p.id for p in heldout if " ".join(p.text.lower().split()) in texts]


@pytest.mark.parametrize(("record", "problem"), [
    ({"id": "x", "style": "recommendation", "text": "How about {place}?"}, "{other}"),
    ({"id": "x", "style": "advice", "text": "{place} or {other}"}, "style"),
    ({"id": "x", "style": "choice", "text": "{place} or {other} in {noun}"}, "placeholders"),
    ({"id": "x", "style": "choice", "text": "{place} or {other}", "extra": 1}, "unknown fields"),
])
def test_a_bad_record_is_an_error(record: dict, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_proposal(record, "line")


def test_names_are_read_whole() -> None:
    assert _named("Stone Plate 5 sounds great.", "Stone Plate 5", "Stone Plate") == (True, False)
    assert _named("Stone Plate sounds great.", "Stone Plate 5", "Stone Plate") == (False, True)


@pytest.mark.parametrize("folder", [None, HELDOUT], ids=["shipped", "heldout"])
@pytest.mark.parametrize("family", ["dialog", "crosstask"])
def test_the_booking_users_hear_the_recommended_place(family: str, folder: Path | None) -> None:
    trials = run_proposals(family, load_proposals(folder), pool=16, matched=2)
    rates = proposal_rates(trials)[family]
    assert rates["understood"].value >= TARGETS["overall"], [t.to_dict() for t in trials if not t.understood]
    assert rates["wrong_place"].value <= TARGETS["wrong"]
    assert rates["choice_clean"].value >= TARGETS["overall"] and rates["choice_asks"].value >= TARGETS["overall"]
    assert meets_proposal_targets({family: rates})
