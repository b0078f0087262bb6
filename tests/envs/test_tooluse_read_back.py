"""The ToolUse user answers a read-back of its own request with a yes, and a plan that names
another value than the one it wants with what it wants.

A playtest (ToolUse 7197, train, easy) read back "order O-63031, item I-6988, the e-reader in
white, to be exchanged for the same e-reader in black - correct? ... Shall I go ahead with the
exchange?" and got the request restated instead of a yes; a plan that exchanged the e-reader for
white, to a user who wants black, got "Yes, please go ahead." Episodes of train/easy, one per
kind of variant: words (seeds 7197 and 12), sizes (97) and numbers (140); and read-backs of the
other domains' requests (seed 3: finance, calendar; ops on the test split).
"""

from __future__ import annotations

import gymnasium as gym
import pytest
from playtest_turns import reply_to

import agentgym  # noqa: F401  (registers the ids)
from agentgym.envs.tooluse.plan_values import names_other_choice, names_other_id
from agentgym.envs.tooluse.replies import RIGHT, YES

BLACK = "I'd like the black e-reader instead."


def _reply(seed: int, message: str, **kwargs: str) -> str:
    env = gym.make("AgentRL/ToolUse-v0", **{"split": "train", "difficulty": "easy", **kwargs})
    env.reset(seed=seed)
    return env.step(message)[4]["messages"][-1]["content"]


def test_the_playtests_read_back_gets_a_yes() -> None:
    _env, _actions, said = reply_to("tooluse-7197-train.jsonl", 2)
    assert said in YES


@pytest.mark.parametrize("message", [
    "Order O-63031, the e-reader in white, to be exchanged for black - correct? Shall I go ahead?",
    "To confirm: exchange the white e-reader (order O-63031) for the black one. Is that right?",
    "Just to confirm, it's order O-63031 and you'd like the black e-reader?",
    "So: order O-63031, e-reader, swap to black. Correct?",
    "So: order O-63031 (item I-6988), e-reader, swap to black, confirmation to mia.carter22@example.com. Correct?",
    "Is this about the e-reader on order O-63031?",
])
def test_a_read_back_of_what_the_user_said_gets_a_yes(message: str) -> None:
    assert _reply(7197, message) in YES


@pytest.mark.parametrize("message", [
    "I'll exchange the e-reader on order O-63031 for white. Shall I go ahead?",
    "Can I go ahead and exchange it for white?",
    "Should I swap the e-reader for the white model?",
    "To confirm: exchange the e-reader (order O-63031) for the white one. Is that right?",
    "To confirm: exchange the e-reader on order O-63031 for the white one - the e-reader, correct?",
    "Just to check - you want the e-reader swapped for the white version?",
])
def test_a_plan_for_another_variant_gets_the_wanted_one(message: str) -> None:
    said = _reply(7197, message)
    assert said not in YES and BLACK in said


@pytest.mark.parametrize(("seed", "message", "wanted"), [
    (12, "I'll exchange your black action camera for the grey one. Shall I go ahead?", None),
    (12, "I'll exchange the action camera for black. Shall I go ahead?", "grey"),
    (97, "I'll swap the L sweater for an M. Shall I go ahead?", None),
    (97, "I'll swap the L sweater for an S. Shall I go ahead?", "M wool sweater"),
    (140, "They arrived 8 days ago, so I'll exchange the running shoes for size 10. OK to go ahead?", None),
    (140, "Your size 11 shoes came on 2025-05-20: shall I exchange them for a 10?", None),
    (140, "I'll exchange the running shoes for size 9. OK to go ahead?", "10 running shoes"),
])
def test_variants_are_read_as_whole_words_and_where_they_are_the_new_one(seed: int, message: str,
                                                                         wanted: str | None) -> None:
    said = _reply(seed, message)
    if wanted is None:
        assert said in YES
    else:
        assert said not in YES and wanted in said


@pytest.mark.parametrize(("message", "detail"), [
    ("Is this about the e-reader on order O-99999?", "order O-63031"),
    ("So: order O-99999, e-reader, swap to black. Correct?", "order O-63031"),
    ("So: order O-63031, e-reader, swap to black, confirmation to mia@example.com. Correct?", "mia.carter22@example.com"),
])
def test_a_read_back_with_another_id_gets_the_users_own(message: str, detail: str) -> None:
    said = _reply(7197, message)
    assert said != RIGHT and detail in said


@pytest.mark.parametrize("message", [
    "I require the email address on your account to process the exchange for black. Kindly provide it.",
    "Which order is it - and you want black, right?",
    "Please confirm your email, and that you want the black one?",
])
def test_a_read_back_that_asks_for_a_value_gets_the_value(message: str) -> None:
    assert _reply(7197, message) not in YES


