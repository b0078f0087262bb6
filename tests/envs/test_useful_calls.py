"""Reads a careful agent needs beyond the gold plan count as useful, from kept playtests: the
reads a policy names (ops' get_metrics), a come-back's search and checks, a search with a need
the user later gave up, and the read after a write a fault stopped (docs/METRICS.md)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from playtest_turns import REPORT, played

from agentgym.envs.dialog.tasks import booked_in
from agentgym.eval.judging import judge_episode


def _verdicts(name: str) -> tuple[dict[str, Any], list[Any]]:
    """The kept playtest `name` played to its end: the episode summary and each call's verdict."""
    env, actions = played(name, 0)
    info: dict[str, Any] = {}
    for action in [*actions, REPORT]:
        if env.unwrapped.awaiting_report and action is not REPORT:
            *_, terminated, truncated, info = env.step(REPORT)
            if terminated or truncated:
                break
        *_, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    summary = info["episode_summary"]
    return summary, judge_episode({"metrics": summary, "steps": [], "agent_error": None}).calls


def _of(summary: dict[str, Any], calls: list[Any], name: str, **arguments: Any) -> list[Any]:
    """The verdicts of the calls of tool `name` whose arguments include `arguments`."""
    return [c for c in calls if c.name == name
            and arguments.items() <= (summary["calls"][c.index].get("arguments") or {}).items()]


def test_the_metrics_the_ops_policies_point_to_are_useful() -> None:
    # "The cause is the root-cause service's last deploy before its errors began (get_metrics
    # gives that instant as errors_since_utc)": ToolUse 7237 T5 read it for the root (email);
    # the plan reads the onset off its error log. Every service the logs lead through (the
    # alerting ledger to the root, email) is read so; a service off the walk is no such read.
    summary, calls = _verdicts("tooluse-7237-test.jsonl")
    assert summary["success"]
    pointed = summary["gold"]["useful_calls"]
    walked = {c["arguments"]["service"] for c in summary["gold"]["calls"] if c["name"] == "search_logs"}
    assert {"ledger", "email"} <= walked and "sessions" not in walked
    assert {c["arguments"].get("service") for c in pointed if c["name"] == "get_metrics"} == walked
    assert all(c.useful for c in _of(summary, calls, "get_metrics", service="email"))
    assert not any(c.useful for c in _of(summary, calls, "get_metrics", service="sessions"))


def test_a_come_backs_search_and_the_checks_of_the_days_before_the_next_open_one_are_useful() -> None:
    # CrossTask 7239: the next-open come-back's checks of the closed days (Tuesday, Wednesday),
    # the budget come-back's searches in Riverside, the series' checks of another place on the
    # days the booked one is closed (cowork_012).
    summary, calls = _verdicts("crosstask-7239-test.jsonl")
    assert summary["success"]
    closed = [c for day in ("tuesday", "wednesday")
              for c in _of(summary, calls, "check_availability", item_id="cowork_014", day=day, slot="afternoon")]
    assert closed and all(c.useful for c in closed if not c.repeat)
    budget = _of(summary, calls, "search", area="Riverside", max_price=30)
    assert len(budget) == 2 and all(c.useful for c in budget)
    other = [c for c in _of(summary, calls, "check_availability", item_id="cowork_012") if not c.repeat]
    assert other and all(c.useful for c in other)


def test_a_search_with_a_need_the_user_then_gave_up_is_useful() -> None:
    # Dialog 7234 T2: the search with every need the user stated, before it gave one up; it
    # was "no step of the plan", which lists the needs kept.
    summary, calls = _verdicts("dialog-7234-test.jsonl")
    assert summary["success"]
    gave_up = _of(summary, calls, "search", amenities=["parking", "dance floor", "stage"])
    assert gave_up and all(c.useful for c in gave_up)
    assert any(c["name"] == "search" for c in summary["gold"]["superseded_calls"])


def test_the_read_after_a_booking_that_timed_out_is_useful() -> None:
    # CrossTask 7240 T14: the booking timed out; T15's list_bookings is the way its description
    # names to tell whether it took effect.
    summary, calls = _verdicts("crosstask-7240-train.jsonl")
    assert summary["success"]
    after = [c for c in calls if c.name == "list_bookings" and any(
        d.name == "book" and d.injected and d.index < c.index for d in calls)]
    assert after and after[0].useful


