"""ToolUse's hard tier (issue 29): what an explicit ``difficulty="hard"`` makes, and only that.

Results in pages on every domain; order policies that interact by amount, age and membership
tier, with a refund the customer asks for that the policy forbids (orders); a meal cap the
reimbursed total is computed under, and a namesake employee (finance); three time zones with
every earlier free start outside someone's hours, and a namesake attendee (calendar); a
near-duplicate order (orders; its bulk return is tested in ``test_tooluse_orders_bulk``), a longer deploy history and a severity from counts (ops); gold
plans (a change of mind's too) that read each list as far as a careful agent must. Every task is still solved by the expert from what it is shown, and by the oracle.
The default run plays tens of seeds; ``-m slow`` the issue's 500 per split and the heuristic's
falling success with 95% intervals.
"""

from __future__ import annotations

import json
import math
from typing import Any

import gymnasium as gym
import pytest
from optional_steps import SkippingOracle

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.core.tools import PolicyViolation
from agentgym.envs.tooluse.base import DAY_ISO, DAY_WEEKDAY
from agentgym.envs.tooluse.domains import load_domains
from agentgym.envs.tooluse.domains.finance_tier import MEAL_CAP
from agentgym.envs.tooluse.domains.ops import severity_of
from agentgym.envs.tooluse.paging import PAGE_SIZE
from agentgym.envs.tooluse.tasks import (
    TIER_MAX_TURNS,
    generate_task,
    is_tier,
    make_toolkit,
    shift_gold,
    tier_calls,
    tier_turns,
)
from agentgym.eval.episode import run_episode
from agentgym.eval.judging import judge_record

ENV = "AgentRL/ToolUse-v0"
DOMAINS = ("finance", "calendar", "orders", "ops")


def _wins(agent: str, seeds: range, **options: Any) -> int:
    env = gym.make(ENV, **options)
    player = make_agent(agent)
    return sum(run_episode(env, player, seed).episode["success"] for seed in seeds)


# ------------------------------------------------------------------------------ what makes the tier
def test_only_an_explicit_hard_makes_the_tier() -> None:
    drawn_hard = 0
    for seed in range(40):
        drawn = generate_task(seed, {"domain": "orders"})
        assert not is_tier(drawn) and "tier" not in drawn.public()
        if drawn.difficulty != "hard":
            continue
        drawn_hard += 1
        # A drawn hard task is today's hard task: the same as an explicit hard outside the tier.
        kept = generate_task(seed, {"domain": "orders", "difficulty": "hard", "tier": False})
        assert kept.brief == drawn.brief and kept.gold.to_dict() == drawn.gold.to_dict()
        assert kept.max_turns == drawn.max_turns < TIER_MAX_TURNS
    assert drawn_hard
    for difficulty in ("easy", "medium"):
        assert not is_tier(generate_task(3, {"difficulty": difficulty}))
    tier = generate_task(3, {"difficulty": "hard"})
    assert is_tier(tier) and tier.public()["tier"] == "hard" and tier.max_turns == tier_turns(tier.domain)


def _rows(toolkit: Any, step: Any, field: str) -> list[Any]:
    """Every row of a paged call's list, page by page."""
    first = toolkit.invoke(step.name, dict(step.arguments))
    rows = list(first[field])
    for p in range(2, first["pages"] + 1):
        rows += toolkit.invoke(step.name, {**step.arguments, "page": p})[field]
    return rows


