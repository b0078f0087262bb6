"""Each speed kernel of `agentgym.envs.tooluse._fast` equals the plain code it stands for."""

from __future__ import annotations

import dataclasses
import random
import re
from collections import OrderedDict
from typing import Any

import pytest

from agentgym.core.action_types import MAX_CALLS_PER_TURN
from agentgym.core.seeding import fast_stream
from agentgym.envs.tooluse import _fast
from agentgym.envs.tooluse.base import Draws, Gold, Step, compose_brief, restated
from agentgym.envs.tooluse.domains import DomainSpec, Generated, load_domains
from agentgym.envs.tooluse.domains.calendar import WORK_MIN, Person
from agentgym.envs.tooluse.domains.calendar import _fits as calendar_fits
from agentgym.envs.tooluse.domains.calendar import _fits_plain as calendar_fits_plain
from agentgym.envs.tooluse.domains.calendar import vocab as calendar_vocab
from agentgym.envs.tooluse.domains.finance import _CODES
from agentgym.envs.tooluse.domains.finance_tier import QUOTE
from agentgym.envs.tooluse.paging import NamedRow, paged_plan
from agentgym.envs.tooluse.policies import policy_lines
from agentgym.envs.tooluse.tasks import generate_task, tier_turns

_TIERED = sorted(name for name, spec in load_domains().items() if spec.hard_toolkit is not None)


def _hardened(spec: DomainSpec, seed: int) -> Generated:
    """A hard task of the domain as the tier makes it, before its gold reads later pages."""
    gen = spec.generate(Draws(fast_stream(seed, f"task/world/{spec.name}")), "hard")
    assert spec.harden is not None
    return spec.harden(Draws(fast_stream(seed, f"task/tier/{spec.name}")), gen)


def _both(spec: DomainSpec, gen: Generated, plan: tuple[Step, ...]) -> None:
    assert spec.hard_toolkit is not None
    fast = _fast.paged_plan(plan, spec.hard_toolkit(gen.world), spec.toolkit, spec.paged)
    assert fast == paged_plan(plan, spec.hard_toolkit(gen.world), spec.paged)


@pytest.mark.parametrize("domain", _TIERED)
def test_the_tier_toolkit_pages_its_base_toolkit(domain: str) -> None:
    """The kernel's invariant: the tier's toolkit is its domain toolkit's direct subclass."""
    spec = load_domains()[domain]
    assert spec.hard_toolkit is not None and spec.hard_toolkit.__bases__ == (spec.toolkit,)


@pytest.mark.parametrize("domain", _TIERED)
def test_paged_plan_equals_plain(domain: str) -> None:
    """On the tier's golds, its goal shifts' golds, plans with an unknown argument (a ToolError)
    and plans that name a page already."""
    spec = load_domains()[domain]
    for seed in range(300):
        gen = _hardened(spec, seed)
        _both(spec, gen, gen.gold.plan)
        for shift in spec.shifts(gen.world, gen.goal.job) if spec.shifts else ():
            _both(spec, gen, shift.gold.plan)
        if seed % 10 == 0:
            broken = tuple(Step(s.name, {k: "nobody" if isinstance(v, str) else v for k, v in s.arguments.items()})
                           if s.name in spec.paged else s for s in gen.gold.plan)
            _both(spec, gen, broken)
            paged_at = tuple(Step(s.name, {**s.arguments, "page": 1}) if s.name in spec.paged else s
                             for s in gen.gold.plan)
            _both(spec, gen, paged_at)


def test_paged_plan_leaves_a_plan_without_paged_calls() -> None:
    spec = load_domains()[_TIERED[0]]
    gen = _hardened(spec, 0)
    plan = tuple(s for s in gen.gold.plan if s.name not in spec.paged)
    assert _fast.paged_plan(plan, spec.hard_toolkit(gen.world), spec.toolkit, spec.paged) == plan
    assert isinstance(gen.gold, Gold)


def test_all_work_equals_plain() -> None:
    rng = random.Random(20261202)
    for _ in range(400):
        people = [Person(f"P-{i}", "A B", "City", rng.randint(-12, 14), rng.randint(0, 23))
                  for i in range(rng.randint(1, 6))]
        duration = rng.choice((15, 30, 45, 60, 90, 120, 480, 500))
        works = _fast.all_work(people, duration, WORK_MIN)
        for start in range(-1440, 2 * 1440, 10):
            assert works(start) == all(p.works(start, duration) for p in people)


