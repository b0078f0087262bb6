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
