"""The shipped evaluation of the simulated users: do they understand how assistants ask?

A paraphrase corpus (``data/*.jsonl``, written for this check, one record per phrasing) is sent,
one phrasing per episode, as the assistant's first message to users that hold the asked slot;
a paired control (the same episode with a neutral "Okay.") separates answers from volunteering.
The rates per slot concept, with 95% Wilson intervals, go to ``docs/USERS.md``
(``agentgym check-users --out docs/USERS.md``). docs/USERS.md says what is measured and how.

Modules: `corpus` (the phrasings, parsed strictly), `goals` (what a user holds, read from the
task), `trials` (episodes, paired probes and verdicts), `summary` (rates and intervals),
`report` (Markdown and JSON), `cli` (the command).
"""

from __future__ import annotations

__all__: list[str] = []
