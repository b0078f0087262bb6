"""What happens to an itinerary of Dialog's hard tier between its search and its submission:
the plan agreed before it is submitted, a mind that changes, a world that moves.

`PlanState` is the one record the itinerary's user (`agentgym.envs.dialog.itinerary_user`), its
`submit_plan` (`agentgym.envs.dialog.itinerary_parts`) and its scorer share, kept in
``task.extra["plan"]``: the plan the user last said yes to, and the two twists drawn for the task.

* A changed mind (`Mind`, half the tasks): the first time the user hears a whole plan it says no
  yes yet, but revises one booking of its form (a need that booking did not have: an area, an
  amenity, a rating floor, or a floor raised), restating the whole revised line. The need is
  drawn so that no place of any plan the first gold accepts for that booking meets it, so the
  best plan changes (other bookings may move too: the budget, the areas); the gold becomes the
  reference solver's over the revised form. The trigger is hearing a plan, any plan: what the
  user says never depends on the gold.
* A world that moves (`Move`, half the tasks, independently): at the first submission the user
  agreed to, the one place every plan of the gold (after any changed mind) books for one booking
  is taken at that booking's time; `submit_plan` says so, cancels a booking of it, and submits
  nothing. The taking is drawn so that some plan still keeps every rule; the gold becomes the
  reference solver's over the world as it then is. A new yes is needed before the next submission.

Both come from streams of their own, so they move neither the world nor the form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentgym.core.seeding import stream_bits
from agentgym.envs.dialog.itinerary import PRIORITY, Leg, PlanGold, candidates, meeting, settle
from agentgym.envs.dialog.tasks import Place, World

__all__ = ["Mind", "Move", "PlanState", "draw_state", "solve", "revised_line"]

#: The rating floors a changed mind may state (a leg's own floor only ever rises).
_FLOORS = (3.5, 4.0, 4.5)


@dataclass(frozen=True, slots=True)
class Mind:
    """A booking the user revises on hearing the first plan: its index, the revised leg and
    the gold of the revised form."""

    leg: int
    revised: Leg
    gold: PlanGold


@dataclass(frozen=True, slots=True)
class Move:
    """A place taken at the first agreed submission: the booking's index, the place's id and
    the gold of the world without it."""

    leg: int
    item_id: str
    gold: PlanGold


@dataclass(slots=True)
class PlanState:
    """The shared record of one itinerary episode (see the module docstring).

    The twists are worked out when first asked for (`mind`, `move`), not at reset: most of a
    reset's time would go to them otherwise. The world they read changes only by the move
    itself, which asks for both first, so they are the same whenever asked."""

    world: World = field(repr=False)
    first: PlanGold = field(repr=False)
    #: The bits each twist is drawn with; None where the task has none of it.
    mind_bits: int | None = None
    move_bits: int | None = None
    #: The plan (place ids, in leg order) the user last said yes to; None before a yes or
    #: once something changed after it.
    agreed: tuple[str, ...] | None = None
    #: Whether the user has stated its changed mind, and whether the world has moved.
    changed: bool = False
    moved: bool = False
    #: Whether the plan submitted was the one the user last said yes to (None: not submitted).
    consented: bool | None = None
    #: Every yes the user gave, as (turn, plan), for the record.
    yeses: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)
    _drawn: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def mind(self) -> Mind | None:
        """The changed mind of the task, None where it has none."""
        if "mind" not in self._drawn:
            bits = self.mind_bits
            self._drawn["mind"] = None if bits is None else _mind(self.world, self.first, bits)
        return self._drawn["mind"]

    @property
    def move(self) -> Move | None:
        """The moved world of the task (after any changed mind), None where it has none."""
        if "move" not in self._drawn:
            mind, bits = self.mind, self.move_bits
            self._drawn["move"] = None if bits is None else \
                _move(self.world, mind.gold if mind is not None else self.first, bits)
        return self._drawn["move"]


def solve(world: World, legs: tuple[Leg, ...], order: tuple[int, ...], budget: int, distinct: bool,
          without: tuple[int, str] | None = None, objective: str = PRIORITY) -> PlanGold | None:
    """The gold of `legs` over `world` under `objective` as the reference solver finds it
    (`best_plan`), the place `without` names (leg index, place id) not available to its leg;
    None when no plan keeps the rules."""
    options: list[list[Place]] = []
    for i, leg in enumerate(legs):
        opts = candidates(world, leg)
        if without is not None and without[0] == i:
            opts = [p for p in opts if p.id != without[1]]
        options.append(opts)
    return settle(legs, options, order, budget, distinct, objective)


def _solve_revised(gold: PlanGold, options: list[list[Place]], i: int, revised: Leg) -> PlanGold | None:
    """`solve(world, legs, ...)` of `gold`'s legs with leg `i` replaced by `revised`, given each
    of `gold`'s legs' `candidates` over `world` in `options`. A revision only adds a need or
    raises a floor, so the places that meet it are those of the leg's candidates that meet it, in
    the same (best-first) order: the other legs' places are not searched again."""
    revised_options = [*options[:i], meeting(options[i], revised.needs), *options[i + 1:]]
    return settle(gold.legs[:i] + (revised,) + gold.legs[i + 1:], revised_options, gold.priority, gold.budget,
                  gold.distinct_areas, gold.objective)