def _settling_row(domain: str, tool: str, rows: list[Any], plan: tuple[Any, ...]) -> int | None:
    """The row that settles what a careful agent reads a list for, said per domain apart from
    `paging` (None: the whole list counts)."""
    args = {s.name: s.arguments for s in plan}
    asked = [s.arguments["order_id"] for s in plan if s.name == "get_order"]
    if tool == "get_free_slots":  # earliest first: the start booked is the first that fits everyone
        return rows.index(args["book_meeting"]["start_utc"])
    if tool == "list_orders":  # newest first: the order asked about
        return max(map([r["order_id"] for r in rows].index, asked))  # newest first: the last order asked about
    if tool == "list_accounts":
        return [r["account_id"] for r in rows].index(args["create_transfer"]["from_account"])
    if tool == "search_logs":  # a service's error lines all say the same thing
        assert len({line.split(" ERROR ", 1)[1] for line in rows}) == 1
        return 0
    if tool == "get_deploys":  # oldest first: the cause, and the first deploy after it that ran (or the end)
        cause = [r["version"] for r in rows].index(args["file_incident"]["cause_version"])
        return next((i for i in range(cause + 1, len(rows)) if rows[i]["status"] == "succeeded"), len(rows) - 1)
    assert tool == "list_expenses"  # every approved expense of the month counts
    return None


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_tier_lists_come_in_pages_and_the_gold_reads_them_as_far_as_a_careful_agent(domain: str) -> None:
    spec = load_domains()[domain]
    paged_seen = short = 0
    for seed in range(30):
        task = generate_task(seed, {"domain": domain, "difficulty": "hard"})
        toolkit = make_toolkit(task)
        assert isinstance(toolkit, spec.hard_toolkit)
        plan = task.gold.plan
        every = len(plan)
        for step in plan:
            paged = spec.paged.get(step.name)
            if paged is None or "page" in step.arguments:
                continue
            first = toolkit.invoke(step.name, dict(step.arguments))
            pages = first["pages"]
            assert len(first[paged.field]) <= PAGE_SIZE and (first.get("next_page") == 2) == (pages > 1)
            row = _settling_row(domain, step.name, _rows(toolkit, step, paged.field), plan)
            need = pages if row is None else row // PAGE_SIZE + 1
            later = [s for s in plan if s.name == step.name and s.arguments.get("page")
                     and {k: v for k, v in s.arguments.items() if k != "page"} == step.arguments]
            # The pages up to the one that settles it, in order; none past it.
            assert [s.arguments["page"] for s in later] == list(range(2, need + 1))
            every += pages - need
            short += need < pages
            paged_seen += pages > 1
        lo, hi = tier_calls(domain)
        assert lo <= len(plan) <= every <= hi
    assert paged_seen >= 10
    assert short or domain == "finance"  # finance reads all its expenses, and accounts are short
    # Outside the tier the same tools take no page.
    plain = spec.toolkit.tool_specs()
    assert all("page" not in plain[name].openai_schema()["function"]["parameters"]["properties"] for name in spec.paged)


def test_an_answer_on_page_one_is_read_on_page_one() -> None:
    # The playtest's calendar task (train, seed 4207): the meeting booked starts on page 1 of the
    # free starts, so the gold reads no later page (it read all 7).
    task = generate_task(4207, {"split": "train", "difficulty": "hard"})
    assert task.domain == "calendar"
    reads = [s for s in task.gold.plan if s.name == "get_free_slots"]
    start = next(s for s in task.gold.plan if s.name == "book_meeting").arguments["start_utc"]
    assert len(reads) == 1 and start in make_toolkit(task).invoke("get_free_slots", dict(reads[0].arguments))[
        "free_starts_utc"]