def test_the_alerts_the_severity_policy_turns_on_are_a_useful_read() -> None:
    # "the service where the errors were reported (the one with the error-rate alert)": only
    # list_alerts shows it, though the request names the service (ToolUse 7247 T1).
    summary, calls = _verdicts("tooluse-7247-test.jsonl")
    assert summary["success"]
    alerts = _of(summary, calls, "list_alerts")
    assert alerts and alerts[0].useful


def test_the_details_of_the_place_booked_are_a_useful_read() -> None:
    # Search results show no amenities: the booked place's details are the read that does
    # (Dialog 7253 T10); a place that is not booked is the agent's own exploration.
    summary, calls = _verdicts("dialog-7253-test.jsonl")
    assert summary["success"]
    gold = summary["gold"]
    booked = {*gold["items"], *booked_in(tuple(gold["superseded_calls"]))}
    details = [c for c in _of(summary, calls, "get_details") if not c.repeat]
    assert any(c.useful for c in details)
    assert all(c.useful == (summary["calls"][c.index]["arguments"]["item_id"] in booked) for c in details)


def test_the_details_of_a_place_a_replaced_plan_would_book_are_a_useful_read() -> None:
    # Dialog 7846 T4: the ballroom the rules picked for booking D was read for its amenities;
    # the world took it at T8, so the final plan books another. The read was right when made.
    summary, calls = _verdicts("dialog-7846-test.jsonl")
    assert summary["success"]
    (read,) = [c for c in _of(summary, calls, "get_details", item_id="venue_012") if not c.repeat]
    assert read.useful
    assert "venue_012" in booked_in(tuple(summary["gold"]["superseded_calls"]))
    assert not any("venue_012" in plan for plan in summary["gold"]["accepted"])


def test_the_read_after_a_timed_out_booking_counts_past_the_writes_sent_beside_it() -> None:
    # Dialog 7271 T16: the booking timed out beside two cancels sent in the same turn; T17's
    # list_bookings, the first read after it, was "a repeat" of T9's (after another fault).
    summary, calls = _verdicts("dialog-7271-train.jsonl")
    assert summary["success"]
    assert all(c.useful for c in _of(summary, calls, "list_bookings"))


def test_the_details_of_a_place_booked_and_then_given_up_are_a_useful_read() -> None:
    # Dialog 7275 T5: the details of the place then booked (a late need later ruled it out) were
    # "no step of the plan", where the same read of the final place counted; so were those of
    # cowork_041, which misses one need of this give-way task (a candidate: see below). Dialog
    # 7276 T12: an itinerary's place, read before booking it.
    summary, calls = _verdicts("dialog-7275-test.jsonl")
    assert summary["success"]
    assert all(c.useful for c in _of(summary, calls, "get_details", item_id="cowork_045"))
    assert "cowork_041" in summary["gold"]["useful_calls"][0]["arguments"]["item_id"]["any_of"]
    assert all(c.useful for c in _of(summary, calls, "get_details", item_id="cowork_041"))
    summary, calls = _verdicts("dialog-7276-test.jsonl")
    assert all(c.useful for c in _of(summary, calls, "get_details", item_id="cowork_048"))


def test_the_organiser_s_directory_entry_is_a_useful_read() -> None:
    # ToolUse 8709 T1 (and 7257 T1): the day-off rule asks whether anyone is off, the brief gives
    # the organiser's id, zone and hours but not the days off, and only find_person shows them.
    summary, calls = _verdicts("tooluse-8709-train.jsonl")
    assert summary["success"]
    (organiser,) = _of(summary, calls, "find_person", query="Jun Weber")
    assert organiser.useful


def test_each_hop_s_metrics_and_dependencies_are_useful_reads() -> None:
    # The root cause "fails on its own": its dependencies are the direct check (ToolUse 8714 T4,
    # CrossTask 8735 T12). A victim is a service "whose error log only reports failures of a
    # service it calls", so what a service the logs lead through calls, and its metrics, are how
    # a careful agent confirms each hop (ToolUse 9484 T1-T4, 9467 T4; CrossTask 9465, 9477, 9487:
    # charged); a service the logs do not lead through is not read for the walk (9484 T5, T6).
    summary, calls = _verdicts("tooluse-8714-test.jsonl")
    assert summary["success"]
    (root,) = _of(summary, calls, "get_dependencies", service="cart")
    (victim,) = _of(summary, calls, "get_dependencies", service="profile")
    assert root.useful and victim.useful
    summary, calls = _verdicts("tooluse-9484-test.jsonl")
    assert summary["success"]
    for service in ("checkout", "payments", "notifications", "email", "billing"):
        for tool in ("get_metrics", "get_dependencies"):
            assert [c.useful for c in _of(summary, calls, tool, service=service) if not c.repeat] == [True], (tool, service)
    for service in ("search", "catalog"):
        assert not any(c.useful for c in _of(summary, calls, "search_logs", service=service)), service
    assert not any(c.useful for c in _of(summary, calls, "get_deploys", service="payments"))


