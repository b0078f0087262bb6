"""Tests for agentgym.toolenv.user: the default user states, reveals and judges from the task's
details, and offers every user-side noise from them."""

from __future__ import annotations

from typing import Any

from agentgym.core.seeding import fast_stream
from agentgym.core.task import NoiseEvent, Score, Task
from agentgym.toolenv import Detail, Shift, ToolTask, gold_call
from agentgym.toolenv.task import GoldPlan
from agentgym.toolenv.user import PATIENCE, DetailUser


def _episode(shifts: tuple[Shift, ...] = (), max_turns: int = 12) -> tuple[Task, DetailUser]:
    goal = ToolTask(
        request="I'd like a refund.",
        details=[Detail("email", "ana@example.com", "My email is {value}.", vague="You have my details on file."),
                 Detail("amount", 20, "Please refund {value} euros.", reveal="ask", ask=("how much",))],
        gold_calls=[gold_call("find", email="ana@example.com"), gold_call("refund", order_id="o-1", amount=20)],
        shifts=shifts, max_turns=max_turns)
    task = Task(family="t", domain="d", difficulty="easy", split="train", seed=0, task_id="t/0", brief="",
                world={"refunds": []}, goal=goal, gold=GoldPlan(tuple(goal.gold_calls)), max_turns=max_turns,
                extra={"writes": []})

    def score(t: Task) -> Score:
        done = t.world["refunds"] == [t.goal.value("amount")]
        return Score(float(done), done)

    return task, DetailUser(task, fast_stream(0, "user"), score)


def _write(task: Task, amount: Any, order_id: str = "o-1") -> None:
    task.world["refunds"].append(amount)
    task.extra["writes"].append({"name": "refund", "arguments": {"order_id": order_id, "amount": amount}})


def test_the_opening_states_the_request_and_the_up_front_details_only() -> None:
    _, user = _episode()
    assert user.opening() == "I'd like a refund. My email is ana@example.com."
    assert user.known_constraints() == ["email"]


def test_asked_about_a_detail_the_user_states_it_and_counts_it_as_stated() -> None:
    _, user = _episode()
    assert user.reply("How much should I refund?", 1).text == "Please refund 20 euros."
    assert user.known_constraints() == ["email", "amount"]


def test_an_open_question_gets_the_next_unstated_detail_then_everything() -> None:
    _, user = _episode()
    assert user.reply("Anything else I should know?", 1).text == "Please refund 20 euros."
    assert "everything" in user.reply("Anything else?", 2).text


def test_what_the_user_cannot_place_gets_a_request_to_rephrase_never_a_detail() -> None:
    _, user = _episode()
    for message in ("What colour is the sky?", "Can you hear me?"):
        text = user.reply(message, 1).text
        assert "rephrase" in text and "20" not in text
    assert user.reply("", 1).text.startswith("Sorry")
    assert user.reply("Shall I go ahead?", 1).text == "Yes, please go ahead."
    assert "done" in user.reply("Done!", 1).text  # "I don't see that done yet"
    assert user.known_constraints() == ["email"]


def test_contradictions_are_of_stated_details_and_judged_by_value() -> None:
    _, user = _episode()
    assert user.contradictions("refund", {"order_id": "o-1", "amount": 99}) == []  # the amount is not said yet
    user.reply("How much?", 1)
    assert user.contradictions("refund", {"order_id": "o-1", "amount": 99}) == ["amount"]
    assert user.contradictions("refund", {"order_id": "o-1", "amount": 20.0}) == []  # JSON equality
    assert user.contradictions("find", {"email": "bob@example.com"}) == ["email"]
    assert user.contradictions("find", {"query": "x"}) == []


def test_the_user_accepts_when_the_scorer_says_done_and_gives_up_after_wrong_writes() -> None:
    task, user = _episode()
    _write(task, 20)
    turn = user.react([], 3)
    assert turn is not None and turn.end == "accepted"
    task, user = _episode()
    for k in range(PATIENCE):
        _write(task, 5, order_id="o-9")  # fits no gold step
        turn = user.react([], 3 + k)
        assert turn is not None and "not what I asked" in turn.text
    assert turn.end == "gave_up"
    task, user = _episode()
    _write(task, 5)  # fits the refund step's tool, not its amount: wrong too
    assert user.react([], 3).end is None