def draw_state(world: World, gold: PlanGold, seed: int) -> PlanState:
    """The twists of the itinerary of `seed` over `world` and its first `gold`: each drawn
    (from a stream of its own) in half the tasks, kept only where the draw carries it."""
    mind_bits = stream_bits(seed, "task/plan_mind")
    move_bits = stream_bits(seed, "task/plan_move")
    return PlanState(world, gold, mind_bits >> 1 if mind_bits & 1 else None,
                     move_bits >> 1 if move_bits & 1 else None)


def _mind(world: World, gold: PlanGold, bits: int) -> Mind | None:
    """A revision of one booking that no plan the gold accepts meets, with the new gold; None
    when there is none. The revisions are walked from one `bits` picks, in turn: the first that
    leaves a plan keeping the rules is drawn (one solve for most tasks, not one per revision)."""
    dom = world.domain
    found: list[tuple[int, Leg]] = []
    for i, leg in enumerate(gold.legs):
        kinds = {k for k, _ in leg.needs}
        floor = next((v for k, v in leg.needs if k == "rating"), None)
        booked = [world.by_id[plan[i]] for plan in gold.accepted]
        revisions: list[tuple[tuple[str, Any], ...]] = []
        if "area" not in kinds:
            revisions += [(*leg.needs, ("area", a)) for a in dom.areas]
        revisions += [(*leg.needs, ("amenity", a)) for a in dom.amenities if ("amenity", a) not in leg.needs]
        for value in _FLOORS:
            if floor is None:
                revisions.append((*leg.needs, ("rating", value)))
            elif value > floor:
                revisions.append(tuple(("rating", value) if k == "rating" else (k, v) for k, v in leg.needs))
        for needs in revisions:
            if not meeting(booked, needs):
                found.append((i, Leg(leg.label, needs, leg.day, leg.slot, leg.when)))  # `replace(leg, needs=...)`
    options = [candidates(world, leg) for leg in gold.legs] if found else []
    for k in range(len(found)):
        i, revised = found[(bits + k) % len(found)]
        new = _solve_revised(gold, options, i, revised)
        if new is not None:
            return Mind(i, revised, new)
    return None


def _move(world: World, gold: PlanGold, bits: int) -> Move | None:
    """A place to take: the one every accepted plan books for some booking, such that a plan
    still keeps the rules without it; the bookings walked from one `bits` picks, the first that
    carries it drawn; None when none does."""
    n = len(gold.legs)
    for k in range(n):
        i = (bits + k) % n
        held = {plan[i] for plan in gold.accepted}
        if len(held) != 1:
            continue
        item = held.pop()
        new = solve(world, gold.legs, gold.priority, gold.budget, gold.distinct_areas, without=(i, item),
                    objective=gold.objective)
        if new is not None:
            return Move(i, item, new)
    return None


def revised_line(line: str, label: str) -> str:
    """How the user states a changed mind about booking `label`, whose revised form line is
    `line` ("- Booking B: ...")."""
    return (f"Before I say yes: I've changed my mind about booking {label}. My form's line for it is now: "
            f"{line[2:]} Everything else on the form stays as it was.")