def test_finance_values_are_computed_once_as_plain() -> None:
    """The finance world's memo of its currency values holds what the plain formula gives."""
    spec = load_domains()["finance"]
    for seed in range(50):
        world = _hardened(spec, seed).world
        for day in range(0, 365, 7):
            for currency in _CODES:
                first = world.rate_e6(currency, "EUR", day)
                assert world._value(currency, day) == world._value_of(currency, day)
                assert world.rate_e6(currency, "EUR", day) == first


def test_named_last_equals_plain() -> None:
    """On random rows (plain values, rows with a key, values that are not plain, values equal
    across types) and later calls with nested arguments."""
    rng = random.Random(20261203)
    pool: list[Any] = ["a", "b", "c", 1, 2, True, 1.0, 2.5, None, ("t",), "zz"]

    def value(depth: int) -> Any:
        roll = rng.random()
        if depth < 2 and roll < 0.15:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        if depth < 2 and roll < 0.3:
            return OrderedDict((f"k{i}", value(depth + 1)) for i in range(rng.randint(0, 3)))
        return rng.choice(pool)

    for _ in range(3000):
        key = rng.choice(("", "id"))
        settles = NamedRow(key, rng.randint(0, 2))
        rows = [rng.choice(pool) if not key else {"id": rng.choice(pool)} for _ in range(rng.randint(0, 6))]
        later = tuple(Step("call", {f"a{i}": value(0) for i in range(rng.randint(0, 4))})
                      for _ in range(rng.randint(0, 4)))
        assert _fast.named_last(rows, later, settles) == settles(list(rows), later)


def _state(world: Any) -> dict[str, Any]:
    """A world's state (its slots, the finance world's memo of rates left out) for comparison."""
    names = [n for cls in type(world).__mro__ for n in getattr(cls, "__slots__", ()) if n != "_values"]
    return {n: repr(getattr(world, n)) for n in names}


@pytest.mark.parametrize("domain", sorted(n for n, s in load_domains().items() if s.draft is not None))
def test_a_draft_is_generates_task_less_what_the_tier_remakes(domain: str) -> None:
    """`DomainSpec.draft` makes generate's world and brief by the same draws (and, where the tier
    keeps the request, the same request and the gold's kind and traps)."""
    spec = load_domains()[domain]
    assert spec.draft is not None
    for seed in range(200):
        draws = [Draws(fast_stream(seed, f"task/world/{domain}")) for _ in range(2)]
        draft, full = spec.draft(draws[0], spec.tier_base), spec.generate(draws[1], spec.tier_base)
        assert _state(draft.world) == _state(full.world) and draft.brief == full.brief
        assert draft.goal.job == full.goal.job and draft.gold.kind == full.gold.kind
        if draft.goal.request:  # the request kept: all of generate's but the gold's plan and effects
            assert draft.goal == full.goal and draft.gold.traps == full.gold.traps
            assert draft.gold.plan == draft.gold.effects == ()


def _tier_task(spec: DomainSpec, seed: int) -> Generated:
    """The tier's task of `seed` as `generate_task` makes it, before its gold reads later pages."""
    gen = (spec.draft or spec.generate)(Draws(fast_stream(seed, f"task/world/{spec.name}")), spec.tier_base)
    assert spec.harden is not None
    return spec.harden(Draws(fast_stream(seed, f"task/tier/{spec.name}")), gen)


@pytest.mark.parametrize("domain", _TIERED)
def test_the_pages_a_tier_knows_are_the_generic_reading(domain: str) -> None:
    """`Generated.paged`, where a tier's harden sets it, reads its gold as `_fast.paged_plan`
    (the plain reading) does."""
    spec = load_domains()[domain]
    assert spec.hard_toolkit is not None
    for seed in range(1500):
        gen = _tier_task(spec, seed)
        assert gen.paged is not None
        assert gen.paged == _fast.paged_plan(gen.gold.plan, spec.hard_toolkit(gen.world), spec.toolkit, spec.paged), seed


def test_no_meeting_topic_reads_as_a_start_time() -> None:
    """What the calendar tier's reading of its pages rests on: a booking's title never equals a free start."""
    assert not any(re.fullmatch(r"\d\d:\d\d", topic) for topic in calendar_vocab().topics)


