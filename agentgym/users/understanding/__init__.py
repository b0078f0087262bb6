"""The simulated users' language engine: what an assistant's message asks, proposes, confirms or
claims, read once by rules (`reading` says how).

By job: `grammar` (a family's lexicon and the shared English grammar), `words` (tokens, stems,
one-edit typos), `clauses` (the roles of a sentence's words), `reading` (`Understanding`,
which reads a message into a `Reading`, `understood`) and `_fast` (the speed kernel `read`
goes through, equal to `reading`'s plain code); `compromise` reads whether a message asks a user with
priorities to give a need up (the Dialog hard tier's); `matching` holds the compiled matchers of
word lists searched in every message (each equal to a plain line of code)."""

from __future__ import annotations

from agentgym.users.understanding.grammar import Lexicon, parse_lexicon
from agentgym.users.understanding.reading import Reading, Understanding, compile_understanding, resolve_place
from agentgym.users.understanding.words import stem, tokens

__all__ = ["Lexicon", "Reading", "Understanding", "parse_lexicon", "compile_understanding", "resolve_place", "stem",
           "tokens"]
