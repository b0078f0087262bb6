"""`AgentRL/Dialog-v0`: find and book a place for a user whose needs arrive over the dialog."""

from __future__ import annotations

from agentgym.core.env import AgentEnv, EnvParts
from agentgym.envs.dialog.commitments import JUDGE
from agentgym.envs.dialog.hard_tier import generate_task
from agentgym.envs.dialog.hard_user import make_user
from agentgym.envs.dialog.itinerary_parts import make_plan_toolkit, score_dialog

__all__ = ["DialogEnv"]


class DialogEnv(AgentEnv):
    """Find and book a place for a user whose needs arrive over the conversation.

    ## Description
    A user wants a place found and booked: a cafe, a restaurant, a stay, a coworking space or an
    event venue. Their needs arrive over the conversation: some up front (the time, usually),
    the rest only when asked ("what's your budget?"), and on medium and hard tasks one that the
    user thinks of later ("my friend says I'll need outlets"). Each episode draws a procedurally
    generated world of 30-80 places with a category, an area, a price, a rating, amenities and
    weekly availability. A reference solver fixes the gold: the exact set of places that meet
    every constraint at the wanted time (up to six; goals that more places would meet are
    redrawn). Goals are also drawn so that asking is needed: no agent that never asks can reach
    the gold before the user's patience runs out, neither one walking the search results in a
    naive order (best rated or cheapest first: at least the patience plus two decoys outrank
    every gold place) nor one that learns each need a rejection names and books the first place
    fitting all it heard (`agentgym.envs.dialog.tasks.guessable`). (A world with no such goal in
    256 draws would keep its smallest goal; none of 6,000 generated tasks needed that.)

    The user (`agentgym.envs.dialog.user`, described for newcomers in docs/USERS.md) knows what
    it knows. It has every need it states up front or when asked, and a late need from the
    earlier of its due turn and the agent's first proposal or booking; at that commitment the
    late needs arrive as the user coming back to what was agreed ("Oh, one more thing: ... Does
    Glass Hall still work?"), and its next reply to a message tells the truth about it. It
    reads every message with the shared rule-based understanding engine
    (`agentgym.users.understanding`): whole words, inflections, synonyms and paraphrases of every
    slot, questions and requests in any form (one may list the values it offers), several slots
    per message, exclusions ("no need to tell me the price yet") and statements that only
    mention a slot; an open question in any form gets one need not yet stated, or "that's
    everything I can think of for now"; small talk gets a friendly word; a message it cannot
    place, or a bare list of keywords, gets a request to rephrase.

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
    `check_availability`, `book`, `cancel_booking`, and `list_bookings`, which reads back every
    booking and its status (a `book` or `cancel_booking` that failed or timed out changed nothing,
    as it shows). Malformed or invalid calls come back as `[error CODE] ...` and count against the
    agent; a tool never runs on invalid arguments. A proposal in a message ("How about Harbor
    Grill?", by name or id; among several places named, the one recommended: "I'd go with A,
    though B is also an option") is judged exactly like a booking: the needs the user has then
    and the place's availability at the wanted time (or at the day and time the proposal names).
    A rejection always names its reason.

    ## Reward
    0 on every step but the last; then the share of goal constraints the single active booking
    meets (0 with no booking or with several). Success when all are met.

    ## Termination
    Terminated when the user accepts a booking (only when the one active booking meets every
    need it has and no late need is pending, so the user and the score agree; it hears of the
    booking from the assistant, so it accepts at the assistant's next message after it) or gives up;
    truncated at the turn budget (16 / 20 / 24 turns by difficulty). Patience: a proposal or
    booking that breaks a need the user had costs one, and so does every repeat of a question it
    already answered after the first; the user warns when one miss is left and gives up at the
    second, on every difficulty (the first never ends the dialog). A place that breaks only a
    need that arrived after it was proposed or booked costs nothing. A Gymnasium `TimeLimit`
    around the env (`gym.make(id, max_episode_steps=N)`) truncates at step N in its own `step`;
    ask `env.unwrapped.episode_summary()` for the summary then (`max_turns` sets the budget).

    ## Difficulty
    `easy`: 3 constraints (the time and two attributes), none late. `medium`: 5, of which 1
    late. `hard`: 6, of which 1 late. The user states the time up front (7 tasks in 10), and
    one attribute up front only where the needs it still holds back until asked outnumber its
    patience: each reasoned rejection teaches a sprayer one need. A late need arrives at its
    due turn (medium: turn 5-10, hard: 6-12) or at the agent's first proposal or booking,
    whichever comes first: waiting dodges nothing. An explicit `hard` is the hard tier (below).

    ## Hard tier
    An explicit `difficulty="hard"` makes the hard tier (`agentgym.envs.dialog.hard_tier`): the
    hard level above, harder by reasoning, not by luck. A drawn difficulty (`difficulty=None`,
    what `core-v0` and training use) and a cross-task session's dialog sub-task keep drawing the
    levels above, unchanged; a task of the tier says so in its card (`info["task"]["tier"] ==
    "hard"`), and its brief adds the rule below.

    * Needs that no place meets all at once. The goal is drawn around a target place: four of its
      attributes and a time it is open (one attribute arrives late, as on the hard level; a budget
      among them lies zero to two price steps above the target's price, so it points at no
      place), and one need the target lacks (an amenity, a budget one price step under its price, or a rating half
      a point above its own), asked for like the others. No place meets every need at the wanted
      time, and at least one other need could give way too (some place meets all the rest), so
      a compromise the agent picks on its own may be the wrong one.
    * The user has priorities (`agentgym.envs.dialog.hard_user`). When the agent says that
      nothing meets everything, or asks which need could give way, in its own words ("Would you
      be willing to compromise?", "Which matters least to you?"), the user first says what it has
      not said yet (a late need arrives then; a need it holds back until asked it now states,
      giving nothing up); once every need it has is said and truly no place meets them all, it
      gives up the one that matters least ("If something has to give, it doesn't need to have a
      projector."); if some place does fit, it asks the agent to look again. None of this costs
      patience. Until it agrees, a place that breaks that need is rejected for it like any other.
      Places the message names beside the question are options, not proposals: none is judged
      before the user gives way; then the one the message ties to the need given up ("if the area
      can go, X", "without the stage: X", "the parking (then X)", "X (drop the sea view)") is
      taken as the agent's proposal, and those tied to other needs are set aside
      (`agentgym.envs.dialog.options`). A message that ties none is read as any other.
      Asked about one need it keeps ("Would you be open to another area?"), it says no, that one
      matters, before the rest; asked about the one it would give up ("Is the budget firm?"), it
      gives it up as above. Once it has, a statement that restates it ("since you can do without
      a projector, I'll book X") is answered as any message is.
    * The gold is then the places that meet every need the user keeps, at the wanted time (one
      to six, the target among them), by the reference solver; the scorer judges the need given
      up no more. A booking of a compromise the user did not agree to breaks a need the goal
      still holds, and never succeeds. A goal shift (noise) moves the time to one where the
      conflict holds too.
    * A need that comes only after a booking. One more need (an amenity) comes to the user only
      once a place it would accept is booked: no question, proposal or turn brings it sooner.
      The brief says so: two needs come later, the first at the latest at a proposal, a booking,
      a claim that nothing fits or a question of what can give way, the second only after such
      a booking. No place the user settled on has it, so it always rules out the
      booking made ("Oh, one more thing: it needs to have a gym. Does X still work?"), and no
      place meets it with every need kept either: the agent must say that X no longer fits,
      cancel it, say that nothing fits, and ask again; the user gives up a second need (drawn
      among those it kept; asked to give up the new one, it says that one matters), and the
      gold is then the places meeting all the rest (one to six). A session left with the first
      booking, or with two, fails.
    * The day counted from today. The brief says which day today is ("Today is Tuesday."), and
      the user names the wanted day by how many days it is from today ("I need it the day after
      tomorrow, in the evening."; today, tomorrow, the day after tomorrow, three to six days from
      today: one reading each, never a weekday name); a booking or proposal on another day
      breaks the time. The day today is comes from a stream of its own, so it moves neither the
      world nor the goal.
    * Two kinds of task. One hard task in three (a stream of its own, `task/kind`) is the
      single booking above; the other two are an itinerary (`agentgym.envs.dialog.itinerary`),
      should the world carry one (else the single booking): the brief holds a request form of
      four or five bookings in time order, each with a category and up to one more need (an
      area, an amenity, a rating floor), the first at a day counted from today ("the day after
      tomorrow, in the evening"), each later one from an earlier booking ("two days after
      booking A, in the morning"), and rules for the whole plan, numbered, boundaries written
      out: each booking meets its needs and is free at its time; no place twice; no two
      bookings in one area; one combined budget ("a total of exactly 140 is fine"), drawn in
      the lower half of the totals of plans that keep the other rules, below the total of
      every plan the objective would pick without it and never so low that every plan that fits
      ties on the objective, so few of the plans fit and finding the
      one the objective picks is a search over the whole plan, not a booking-by-booking choice;
      and, drawn alike, one objective: priorities in a drawn order (the plan whose booking C is
      rated highest; among those, the one whose booking A is; ...) or the total (the plan whose
      bookings' ratings add up to the most). Each booking is drawn valid at its time: its category
      has two or more places open then, and each further need is met by two or more of those left
      (and not all), so it has two to seven places open at its time that meet its needs, found
      over paged searches and one availability check each. The user has said everything on the
      form (`agentgym.envs.dialog.itinerary_user`): asked about a booking (by its label), the
      budget, the priorities, the areas, a place twice or its needs, it restates those lines of
      the form; anything else gets "everything I need is on my request form". It judges no place
      and takes bookings silently; the agent calls `submit_plan` (a terminal tool of these tasks
      alone), and the plan is judged then, all or nothing: one active booking per booking of the
      form at its time, nothing else, keeping every rule and tying the best plan on the objective
      (every such plan is accepted; the reference solver is a branch and bound over the plans). The score is the share of bookings that meet their needs, plus one for
      the plan's rules and one for the user's yes to the plan submitted (below), over their count
      plus two; a plan submitted without that yes fails, and its score says so. The user has no goal shift and nothing to
      blur there.
    * The plan agreed before it is submitted (`agentgym.envs.dialog.itinerary_twists`). The user
      must hear the whole plan and say yes: a message naming one place per booking (by name or
      id; a place counts for the booking of its category, at that booking's day and time, one
      reading, as no two bookings share a category), as a list, a table or prose, with a question whether it is fine ("Shall I book
      these?", "Does this plan work for you?", "Want me to go ahead?": the shared engine's
      confirmations and a few ways to ask for approval) gets "Yes, that plan works for me"; a
      question without a whole plan gets a request for the bookings it lacks, but for one whose
      places are all of the plan the user last said yes to ("Next: may I book X as booking B?"),
      which gets the yes to that plan, restated. The yes says the
      user heard the plan, never that it is right (a user refusing exactly the wrong plans would
      leak the gold). A plan counts only when its active bookings are the places of the plan the
      user last said yes to: submitted without that yes (none, a yes to another plan, or the
      question in the same turn as the call, which the user never hears) it fails.
    * A mind that changes (half the itineraries, a stream of its own, `task/plan_mind`). The
      first whole plan the user hears gets, instead of a yes, one booking of the form revised
      ("I've changed my mind about booking B. My form's line for it is now: ..."): a need it did
      not have (an area, an amenity, a rating floor) or its floor raised, drawn so that no place
      any accepted plan books for it meets it; the best plan changes (often other bookings too:
      budget, areas), and the gold becomes the reference solver's over the revised form. The
      user restates the revised line from then on; the next whole plan gets a yes. What triggers
      it is hearing a plan, any plan: the answer never depends on the gold.
    * A world that moves (half the itineraries, `task/plan_move`). At the first submission with
      a yes, the place every accepted plan books for one booking is taken at that booking's time:
      `submit_plan` cancels a booking of it, answers what changed ("X (id) was just taken on
      tuesday evening ... Nothing was submitted") and submits nothing; the gold becomes the
      reference solver's over the moved world (drawn so that some plan keeps every rule; the
      plans tying the best are all accepted), and a new yes is needed. It cannot be dodged (it
      comes at the submission, whatever the agent did before) and comes at most once.
    * The brief states all three, and the turn budget of an itinerary: 34 (the expert's most
      turns without noise, 20, times 1.5, plus four).
    * The turn budget (24) and patience (two misses) are the hard level's. No never-ask agent can
      reach the gold of the kept needs (`guessable`), and none gets past the conflict without
      saying so.

    ## Splits
    `train`: cafes, restaurants, stays. `test`: coworking, event_venues (unseen domains).

    ## Noise
    Every `agentgym.noise` kind composes with it, as a Gymnasium wrapper around the env
    (`gym.make(id, noise="...")` adds them and `env.spec.additional_wrappers` lists them); each acts
    only in its own `reset` and `step`, so `env.unwrapped` is the env without noise. A goal shift
    moves the wanted time (announced from turn 2-4, or on seeing the first booking) to one where
    the goal stays out of a never-ask agent's reach (none such: no shift). Typos land only on
    messages that carry something (never a stock reply such as "Okay. Please find something
    that fits and book it.") and never inside a place's name or id, a category, area or amenity
    of the brief, a day or a time of day (`agentgym.envs.dialog.typos`). A corrupted rating or
    price of a lone result stays inside the brief's ranges (`DialogToolkit.value_ranges`).

    ## Registered ids
    `AgentRL/Dialog-v0`.

    ## Version history
    * v0: initial release. The user's knowledge model (late needs that arrive at the first
      commitment, reasoned rejections, a patience of two misses, repeated questions) and
      `list_bookings` came with issue #26.
    """

    family = "dialog"
    parts = EnvParts(generate_task, make_plan_toolkit, make_user, score_dialog, judge=JUDGE)
