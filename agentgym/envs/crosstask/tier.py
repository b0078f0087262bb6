"""CrossTask's hard tier: longer sessions whose later requests depend on earlier outcomes.

An explicit ``difficulty="hard"`` draws this tier; a drawn difficulty (None) keeps today's
sessions exactly (`agentgym.envs.crosstask.session.generate_session`), as do easy and medium.

A session of the tier holds 4 to 7 sub-tasks: one dialog booking, every tool-use domain of the
split, and 1 to 4 come-backs to the booking (`agentgym.envs.crosstask.comeback`), with other
work between the booking and its first come-back. Each come-back states what it wants in terms
of the booking as it stands then and of earlier results ("the evening of the same day", "the
next day it's open", "the best-rated place of the same setting (rooftop) in the same area within what's left
of the team's trip allowance once the reimbursement you paid is taken out", "the day of the meeting you
set up for me", "the best-rated one that has the amenity I now need, or cancel"), so its gold,
computed by the reference solver when it starts, depends on the booking sub-task's outcome, on
every come-back before it and on the earlier tool-use requests' gold (a finance slip carries
into the budget); it never returns the booking to a place and time it stood at before. A late
need comes last (it may cancel the booking), a new budget after the other come-backs and every
tool-use request (on train it may need the finance amount and the meeting's day at once). One
whose upstream failed is not offered (it costs only itself).
In 60% of sessions the last come-back is a series instead of a late need
(`agentgym.envs.crosstask.series`): one booking a day for the next 2 to 5 days after the booked
one, or the 2 to 5 before it, or up to the meeting's day, each day the booked place when it is
open then, else the unique best-rated place of the same type (hotel) in the same area (or: in the same
area) no dearer than it that is open then, else none; every day is its own decision and all must hold. The session's
turn budget is `TURNS_SHARE` of its sub-tasks' (a series counting as two follow-ups) and the
brief states it.
The sub-tasks keep their families' generators at the hard level (no family tier: ``tier``
False), so the difficulty is the session's: its length and the links between its requests.
"""

from __future__ import annotations

from typing import Any

from agentgym.core.seeding import fast_stream
from agentgym.core.task import Task
from agentgym.envs.crosstask.comeback import ASKS, MEETING_DAY, NEEDS
from agentgym.envs.crosstask.series import SERIES
from agentgym.envs.crosstask.session import FAMILIES, Segment, generate_session, session_task, sub_seed
from agentgym.envs.dialog.hard_tier import tier_of
from agentgym.envs.tooluse.tasks import SESSION_TIER

__all__ = ["generate", "TIER_RULE"]

#: Sub-tasks in a session of the tier (one more with a series after a late need's place).
SIZE = (4, 6)
#: How often the session closes with a series (`agentgym.envs.crosstask.series`): it takes
#: a late need's place, or comes on top when none was drawn.
SERIES_SHARE = 0.6
#: The tier's turn budget, as a share of its sub-tasks' own: about 1.5 times what the expert
#: takes with noise off, plus slack, and stated in the brief.
TURNS_SHARE = 0.7
#: What the brief adds on the tier.
TIER_RULE = ("Later requests may build on earlier ones (\"the same day\", \"the same area\", \"the booking we "
             "made\", \"the amount you worked out\"): work out what they mean from what the user said, the tools "
             "returned and the earlier requests came to, and check a new time or place with the tools before "
             "you book it. A booking the user no longer wants is cancelled, not left standing. An area's "
             "\"book exactly one\" is about its first request: a later request that asks for more bookings (one a "
             "day) is what the user wants then.")


def generate(seed: int, options: dict[str, Any]) -> Task:
    """The session of `seed`: the tier's when `options` ask for it (`tier_of`), else today's."""
    if not tier_of(options):
        return generate_session(seed, options)
    if options.get("domain") is not None:
        raise ValueError("CrossTask-v0 draws its sub-tasks' domains itself; `domain` is not an option")
    rng = fast_stream(seed, "task/tier")
    split = options.get("split", "train")
    dialog_domain = rng.choice(list(FAMILIES["dialog"].domains(split)))
    tools = [("tooluse", d) for d in FAMILIES["tooluse"].domains(split)]
    rng.shuffle(tools)
    lo, hi = max(1, SIZE[0] - 1 - len(tools)), min(len(ASKS), SIZE[1] - 1 - len(tools))
    asks = list(ASKS)
    rng.shuffle(asks)
    asks = asks[: lo + int(rng.integers(hi - lo + 1))]
    if rng.random() < SERIES_SHARE:
        asks = [a for a in asks if a != NEEDS] + [SERIES]
    # A late need may cancel the booking and a series leaves several, so either comes last; a
    # new budget comes after the others.
    asks.sort(key=lambda a: (a in (NEEDS, SERIES), a == "budget"))
    # At most one request before the booking; after it, other work before each come-back.
    before = tools[: int(rng.integers(2)) if len(tools) > 1 else 0]
    rest = tools[len(before):]
    # The come-backs close the session: the last after every tool-use request, so the last
    # link (a new budget) can build on all of them.
    skip = max(0, len(rest) - len(asks))
    order: list[tuple[str, str]] = before + [("dialog", dialog_domain)] + rest[:skip]
    for k in range(max(len(rest) - skip, len(asks))):
        order += rest[skip + k:skip + k + 1] + [("followup", a) for a in asks[k:k + 1]]
    # One come-back after the calendar request may ask for the meeting's day instead.
    calendar = order.index(("tooluse", "calendar")) if ("tooluse", "calendar") in order else len(order)
    after = [i for i, (family, what) in enumerate(order) if family == "followup" and i > calendar
             and what not in (NEEDS, SERIES, "budget")]
    if after and rng.random() < 0.5:
        order[after[0]] = ("followup", MEETING_DAY)
    segments: list[Segment] = []
    ref = len(before)
    for i, (family, what) in enumerate(order):
        if family == "followup":
            segments.append(Segment(i, "followup", dialog_domain, refers_to=ref, ask=what))
            continue
        sub = FAMILIES[family].generate(sub_seed(seed, i), {"split": split, "domain": what, "difficulty": "hard",
                                                             "tier": False})
        if family == "tooluse":
            # Its user reads a plan as the tool-use tier's does (any question of a plan asks for
            # a yes), since the session's assistants write plans in every form.
            sub.extra[SESSION_TIER] = "hard"
        segments.append(Segment(i, family, what, task=sub))
    return session_task(seed, split, "hard", segments, tier="hard", rule=TIER_RULE, turns_share=TURNS_SHARE)
