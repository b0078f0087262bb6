"""The measuring logic, end to end on real tasks with fake users of known behaviour, and on
hand-made observations."""

from __future__ import annotations

import math

import pytest
from fake_users import factory

from agentgym.usercheck.corpus import load_corpus, parse_record
from agentgym.usercheck.goals import GoalSlot, Holding, says
from agentgym.usercheck.report import meets_targets
from agentgym.usercheck.summary import clean, summarise, wilson
from agentgym.usercheck.trials import Episode, Settings, Trial, run_trials
from agentgym.usercheck.verdict import Observed, judge, reply_kind, revealed_beyond_control

SMALL = Settings(pool=24, matched=2, cross=1, per_concept=3)


@pytest.fixture(scope="module")
def corpus():
    return load_corpus()


def _run(family: str, mode: str, corpus):
    return run_trials(family, corpus, SMALL, env_kwargs={"user_factory": factory(mode, corpus)})


@pytest.mark.parametrize("family", ["dialog", "tooluse"])
def test_a_user_that_answers_right_scores_full_marks(family: str, corpus) -> None:
    summary = summarise(_run(family, "right", corpus))
    assert summary.concepts
    for row in summary.concepts:
        assert row.understanding.n > 0 and row.understanding.value == 1.0, row
        assert row.wrong.k == 0, row
    for row in summary.negatives:
        assert row.clean.value == 1.0, row
    assert summary.overall[family]["understanding"].value == 1.0
    assert meets_targets(summary)


def test_a_user_that_answers_the_wrong_slot_is_caught(corpus) -> None:
    summary = summarise(_run("dialog", "wrong", corpus))
    for row in summary.concepts:
        assert row.wrong.n > 0 and row.wrong.value == 1.0 if row.concept != "open" else row.wrong.k > 0, row
        if row.concept != "open":  # it states every held slot: right only when it held one
            assert row.understanding.value == 0.0, row
    leaky = {row.style: row.clean.value for row in summary.negatives}
    assert leaky["statement"] == 0.0 and leaky["negation"] == 0.0 and leaky["exclusion"] == 0.0
    assert summary.overall["dialog"]["wrong_slot"].value == 1.0
    assert not meets_targets(summary)


def test_a_silent_user_answers_nothing_and_reveals_nothing(corpus) -> None:
    summary = summarise(_run("dialog", "silent", corpus))
    for row in summary.concepts:
        assert row.understanding.value == 0.0 and row.no_answer.value == 1.0 and row.wrong.k == 0, row
    assert all(row.clean.value == 1.0 and row.proceeds.value == 1.0 for row in summary.negatives)


def test_the_paired_control_cancels_volunteering(corpus) -> None:
    trials = _run("dialog", "volunteer", corpus)
    assert trials and all(t.verdict.n_revealed == 0 for t in trials)
    # Every reply did state a slot: only the control shows it was not an answer.
    assert sum("noted" in t.reply for t in trials) == len(trials)


def test_trials_go_to_users_that_hold_what_is_asked(corpus) -> None:
    trials = run_trials("dialog", corpus, SMALL)
    matched = [t for t in trials if t.kind == "matched" and not t.phrasing.negative]
    cross = [t for t in trials if t.kind == "cross"]
    assert matched and cross
    for t in matched:
        held = set(t.verdict.held)
        assert held if t.phrasing.is_open else set(t.phrasing.asks) <= held, t.to_dict()
        assert t.phrasing.applies_to(t.episode.holding.family, t.episode.holding.domain)
    for t in cross:
        assert not set(t.phrasing.asks) & set(t.verdict.held) and t.verdict.opportunity
    for t in trials:
        if t.phrasing.negative:
            assert set(t.phrasing.excludes) <= set(t.verdict.held)


def test_crosstask_measures_its_sub_task_users(corpus) -> None:
    trials = run_trials("crosstask", corpus, Settings(pool=16, matched=1, cross=0, per_concept=1))
    assert {t.episode.holding.family for t in trials} == {"dialog", "tooluse"}
    assert all(s.id.startswith("0:") for t in trials for s in t.episode.holding.slots)


def test_runs_are_deterministic(corpus) -> None:
    settings = Settings(pool=12, matched=1, cross=1, per_concept=1)
    first = [t.to_dict() for t in run_trials("tooluse", corpus, settings)]
    assert first == [t.to_dict() for t in run_trials("tooluse", corpus, settings)]


# ---------------------------------------------------------------- hand-made observations

