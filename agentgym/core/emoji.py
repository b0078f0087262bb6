"""Emoji that end a sentence, for the simulated user's reading of an assistant's message.

Chat assistants put an emoji where a full stop would go ("... free next Monday morning 📅 Shall I
book it for you? 😊"). The users read a message sentence by sentence, so without the stop the
statement before it and the question after it read as one question, and the user answered the
statement. An emoji followed by a word that opens a question or a request ("Shall", "Would",
"Which", "Please" ...) ends its sentence; one before any other word (a bullet: "👉 Glass Arcade")
is left as it is. The text the env records is the assistant's own; this is what the user hears.
"""

from __future__ import annotations

import re

__all__ = ["emoji_sentence_breaks"]

#: Pictographs (Miscellaneous Symbols, Dingbats and the emoji planes) with what may join them
#: into one emoji: variation selectors, joiners, skin tones.
_EMOJI = "[\u2600-\u27bf\U0001f000-\U0001faff][\u2600-\u27bf\U0001f000-\U0001faff\ufe0f\u200d]*"
#: Words that open a question or a request, capitalised as a sentence's first word is.
_OPENERS = ("Shall|Should|Would|Could|Can|May|Might|Do|Does|Did|Is|Are|Was|Were|Will|Want|Which|What|When|"
            "Where|Why|How|Who|Whom|Let|Please|Any|Anything|Ready|Sound|Sounds|Okay|OK|Ok")
_BREAK = re.compile(rf"(?<=[^\s.?!:;,])([ \t]*{_EMOJI})[ \t]+(?=(?:{_OPENERS})\b)")


def emoji_sentence_breaks(text: str) -> str:
    """`text` with a full stop after each emoji that ends a sentence (see the module docstring)."""
    if text.isascii():
        return text
    return _BREAK.sub(r"\1. ", text)
