"""The user of an itinerary of Dialog's hard tier (`agentgym.envs.dialog.itinerary`): the person
who filled in the request form.

It has said everything on the form (the brief), so it adds nothing and changes nothing; asked
about the form it restates the lines the question is about (a booking named by its label, the
budget, the priorities, the areas, a place twice, or the whole form), and asked whether to
submit it says yes. It judges no place and no plan, and says nothing to bookings: the plan is
judged once, when the agent submits it, so no reply can tell whether a booking is right.
"""

from __future__ import annotations

import re

import numpy as np

from agentgym.core.task import SimulatedUser, Task, UserTurn
from agentgym.envs.dialog.itinerary import LABELS
from agentgym.envs.dialog.itinerary_draw import form_lines, rule_lines

__all__ = ["PlanUser", "answer", "FORM_ANSWER", "OPENING", "SUBMIT_ANSWER"]

#: The user's first message.
OPENING = "Hi! Could you book the plan from my request form, please?"
#: The answer to a message that asks nothing about the form.
FORM_ANSWER = ("Everything I need is on my request form; I have nothing to add. Please book the plan its rules "
               "pick, then submit it.")
#: The answer to a question whether to submit.
SUBMIT_ANSWER = "Yes, please submit it."
#: The topics of a question, by the words that name them.
_SUBMIT = re.compile(r"\b(submit\w*|go ahead|confirm\w*|finali[sz]e\w*|lock (it|this|that) in)\b")
_BOOKINGS = re.compile(r"\bbookings?\s+((?:[a-d]\b(?:\s*(?:,|and|&|or)\s*)?)+)")
_BUDGET = re.compile(r"\b(budget|spend\w*|price\w*|cost\w*|afford\w*|total|money)\b")
_PRIORITY = re.compile(r"\b(priorit\w*|rat(ed|ing|ings)|matters? most|most important|prefer\w*|ties?|tied)\b")
_AREA = re.compile(r"\b(areas?|neighbou?rhoods?|district)\b")
_TWICE = re.compile(r"\b(twice|same place|one place for|a place for two)\b")
_FORM = re.compile(r"\b(form|needs?|requirements?|looking for|what (do|would) you (want|like))\b")
_NO_AREA_RULE = "My form has no rule about areas: two bookings may be in the same area."


def answer(message: str, form: list[str], rules: list[str], distinct_areas: bool) -> str:
    """The user's reply to `message`: the lines of `form` and `rules` it asks about, restated in
    the form's order, then yes to a question whether to submit; `FORM_ANSWER` when it asks
    about none of them."""
    text = message.lower()
    said: list[str] = []
    labels = {x.upper() for m in _BOOKINGS.finditer(text) for x in re.findall(r"\b[a-d]\b", m.group(1))}
    about = [line for line, label in zip(form, LABELS) if label in labels]
    if not about and _FORM.search(text):
        about = list(form)
    if about:
        said.append("My form says: " + " ".join(line[2:] for line in about))
    picked: list[str] = []
    if _TWICE.search(text):
        picked.append(rules[1])
    area = _AREA.search(text)
    if area and distinct_areas:
        picked.append(rules[2])
    if _BUDGET.search(text):
        picked.append(rules[-2])
    if _PRIORITY.search(text):
        picked.append(rules[-1])
    if picked:
        said.append("The rules say: " + " ".join(picked))
    if area and not distinct_areas:
        said.append(_NO_AREA_RULE)
    if _SUBMIT.search(text):
        said.append(SUBMIT_ANSWER)
    return " ".join(said) if said else FORM_ANSWER


class PlanUser(SimulatedUser):
    """See the module docstring."""

    def __init__(self, task: Task, rng: np.random.Generator) -> None:
        gold, domain = task.gold, task.world.domain
        self._form = form_lines(domain, gold)
        self._rules = rule_lines(domain, gold)
        self._distinct = gold.distinct_areas

    def opening(self) -> str:
        return OPENING

    def reply(self, message: str, turn: int) -> UserTurn:
        return UserTurn(answer(message, self._form, self._rules, self._distinct))

    def perturb_text(self, text: str, rng: np.random.Generator) -> tuple[str, list[str]]:
        # Every reply restates the brief's own lines or a stock answer: typos never touch it.
        return text, []