HOLDING = Holding("dialog", "cafes", "cafe", (
    GoalSlot("area", "area", True, ("riverside",)),
    GoalSlot("price", "price", True, ("4",)),
    GoalSlot("rating", "rating", True, ("4.5", "4.5 star")),
    GoalSlot("time", "time", True, ("monday",)),
    GoalSlot("amenity:wifi", "amenity", False, ("wifi",)),
), known=("time",))
QUIET = Observed("Okay, go ahead.", ("time",))


def test_revealed_ids_beyond_the_control() -> None:
    probe = Observed("It should be in Riverside. Also wifi.", ("time", "area", "amenity:wifi"))
    control = Observed("Oh, one more thing: I need wifi.", ("time", "amenity:wifi"))
    assert revealed_beyond_control(HOLDING, probe, control, "Where?") == ["area"]


def test_values_in_the_reply_count_where_the_ids_do_not_tell() -> None:
    probe = Observed("Somewhere in Riverside, at most 4 EUR.", ("time",))
    assert revealed_beyond_control(HOLDING, probe, QUIET, "Where and how much?") == ["area", "price"]
    # An echo of the assistant's own words, or what the control says too, reveals nothing.
    assert revealed_beyond_control(HOLDING, probe, QUIET, "Riverside or Old Town, 4 EUR?") == []
    assert revealed_beyond_control(HOLDING, probe, Observed("Riverside is nice. 4", ("time",)), "Where?") == []
    # Already stated: the day.
    assert revealed_beyond_control(HOLDING, Observed("Monday, as I said.", ("time",)), QUIET, "When?") == []


def test_judge_splits_answers_from_wrong_slots() -> None:
    probe = Observed("Riverside, and rated 4.5 or more.", ("time", "area", "rating"))
    v = judge(HOLDING, probe, QUIET, "Which area?", ("area",))
    assert v.answered == ("area",) and v.wrong == ("rating",) and v.opportunity and v.reply == "answer"
    v = judge(HOLDING, probe, QUIET, "Besides the price, which area?", ("area",), ("price",))
    assert v.excluded_revealed == () and v.wrong == ("rating",)
    v = judge(HOLDING, QUIET, QUIET, "Which area?", ("area",))
    assert v.answered == () and v.n_revealed == 0 and v.reply == "proceeds"
    # The late amenity is not held; the stated time is not held either.
    assert v.held == ("area", "price", "rating")


def _trial(record: dict, probe: Observed) -> Trial:
    p = parse_record({"id": "t", "family": "dialog", "domains": [], "style": "exclusion", **record})
    episode = Episode(("train", "cafes", None), 0, HOLDING, b"k", HOLDING.held(), HOLDING.stated())
    return Trial("dialog", "matched", p, p.text, episode, probe.text, QUIET.text,
                 judge(HOLDING, probe, QUIET, p.text, p.asks, p.excludes))


def test_an_open_question_setting_a_slot_aside_is_clean_with_one_other_requirement() -> None:
    record = {"asks": ["open"], "excludes": ["price"], "text": "Price aside, anything else?"}
    assert clean(_trial(record, Observed("Somewhere in Riverside.", ("time", "area"))))
    assert not clean(_trial(record, Observed("At most 4 EUR.", ("time", "price"))))
    assert not clean(_trial(record, Observed("Riverside, rated 4.5.", ("time", "area", "rating"))))
    record = {"asks": ["area"], "excludes": ["price"], "text": "Price aside, which area?"}
    assert not clean(_trial(record, Observed("Riverside, rated 4.5.", ("time", "area", "rating"))))


def test_reply_kinds() -> None:
    assert reply_kind("I'm not sure what you mean. Could you rephrase?", False) == "rephrase"
    assert reply_kind("Sorry, I didn't get that.", False) == "rephrase"
    assert reply_kind("Okay, go ahead.", False) == "proceeds"
    assert reply_kind("I'm not sure what you mean.", True) == "answer"


def test_says_matches_whole_words_and_numbers() -> None:
    assert says("At most 4 EUR.", "4") and not says("Rated 4.5 or more.", "4") and not says("14 EUR", "4")
    assert says("Rated 4.5 or more.", "4.5") and not says("Rated 4.55", "4.5")
    assert says("In Old Town, please", "old town") and not says("Oldtownish", "old town")


def test_wilson_interval() -> None:
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    assert wilson(10, 10)[1] == pytest.approx(1.0) and all(math.isnan(x) for x in wilson(0, 0))