@pytest.mark.parametrize("domain", ["calendar", "orders", "ops"])
def test_pages_between_the_first_and_the_one_that_matters_are_optional(domain: str) -> None:
    # Players went from page 1 straight to the page holding what they needed (the deploy before
    # the onset, the first start inside everyone's hours, an order asked about) and lost recall
    # for the pages between. Those pages are useful when read and never required.
    seeds = [s for s in range(60) if any(st.optional for st in generate_task(s, {"domain": domain, "difficulty": "hard"}).gold.plan)]
    assert len(seeds) >= 3
    for seed in seeds[:3]:
        task = generate_task(seed, {"domain": domain, "difficulty": "hard"})
        spec = load_domains()[domain]
        toolkit = make_toolkit(task)
        for k, step in enumerate(task.gold.plan):
            if not step.optional:
                continue
            # An optional page holds no row a later call of the plan names, and a required page follows it.
            paged = spec.paged[step.name]
            rows = toolkit.invoke(step.name, dict(step.arguments))[paged.field]
            key = paged.named_key()
            named = {json.dumps(v, sort_keys=True) for later in task.gold.plan[k + 1:] for v in later.arguments.values()}
            assert not any(json.dumps(row[key] if key else row, sort_keys=True) in named for row in rows)
            assert any(s.name == step.name and not s.optional for s in task.gold.plan[k + 1:])
        gold = task.gold.to_dict()
        optional = [s.to_dict() for s in task.gold.plan if s.optional]
        assert all(c not in gold["calls"] and c in gold["useful_calls"] for c in optional)
        for agent in (make_agent("oracle"), SkippingOracle()):
            env = gym.make(ENV, domain=domain, difficulty="hard")
            result = run_episode(env, agent, seed)
            tools = judge_record({"metrics": result.episode}).tools
            assert result.episode["success"], (domain, seed, type(agent).__name__)
            # Every required step done either way; every call useful either way.
            assert tools.done == tools.gold == len(gold["calls"]), (domain, seed, type(agent).__name__)
            assert tools.useful == tools.spent


def test_a_page_past_the_last_is_an_error_observation() -> None:
    env = gym.make(ENV, domain="orders", difficulty="hard")
    obs, info = env.reset(seed=5)
    task = env.unwrapped.task
    customer = task.world.customer_id
    obs, *_ = env.step(f'{{"name": "list_orders", "arguments": {{"customer_id": "{customer}", "page": 9}}}}')
    assert "[error TOOL_ERROR]" in obs and "past the last page" in obs


def test_bad_refund_input_in_the_tier_is_an_error_observation() -> None:
    env = gym.make(ENV, domain="orders", difficulty="hard")
    env.reset(seed=7)
    for args in ({"order_id": "O-1", "item_id": "I-1", "amount": -3}, {"order_id": 5, "item_id": [], "amount": "x"},
                 {"order_id": "O-1", "item_id": "I-1", "amount": 1e12}, {}):
        obs, *_ = env.step(f'{{"name": "refund_item", "arguments": {json.dumps(args)}}}')
        assert "[error" in obs


def test_a_reimbursement_counts_the_meals_of_a_day_together_for_at_most_the_cap() -> None:
    shared = spared = capped = 0
    for seed in range(80):
        task = generate_task(seed, {"domain": "finance", "difficulty": "hard"})
        world, req = task.world, task.goal.job
        if req.kind == "quote":  # a quote asks what the claims add up to: no cap in its brief
            assert world.meal_cap is None and "meals expenses" not in task.brief
            continue
        assert world.meal_cap == MEAL_CAP and "meals expenses of one day count together" in task.brief
        assert "paid in full" in task.goal.request
        full = total = 0
        days: dict[int, int] = {}
        for e in world.month_expenses(req.employee_id, req.month):
            assert e.pre_approved is not None and "pre_approved" in e.row()
            if e.status != "approved":
                continue
            amount = world.convert(e.amount, e.currency, req.currency, e.day)
            full += amount
            if e.category == "meals" and not e.pre_approved:
                days[e.day] = days.get(e.day, 0) + amount
            else:
                total += amount
                spared += e.category == "meals"
        for day, meals in days.items():
            cap = world.convert(MEAL_CAP, "EUR", req.currency, day)
            assert meals >= 1.1 * cap or meals <= 0.9 * cap  # never near the cap
            total += min(meals, cap)
            capped += meals > cap
        shared += "meals_share_a_day" in task.gold.traps
        transfer = next(e for e in task.gold.effects if e.kind == "transfer")
        assert transfer.fields["amount"] == total and (total < full) == ("meal_cap" in task.gold.traps and any(
            m > world.convert(MEAL_CAP, "EUR", req.currency, d) for d, m in days.items()))
    assert shared >= 15 and spared >= 5 and capped >= 25


