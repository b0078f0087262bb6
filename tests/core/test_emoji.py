"""An emoji that stands for a full stop ends the sentence the user hears (`agentgym.core.emoji`)."""

from __future__ import annotations

import pytest

from agentgym.core.emoji import emoji_sentence_breaks


@pytest.mark.parametrize(("text", "heard"), [
    ("It's free next Monday morning 📅 Shall I book it for you? 😊",
     "It's free next Monday morning 📅. Shall I book it for you? 😊"),
    ("Done ✅ Anything else?", "Done ✅. Anything else?"),
    ("It fits 👍🏽 Would you like it?", "It fits 👍🏽. Would you like it?"),
    ("Two options ✨✨ Which one suits you?", "Two options ✨✨. Which one suits you?"),
])
def test_an_emoji_before_a_question_or_request_ends_the_sentence(text: str, heard: str) -> None:
    assert emoji_sentence_breaks(text) == heard


@pytest.mark.parametrize("text", [
    "Would you like 👉 Glass Arcade or 👉 Rose Pavilion?",  # bullets before names
    "Booked! ✅ Would you like anything else?",  # a stop already ends it
    "I found: 🏠 Shall Lodge, in Riverside.",  # after a colon: a list's item
    "It is free on Monday. Shall I book it?",  # ASCII: the same object back
])
def test_an_emoji_elsewhere_changes_nothing(text: str) -> None:
    assert emoji_sentence_breaks(text) == text


def test_an_ascii_message_is_not_copied() -> None:
    text = "Shall I book it?"
    assert emoji_sentence_breaks(text) is text
