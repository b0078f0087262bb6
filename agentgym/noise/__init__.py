"""Seeded, declarative noise: one Gymnasium wrapper per kind, each doing one thing.

    gym.make("AgentRL/Dialog-v0", noise="tool_failure=0.2,ambiguity=0.5")
    gym.make("AgentRL/Dialog-v0", noise="medium")            # presets: none, light, medium, heavy
    apply_noise(env, {"typos": 0.1})                          # on an env already made

Every wrapper records its constructor arguments (the stack shows in ``env.spec``), acts only while
its own ``reset`` or ``step`` runs, at the points of the episode where the `AgentEnv` underneath
lets a layer act (`agentgym.core.hooks`; nothing is registered on it, so ``env.unwrapped`` is the
env without noise), draws only from its own stream of the episode seed
(``AgentEnv.noise_rng(kind)``: adding or removing a wrapper never changes the task or another
wrapper's draws), and logs every injection as ``{"step", "kind", "target", "detail", "hits",
"at_ms"}`` (plus ``call``, the id of the call it acted on, for call-level kinds) in that step's
``info["noise"]`` and the episode's ``info["episode_summary"]["noise"]``.
``reset(options={"trial": k})`` redraws every kind's stream (same task, other faults) for pass^k.

Order: layers act innermost first, each on what the layers beneath it left, so the order of a stack
is the order its faults compose in. ``gym.make(id, noise=...)`` and `apply_noise` apply the
canonical order of `KINDS` (the table's order): latency beneath tool_failure charges every call,
also one that then fails (with `ToolFailure` beneath `Latency`, a failed call takes no time); typos
act last, on the text the agent reads. A call that a layer fails is not seen by the layers outside
it. What a layer draws at reset (a blurred opening, a planned goal shift) belongs to the user of
that episode.

``hits`` says what the injection affects, so metrics can tell a real recovery from a
coincidence: ``{"gold_step": i}`` (step `i` of the gold plan as it stood then, see
`AgentEnv.gold_calls`), ``{"constraint": id}``, or None. A tool failure hits the step the failed
call was for, and none when the call matches no step still to do (a call the plan does not need:
nothing to recover, so recovery statistics leave it out). A corrupted result hits the first step
still to do that consumes the value the corruption replaced, and none when no step does, or when
the read is not one the plan makes, or repeats a read that already succeeded. ``at_ms`` is the
simulated time when it happened (latency noise), for recovery times in milliseconds.

| kind | wrapper | opportunity | target | detail | hits |
|---|---|---|---|---|---|
| latency | `Latency(mean_ms)` | every valid call is charged; the charge that passes the budget is logged | tool | ms, elapsed_ms, budget_ms | the call's gold step |
| tool_failure | `ToolFailure(rate, modes, tools)` | every valid call | tool | mode | the call's gold step |
| corruption | `Corruption(rate)` | every successful read result with a data leaf (a value in range: another record's, or moved inside its range) | tool | path, from, to, how | the step consuming ``from`` |
| distractors | `Distractors(n)` | each reset; each call to a decoy | ``tools`` / decoy | added / clone_of, effect | None (a decoy is no step) |
| ambiguity | `Ambiguity(rate)` | each reset | constraint | the family's description | the constraint |
| goal_shift | `GoalShift(rate)` | each reset (logged when announced) | constraint or detail | from, to | the constraint |
| typos | `Typos(rate)` | every user message that carries information, in a step that does not end the episode | ``user`` | message, changes | None |

`ActionConstraint(allowed_tools, forbid)` is a policy, not noise: it refuses calls (error
``BLOCKED``, not injected: refusals count against the agent) and logs each refusal. It acts at the
env's policy point, before any noise layer sees the call, wherever it sits in the stack.

Recoverability: every detail carries ``recoverable``. These injections leave no way to succeed
and are logged with ``recoverable: False`` (metrics leave them out of recovery statistics):

- a tool failure, a corrupted result or a decoy call in the episode's last turn (no turn is left
  to retry, re-query or redo), or once the time budget is spent;
- the latency charge that passes the task's time budget (the episode is truncated);
- a goal shift with too few turns left to act on it, or (tool use) after a record the new goal
  does not want and no tool can undo (the family says so in its `NoiseEvent`);
- whatever else a family marks unrecoverable in its `NoiseEvent`.
Injected tool failures are marked ``injected`` in the call record and never count as the
agent's errors.

Honest faults: a failed call (any mode, a timeout too) never reached the tool, so nothing it
would have written exists, and the families' read tools show that; a corrupted value is one the
data could hold (see `Corruption` for how a careful agent catches each kind); a typo lands only
where the agent still has a turn to act on the message (and, in the families that protect them,
never inside a value it must copy).
"""

from agentgym.noise.calls import FAILURE_MODES, Corruption, Latency, ToolFailure
from agentgym.noise.constraint import ActionConstraint
from agentgym.noise.distractors import MAX_DISTRACTORS, Distractors
from agentgym.noise.spec import KINDS, PRESETS, NoiseSpecError, apply_noise, format_noise, parse_noise
from agentgym.noise.user import Ambiguity, GoalShift, Typos

__all__ = [
    "ActionConstraint",
    "Ambiguity",
    "Corruption",
    "Distractors",
    "FAILURE_MODES",
    "GoalShift",
    "KINDS",
    "Latency",
    "MAX_DISTRACTORS",
    "NoiseSpecError",
    "PRESETS",
    "ToolFailure",
    "Typos",
    "apply_noise",
    "format_noise",
    "parse_noise",
]