def test_two_meals_of_a_day_each_under_the_cap_are_capped_together() -> None:
    found = 0
    for seed in range(80):
        task = generate_task(seed, {"domain": "finance", "difficulty": "hard"})
        world, req = task.world, task.goal.job
        if "meals_share_a_day" not in task.gold.traps:
            continue
        by_day: dict[int, list[int]] = {}
        for e in world.month_expenses(req.employee_id, req.month):
            if e.status == "approved" and e.category == "meals" and not e.pre_approved:
                by_day.setdefault(e.day, []).append(world.convert(e.amount, e.currency, req.currency, e.day))
        day, meals = next((d, m) for d, m in by_day.items() if len(m) > 1)
        cap = world.convert(MEAL_CAP, "EUR", req.currency, day)
        assert all(m < cap for m in meals) and sum(meals) > cap  # a cap per meal would pay both in full
        found += 1
    assert found >= 15


def test_the_finance_tier_has_no_tool_that_adds_up_and_its_gold_never_calls_one() -> None:
    for seed in range(30):
        task = generate_task(seed, {"domain": "finance", "difficulty": "hard"})
        toolkit = make_toolkit(task)
        assert not toolkit.has_tool("sum_amounts") and toolkit.has_tool("convert")
        assert "sum_amounts" not in [s.name for s in task.gold.plan]
        assert toolkit.validate("sum_amounts", {"amounts": [1.0, 2.0]}) is not None  # an error, never a raise
    easy = generate_task(0, {"domain": "finance", "difficulty": "easy"})
    assert make_toolkit(easy).has_tool("sum_amounts")


def test_a_meeting_spans_three_zones_and_each_earlier_free_start_breaks_someone_s_hours() -> None:
    opened = 0
    for seed in range(40):
        task = generate_task(seed, {"domain": "calendar", "difficulty": "hard"})
        world, req = task.world, task.goal.job
        pids = [world.me, *req.attendees]
        assert len({world.people[p].offset for p in pids}) >= 3
        book = next(s for s in task.gold.plan if s.name == "book_meeting").arguments
        start = int(book["start_utc"][:2]) * 60 + int(book["start_utc"][3:])
        earlier = [s for s in world.free_starts(pids, req.day, req.duration) if s < start]
        assert all(not all(world.people[p].works(s, req.duration) for p in pids) for s in earlier)
        opened += len(earlier) >= 2
        # The namesake: another person of an attendee's name in another zone, told apart by the
        # city the request gives; the meeting is with the attendee.
        twins = [(a, b) for a in pids for b in world.people if b != a and world.people[b].name == world.people[a].name]
        (attendee, twin), = twins
        assert twin not in pids and world.people[twin].offset != world.people[attendee].offset
        assert f"{world.people[attendee].name} ({world.people[attendee].city})" in task.goal.request
        # Namesakes have addresses of their own: an address reaches one person.
        emails = [person.row()["email"] for person in world.people.values()]
        assert len(set(emails)) == len(emails), emails
    assert opened >= 25