# Seed 3 (train, easy): Kavya Haddad (E-897), approved June 2025 expenses, in EUR; a 60-minute
# call "Quarterly planning" with Leila Tran on Thursday 2025-07-31. Test split, ops: an alert on
# email, filed as sev2, no rollback (said when asked).
@pytest.mark.parametrize(("domain", "message"), [
    ("finance", "Just to confirm: Kavya Haddad (E-897), approved June 2025 expenses, total in EUR - correct?"),
    ("finance", "Reading it back: employee E-897, month 2025-06, currency EUR. Correct?"),
    ("finance", "I'll submit 715.82 EUR as the amount owed to Kavya Haddad for June 2025 - shall I go ahead?"),
    ("calendar", 'To confirm: a 60-minute call titled "Quarterly planning" with Leila Tran on Thursday 2025-07-31 - '
                 'correct?'),
    ("calendar", "So: Quarterly planning, 60 min, Leila Tran, 2025-07-31. Right?"),
    ("ops", "To confirm: the alert is on email, and you want it filed as sev2 - correct?"),
])
def test_read_backs_in_every_domain_get_a_yes(domain: str, message: str) -> None:
    split = "test" if domain == "ops" else "train"
    assert _reply(3, message, split=split, domain=domain) in YES


@pytest.mark.parametrize(("domain", "message", "detail"), [
    ("finance", "Reading it back: employee E-897, month 2025-06, currency USD. Correct?", "EUR"),
    ("finance", "Reading it back: employee E-898, month 2025-06, currency EUR. Correct?", "E-897"),
    ("finance", "I'll submit 715.82 EUR as the amount owed to Kavya Haddad for July 2025 - shall I go ahead?",
     "June 2025"),
    ("finance", "I'll submit the total for E-898 (2025-06) in EUR. Shall I go ahead?", "E-897"),
    ("finance", "I'll submit the June total, month 2025-07, in EUR. Shall I go ahead?", "June 2025"),
    ("calendar", "So: Quarterly planning, 30 min, Leila Tran, 2025-07-31. Right?", "60 minutes"),
    ("ops", "I'll file the incident as sev1 naming catalog v2.0.5 as the cause. Shall I go ahead?", "sev2"),
])
def test_a_plan_with_another_value_gets_the_users_own(domain: str, message: str, detail: str) -> None:
    split = "test" if domain == "ops" else "train"
    said = _reply(3, message, split=split, domain=domain)
    assert said not in YES and detail in said, said


def test_a_question_word_question_beside_a_name_is_no_read_back() -> None:
    said = _reply(3, "What time works for the call with Leila Tran?", domain="calendar")
    assert said != RIGHT


def test_names_other_choice() -> None:
    words, owned = ("black", "white"), frozenset({"white"})
    assert names_other_choice("I'll exchange it for white.", "black", words, owned)
    assert names_other_choice("Exchange for WHITE?", "black", words, owned)
    assert not names_other_choice("Exchange the white e-reader for the black one.", "black", words, owned)
    assert not names_other_choice("Your white e-reader: shall I exchange it?", "black", words, owned)
    sizes = ("S", "M", "L", "XL")
    assert not names_other_choice("I'm sorry, it's the L one for M then", "M", sizes, frozenset({"l"}))
    assert names_other_choice("I'm swapping it to XL", "M", sizes, frozenset({"l"}))
    assert not names_other_choice("It arrived 8 days ago. For 10 then?", "10", ("8", "9", "10"), frozenset({"9"}))


def test_names_other_id() -> None:
    said = ["It's the order I placed on 2025-11-16 (order O-63031).", "It's mia.carter22@example.com."]
    assert not names_other_id(said, "order O-63031, item I-6988, to mia.carter22@example.com")
    assert names_other_id(said, "order O-63032")
    assert not names_other_id(said, "orders O-63031 and O-63032")
    assert names_other_id(said, "the confirmation goes to mia@example.com")
    assert not names_other_id(["It's about the e-reader."], "order O-1")


@pytest.mark.parametrize("message", [
    "They have 5 approved expenses (all CHF). Which currency for the report + payout?",
    "The expenses are in CHF. Which currency should I pay them in?",
])
def test_a_question_for_a_value_the_account_beside_it_names_gets_the_value(message: str) -> None:
    # A playtest (CrossTask 9123 T25): "Chloe has 5 approved Mar expenses (all EUR). Which currency
    # for the report + payout?" got "Yes, that's right." from a user who wants EUR: the account's
    # value read as a read-back to confirm. The question asks which: the user names its currency.
    said = _reply(6, message, difficulty="medium")
    assert said != RIGHT and "CHF" in said, said


def test_a_question_that_names_the_value_itself_is_a_read_back() -> None:
    assert _reply(6, "Which currency, CHF?", difficulty="medium") == RIGHT
    assert _reply(6, "So you'd like it in CHF?", difficulty="medium") == RIGHT
