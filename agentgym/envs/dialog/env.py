"""`AgentRL/Dialog-v0`: find and book a place for a user whose needs arrive over the dialog."""

from __future__ import annotations

from agentgym.core.env import AgentEnv, EnvParts
from agentgym.envs.dialog.commitments import JUDGE
from agentgym.envs.dialog.tasks import generate_task, score_task
from agentgym.envs.dialog.tools import make_toolkit
from agentgym.envs.dialog.user import make_user

__all__ = ["DialogEnv"]


class DialogEnv(AgentEnv):
    """Find and book a place for a user whose constraints arrive over the conversation.

    ## Description
    A user wants a place found and booked: a cafe, a restaurant, a stay, a coworking space or an
    event venue. Their constraints arrive over the conversation: some up front ("a quiet cafe"),
    some only when asked ("what's your budget?"), and on harder tasks some volunteered late ("my
    friend says I'll need outlets"). Each episode draws a procedurally generated world of 30-80
    places with a category, an area, a price, a rating, amenities and weekly availability. A
    reference solver fixes the gold: the exact set of places that meet every
    constraint at the wanted time (up to six; goals that more places would meet are redrawn).
    Goals are also drawn so that asking is needed: among the places open at the wanted time that
    fit what the user states up front, at least the user's patience plus two places outside the
    gold outrank every gold place on rating, and as many on price, each breaking a constraint
    not yet stated (what the user states up front is chosen for that: its lead attribute, or
    only the time, or nothing but the kind of place), so no order of the search results leads a
    never-ask agent to the gold. (A world with no such goal in 64 draws would keep its smallest
    goal; none of 8,000 generated tasks needed that.)

    The user (`agentgym.envs.dialog.user`) reads every message with the shared rule-based
    understanding engine (`agentgym.core.understanding`): whole words, inflections, synonyms and
    paraphrases of every slot, questions and requests in any form, several slots per message,
    exclusions ("no need to tell me the price yet", "besides the area") and statements that only
    mention a slot; an open question ("anything else I should know?") gets one requirement not yet
    stated; small talk ("how's your day going?") asks nothing and gets a friendly word; a message
    it cannot place, or a list of keywords, gets a request to rephrase.

    ## Observation
    Text (`UnicodeText`): on reset the system brief and the user's first message; on each step
    only what is new (tool results, errors, the user's reply), one `[role] text` block per
    message. `info["messages"]` holds the same as OpenAI chat messages, after a step preceded by
    the env's reading of the assistant's turn (its `tool_calls` ids are the `tool_call_id` of the
    tool messages), so the episode's messages render with `apply_chat_template(messages,
    tools=info["tools"])`. `info["tools"]` holds the tool schemas (on reset), `info["task"]` the
    public task card (family, domain, difficulty, split, id), `info["seed"]` the episode seed,
    and the last step's `info["episode_summary"]` success, score and the metric inputs.

    ## Actions and tools
    A string: the assistant's turn. Tool calls as JSON `{"name": ..., "arguments": {...}}`, in
    `<tool_call>` tags, in a fenced json block or OpenAI `tool_calls` (several per turn allowed);
    anything else is a message to the user. Tools: `search`, `get_details`,
    `check_availability`, `book`, `cancel_booking`. Malformed or invalid calls come back as
    `[error CODE] ...` and count against the agent; a tool never runs on invalid arguments. A
    proposal in a message ("How about Harbor Grill?", by name or id) is judged exactly like a
    booking: every constraint and the place's availability at the wanted time (or at the day and
    time the proposal names); a rejected proposal costs patience like a wrong booking.

    ## Reward
    0 on every step but the last; then the share of goal constraints the single active booking
    meets (0 with no booking or with several). Success when all are met.

    ## Termination
    Terminated when the user accepts a booking or gives up (at the first wrong booking or
    proposal, on every difficulty: its patience is 1, so a probe cannot stand in for a question);
    truncated at the turn budget (16 / 20 / 24 turns by difficulty).
    A Gymnasium `TimeLimit` around the env (`gym.make(id, max_episode_steps=N)`, or applied
    by hand) caps the budget at N: the env truncates itself at that step, with its summary.

    ## Difficulty
    `easy`: 3 constraints (the time and two attributes), none late. `medium`: 3-4, one late.
    `hard`: 5-6, of which 2 (of 5) or 3 (of 6) late. A late constraint is revealed only when the
    user volunteers it, after a few turns (medium: turn 5-10, hard: 6-12): asking does not reveal
    it early, and a proposal or booking that breaks it before then is rejected without the reason.

    ## Splits
    `train`: cafes, restaurants, stays. `test`: coworking, event_venues (unseen domains).

    ## Noise
    Every `agentgym.noise` kind composes with it, as a Gymnasium wrapper around the env
    (`gym.make(id, noise="...")` adds them and `env.spec.additional_wrappers` lists them); each acts
    only in its own `reset` and `step`, so `env.unwrapped` is the env without noise. A goal shift
    moves the wanted time (announced from turn 2-4, or on seeing the first booking).

    ## Registered ids
    `AgentRL/Dialog-v0`.

    ## Version history
    * v0: initial release.
    """

    family = "dialog"
    parts = EnvParts(generate_task, make_toolkit, make_user, score_task, judge=JUDGE)