def test_an_attendee_off_on_the_date_asked_moves_the_meeting_to_the_next_date_nobody_is_off() -> None:
    moved = twin_off = 0
    for seed in range(60):
        task = generate_task(seed, {"domain": "calendar", "difficulty": "hard"})
        world = task.world
        assert "days_off" in task.brief
        booking = next(s for s in task.gold.plan if s.name == "book_meeting").arguments
        assert booking["date"] == DAY_ISO[world.day]
        attendees = booking["attendee_ids"]
        assert not any(world.day in world.days_off.get(p, ()) for p in attendees)  # nobody off on it
        toolkit = make_toolkit(task)
        rows = {m["person_id"]: m for p in attendees
                for m in toolkit.invoke("find_person", {"query": world.people[p].name})["matches"]}
        assert all(rows[p]["days_off"] == [DAY_ISO[x] for x in world.days_off.get(p, ())] for p in attendees)
        if "attendee_day_off" in task.gold.traps:
            asked = world.day - 1
            assert DAY_ISO[asked] in task.goal.request and DAY_ISO[world.day] not in task.goal.request
            assert any(asked in world.days_off.get(p, ()) for p in attendees) and world.today < asked
            fresh = generate_task(seed, {"domain": "calendar", "difficulty": "hard"})
            fresh.world.consent = None  # the day-off rule alone (a yes to the plan is the consent rule's)
            with pytest.raises(PolicyViolation):  # booking the date asked for is refused, and fails the task
                make_toolkit(fresh).invoke("book_meeting", {**booking, "date": DAY_ISO[asked]})
            assert fresh.world.violations == ["day_off"]
            moved += 1
        else:
            assert DAY_ISO[world.day] in task.goal.request
            if "namesake_day_off" in task.gold.traps:  # the namesake's day off is not the attendee's
                twins = [p for p in world.people if p not in attendees and world.day in world.days_off.get(p, ())]
                assert any(world.people[p].name in {world.people[a].name for a in attendees} for p in twins)
                twin_off += 1
    assert moved >= 15 and twin_off >= 5


def test_asked_for_the_date_the_user_takes_the_date_the_policy_gives() -> None:
    """Told that the meeting moves (and asked its length), the user never asks again for the date
    the policy forbids: it names that date only with the move accepted."""
    env = gym.make(ENV, domain="calendar", difficulty="hard")
    moved = 0
    for seed in range(40):
        env.reset(seed=seed)
        task = env.unwrapped.task
        if "attendee_day_off" not in task.gold.traps:
            continue
        asked, day = task.world.day - 1, task.world.day
        told = (f"How long should it be (30, 45, 60 or 90 minutes)? Also note that someone is off on "
                f"{DAY_WEEKDAY[asked]} {DAY_ISO[asked]}, so under the days-off policy the meeting moves to the next "
                f"date nobody is off, {DAY_WEEKDAY[day]} {DAY_ISO[day]}; I will book the earliest slot that day.")
        reply = env.step(told)[0]
        assert DAY_ISO[asked] not in reply or "the next date nobody is off is fine" in reply, (seed, reply)
        moved += 1
    assert moved >= 5


@pytest.mark.parametrize("domain", DOMAINS)
def test_list_policies_gives_every_policy_the_brief_states_in_the_same_words(domain: str) -> None:
    for seed in range(12):
        for options in ({"difficulty": "hard"}, {"difficulty": ("easy", "medium")[seed % 2]}):
            task = generate_task(seed, {"domain": domain, **options})
            block = task.brief.split("\nPolicies:\n", 1)[1]
            stated = [line[2:] for line in block.splitlines() if line.startswith("- ")]
            rows = make_toolkit(task).invoke("list_policies", {})["policies"]
            listed = [row["rule"] for row in rows]
            assert stated == listed, (domain, seed, options)
            # A rule points at another by words the brief shows, never by an id only the tool
            # gives ("see rate_from_counts": ToolUse playtest 7020, turn 0).
            assert not any(f"see {row['id']}" in block for row in rows), (domain, seed, options)


def test_the_ops_tier_states_the_cause_rollback_and_severity_rules_one_way() -> None:
    """Read literally, the domain's rules would name a failed deploy as the cause or the rollback
    target, and say get_metrics gives the rate; the tier restates them in their place."""
    for seed in range(6):
        brief = generate_task(seed, {"domain": "ops", "difficulty": "hard"}).brief
        for ambiguous in ("last deploy before its errors began", "the deploy just before it",
                          "get_metrics gives the rate"):
            assert ambiguous not in brief
        for rule in ("last deploy that succeeded before its errors began",
                     "the last deploy that succeeded before the cause",
                     "computed from the counts get_metrics gives"):
            assert rule in brief
        assert brief.count("Severity follows") == 1