def test_every_attendee_s_calendar_on_the_date_does_the_work_of_the_free_starts() -> None:
    # ToolUse 9488 T2 and 9493 T3 (and 9404 T2): every attendee's calendar read on the meeting's
    # date, the earliest start worked out from them and the working hours; recall still asked
    # for get_free_slots' pages ("gold step not done"). Each page step lists the calendars as
    # its `or_reads`, and is done when they all went through.
    for name in ("tooluse-9488-train.jsonl", "tooluse-9493-train.jsonl"):
        summary, calls = _verdicts(name)
        assert summary["success"]
        pages = [i for i, c in enumerate(summary["gold"]["calls"]) if c["name"] == "get_free_slots"]
        assert pages and all(summary["gold"]["calls"][i]["or_reads"] for i in pages)
        done = {c.completes for c in calls} | {i for c in calls for i in c.routed}
        assert set(pages) <= done, (name, pages, done)
    # a calendar missing leaves the step to its own call
    env = gym.make("AgentRL/ToolUse-v0", difficulty="hard", split="train")
    env.reset(seed=9493)
    gold = env.unwrapped._task.gold.to_dict()
    page = next(c for c in gold["calls"] if c["name"] == "get_free_slots")
    reads = page["or_reads"]
    assert len(reads) == len(page["arguments"]["person_ids"]["any_order"])
    from agentgym.eval.judging import _Plan, _routed

    routes = {0: (_Plan(reads), set())}
    done = [False]
    for read in reads[:-1]:
        assert _routed(routes, done, read) == ()
    assert _routed(routes, done, reads[-1]) == (0,) and done == [True]


def test_refunds_whose_approvals_came_back_in_another_order_are_the_plan_s() -> None:
    # ToolUse 7421 (a round of 0.26's playtests): two approvals were asked for in another order
    # than the gold's, and each refund passed the id its own approval returned; the gold's ids
    # were the other way round, so both refunds "fit no step of the plan". Here: the oracle's
    # episode of an orders task with two approvals, the approvals asked for the other way round.
    import json

    import gymnasium as gym

    from agentgym.agents import make_agent
    from agentgym.eval.episode import run_episode

    env = gym.make("AgentRL/ToolUse-v0", split="train", difficulty="hard", domain="orders")
    actions = list(run_episode(env, make_agent("oracle"), 0).actions)
    calls = {k: json.loads(a) for k, a in enumerate(actions) if a.startswith("{")}
    asks = [k for k, c in calls.items() if c["name"] == "request_refund_approval"]
    refunds = [k for k, c in calls.items() if c["name"] == "refund_item" and "approval_id" in c["arguments"]]
    assert len(asks) == len(refunds) == 2
    first, second = (calls[k] for k in asks)
    refund_first, refund_second = (calls[k] for k in refunds)
    # Both approvals before either refund, the second item's first (it gets the first id); each
    # refund passes the id its own approval returned.
    refund_first["arguments"]["approval_id"], refund_second["arguments"]["approval_id"] = (
        refund_second["arguments"]["approval_id"], refund_first["arguments"]["approval_id"])
    for k, call in zip((asks[0], refunds[0], asks[1], refunds[1]), (second, first, refund_first, refund_second)):
        actions[k] = json.dumps(call)
    env.reset(seed=0)
    info: dict[str, Any] = {}
    for action in actions:
        *_, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    summary = info["episode_summary"]
    assert summary["success"] and not summary["policy_violations"]
    verdicts = judge_episode({"metrics": summary, "steps": [], "agent_error": None}).calls
    judged = _of(summary, verdicts, "refund_item")
    assert len(judged) >= 2 and all(c.right and c.useful for c in judged)