def test_with_final_writes_one_wrong_write_ends_it_and_no_fix_is_invited() -> None:
    """The default scorer counts every write that fits no gold step against success for good:
    the user then says so and leaves, and never says "not done yet" to a task no fix can save."""
    task, user = _episode()
    user = DetailUser(task, fast_stream(0, "user"), user._score, writes_are_final=True)
    assert "don't see that done" in user.reply("Done!", 1).text  # nothing wrong yet: in reach
    _write(task, 5, order_id="o-9")
    turn = user.react([], 3)
    assert turn is not None and turn.end == "gave_up" and "can't be undone" in turn.text


def test_typos_skip_stock_replies_and_keep_values() -> None:
    task, user = _episode()
    rng = fast_stream(3, "noise/typos")
    for stock in ("Please go ahead.", "I'm not sure what you mean. Could you rephrase that?"):
        assert user.perturb_text(stock, rng) == (stock, [])
    for _ in range(20):
        text, changes = user.perturb_text("Please refund 20 euros to ana@example.com quickly, thanks.", rng)
        assert "ana@example.com" in text and "20" in text


def test_ambiguity_leaves_an_up_front_detail_out_until_asked() -> None:
    _, user = _episode()
    event = user.blur(fast_stream(1, "noise/ambiguity"))
    assert event == NoiseEvent(target="email", detail="the request leaves out the email")
    assert user.opening() == "I'd like a refund. You have my details on file."
    assert user.known_constraints() == []
    assert "rephrase" in user.reply("How can I reach you?", 1).text  # not a phrase this detail lists
    assert user.reply("What is your email?", 1).text == "My email is ana@example.com."
    assert user.known_constraints() == ["email"]


def test_a_goal_shift_is_announced_at_its_turn_and_moves_the_gold() -> None:
    task, user = _episode(shifts=(Shift("amount", 30),))
    fired: list[NoiseEvent] = []
    assert user.plan_goal_shift(fast_stream(2, "noise/goal_shift"), fired.append)
    assert user.shift_pending()
    user.reply("How much?", 1)
    assert fired == []  # turn 1 is before every planned turn (2, 3 or 4)
    text = user.reply("Thanks.", 5).text
    assert "30 euros" in text and "changed my mind" in text
    assert fired == [NoiseEvent("amount", {"from": 20, "to": 30, "recoverable": True})]
    assert task.goal.value("amount") == 30
    assert task.gold.calls[1]["arguments"]["amount"] == 30
    assert [s["arguments"].get("amount") for s in task.gold.superseded] == [None, 20]
    assert user.contradictions("refund", {"order_id": "o-1", "amount": 20}) == ["amount"]
    assert not user.shift_pending()


def test_asked_to_confirm_the_user_answers_with_the_pending_shift() -> None:
    task, user = _episode(shifts=(Shift("amount", 30, announce="Make it 30 instead."),))
    fired: list[NoiseEvent] = []
    user.plan_goal_shift(fast_stream(2, "noise/goal_shift"), fired.append)
    assert user.reply("Shall I refund 20 euros?", 1).text == "Make it 30 instead."
    assert len(fired) == 1


def test_a_shift_seen_on_a_write_with_the_old_value_cannot_be_recovered() -> None:
    task, user = _episode(shifts=(Shift("amount", 30),))
    fired: list[NoiseEvent] = []
    user.plan_goal_shift(fast_stream(2, "noise/goal_shift"), fired.append)
    user.reply("How much?", 1)
    _write(task, 20)
    turn = user.react([], 2)
    assert turn is not None and "30 euros" in turn.text and turn.end is None  # judged against the new goal
    assert "not what I asked" not in turn.text  # the write was right when made
    assert fired[0].recoverable is False and fired[0].detail["recoverable"] is False


def test_a_shift_too_late_to_act_on_is_unrecoverable_and_a_task_without_shifts_offers_none() -> None:
    _, user = _episode(shifts=(Shift("amount", 30),), max_turns=4)
    fired: list[NoiseEvent] = []
    user.plan_goal_shift(fast_stream(2, "noise/goal_shift"), fired.append)
    user.reply("OK.", 3)
    user.reply("OK.", 4)
    assert fired and fired[0].recoverable is False
    _, plain = _episode()
    assert plain.plan_goal_shift(fast_stream(2, "noise/goal_shift"), fired.append) is False
    _, same = _episode(shifts=(Shift("amount", 20),))  # no change is no shift
    assert same.plan_goal_shift(fast_stream(2, "noise/goal_shift"), fired.append) is False


def test_typos_never_touch_a_details_value() -> None:
    _, user = _episode()
    text = "Hello there, my email is ana@example.com and I would like a refund please."
    for seed in range(30):
        out, changes = user.perturb_text(text, fast_stream(seed, "noise/typos"))
        assert "ana@example.com" in out
        assert changes and out != text