def test_a_namesake_employee_is_told_apart_by_the_department_the_request_names() -> None:
    for seed in range(30):
        task = generate_task(seed, {"domain": "finance", "difficulty": "hard"})
        world, req = task.world, task.goal.job
        twin, = (e for e, n in world.employees.items() if n == req.name and e != req.employee_id)
        assert world.departments[twin] != world.departments[req.employee_id]
        assert f"{req.name} ({world.departments[req.employee_id]})" in task.goal.request
        assert any(e.employee_id == twin and e.status == "approved" for e in world.month_expenses(twin, req.month))
        found = make_toolkit(task).invoke("find_employee", {"query": req.name})["matches"]
        assert {m["department"] for m in found} == {world.departments[twin], world.departments[req.employee_id]}


def _tier_tasks(n: int) -> list[Any]:
    return [generate_task(seed, {"domain": "orders", "difficulty": "hard"}) for seed in range(n)]


def test_a_goal_shift_in_the_tier_reads_pages_as_the_task_s_gold_does() -> None:
    spec = load_domains()["orders"]
    seen = 0
    for task in _tier_tasks(30):
        for shift in spec.shifts(task.world, task.goal.job):
            plan = shift_gold(task, shift.gold).plan
            toolkit = make_toolkit(task)
            rows = _rows(toolkit, next(s for s in plan if s.name == "list_orders"), "orders")
            need = _settling_row("orders", "list_orders", rows, plan) // PAGE_SIZE + 1
            assert [s.arguments.get("page") for s in plan if s.name == "list_orders"] == [None, *range(2, need + 1)]
            seen += 1
    assert seen >= 5


def test_a_change_of_mind_the_work_already_meets_is_never_announced() -> None:
    """A rollback called off on seeing the incident filed would be announced and accepted in one
    breath, leaving the assistant no turn: the tier drops it, and the rollback stays wanted."""
    env = gym.make(ENV, domain="ops", split="test", difficulty="hard", noise="goal_shift=1")
    dropped = 0
    for seed in range(60):
        env.reset(seed=seed)
        user = env.unwrapped.user
        if user._shift is None or user._shift.detail != "rollback" or user._shift.new is not False:
            continue
        task = env.unwrapped.task
        task.world.consent = None  # the write alone, as if the engineer had said yes to it
        filed = next(s for s in task.gold.plan if s.name == "file_incident").arguments
        obs, _, done, _, _ = env.step(json.dumps({"name": "file_incident", "arguments": {**filed, "summary": "x"}}))
        assert not done and "roll anything back" not in obs, (seed, obs)
        assert user._shift is None and task.gold.superseded == ()  # dropped, unannounced
        assert any(s.name == "rollback" for s in task.gold.plan)
        dropped += 1
    assert dropped >= 2


@pytest.mark.parametrize("domain", DOMAINS)
def test_after_a_change_of_mind_the_gold_plan_reads_later_pages(domain: str) -> None:
    env = gym.make(ENV, domain=domain, difficulty="hard", noise="goal_shift=1.0")
    shifted = paged = 0
    for seed in range(10):
        result = run_episode(env, make_agent("expert"), seed)
        task = env.unwrapped.task
        if task.gold.superseded:
            shifted += 1
            paged += any("page" in s.arguments for s in task.gold.plan)
            assert result.episode["success"]
    assert shifted >= 5 and paged