def test_a_look_at_the_bookings_made_is_useful_wherever_it_falls() -> None:
    # CrossTask 8919 T19: list_bookings after a cancel that went through on its third try (a 429,
    # a 503); CrossTask 8913 T29: after a confirmed cancel. The brief points to it as the way to see
    # which bookings stand; both were "no step of the plan". One look is useful, a second is not.
    for name in ("crosstask-8919-test.jsonl", "crosstask-8913-train.jsonl"):
        summary, calls = _verdicts(name)
        assert summary["success"]
        looks = [c for c in calls if c.name == "list_bookings" and not c.injected]
        assert looks and all(c.useful for c in looks if not c.repeat), (name, looks)
        assert sum(c["name"] == "list_bookings" for c in summary["gold"]["useful_calls"]) == 1


def test_each_attendees_calendar_on_the_meetings_date_is_a_check_of_the_free_slots() -> None:
    # CrossTask 8910 T4: get_free_slots checked against the five attendees' get_calendar on the
    # meeting's date, "as the brief asks" (check again a value a write rests on); each was charged
    # while the same get_free_slots made again would not have been. Another date is no such check.
    summary, calls = _verdicts("crosstask-8910-train.jsonl")
    assert summary["success"]
    (slots,) = [c for c in summary["gold"]["calls"] if c["name"] == "get_free_slots"]
    on_date = [c for c in _of(summary, calls, "get_calendar", date=slots["arguments"]["date"]) if not c.injected]
    assert len(on_date) >= 5 and all(c.useful for c in on_date if not c.repeat)


def test_the_calendar_checks_are_listed_once_when_the_free_starts_come_in_pages() -> None:
    # ToolUse 8935 (hard, train): the tier's gold reads get_free_slots a page at a time; each
    # attendee's calendar on the date was listed once per page.
    env = gym.make("AgentRL/ToolUse-v0", difficulty="hard", split="train")
    env.reset(seed=8935)
    gold = env.unwrapped._task.gold.to_dict()
    pages = [c for c in gold["calls"] if c["name"] == "get_free_slots"]
    checks = [c for c in gold["useful_calls"] if c["name"] == "get_calendar"]
    assert len(pages) > 1 and checks
    assert len({(c["arguments"]["person_id"], c["arguments"]["date"]) for c in checks}) == len(checks) \
        == len(pages[0]["arguments"]["person_ids"]["any_order"])


def test_the_organisers_own_find_person_is_useful() -> None:
    # CrossTask 8948 T1 (easy) and 8932 T7: the organiser's find_person was charged, where the
    # calendar tier counts it; the working-hours policy covers every attendee, the organiser too,
    # and the brief gives the organiser's id and zone, not the hours.
    for name in ("crosstask-8948-train.jsonl", "crosstask-8932-train.jsonl"):
        summary, calls = _verdicts(name)
        assert summary["success"]
        pointed = [c["arguments"]["query"]["words_of"] for c in summary["gold"]["useful_calls"]
                   if c["name"] == "find_person"]
        assert len(pointed) == 1, (name, pointed)
        looks = [c for c in _of(summary, calls, "find_person") if not c.injected and not c.repeat
                 and set(pointed[0].lower().split()) <= set(str(summary["calls"][c.index]["arguments"]["query"])
                                                            .lower().split())]
        assert looks and all(c.useful for c in looks), (name, looks)


def test_the_details_of_a_place_that_meets_every_need_so_far_are_a_useful_read() -> None:
    # Dialog 9080 T5 and CrossTask 9064 T3: the details of a place that met every need the user
    # had told, read before the check that showed it full, were charged "no step of the plan"
    # (hindsight: the agent could not know). A place that breaks a need already held stays the
    # agent's own exploration (Dialog 7253 above).
    # On the hard tier's give-way tasks (no place meets every need at once), the details of a
    # place that misses at most one need are how the agent tells what giving way would bring
    # (Dialog 9075 T4; 9078 T3, a place a need still to come ruled out).
    for name, item in (("dialog-9080-test.jsonl", "venue_034"), ("crosstask-9064-train.jsonl", "stay_001"),
                       ("dialog-9075-train.jsonl", "rest_015"), ("dialog-9078-test.jsonl", "cowork_004")):
        summary, calls = _verdicts(name)
        assert summary["success"]
        (read,) = [c for c in _of(summary, calls, "get_details", item_id=item) if not c.repeat and not c.injected]
        assert read.useful, name


