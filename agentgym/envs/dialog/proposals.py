"""Which place a message proposes, among those it names: one reading for every Dialog user.

A message may name several places: examples of what there is (`aside.examples`), those it sets
aside (`aside.set_aside`), alternatives beside a recommendation, options it labels and then picks by label, or the one its closing
question asks to book. `proposal_of` says which one a person would hear as proposed, or none.
"""

from __future__ import annotations

from agentgym.envs.dialog.aside import asked_about, examples, recommended_by_label, set_aside
from agentgym.envs.dialog.tasks import Place
from agentgym.users.understanding import Reading, resolve_place
from agentgym.users.understanding.look_up import asks_leave_to_look

__all__ = ["places_named", "proposal_of", "unexampled"]


def places_named(reading: Reading, names: dict[str, Place]) -> list[Place]:
    """The distinct places a reading names, in order of mention: each the longest real name (or
    id) that what was written starts with (`resolve_place`)."""
    found: dict[str, Place] = {}
    for key in reading.places:
        place = resolve_place(key, names)
        if place is not None and place.id not in found:
            found[place.id] = place
    return list(found.values())


def unexampled(named: list[Place], reading: Reading, names: dict[str, Place], message: str) -> list[Place]:
    """`named` without the places `message` names only as examples (`aside.examples`: "e.g. X",
    "such as Y"), unless the reading recommends one ("I'd go with something like X") or the
    closing question asks to book it ("For example, X fits. Shall I book it?")."""
    shown = examples(message, named) if message and named else set()
    if not shown:
        return named
    picked = {p.id for k in reading.recommended if (p := resolve_place(k, names)) is not None}
    asked = asked_about(message, named)
    if asked is not None:
        picked.add(asked.id)
    return [p for p in named if p.id not in shown or p.id in picked]


def proposal_of(reading: Reading, names: dict[str, Place], message: str = "") -> Place | None:
    """The one place a reading of `message` proposes: the only place it names, or among several
    the only one it does not set aside (`aside.set_aside`: "Ruled out: B, C", "B was taken"),
    else the one it recommends by the label it gave it (`aside.recommended_by_label`: "A) X ...
    B) Y ... Recommendation: B") or by name ("I'd go with A, though B is also an option"), else
    the only one it does not offer as an alternative, else the one its closing question asks to book
    (`aside.asked_about`: "Only X gets daylight. Should I reserve it?"); None when it names none,
    only one it sets aside and does not ask to book, or several with no choice."""
    named = unexampled(places_named(reading, names), reading, names, message)
    if not named or asks_leave_to_look(message):  # "May I check X first?" proposes nothing
        return None
    if message and (len(named) > 1 or not reading.recommended):  # one place recommended is proposed
        aside = set_aside(message, named)
        kept = [p for p in named if p.id not in aside]
        if len(kept) == 1:
            return kept[0]
        if not kept and len(named) == 1:
            # Named only to say why it will not do ("Only X has live music, and it is not free
            # then. Which need can give way?"), unless the closing question asks to book it.
            return named[0] if asked_about(message, named) is not None else None
        # A place set aside is no recommendation, whatever word stands near it ("I listed X only
        # to show what was there, not as a suggestion").
        named = kept or named
    if len(named) == 1:
        return named[0]

    def ids(keys: tuple[str, ...]) -> set[str]:
        return {p.id for k in keys if (p := resolve_place(k, names)) is not None}

    alternatives = ids(reading.alternatives)
    # A label recommended names its place outright ("A) X ... B) Y ... My recommendation: B"),
    # where a cue's nearest place (Y, before "My recommendation") would be a guess.
    labelled = recommended_by_label(message, named) if message else None
    if labelled is not None:
        return labelled
    recommended = [p for p in named if p.id in ids(reading.recommended) and p.id not in alternatives]
    if len(recommended) == 1:
        return recommended[0]
    rest = [p for p in named if p.id not in alternatives]
    if len(rest) == 1:
        return rest[0]
    return asked_about(message, named) if message else None