def test_the_ops_severity_follows_a_rate_computed_from_counts() -> None:
    for seed in range(30):
        task = generate_task(seed, {"domain": "ops", "difficulty": "hard"})
        req = task.goal.job
        toolkit = make_toolkit(task)
        metrics = toolkit.invoke("get_metrics", {"service": req.chain[0]})
        assert "error_rate_pct" not in metrics and "errors_last_5m / requests_last_5m" in task.brief
        rate = 100 * metrics["errors_last_5m"] / metrics["requests_last_5m"]
        assert severity_of(rate) == req.severity and min(abs(rate - 5), abs(rate - 25)) >= 0.3
        alert = next(a for a in toolkit.invoke("list_alerts", {})["alerts"] if a["metric"] == "error_rate_pct")
        assert "value" not in alert and alert["service"] == req.chain[0]
        incident = next(s for s in task.gold.plan if s.name == "file_incident").arguments
        assert incident["severity"] == req.severity


def test_the_ops_gold_reads_the_counts_the_severity_follows_even_where_the_request_states_it() -> None:
    """The tier's severity follows the rate from the symptom's counts, whatever the request says:
    every gold reads them, a goal shift's too (players called the gold incomplete without it:
    ToolUse 7121, 7153, CrossTask 7140)."""
    stated = 0
    for seed in range(60):
        task = generate_task(seed, {"domain": "ops", "difficulty": "hard"})
        req = task.goal.job
        read = {"name": "get_metrics", "arguments": {"service": req.chain[0]}}
        assert read in [s.to_dict() for s in task.gold.plan], seed
        for shift in load_domains()["ops"].shifts(task.world, req):
            assert read in [s.to_dict() for s in shift_gold(task, shift.gold).plan], seed
        stated += req.severity_given
    assert stated >= 20


def test_the_ops_tier_s_gold_is_the_solver_s_on_the_hardened_world(monkeypatch: pytest.MonkeyPatch) -> None:
    """`harden` keeps the drafted gold, its versions renamed and the counts' read added, instead of
    solving again (a reset's cost): it equals `solve` on the hardened world, before its pages."""
    from agentgym.envs.tooluse import domains
    from agentgym.envs.tooluse.domains import ops_tier
    from agentgym.envs.tooluse.domains.ops import solve

    hardened: list[tuple[Any, Any, Any]] = []  # (world, request, gold) as `harden` leaves them
    harden = ops_tier.TIER["harden"]

    def keep(d: Any, gen: Any) -> Any:
        out = harden(d, gen)
        hardened.append((out.world, out.goal.job, out.gold))  # before the task reads its pages
        return out

    monkeypatch.setitem(ops_tier.TIER, "harden", keep)
    domains.load_domains.cache_clear()
    try:
        for seed in range(150):
            generate_task(seed, {"domain": "ops", "difficulty": "hard"})
            world, req, gold = hardened[-1]
            again = solve(world, req)
            assert [s.to_dict() for s in again.plan] == [s.to_dict() for s in gold.plan], seed
            assert again.effects == gold.effects, seed
    finally:
        monkeypatch.undo()
        domains.load_domains.cache_clear()


def test_the_ops_cause_is_never_on_the_first_page_of_deploys() -> None:
    for seed in range(30):
        task = generate_task(seed, {"domain": "ops", "difficulty": "hard"})
        incident = next(s for s in task.gold.plan if s.name == "file_incident").arguments
        first = make_toolkit(task).invoke("get_deploys", {"service": incident["root_cause_service"]})
        assert first["pages"] >= 2 and incident["cause_version"] not in [d["version"] for d in first["deploys"]]