def test_the_candidates_are_the_places_meeting_every_need_but_the_late_ones_open_or_not() -> None:
    from agentgym.envs.dialog.tasks import generate_task, keep

    for seed in range(7, 27):
        task = generate_task(seed, {"domain": "stays", "difficulty": "medium"})
        gold = task.gold
        early = [c for c in gold.constraints if c.kind != "time" and c.reveal != "late"]
        expected = [p.id for p in task.world.places if all(keep([p], c.kind, c.value) for c in early)]
        assert list(gold.candidates) == expected
        assert set(gold.items) <= set(gold.candidates) or any(c.reveal == "late" for c in gold.constraints)
        (details,) = [c for c in gold.useful_calls() if c["name"] == "get_details"]
        assert set(gold.candidates) <= set(details["arguments"]["item_id"]["any_of"])


def test_a_come_backs_search_of_the_kind_of_its_one_candidate_is_useful() -> None:
    # CrossTask 9424, last come-back: the user gave up the kind ("it no longer needs to be of the
    # meeting room plan") and the one place with 24h access is a hot desk; the useful search was
    # of the booked place's kind alone (dedicated desk), so a search for hot desks was charged.
    summary, calls = _verdicts("crosstask-9424-test.jsonl")
    assert summary["success"]
    searches = [c for c in summary["gold"]["useful_calls"]
                if c["name"] == "search" and "24h access" in str(c["arguments"].get("amenities"))]
    assert searches and all("hot desk" in c["arguments"]["category"]["if_given"]["any_of"] for c in searches), searches


def test_an_itinerary_s_candidates_for_each_booking_are_useful_reads() -> None:
    # Dialog 9523 T3: the details of a place with bike storage open at booking B's time, weighed
    # for B and left out of the best plan, were charged, where a single booking's candidates count
    # (Dialog 9505 T4); only the places of the accepted plans were listed.
    summary, calls = _verdicts("dialog-9523-test.jsonl")
    assert summary["success"]
    (details,) = [c for c in summary["gold"]["useful_calls"] if c["name"] == "get_details"]
    listed = details["arguments"]["item_id"]["any_of"]
    assert "cowork_033" in listed and not {i for plan in summary["gold"]["accepted"] for i in plan} >= set(listed)
    assert all(c.useful for c in _of(summary, calls, "get_details", item_id="cowork_033") if not c.repeat)


def test_checks_past_the_next_open_day_sent_before_its_answer_came_back_are_useful() -> None:
    # CrossTask 9533 T18 (and 9465 T15, 9525 T15, 9540 T17): "the next day it is open" checked
    # Thursday to the end of the week in one turn; the days after Thursday, the answer, were
    # charged, though the agent could not know the answer when it sent them. A check of those
    # days counts when sent no later than the turn whose check of the answer went through.
    summary, calls = _verdicts("crosstask-9533-test.jsonl")
    assert summary["success"]
    batch = min(c.turn for c in _of(summary, calls, "check_availability", item_id="venue_051", day="thursday"))
    for day in ("friday", "sunday"):
        found = [c for c in _of(summary, calls, "check_availability", item_id="venue_051", day=day)
                 if c.turn == batch and not c.injected]
        assert found and all(c.useful for c in found), day
    # a day before the booked one (the week does not wrap) is no such check
    assert not any(c.useful for c in _of(summary, calls, "check_availability", item_id="venue_051", day="monday")
                   if c.turn == batch)
    # the same check sent a turn after the answer was seen is charged
    from agentgym.eval.judging import _Plan, _pointed_to, _seen_turns

    answer = {"name": "check_availability", "arguments": {"item_id": "p", "day": "thursday", "slot": "evening"}}
    beyond = {"name": "check_availability", "arguments": {"item_id": "p", "day": "friday", "slot": "evening"},
              "until_seen": answer}
    pointed = _Plan([beyond])
    seen = _seen_turns([{**answer, "turn": 4, "valid": True, "error": None}], pointed)
    friday = {"name": "check_availability", "arguments": beyond["arguments"], "valid": True, "error": None}
    assert _pointed_to(pointed, {**friday, "turn": 4}, False, False, seen)
    assert not _pointed_to(pointed, {**friday, "turn": 5}, False, False, seen)
    assert _pointed_to(pointed, {**friday, "turn": 9}, False, False, _seen_turns([], pointed))