def _plain_tier_brief(domain: str, brief: str, job: Any) -> str:
    """The tier's brief as the plain text operations make it from the domain's: its policies
    replaced by the tier's (a finance quote's followed by the quote's rule), then the turn
    budget before them."""
    rules = policy_lines(domain)
    if domain == "finance" and job.kind != "reimburse":
        brief = brief.replace(rules, f"{rules}\n{policy_lines(QUOTE)}")
    else:
        brief = brief.replace(rules, policy_lines(domain, tier=True))
    turns = f"You have {tier_turns(domain)} turns for this request: one reply, with up to {MAX_CALLS_PER_TURN} " \
            "tool calls in it, is one turn."
    return brief if turns in brief else brief.replace("Policies:\n", f"{turns}\nPolicies:\n", 1)


@pytest.mark.parametrize("domain", _TIERED)
def test_the_tier_brief_is_the_domains_with_the_tiers_policies(domain: str) -> None:
    spec = load_domains()[domain]
    for seed in range(300):
        base = (spec.draft or spec.generate)(Draws(fast_stream(seed, f"task/world/{domain}")), spec.tier_base)
        task = generate_task(seed, {"domain": domain, "difficulty": "hard"})
        assert task.brief == _plain_tier_brief(domain, base.brief, task.goal.job), seed


def test_restated_is_the_brief_composed_with_other_policies() -> None:
    facts = ["Today is 2025-03-04.", "Policies: are below."]
    brief = compose_brief("a helper", "Do the job.", facts, "- one\n- two")
    assert restated(brief, "- one\n- two", "- three") == compose_brief("a helper", "Do the job.", facts, "- three")
    assert restated(brief, "- one\n- two", "- three", "Be quick.") == compose_brief("a helper", "Do the job.",
                                                                                  [*facts, "Be quick."], "- three")
    with pytest.raises(ValueError):
        restated(brief, "- one", "- three")


def test_a_gold_with_another_plan_or_traps_is_replaces() -> None:
    gold = Gold("k", (Step("a", {"x": 1}),), (), ("t",), ({"name": "s"},), ({"name": "u"},))
    plan = (Step("b", {}),)
    assert gold.with_plan(plan) == dataclasses.replace(gold, plan=plan)
    assert gold.with_plan(plan, ()) == dataclasses.replace(gold, plan=plan, useful=())
    assert gold.with_traps(("v",)) == dataclasses.replace(gold, traps=("v",))


def test_the_calendar_fit_table_is_the_computed_fits() -> None:
    for duration in (30, 45, 60, 90):
        for start in range(-60, 1500, 15):
            assert calendar_fits(start, duration) == calendar_fits_plain(start, duration)


def test_words_named_equals_plain() -> None:
    """On random texts of letters (some capital), digits, spaces and punctuation, and names
    that are words, parts of words, words with other characters, empty."""
    rng = random.Random(20261204)
    alphabet = "abcdeE z1-:.é"
    for _ in range(4000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        names = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4))) for _ in range(rng.randint(0, 4))]
        names += [w for w in re.findall(r"[a-z]+", text) if rng.random() < 0.5]
        rng.shuffle(names)
        assert _fast.words_named(text, names) == [n for n in names if n in set(re.findall(r"[a-z]+", text))]


_ID_TEXTS = ("Order O-63031 and O-63032 for leila.tran@example.com", "No ids here at all.", "AB-12@x.com and CD-3",
             "e-mail: a.b+c-d@mail-host.co.uk, then O-1", "INC-2048 rolled back; see INC-2047.", "@@ - -- A- -1 A-1-2",
             "VERYLONG-12 AB-12x ab-12 ABCDEF-1 A-00012", "x" * 300 + "@" + "y" * 300, "-" * 50 + "Q-7" + "-" * 50)


@pytest.mark.parametrize("seed", range(6))
def test_ids_read_without_e_mails_where_a_text_has_no_at_sign_as_plain(seed: int) -> None:
    """`plan_values._ids` scans a text with no "@" with `_ID_ONLY`: the same ids as `_ID` finds."""
    from agentgym.envs.tooluse import plan_values

    def plain(text: str) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for m in plan_values._ID.finditer(text):
            out.setdefault(m.group("id") or m.lastgroup or "", set()).add(m.group(0))
        return out

    rng = random.Random(seed)
    pieces = ("O-", "INC-", "ab-", "A", "-", "1", "42", "@", ".", "x", " ", "mail.com", "Q", "_", "é", "\n")
    texts = list(_ID_TEXTS) + ["".join(rng.choice(pieces) for _ in range(rng.randrange(60))) for _ in range(400)]
    for text in texts:
        assert plan_values._ids(text) == plain(text), text
