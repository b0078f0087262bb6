"""The shipped evaluation of the simulated users: do they understand how assistants ask?

A paraphrase corpus (``data/*.jsonl``, written for this check, one record per phrasing) is sent,
one phrasing per episode, as the assistant's first message to users that hold the asked slot;
a paired control (the same episode with a neutral "Okay.") separates answers from volunteering.
The rates per slot concept, with 95% Wilson intervals, go to ``docs/users-check.md``
(``agentgym check-users --out docs/users-check.md``), which says what is measured and how; a
second corpus checks which place a message naming several proposes (`proposals`). What the
users know and how they judge is docs/USERS.md.

Modules: `corpus` (the phrasings, parsed strictly), `goals` (what a user holds, read from the
task), `trials` (episodes, paired probes and verdicts), `summary` (rates and intervals),
`proposals` (messages naming several places), `report` (Markdown and JSON), `cli` (the command).
"""

from __future__ import annotations

__all__: list[str] = []
