"""The dialog family's tools: search, details, availability, book, cancel, and the bookings read back."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from operator import attrgetter
from types import MappingProxyType
from typing import Annotated, Any, Literal

from agentgym.core.task import Task, WorldEvent
from agentgym.core.tools import READ, WRITE, Bounds, MaxLen, ToolError, Toolkit, tool
from agentgym.envs.dialog.domain import Domain
from agentgym.envs.dialog.tasks import RATING_RANGE, Booking, Place, World, keep

__all__ = ["DialogToolkit", "PAGE_SIZE"]

PAGE_SIZE = 5
_RATING = attrgetter("rating")
Day = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
Slot = Literal["morning", "afternoon", "evening"]
Id = Annotated[str, MaxLen(64)]


@lru_cache(maxsize=None)
def _value_ranges(domain: Domain) -> Mapping[str, tuple[float, float]]:
    """The brief's ranges of a place's rating and price in `domain` (shared, read-only)."""
    return MappingProxyType({"rating": RATING_RANGE, "price": (domain.price_min, domain.price_max)})


class DialogToolkit(Toolkit):
    """Tools over a dialog world. Write tools record `WorldEvent`s the user reacts to.

    `value_ranges` holds the ranges the brief states for a place's rating and price: a
    corrupted lone value (`agentgym.noise` corruption) stays inside them.
    """

    def __init__(self, world: World) -> None:
        self.world = world
        self._events: list[WorldEvent] = []
        self._ranked: list[Place] | None = None

    @property
    def value_ranges(self) -> Mapping[str, tuple[float, float]]:
        # Looked up, not held: the shared read-only table stays out of a deep copy of the env.
        return _value_ranges(self.world.domain)

    def _ranked_places(self) -> list[Place]:
        """The places best rated first, ties in id order: the order search results come in.
        Sorted on the first search without filters (many episodes never make one; places never
        change) and kept here rather than on the world, which reads leave as they found it."""
        if self._ranked is None:
            self._ranked = sorted(self.world.places, key=_RATING, reverse=True)  # stable sort
        return self._ranked

    def drain_events(self) -> list[WorldEvent]:
        """The world changes since the last call, oldest first."""
        events, self._events = self._events, []
        return events

    def _place(self, item_id: str) -> Place:
        place = self.world.by_id.get(item_id)
        if place is None:
            raise ToolError(f"no {self.world.domain.noun} with id '{item_id}'")
        return place

    @tool(kind=READ)
    def search(
        self,
        category: Annotated[str, MaxLen(64)] | None = None,
        area: Annotated[str, MaxLen(64)] | None = None,
        max_price: Annotated[int, Bounds(ge=0)] | None = None,
        min_rating: Annotated[float, Bounds(ge=0, le=5)] | None = None,
        amenities: list[str] | None = None,
        page: Annotated[int, Bounds(ge=1, le=100)] = 1,
    ) -> dict[str, Any]:
        """Search the places of this domain; every filter is optional.

        Args:
            category: Only places of this category (cuisine, style, type ...), as listed in the brief.
            area: Only places in this area.
            max_price: Only places priced at most this much.
            min_rating: Only places rated at least this much.
            amenities: Only places that have all of these amenities.
            page: The page of results, 5 per page, best rated first.
        """
        world = self.world
        dom = world.domain
        if category is not None and category not in dom.categories:
            raise ToolError(f"unknown {dom.category_label} '{category}'; known: {', '.join(dom.categories)}")
        if area is not None and area not in dom.areas:
            raise ToolError(f"unknown area '{area}'; known: {', '.join(dom.areas)}")
        for a in amenities or ():
            if a not in dom.amenities:
                raise ToolError(f"unknown amenity '{a}'; known: {', '.join(dom.amenities)}")
        # Filtering keeps the places' order, and the ranking is a stable sort: filtering the
        # ranked places and ranking the places a filter kept give one list, and the second
        # sorts only the hits (the whole ranking is made, once, for a search without filters).
        hits = self.world.places
        filtered = False
        for kind, value in (("category", category), ("area", area), ("price", max_price), ("rating", min_rating)):
            if value is not None:
                hits, filtered = keep(hits, kind, value), True
        for a in amenities or ():
            hits, filtered = keep(hits, "amenity", a), True
        hits = sorted(hits, key=_RATING, reverse=True) if filtered else self._ranked_places()
        total = len(hits)
        pages = max(1, -(-total // PAGE_SIZE))
        chunk = hits[(page - 1) * PAGE_SIZE: page * PAGE_SIZE]
        return {"results": [p.summary() for p in chunk], "total": total, "page": page, "pages": pages}

    @tool(kind=READ)
    def get_details(self, item_id: Id) -> dict[str, Any]:
        """Everything known about one place, including its amenities.

        Args:
            item_id: The place's id, as returned by search.
        """
        return self._place(item_id).details()

    @tool(kind=READ)
    def check_availability(self, item_id: Id, day: Day, slot: Slot) -> dict[str, Any]:
        """Whether a place is open to book on a day and time slot (false when it is closed or full then;
        the user's own bookings never change it).

        Args:
            item_id: The place's id.
            day: The day of the week.
            slot: The time of day.
        """
        place = self._place(item_id)
        return {"item_id": item_id, "day": day, "slot": slot, "available": place.is_open(day, slot)}

    @tool(kind=WRITE)
    def book(self, item_id: Id, day: Day, slot: Slot) -> dict[str, Any]:
        """Book a place for the user on a day and time slot.

        Args:
            item_id: The place's id.
            day: The day of the week.
            slot: The time of day.
        """
        place = self._place(item_id)
        if not place.is_open(day, slot):
            raise ToolError(f"{place.name} is fully booked on {day} {slot}")
        booking = Booking(id=f"B{len(self.world.bookings) + 1}", item_id=item_id, day=day, slot=slot)
        self.world.bookings[booking.id] = booking
        self._events.append(WorldEvent("booked", {"booking_id": booking.id, "item_id": item_id}))
        return {"booking_id": booking.id, "item_id": item_id, "name": place.name, "day": day, "slot": slot,
                "status": "confirmed"}

    @tool(kind=WRITE)
    def cancel_booking(self, booking_id: Id) -> dict[str, Any]:
        """Cancel an active booking.

        Args:
            booking_id: The booking's id, as returned by book.
        """
        booking = self.world.bookings.get(booking_id)
        if booking is None or not booking.active:
            raise ToolError(f"no active booking with id '{booking_id}'")
        booking.active = False
        self._events.append(WorldEvent("cancelled", {"booking_id": booking_id, "item_id": booking.item_id}))
        return {"booking_id": booking_id, "status": "cancelled"}

    @tool(kind=READ)
    def list_bookings(self) -> dict[str, Any]:
        """Every booking made in this conversation, oldest first, with its status (active or
        cancelled). A book or cancel_booking call that came back as an error (it failed or timed
        out) changed nothing, as this shows.
        """
        world = self.world
        return {"bookings": [{"booking_id": b.id, "item_id": b.item_id, "name": world.by_id[b.item_id].name,
                              "day": b.day, "slot": b.slot, "status": "active" if b.active else "cancelled"}
                             for b in world.bookings.values()]}


def make_toolkit(task: Task) -> DialogToolkit:
    """The default toolkit factory of the dialog family."""
    return DialogToolkit(task.world)
