"""The sealed track: the board steps every episode itself, on seeds no one knows in advance.

Replay verification (the open track) proves that a submission's numbers are those of its
recorded actions; it cannot prove how the actions were chosen (an oracle's records relabelled
as an ordinary agent's verify), and the public seeds let an agent be tuned to the very episodes
it is scored on. A sealed run closes both:

1. The submitter opens a run with a token the board's admin issued (``POST /sealed/runs``,
   `agentgym.leaderboard.tokens`; a quota of runs a day per token).
2. The board draws the run's seeds from its secret and the run's random id
   (`agentgym.leaderboard.sealed.seeds`): the suite's layout (env ids x noise x trials, test
   split, the same generators) on seeds that are new for every run.
3. The client plays the episodes over the env server's protocol (HTTP or WebSocket), hosted by
   the board (`agentgym.leaderboard.sealed.host`): the board resets and steps every env and
   writes every record itself; the client sees what an ordinary agent sees and no seed
   (`agentgym.leaderboard.sealed.view`). A client that drops resumes within the grace period;
   otherwise the run is closed as incomplete and never ranked.
4. When every episode is played, the board verifies the records by replay like any submission,
   stores the entry in the sealed track and publishes the records with their seeds
   (``GET /submissions/{id}/records``), so anyone can replay them (`agentgym leaderboard verify`).

The client is `agentgym.leaderboard.sealed.client` (``agentgym bench SUITE --sealed URL``); it
needs no server extra beyond ``websockets``.
"""
