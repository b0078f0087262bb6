"""The paraphrase corpus: parsed strictly, and as large and varied as it promises."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agentgym.core.protocol import parse_action
from agentgym.usercheck.corpus import (
    MEASURED,
    MIN_PER_CONCEPT,
    NEGATIVE_STYLES,
    SINGLE_STYLES,
    coverage_problems,
    load_corpus,
    parse_record,
)

GOOD = {"id": "x/1", "family": "dialog", "domains": [], "style": "terse", "asks": ["area"], "excludes": [],
        "text": "Area?"}


def test_shipped_corpus_keeps_its_promise() -> None:
    corpus = load_corpus()
    assert coverage_problems(corpus) == []
    for family, concepts in MEASURED.items():
        for concept in concepts:
            single = [p for p in corpus if p.family == family and p.asks == (concept,) and not p.negative
                      and p.style != "listing"]
            assert len(single) >= MIN_PER_CONCEPT, (family, concept)
            assert {p.style for p in single} == set(SINGLE_STYLES), (family, concept)
        compound = [p for p in corpus if p.family == family and p.style == "compound"]
        assert len(compound) >= 30 and all(2 <= len(p.asks) <= 3 for p in compound)
        negative = {p.style for p in corpus if p.negative and p.family in (family, "any")}
        assert negative == set(NEGATIVE_STYLES)


def test_domain_wording_covers_every_domain() -> None:
    from agentgym.envs.dialog.domain import load_domains as dialog_domains
    from agentgym.envs.tooluse.domains import load_domains as tooluse_domains

    corpus = load_corpus()
    for family, domains in (("dialog", dialog_domains()), ("tooluse", tooluse_domains())):
        worded = {d for p in corpus if p.family == family and p.style == "domain" for d in p.domains}
        assert worded == set(domains), family


def test_every_phrasing_reaches_the_user_as_a_message() -> None:
    for p in load_corpus():
        parsed = parse_action(p.message("restaurant"))
        assert parsed.error is None and not parsed.calls, p.id
        assert "{" not in p.message("restaurant"), p.id


def test_a_shortfall_is_reported() -> None:
    corpus = [p for p in load_corpus() if not (p.family == "dialog" and p.asks == ("price",) and p.style == "typo")]
    problems = coverage_problems(corpus)
    assert any("dialog/price" in line and "typo" in line for line in problems)
    half = [p for p in load_corpus() if not (p.asks == ("email",) and p.style in ("terse", "question"))]
    assert any(line.startswith("tooluse/email:") and "fewer than" in line for line in coverage_problems(half))


@pytest.mark.parametrize("change, message", [
    ({"extra": 1}, "unknown fields"),
    ({"style": ""}, "non-empty string"),
    ({"family": "chat"}, "family must be"),
    ({"style": "shouty"}, "unknown style"),
    ({"asks": ["budget"]}, "unknown concept"),
    ({"asks": ["currency"]}, "unknown concept"),
    ({"asks": "area"}, "list of strings"),
    ({"asks": ["area", "area"]}, "repeats"),
    ({"domains": ["casinos"]}, "unknown dialog domains"),
    ({"asks": ["area", "price"]}, "compound"),
    ({"style": "compound"}, "compound"),
    ({"style": "domain"}, "domain phrasing"),
    ({"asks": ["open", "area"], "style": "compound"}, "open question"),
    ({"excludes": ["price"]}, "excludes nothing"),
    ({"text": "Which area for the {place}?"}, "placeholder"),
    ({"family": "tooluse", "asks": ["email"], "text": "Email for the {noun}?"}, "placeholder"),
    ({"style": "negation", "asks": [], "excludes": []}, "names the concept"),
    ({"style": "statement", "asks": ["area"], "excludes": ["price"]}, "exclusion"),
    ({"style": "exclusion", "asks": ["area"], "excludes": ["area"]}, "both asked and excluded"),
    ({"family": "any", "asks": ["open"], "domains": ["cafes"]}, "cannot name domains"),
    ({"text": "x" * 501}, "longer than"),
])
def test_records_are_parsed_strictly(change: dict, message: str) -> None:
    raw = {**GOOD, **change}
    with pytest.raises(ValueError, match=message):
        parse_record(raw, "f.jsonl:3")


def test_a_missing_field_is_an_error() -> None:
    raw = dict(GOOD)
    del raw["excludes"]
    with pytest.raises(ValueError, match=r"f.jsonl:3: .*missing fields \['excludes'\]"):
        parse_record(raw, "f.jsonl:3")


def test_files_are_read_in_order_with_unique_ids(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(json.dumps(GOOD) + "\n\n" + json.dumps({**GOOD, "id": "x/2"}) + "\n")
    assert [p.id for p in load_corpus(tmp_path)] == ["x/1", "x/2"]
    (tmp_path / "b.jsonl").write_text(json.dumps(GOOD) + "\n")
    with pytest.raises(ValueError, match="b.jsonl: phrasing id 'x/1' repeats one in a.jsonl"):
        load_corpus(tmp_path)
    (tmp_path / "b.jsonl").write_text("{not json\n")
    with pytest.raises(ValueError, match=r"b.jsonl:1: not JSON"):
        load_corpus(tmp_path)
    with pytest.raises(ValueError, match="no corpus files"):
        load_corpus(tmp_path / "empty")


def test_ids_and_texts_are_unique_within_a_family() -> None:
    corpus = load_corpus()
    assert len({p.id for p in corpus}) == len(corpus)
    texts = Counter((p.family, " ".join(p.text.lower().split())) for p in corpus)
    assert max(texts.values()) == 1
