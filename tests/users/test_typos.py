"""Typos that keep what the agent must copy (`agentgym.users.typos.perturb_keeping`)."""

from __future__ import annotations

import re

import numpy as np

from agentgym.core.typos import perturb
from agentgym.users.typos import perturb_keeping

TEXT = ("Please transfer the refund to maria.lopez@example.com for order ORD-1234 of the Riverside Jacket, "
        "and mention the Riverside Jacket again in the confirmation message please")
NAMES = re.compile(r"Riverside Jacket")
MAILS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def test_held_values_come_back_as_they_were() -> None:
    for seed in range(200):
        text, changes = perturb_keeping(TEXT, np.random.default_rng(seed), patterns=(MAILS, NAMES),
                                        values=("ORD-1234",))
        assert text.count("Riverside Jacket") == 2 and "maria.lopez@example.com" in text and "ORD-1234" in text
        assert "\x00" not in text
        assert changes


def test_nothing_held_is_the_plain_typo_model() -> None:
    for seed in range(50):
        assert perturb_keeping(TEXT, np.random.default_rng(seed)) == perturb(TEXT, np.random.default_rng(seed))


def test_patterns_hold_first_then_values() -> None:
    # What a pattern holds is out of the text before the values are looked for; together they
    # keep the whole run of names, and the words around them take the typos.
    for seed in range(50):
        text, changes = perturb_keeping("booking Harbor Grill Grill Harbor please", np.random.default_rng(seed),
                                        patterns=(re.compile("Harbor Grill"),), values=("Grill Harbor", "Harbor"))
        assert "Harbor Grill Grill Harbor" in text and changes


def test_a_paraphrase_keeps_a_wish_a_wish() -> None:
    # The hard tier's user says a need that may give way as a wish ("I'd like it to be in the
    # Old Town area."); the typos' paraphrase must not make it sound firm.
    wish = "I'd like it to be in the Old Town area."
    runs = [perturb(wish, np.random.default_rng(seed), max_typos=1) for seed in range(60)]
    paraphrased = [(text, changes) for text, changes in runs if any(c.startswith("I'd like->") for c in changes)]
    assert paraphrased, "no seed paraphrased the wish"
    for text, changes in paraphrased:
        assert "I'd like->i would like" in changes, changes
        assert "want" not in text.lower() and "need" not in text.lower(), text


def test_a_typo_never_makes_another_english_word() -> None:
    # "Good, then ..." -> "God, then ...", "Finance approved ..." -> "Fiance approved ...": a slip
    # that lands on a real word changes what the user says (CrossTask 6884, 7068). Each is drawn
    # again; the word is left as it was when every draw makes one.
    from agentgym.core.english_words import is_english_word

    text = "Good, then Finance approved the form from three teams; still works for me, thanks"
    landed = 0
    for seed in range(400):
        out, changes = perturb(text, np.random.default_rng(seed))
        for change in changes:
            old, new = change.split("->")
            if " " not in old:  # a paraphrase is a stock phrase said another way
                assert not is_english_word(new), (seed, change)
        landed += bool(re.search(r"\b(?:God|Fiance)\b", out))
    assert landed == 0
    assert perturb(text, np.random.default_rng(5)) == perturb(text, np.random.default_rng(5))


def test_english_words_take_regular_endings_and_refuse_slips() -> None:
    from agentgym.core.english_words import is_english_word

    for word in ("God", "fiance", "from", "hotels", "booked", "booking", "cities", "stopped", "rated"):
        assert is_english_word(word), word
    for slip in ("Goood", "Fniance", "stlil", "taht", "Rivreside", "bookde", "hotles"):
        assert not is_english_word(slip), slip
