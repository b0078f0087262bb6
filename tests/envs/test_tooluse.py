"""AgentRL/ToolUse-v0: oracle, trivial agents, heuristic, policies, the generator, splits, contract.

Figures asserted: the oracle solves 300 of 300 episodes; each trivial agent (no-op, empty, "{}",
echo, random, every tool once, propose everything) succeeds on at most 1% of 200 episodes and
the do-nothing ones score 0; the heuristic lands strictly between (its table per domain and
difficulty is printed); a policy-breaking call fails the task and is counted, in every domain;
2,000 generated tasks are each solved by applying their gold plan to the world, have non-empty
criteria that doing nothing does not meet, and a gold outcome that is unique (ops: no deploy at
the onset's minute, and every instant the tools show carries its date); every brief says what day
it is where a rule counts from it; each domain's read tool shows what its writes did; a wrong
incident is put right by withdrawing it (issue 26, test seed 901).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from typing import Any, Callable

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from reporting import told_done
from trivial_policies import DOING_NOTHING, Policy, tally, trivial_policies

import agentgym  # noqa: F401  (registers the ids)
from agentgym.agents import make_agent
from agentgym.agents.random_agent import sample_arguments
from agentgym.core.render import to_json
from agentgym.core.seeding import stream
from agentgym.core.tools import ToolError
from agentgym.envs.tooluse.base import DAY_ISO, DAY_WEEKDAY, POLICY_PREFIX, Draws, WorldRecord, evaluate
from agentgym.envs.tooluse.data import strict
from agentgym.envs.tooluse.domains import load_domains
from agentgym.envs.tooluse.domains.calendar import CalendarWorld
from agentgym.envs.tooluse.domains.finance import FinanceWorld
from agentgym.envs.tooluse.domains.finance import vocab as finance_vocab
from agentgym.envs.tooluse.domains.ops import OpsWorld, severity_of
from agentgym.envs.tooluse.domains.orders import OrdersWorld
from agentgym.envs.tooluse.domains.orders import vocab as orders_vocab
from agentgym.envs.tooluse.env import ToolUseEnv
from agentgym.envs.tooluse.oracle import ToolUseOracle
from agentgym.envs.tooluse.tasks import (
    DIFFICULTY,
    domains_for,
    generate_task,
    is_tier,
    make_toolkit,
    score_world,
    tier_calls,
)

ENV_ID = "AgentRL/ToolUse-v0"
DOMAINS = ("finance", "calendar", "orders", "ops")
DIFFICULTIES = ("easy", "medium", "hard")


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def _split(seed: int) -> str:
    # A quarter of the episodes on the test split (its one domain), the rest on train.
    return "test" if seed % 4 == 3 else "train"


def _play(env: ToolUseEnv, policy: Policy, seed: int, options: dict[str, Any] | None = None
          ) -> tuple[dict[str, Any], float]:
    obs, info = env.reset(seed=seed, options=options)
    state: dict[str, Any] = {"seed": seed}
    while True:
        obs, reward, terminated, truncated, info = env.step(policy(env, obs, info, state))
        if terminated or truncated:
            return info["episode_summary"], reward


def _oracle(env: gym.Env, obs: str, info: dict[str, Any], state: dict[str, Any]) -> str:
    if "oracle" not in state:
        state["oracle"] = ToolUseOracle(env)
    return state["oracle"].act(obs, info)


# ================================================================================ oracle
def test_the_oracle_solves_300_of_300() -> None:
    envs = {s: ToolUseEnv(split=s) for s in ("train", "test")}
    cells: Counter[tuple[str, str]] = Counter()
    failures = []
    for seed in range(300):
        episode, reward = _play(envs[_split(seed)], _oracle, seed)
        task = episode["task"]
        cells[task["domain"], task["difficulty"]] += 1
        if not episode["success"] or reward != 1.0 or episode["outcome"] not in ("accepted", "committed"):
            failures.append((seed, task["id"], episode["outcome"], episode["score_details"]))
    print(f"\noracle: {300 - len(failures)}/300 over {len(cells)} (domain, difficulty) cells")
    assert not failures, failures[:5]
    assert len(cells) == 12


def test_the_oracle_retries_injected_tool_failures() -> None:
    try:
        env = gym.make(ENV_ID, noise="tool_failure=0.3")
    except (TypeError, ValueError) as exc:  # the noise factory is not there yet
        pytest.skip(f"noise= not accepted: {exc}")
    injected = 0
    for seed in range(40):
        obs, info = env.reset(seed=seed)
        agent = make_agent("oracle")
        agent.bind(env.unwrapped)
        agent.reset(obs, info)
        while True:
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
            injected += sum(1 for c in info.get("calls", ()) if c.get("injected"))
            if terminated or truncated:
                break
        assert info["episode_summary"]["success"], info["episode_summary"]["task"]
    assert injected > 0


# ================================================================================ trivial agents (E13)
def _everything(env: ToolUseEnv) -> list[dict[str, Any]]:
    """Every outcome a privileged agent could propose at once: the gold plan and its rivals.

    It knows the right answer and proposes it together with every other candidate (a transfer
    to every employee from every account, a booking at every free start, a refund, credit and
    exchange of every item, an incident and a rollback for every service). A terminal answer is
    proposed wrong first: only the first terminal call of a turn runs.
    """
    task = env.task
    world = task.world
    plan = [_call(s.name, **s.arguments) for s in task.gold.plan]
    rivals: list[dict[str, Any]] = []
    if isinstance(world, FinanceWorld):
        target = next(e for e in task.gold.effects if e.kind in ("transfer", "answer"))
        amount = target.fields["amount"] / 100
        if target.kind == "answer":
            return [_call("submit_answer", amount=amount + 0.01, currency=target.fields["currency"]), *plan]
        rivals = [_call("create_transfer", from_account=a, employee_id=e, amount=amount, currency=c)
                  for e in world.employees for a, c in world.accounts.items()]
    elif isinstance(world, CalendarWorld):
        book = next(s for s in task.gold.plan if s.name == "book_meeting").arguments
        for i, start in enumerate(world.free_starts(book["attendee_ids"], world.day, book["duration_minutes"])):
            rivals.append(_call("book_meeting", **{**book, "start_utc": f"{start // 60:02d}:{start % 60:02d}"}))
        rivals += [_call("send_invitation", meeting_id=world.predict_id("M", k)) for k in range(1, len(rivals) + 1)]
    elif isinstance(world, OrdersWorld):
        for o in world.orders.values():
            for it in o.items:
                base = {"order_id": o.id, "item_id": it.id}
                rivals.append(_call("refund_item", **base, amount=it.price / 100))
                rivals.append(_call("issue_store_credit", **base, amount=it.price / 100))
    elif isinstance(world, OpsWorld):
        for name, svc in world.services.items():
            for sev in ("sev1", "sev2", "sev3"):
                rivals.append(_call("file_incident", root_cause_service=name, cause_version=svc.deploys[-1].version,
                                    severity=sev, summary="everything"))
            if len(svc.deploys) > 1:
                rivals.append(_call("rollback", service=name, to_version=svc.deploys[0].version, incident_id="INC-1"))
    return plan + rivals


def _propose_everything(env: gym.Env, obs: str, info: dict[str, Any], state: dict[str, Any]) -> str:
    state["turn"] = state.get("turn", 0) + 1
    return json.dumps(_everything(env)) if state["turn"] == 1 else "OK."


TRIVIAL = trivial_policies("test/tooluse/every-tool", _propose_everything)


@pytest.mark.parametrize("name", list(TRIVIAL))
def test_trivial_agents_fail(name: str) -> None:
    envs = {s: ToolUseEnv(split=s) for s in ("train", "test")}
    n = 200
    successes, total = tally(_play, envs, _split, TRIVIAL[name], n)
    print(f"\n{name}: {successes}/{n} successes, mean score {total / n:.3f}")
    assert successes <= 0.01 * n
    if name in DOING_NOTHING:
        assert successes == 0 and total == 0.0


# ================================================================================ heuristic
def test_the_heuristic_lands_between_trivial_and_oracle() -> None:
    envs = {s: ToolUseEnv(split=s) for s in ("train", "test")}
    cells: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for seed in range(480):
        env = envs[_split(seed)]
        obs, info = env.reset(seed=seed)
        agent = make_agent("heuristic")
        agent.reset(obs, info)
        while True:
            obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
            if terminated or truncated:
                break
        cells[env.task.domain, env.task.difficulty].append(info["episode_summary"]["success"])
    lines = [f"{'domain':9s} " + " ".join(f"{d:>8s}" for d in DIFFICULTIES) + "      all"]
    by_domain, by_difficulty = {}, {}
    for domain in DOMAINS:
        row = [cells[domain, d] for d in DIFFICULTIES]
        by_domain[domain] = sum(map(sum, row)) / sum(map(len, row))
        lines.append(f"{domain:9s} " + " ".join(f"{sum(r) / len(r):8.2f}" for r in row) + f" {by_domain[domain]:8.2f}")
    for d in DIFFICULTIES:
        runs = [x for domain in DOMAINS for x in cells[domain, d]]
        by_difficulty[d] = sum(runs) / len(runs)
    everything = [x for v in cells.values() for x in v]
    overall = sum(everything) / len(everything)
    lines.append(f"{'all':9s} " + " ".join(f"{by_difficulty[d]:8.2f}" for d in DIFFICULTIES) + f" {overall:8.2f}")
    print("\nheuristic success (480 episodes):\n" + "\n".join(lines))
    assert 0.3 <= overall <= 0.9
    assert all(0.05 < v < 1.0 for v in by_domain.values()), by_domain
    assert by_difficulty["easy"] > by_difficulty["medium"] > by_difficulty["hard"] > 0.01


# ================================================================================ policies
def _find(domain: str, want: Callable[[Any], bool], difficulty: str | None = None) -> int:
    for seed in range(500):
        task = generate_task(seed, {"domain": domain, "difficulty": difficulty})
        if want(task):
            return seed
    raise AssertionError(f"no {domain} task fits")


def _violating_call(domain: str) -> tuple[int, dict[str, Any] | None, dict[str, Any], str]:
    """(seed, difficulty option, the call that breaks a policy, the policy's id) per domain."""
    if domain == "finance":
        seed = _find("finance", lambda t: t.gold.kind == "reimburse")
        t = generate_task(seed, {"domain": "finance"})
        transfer = next(s for s in t.gold.plan if s.name == "create_transfer").arguments
        wrong = next(a for a, c in t.world.accounts.items() if c != transfer["currency"])
        return seed, None, _call("create_transfer", **{**transfer, "from_account": wrong}), "account_currency"
    if domain == "calendar":
        seed = _find("calendar", lambda t: "first_slot_outside_hours" in t.gold.traps)
        t = generate_task(seed, {"domain": "calendar"})
        book = next(s for s in t.gold.plan if s.name == "book_meeting").arguments
        first = t.world.free_starts(book["attendee_ids"], t.world.day, book["duration_minutes"])[0]
        return seed, None, _call("book_meeting", **{**book, "start_utc": f"{first // 60:02d}:{first % 60:02d}"}), \
            "working_hours"
    if domain == "orders":
        seed = _find("orders", lambda t: "past_return_window" in t.gold.traps)
        t = generate_task(seed, {"domain": "orders"})
        credit = next(s for s in t.gold.plan if s.name == "issue_store_credit").arguments
        return seed, None, _call("refund_item", **credit), "return_window"
    seed = _find("ops", lambda t: any(s.name == "rollback" for s in t.gold.plan), "hard")
    t = generate_task(seed, {"domain": "ops", "difficulty": "hard"})
    rollback = next(s for s in t.gold.plan if s.name == "rollback").arguments
    return seed, {"difficulty": "hard"}, _call("rollback", **rollback), "rollback_needs_incident"


@pytest.mark.parametrize("domain", DOMAINS)
def test_a_policy_violation_fails_the_task_and_is_counted(domain: str) -> None:
    seed, options, bad, policy_id = _violating_call(domain)
    env = ToolUseEnv(split=load_domains()[domain].split)
    obs, info = env.reset(seed=seed, options={"domain": domain, **(options or {})})
    consent = env.task.world.consent
    if consent is not None:  # the hard tier: the write has the customer's yes, and breaks another policy
        consent.grant(consent.rules.describe(env.task.world, bad["name"], bad["arguments"]))
    obs, reward, terminated, truncated, info = env.step(json.dumps(bad))
    assert info["errors"] == ["POLICY_VIOLATION"]
    assert info["calls"][0]["policy"] == policy_id
    assert info["messages"][1]["content"].startswith(f"[error POLICY_VIOLATION] {POLICY_PREFIX} ({policy_id})")
    assert env.task.world.violations == [policy_id] and not env.task.world.records  # refused: nothing done
    # No fix can make the task succeed: the user says so at once, and the episode ends there, before
    # any other write (a write after it would be done for a task already failed).
    episode = info["episode_summary"]
    assert terminated and episode["outcome"] == "gave_up" and "broke one of our policies" in obs
    assert not any(c["kind"] == "write" and c["error"] is None for c in episode["calls"])
    assert episode["score_details"]["policy_violations"] == [policy_id]
    assert not episode["success"] and reward == 0.0
    assert episode["errors"].get("POLICY_VIOLATION") == 1
    assert episode["policy_violations"] == [policy_id]


# ================================================================================ the generator
def _apply_plan(task: Any) -> None:
    """Run the gold plan straight on the task's toolkit, mapping predicted ids to returned ones."""
    toolkit = make_toolkit(task)
    consent = task.world.consent
    if consent is not None:  # the hard tier: the customer's yes to a plan that describes each write
        consent.grant("\n".join(consent.rules.describe(task.world, s.name, s.arguments) for s in task.gold.plan))
    ids: dict[str, str] = {}
    for step in task.gold.plan:
        args = {k: [ids.get(x, x) for x in v] if isinstance(v, list) else ids.get(v, v) if isinstance(v, str) else v
                for k, v in step.arguments.items()}
        assert toolkit.validate(step.name, args) is None, (step.name, args)
        result = toolkit.invoke(step.name, args)
        for key, predicted in step.produces.items():
            ids[predicted] = result[key]


def _gold_is_unique(task: Any) -> None:
    """The domain facts that make the gold outcome the only right one."""
    w = task.world
    if isinstance(w, FinanceWorld):
        assert len(set(w.accounts.values())) == len(w.accounts)  # one account per currency
        # In the hard tier one other employee shares the name, in a department the request names.
        assert len(w.employees) - len(set(w.employees.values())) == (1 if is_tier(task) else 0)
        assert set(w.accounts.values()) == set(finance_vocab().payout)
    elif isinstance(w, CalendarWorld):
        book = next(s for s in task.gold.plan if s.name == "book_meeting").arguments
        pids, duration = book["attendee_ids"], book["duration_minutes"]
        start = int(book["start_utc"][:2]) * 60 + int(book["start_utc"][3:])
        fits = [s for s in w.free_starts(pids, w.day, duration) if all(w.people[p].works(s, duration) for p in pids)]
        assert fits and fits[0] == start  # the earliest start that suits everyone, and only it
        # Names are unique; in the hard tier one person outside the meeting shares an attendee's
        # name, in a city the request names for the attendee.
        assert len(w.people) - len({p.name for p in w.people.values()}) == (1 if is_tier(task) else 0)
    elif isinstance(w, OrdersWorld):
        products = [it.product for o in w.orders.values() for it in o.items]
        # The product named identifies the item; in the hard tier, with the order's date, as one
        # other order (the near-duplicate) holds the same product.
        assert len(products) - len(set(products)) == (1 if is_tier(task) else 0)
        assert len({o.placed for o in w.orders.values()}) == len(w.orders)
        for effect in task.gold.effects:
            order = w.orders[effect.fields["order_id"]]
            item = next(i for i in order.items if i.id == effect.fields["item_id"])
            # A final-sale item gets something only when it arrived damaged (the hard tier's).
            assert (not item.final_sale or item.damaged) and order.delivered is not None
            if is_tier(task):
                continue  # the tier's bulk return draws ages on window ends: its brief states the last day counts
            # Never on the boundary of the window (no off-by-one reading).
            ends = {w.window(item.category), orders_vocab().windows[item.category]}
            assert all(abs(w.age(order) - end) >= 2 for end in ends), (task.task_id, w.age(order), ends)
    elif isinstance(w, OpsWorld):
        incident = next(s for s in task.gold.plan if s.name == "file_incident").arguments
        root = w.services[incident["root_cause_service"]]
        own = [n for n, s in w.services.items() if s.errors_since is not None
               and not any(c in line for line in s.logs["error"] for c in s.calls)]
        assert own == [root.name]  # exactly one service fails on its own
        # "The last deploy before its errors began" has one reading: no deploy of any service at
        # the onset's minute, so strictly before and at-or-before agree, and every instant the
        # tools show carries its date (an older deploy at the onset's clock time on another day
        # is not "before the onset" in any reading).
        assert all(d.at != root.errors_since for svc in w.services.values() for d in svc.deploys)
        before = [d for d in root.deploys if d.at < root.errors_since and d.status != "failed"]  # a failed one never ran
        assert before[-1].version == incident["cause_version"] and len(before) >= 2
        toolkit = make_toolkit(task)
        stamps = [toolkit.invoke("get_metrics", {"service": root.name})["errors_since_utc"],
                  *(a["since_utc"] for a in toolkit.invoke("list_alerts", {})["alerts"]),
                  *(line[:16] for svc in w.services.values() for lines in svc.logs.values() for line in lines),
                  *(d["deployed_at"] for svc in w.services for d in toolkit.invoke("get_deploys", {"service": svc})
                    ["deploys"])]
        assert all(re.fullmatch(r"2025-\d{2}-\d{2} [0-2]\d:[0-5]\d", t) for t in stamps), stamps
        symptom = next(s for s in w.services.values() if s.errors_since == max(
            x.errors_since for x in w.services.values() if x.errors_since is not None))
        assert severity_of(symptom.error_rate) == incident["severity"]


def test_the_generator_over_2000_seeds() -> None:
    lengths: dict[str, Counter[int]] = defaultdict(Counter)
    traps: Counter[str] = Counter()
    for seed in range(2000):
        domain, difficulty = DOMAINS[seed % 4], DIFFICULTIES[(seed // 4) % 3]
        task = generate_task(seed, {"domain": domain, "difficulty": difficulty})
        # An explicit hard is the hard tier, whose plans read paged lists as far as the task needs.
        lo, hi = tier_calls(domain) if difficulty == "hard" else DIFFICULTY[difficulty]["calls"]
        assert lo <= len(task.gold.plan) <= hi, (task.task_id, len(task.gold.plan))
        assert task.gold.effects, task.task_id
        nothing = score_world(task.gold, task.world)  # doing nothing
        assert nothing.score == 0.0 and not nothing.success
        _gold_is_unique(task)
        _apply_plan(task)
        done = score_world(task.gold, task.world)
        assert done.success and done.score == 1.0, (task.task_id, done.details)
        lengths[difficulty][len(task.gold.plan)] += 1
        traps.update(task.gold.traps)
    print(f"\ngold plan lengths: {dict(lengths)}; traps: {dict(traps)}")


def test_effects_are_matched_one_record_each() -> None:
    task = generate_task(7, {"domain": "finance", "difficulty": "easy"})
    _apply_plan(task)
    met, extras = evaluate(task.gold.effects, task.world.records)
    assert all(met.values()) and not extras
    last = task.world.records[-1]
    task.world.records.append(WorldRecord(last.kind, dict(last.data)))
    score = score_world(task.gold, task.world)  # the same write twice: the second is an extra
    assert not score.success and score.score == 0.5 and len(score.details["extras"]) == 1


# ================================================================================ splits
def test_splits_are_disjoint_domains() -> None:
    train, test = set(domains_for("train")), set(domains_for("test"))
    assert train == {"finance", "calendar", "orders"} and test == {"ops"}
    assert not train & test and train | test == set(load_domains())
    for split, allowed in (("train", train), ("test", test)):
        env = ToolUseEnv(split=split)
        seen = {env.reset(seed=seed)[1]["task"]["domain"] for seed in range(60)}
        assert seen == allowed
        assert {env.reset(seed=s)[1]["task"]["split"] for s in range(10)} == {split}
    # Tools differ too: the test domain shares no tool with a train domain but list_policies.
    test_tools = {n for d in test for n in load_domains()[d].toolkit.tool_specs()}
    train_tools = {n for d in train for n in load_domains()[d].toolkit.tool_specs()}
    assert test_tools & train_tools == {"list_policies"}


# ================================================================================ contract
def test_check_env_passes() -> None:
    for env in (ToolUseEnv(), ToolUseEnv(split="test", difficulty="hard"), gym.make(ENV_ID).unwrapped):
        check_env(env, skip_render_check=True)


def _trajectory(seed: int, actions: list[str] | None = None) -> tuple[list[str], str]:
    env = ToolUseEnv(split=_split(seed))
    obs, info = env.reset(seed=seed)
    agent = make_agent("heuristic")
    agent.reset(obs, info)
    trace = [obs, to_json(info["task"]), to_json(info["tools"])]
    taken: list[str] = []
    for i in range(60):
        action = actions[i] if actions is not None else agent.act(obs, info)
        taken.append(action)
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append(json.dumps([obs, reward, terminated, truncated, info["messages"], info.get("episode_summary")],
                                sort_keys=True, default=str))
        if terminated or truncated:
            break
    return taken, "\n".join(trace)


def test_same_seed_and_actions_give_identical_trajectories() -> None:
    for seed in range(20):
        actions, first = _trajectory(seed)
        _, again = _trajectory(seed, actions)
        assert first == again
    assert _trajectory(1)[1] != _trajectory(2)[1]


def test_fixing_domain_or_difficulty_keeps_the_other_draws() -> None:
    free = generate_task(11, {})
    fixed = generate_task(11, {"difficulty": free.difficulty})
    assert fixed.gold.to_dict() == free.gold.to_dict() and fixed.brief == free.brief


def test_draws_stay_in_range() -> None:
    d = Draws(stream(0, "test/draws"))
    assert all(0 <= d.below(3) < 3 for _ in range(2000))
    assert {d.between(1, 3) for _ in range(2000)} == {1, 2, 3}
    assert sorted(d.sample(range(10), 10)) == list(range(10))


def test_data_files_are_strict() -> None:
    with pytest.raises(ValueError, match="unknown fields"):
        strict({"a": 1, "b": 2}, {"a"}, "x")
    with pytest.raises(ValueError, match="missing fields"):
        strict({}, {"a"}, "x")
    for spec in load_domains().values():  # every vocabulary and policy file loads
        assert spec.toolkit.tool_specs()


def test_the_brief_states_the_policies_and_never_the_gold() -> None:
    for seed in range(40):
        task = generate_task(seed, {"domain": DOMAINS[seed % 4]})
        assert "Policies:" in task.brief
        for step in task.gold.plan:
            for key in ("approval_id", "meeting_id", "incident_id"):
                if key in step.arguments:
                    assert step.arguments[key] not in task.brief and step.arguments[key] not in task.goal.request
        # The request never names the gold start, amount or cause outright.
        for effect in task.gold.effects:
            for key in ("start", "version"):
                if key in effect.fields:
                    assert str(effect.fields[key]) not in task.goal.request


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_brief_says_what_day_it_is_where_a_rule_depends_on_it(domain: str) -> None:
    for seed in range(40):
        task = generate_task(seed, {"domain": domain})
        w = task.world
        if isinstance(w, OpsWorld):
            assert f"It is now {DAY_ISO[w.now // 1440]} " in task.brief
        elif isinstance(w, OrdersWorld):
            assert f"Today is {DAY_ISO[w.today]}." in task.brief
        elif isinstance(w, CalendarWorld):
            assert f"Today is {DAY_WEEKDAY[w.today]} {DAY_ISO[w.today]}." in task.brief and w.today < w.day
        else:
            assert "all in 2025" in task.brief  # months name their year; no rule counts from today


def test_read_back_tools_show_what_each_write_did() -> None:
    """After the gold plan, each domain's read tool shows every record its writes made; an undo
    shows as such (a failed call, which never reaches the tool, shows as nothing)."""
    for seed in range(24):
        domain = DOMAINS[seed % 4]
        task = generate_task(seed, {"domain": domain, "difficulty": DIFFICULTIES[seed % 3]})
        _apply_plan(task)
        task.world.consent = None  # the read-back of the undo tools alone
        toolkit, w = make_toolkit(task), task.world
        made = [r for r in w.records if r.active]
        if isinstance(w, FinanceWorld):
            emp = next(iter(w.employees))
            shown = toolkit.invoke("list_transfers", {"employee_id": emp})["transfers"] + \
                toolkit.invoke("list_reports", {"employee_id": emp})["reports"]
            assert len(shown) == sum(r.kind in ("transfer", "report") for r in made)
            for r in made:
                if r.kind == "report":
                    toolkit.invoke("withdraw_expense_report", {"report_id": r.data["report_id"]})
                    listed = toolkit.invoke("list_reports", {"employee_id": emp})["reports"]
                    assert [x["status"] for x in listed] == ["withdrawn"]
        elif isinstance(w, CalendarWorld):
            meeting = next(r for r in made if r.kind == "meeting")
            (row,) = toolkit.invoke("list_meetings", {"date": meeting.data["date"]})["meetings"]
            assert row["meeting_id"] == meeting.data["meeting_id"] and row["invitation_sent"]
            toolkit.invoke("cancel_meeting", {"meeting_id": row["meeting_id"]})
            (row,) = toolkit.invoke("list_meetings", {"date": meeting.data["date"]})["meetings"]
            assert row["status"] == "cancelled" and not row["invitation_sent"]
        elif isinstance(w, OrdersWorld):
            for r in made:
                order = toolkit.invoke("get_order", {"order_id": r.data["order_id"]})
                item = next(i for i in order["items"] if i["item_id"] == r.data["item_id"])
                assert item["after_sales"] is not None and item["after_sales"][f"{r.kind}_id"] == r.data[f"{r.kind}_id"]
        else:
            incidents = toolkit.invoke("list_incidents", {})["incidents"]
            assert [i["incident_id"] for i in incidents] == [r.data["incident_id"] for r in made if r.kind == "incident"]
            for r in made:
                if r.kind == "rollback":
                    shown = toolkit.invoke("get_deploys", {"service": r.data["service"]})
                    if "pages" in shown:  # the hard tier's: the latest deploys are on the last page
                        shown = toolkit.invoke("get_deploys", {"service": r.data["service"], "page": shown["pages"]})
                    deploys = shown["deploys"]
                    assert deploys[-1]["version"] == r.data["to_version"] and "rollback" in deploys[-1]["author"]
            toolkit.invoke("withdraw_incident", {"incident_id": incidents[0]["incident_id"]})
            assert toolkit.invoke("list_incidents", {})["incidents"][0]["status"] == "withdrawn"


def test_an_incident_filed_with_the_wrong_deploy_is_put_right_and_accepted() -> None:
    """Issue 26, test split seed 901: an older deploy sits at the onset's clock time on an earlier
    day. A wrong incident gets a reason the user could see; withdrawn and filed again, it is
    accepted, and user and grader agree on the success."""
    env = ToolUseEnv(split="test")
    env.reset(seed=901)
    gold = next(s for s in env.task.gold.plan if s.name == "file_incident").arguments
    deploys = env.task.world.services[gold["root_cause_service"]].deploys
    other = next(d.version for d in deploys if d.version != gold["cause_version"])
    *_, info = env.step(json.dumps(_call("file_incident", **{**gold, "cause_version": other})))
    said = info["messages"][-1]["content"]
    assert "the last one before the errors began" in said and "Could you put it right?" in said
    assert other not in said and gold["cause_version"] not in said  # a reason, never the answer
    *_, info = env.step("I've filed it, it's done.")
    assert info["messages"][-1]["content"].startswith(("Not quite yet:", "It's not done on my side yet:"))
    *_, info = env.step(json.dumps(_call("withdraw_incident", incident_id=env.task.world.records[0].data["incident_id"])))
    env.step(json.dumps(_call("file_incident", **gold)))
    _, reward, terminated, _, info = told_done(env)
    assert terminated and reward == 1.0 and info["episode_summary"]["outcome"] == "accepted"


def test_dates_cover_the_year() -> None:
    assert DAY_ISO[0] == "2025-01-01" and DAY_ISO[-1] == "2025-12-31"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", DAY_ISO[100])


# ================================================================================ tools under fuzz
def _world_strings(task: Any) -> list[str]:
    """Ids, names and dates that occur in the task's world and plan: arguments that reach deep."""
    out: set[str] = {DAY_ISO[40], "2025-03", "sev2", "v1.0.0", "S", "black", "apparel"}
    for step in task.gold.plan:
        for v in step.arguments.values():
            if isinstance(v, str):
                out.add(v)
            elif isinstance(v, list):
                out.update(x for x in v if isinstance(x, str))
    return sorted(out)


def _fuzz_value(schema: dict[str, Any], pool: list[str], rng: Any) -> Any:
    types = schema.get("type")
    types = types if isinstance(types, list) else [types]
    if "string" in types and "enum" not in schema and rng.random() < 0.7:
        return pool[int(rng.random() * len(pool))]
    if "array" in types and schema.get("items", {}).get("type") == "string":
        return [pool[int(rng.random() * len(pool))] for _ in range(int(rng.random() * 4))]
    return sample_arguments({"properties": {"x": schema}, "required": ["x"]}, rng)["x"]


def test_tools_never_raise_anything_but_tool_errors() -> None:
    rng = stream(0, "test/tooluse/fuzz")
    outcomes: Counter[str] = Counter()
    for seed in range(120):
        task = generate_task(seed, {"domain": DOMAINS[seed % 4], "difficulty": DIFFICULTIES[seed % 3]})
        toolkit = make_toolkit(task)
        pool = _world_strings(task)
        for name, spec in toolkit.tool_specs().items():
            props = spec.parameters["properties"]
            for _ in range(6):
                args = {k: _fuzz_value(v, pool, rng) for k, v in props.items()
                        if k in spec.parameters["required"] or rng.random() < 0.5}
                if toolkit.validate(name, args) is not None:
                    outcomes["invalid"] += 1
                    continue
                try:
                    result = toolkit.invoke(name, args)
                except ToolError:
                    outcomes["tool error"] += 1
                    continue
                to_json(result)  # every result serialises
                outcomes["ok"] += 1
    print(f"\nfuzzed calls: {dict(outcomes)}")
    assert outcomes["ok"] > 500 and outcomes["tool error"] > 500


# ================================================================================ the card
def test_the_card_matches_the_code() -> None:
    from agentgym.envs.tooluse.domains.calendar import vocab as calendar_vocab
    from agentgym.envs.tooluse.user import PATIENCE

    card = " ".join((ToolUseEnv.__doc__ or "").split())
    budgets = " / ".join(str(DIFFICULTY[d]["max_turns"]) for d in DIFFICULTIES)
    assert f"turn budget ({budgets} turns by difficulty)" in card
    (e_lo, e_hi), (m_lo, m_hi), (h_lo, h_hi) = (DIFFICULTY[d]["calls"] for d in DIFFICULTIES)
    assert f"`easy` {e_lo}-{e_hi} calls, `medium` {m_lo}-{m_hi}, `hard` {h_lo}-{h_hi}" in card
    assert f"it gives up after {PATIENCE} writes" in card
    assert f"`train`: {', '.join(domains_for('train'))}. `test`: {', '.join(domains_for('test'))}" in card
    words = {5: "five", 6: "six", 7: "seven", 8: "eight"}
    assert f"in {words[len(finance_vocab().currencies)]} currencies" in card
    offsets = [off for _, off in calendar_vocab().cities]
    assert f"people in {len(offsets)} cities from UTC{min(offsets)} to UTC+{max(offsets)}" in card
    for domain, spec in load_domains().items():
        listed = re.search(rf"\* {domain}: (.+?)\.(?: \*| Malformed)", card)
        assert listed is not None, domain
        named = re.findall(r"`(\w+)`", listed.group(1))
        assert named == [n for n in spec.toolkit.tool_specs() if n != "list_policies"], domain


# ------------------------------------------------------------------ what a write can break
def _shifted_user(domain: str, detail: str, to: Any = None) -> tuple[gym.Env, Any]:
    """An env of `domain` reset on the first seed whose goal shift changes `detail` (its slot;
    to `to`, if given), with the shift announced at the first reply."""
    env = gym.make("AgentRL/ToolUse-v0", noise="goal_shift=1", split="test" if domain == "ops" else "train",
                   domain=domain)
    for seed in range(300):
        env.reset(seed=seed)
        user = env.unwrapped.user
        shift = user._shift
        if shift is not None and shift.detail.split(":")[0] == detail and to in (None, shift.new):
            user._shift_turn = 0
            return env, user
    raise AssertionError(f"no {domain} shift of {detail} in 300 seeds")


def test_a_write_on_a_record_that_breaks_a_stated_detail_contradicts_it() -> None:
    env, user = _shifted_user("calendar", "duration")
    old, new = user._shift.old, user._shift.new
    world = env.unwrapped.task.world
    world.add("meeting", {"meeting_id": "M-1", "duration": old})
    world.add("meeting", {"meeting_id": "M-2", "duration": new})
    assert user.contradictions("send_invitation", {"meeting_id": "M-1"}) == []  # nothing stated changed yet
    env.step("Okay.")  # the shift is announced
    assert user.contradictions("send_invitation", {"meeting_id": "M-1"}) == ["duration"]
    assert user.contradictions("send_invitation", {"meeting_id": "M-2"}) == []
    assert user.contradictions("cancel_meeting", {"meeting_id": "M-1"}) == []  # undoing breaks nothing
    assert user.contradictions("book_meeting", {"duration_minutes": old}) == ["duration"]


def test_a_conversion_out_of_the_said_currency_checks_its_rate_and_contradicts_nothing() -> None:
    # After "I need the total in CHF instead of EUR", converting 100 CHF to EUR checks a rate; it
    # was charged as "contradicts currency" (ToolUse playtest 9616 T8). Converting into the old
    # currency still contradicts the new one.
    env, user = _shifted_user("finance", "currency")
    old, new = user._shift.old, user._shift.new
    env.step("Okay.")  # the shift is announced
    check = {"amount": 100, "from_currency": new, "to_currency": old, "date": "2025-04-17"}
    assert user.contradictions("convert", check) == []
    assert user.contradictions("convert", {**check, "from_currency": "SEK" if new != "SEK" else "USD"}) == ["currency"]


def test_acting_on_an_item_kept_or_a_rollback_called_off_contradicts_what_the_user_said() -> None:
    env, user = _shifted_user("orders", "product")
    did = user._shift.detail
    refund = {"order_id": "O-1", "item_id": did.split(":")[1], "amount": 1.0}
    assert user.contradictions("refund_item", refund) == []
    env.step("Okay.")  # "I'll keep the ... after all"
    assert user.contradictions("refund_item", refund) == [did]
    assert user.contradictions("refund_item", {**refund, "item_id": "I-0"}) == []
    env, user = _shifted_user("ops", "rollback", to=False)
    rollback = {"service": "api", "to_version": "v1", "incident_id": "IN-1"}
    assert user.contradictions("rollback", rollback) == []
    env.step("Okay.")  # "don't roll anything back"
    assert user.contradictions("rollback", rollback) == ["rollback"]


def test_an_exchange_to_another_variant_than_the_stated_one_contradicts_it() -> None:
    env, user = _shifted_user("orders", "variant")
    did, new = user._shift.detail, user._shift.new
    item = did.split(":")[1]
    env.step("Okay.")
    assert user.contradictions("exchange_item", {"order_id": "O-1", "item_id": item, "new_variant": new}) == []
    assert user.contradictions("exchange_item", {"order_id": "O-1", "item_id": item, "new_variant": "x"}) == [did]


def test_a_shift_after_a_write_names_the_ids_the_new_writes_will_have() -> None:
    """A goal shift's plan is solved on the initial world; announced after the first booking, it
    names the new booking by the id the world gives it now (M-<n+1>, not the undone M-<n>), so a
    right send_invitation fits a step of the plan (a playtest, ToolUse 7086, turns 6-9)."""
    from playtest_turns import played

    from agentgym.eval.judging import judge_episode
    from agentgym.eval.runner import AgentSpec, EpisodeJob, play_job

    env, _ = played("tooluse-7086-train.jsonl", 9)
    world, gold = env.unwrapped.task.world, env.unwrapped.task.gold
    booked = [r.data["meeting_id"] for r in world.records if r.kind == "meeting" and r.active]
    invite = next(s for s in gold.plan if s.name == "send_invitation")
    assert booked == [invite.arguments["meeting_id"]] == ["M-267"]
    assert next(s for s in gold.plan if s.name == "book_meeting").produces == {"meeting_id": "M-267"}
    # What the change left unwanted is undone by name: the old meeting's cancel, no call without
    # its arguments (read as a broken gold: playtests 7110, 7127, 7138).
    undo = [c for c in gold.superseded if c["name"] == "cancel_meeting"]
    assert undo == [{"name": "cancel_meeting", "arguments": {"meeting_id": "M-266"}}], gold.superseded
    assert all(c["arguments"] for c in gold.superseded)
    # The expert's episodes whose shift came after a write: none of its calls fits no step.
    shifted = 0
    for seed in range(60):
        record = play_job(EpisodeJob("AgentRL/ToolUse-v0", seed=seed, noise="goal_shift=1",
                                     kwargs=(("domain", "calendar"),)), AgentSpec("expert"))
        if record["metrics"]["gold"]["superseded_calls"] and record["metrics"]["success"]:
            shifted += 1
            verdict = judge_episode(record)
            assert not [c for c in verdict.calls if c.wrong_because == "fits no step of the plan"], seed
    assert shifted >= 5


def test_book_meeting_says_the_organiser_is_listed_among_the_attendees_as_it_checks() -> None:
    """The tool refuses attendees without the organiser, so its description says to list them,
    not that they are among the attendees (read as added by the tool: CrossTask 7102 T23)."""
    summary = load_domains()["calendar"].toolkit.tool_specs()["book_meeting"].description.splitlines()[0]
    assert "list your own id among the attendees" in summary


def test_sum_amounts_subtracts_a_negative_amount() -> None:
    # A cross-task follow-up asks what is left of an allowance once a payment is out (CrossTask
    # 7162, 7200): the adding tool takes the payment as a negative amount.
    env = gym.make("AgentRL/ToolUse-v0", split="train", difficulty="easy", domain="finance")
    env.reset(seed=3)
    for amounts, total in (([2601.38, -595.55], 2005.83), ([-10.5], -10.5), ([0.1, 0.2, -0.3], 0.0)):
        obs, *_ = env.step(json.dumps({"name": "sum_amounts", "arguments": {"amounts": amounts}}))
        assert json.loads(obs.split("] ", 1)[1])["total"] == total, obs
    obs, *_ = env.step(json.dumps({"name": "sum_amounts", "arguments": {"amounts": [-20_000_000.0]}}))
    assert "error" in obs.lower(), obs
