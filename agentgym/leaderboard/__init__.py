"""The leaderboard: submissions, replay verification, SQLite store, HTML/JSON board and server.

A submission is one `agentgym bench` run (its ``records.jsonl``) plus a manifest
(`agentgym.leaderboard.submission`). The leaderboard trusts none of its numbers: it replays
every episode in the pinned env and recomputes every metric (`agentgym.leaderboard.verify`),
keeps verified entries in SQLite (`agentgym.leaderboard.store`), ranks them
(`agentgym.leaderboard.board`) and renders the board escaped (`agentgym.leaderboard.page`), with each
entry's page and its episodes' timelines (`agentgym.leaderboard.entry_page`).
The HTTP server (`agentgym.leaderboard.server`) needs the ``server`` extra.
"""
