"""The garbage collector's settings for a long-running server process.

CPython's default collects the youngest generation every 700 container allocations (net). A
server answering a step allocates a few hundred and keeps some of them (a session's episode,
its history), so young collections run every step or two and promote what they find, and the
full collections that follow walk every object the process holds, its imported modules and
loaded suites included. A board verifying a run at its end allocates millions, and the same
walks repeat over the records it has already read.

`tune_for_serving`, called once the app is built and before it serves:

- freezes what exists then (modules, registries, suites, lexicons) out of every collection:
  those objects live as long as the process, and walking them finds nothing;
- collects the youngest generation every 10,000 allocations: as much work per surviving
  object, in fewer passes. Memory under sustained load stays as flat as with the defaults (the
  env server's sustained-load test holds its growth bound either way).

Reference cycles are still collected, a little later. Tests and notebooks that run a server in
a thread of their own process (`agentgym.server.serve.ServerThread`) keep the defaults.
"""

from __future__ import annotations

import gc

__all__ = ["tune_for_serving", "SERVING_THRESHOLDS"]

#: `gc.set_threshold` of a serving process: youngest generation, then how many of its passes make
#: one of the middle generation, and how many of those make a full collection.
SERVING_THRESHOLDS = (10_000, 10, 10)


def tune_for_serving() -> None:
    """Freeze the objects made so far and collect less often (see the module)."""
    gc.collect()  # what is garbage now is not frozen with the rest
    gc.freeze()
    gc.set_threshold(*SERVING_THRESHOLDS)