def test_a_failed_deploy_is_never_the_cause_nor_the_rollback_target() -> None:
    before = after = 0
    for seed in range(60):
        task = generate_task(seed, {"domain": "ops", "difficulty": "hard"})
        world, req = task.world, task.goal.job
        root = world.services[req.chain[-1]]
        assert "failed_deploy" in task.gold.traps and all(
            dep.status in ("succeeded", "failed") for s in world.services.values() for dep in s.deploys)
        versions = [dep.version for dep in root.deploys]
        assert len(set(versions)) == len(versions)
        incident = next(s for s in task.gold.plan if s.name == "file_incident").arguments
        rollback = next(s for s in task.gold.plan if s.name == "rollback").arguments
        cause = versions.index(incident["cause_version"])
        target = versions.index(rollback["to_version"])
        ran = [dep for dep in root.deploys if dep.status == "succeeded"]
        assert root.deploys[cause] is max((d for d in ran if d.at < root.errors_since), key=lambda d: d.at)
        assert root.deploys[target] is ran[ran.index(root.deploys[cause]) - 1]
        assert all(d.at != root.errors_since for d in root.deploys)  # no deploy at the onset: one reading
        between = root.deploys[target + 1:cause]
        later = [d for d in root.deploys[cause + 1:] if d.at < root.errors_since]
        assert all(d.status == "failed" for d in between + later) and (between or later)
        before += bool(between)
        after += bool(later)
    assert before >= 15 and after >= 15


@pytest.mark.parametrize("difficulty", ["medium", "hard"])
def test_a_rollback_shows_in_the_deploy_history_as_its_deploys_do(difficulty: str) -> None:
    """A rollback is a deploy that ran: where the history gives each deploy a status (the hard
    tier), the rollback's row has one too, so a re-read of the history reads one way."""
    task = next(t for t in (generate_task(seed, {"domain": "ops", "difficulty": difficulty}) for seed in range(50))
                if {"file_incident", "rollback"} <= {s.name for s in t.gold.plan})
    task.world.consent = None  # the writes alone, as if the engineer had said yes to them
    toolkit = make_toolkit(task)
    incident = next(s for s in task.gold.plan if s.name == "file_incident").arguments
    toolkit.invoke("file_incident", incident)
    toolkit.invoke("rollback", next(s for s in task.gold.plan if s.name == "rollback").arguments)
    service = incident["root_cause_service"]
    first = toolkit.invoke("get_deploys", {"service": service})
    rows = list(first["deploys"])
    for page in range(2, first.get("pages", 1) + 1):
        rows += toolkit.invoke("get_deploys", {"service": service, "page": page})["deploys"]
    rollback, others = rows[-1], rows[:-1]
    assert rollback["author"].startswith("rollback (")
    assert ("status" in rollback) == ("status" in others[0]) == (difficulty == "hard")
    assert rollback.get("status") in (None, "succeeded")


# ------------------------------------------------------------------------------ who solves it
@pytest.mark.parametrize("domain", DOMAINS)
def test_the_expert_and_the_oracle_solve_every_sampled_tier_task(domain: str) -> None:
    seeds = range(100, 125)
    assert _wins("expert", seeds, domain=domain, difficulty="hard") == len(seeds)
    assert _wins("oracle", seeds, domain=domain, difficulty="hard") == len(seeds)


@pytest.mark.parametrize("split", ["train", "test"])
def test_random_never_solves_the_tier(split: str) -> None:
    assert _wins("random", range(60), split=split, difficulty="hard") == 0


@pytest.mark.slow
@pytest.mark.parametrize("split", ["train", "test"])
def test_the_expert_solves_the_tier_on_500_seeds(split: str) -> None:
    assert _wins("expert", range(6000, 6500), split=split, difficulty="hard") >= 490


def _wilson(k: int, n: int) -> tuple[float, float]:
    z = 1.96
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return mid - half, mid + half


@pytest.mark.slow
@pytest.mark.parametrize("split", ["train", "test"])
def test_the_heuristic_falls_from_easy_to_medium_to_the_tier(split: str) -> None:
    n = 300
    easy, medium, hard = (_wilson(_wins("heuristic", range(n), split=split, difficulty=d), n)
                          for d in ("easy", "medium", "hard"))
    assert easy[0] > medium[1] and medium[0] > hard[1], (easy, medium, hard)
