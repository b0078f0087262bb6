"""The agents' one reading of the public transcript: key stems, the brief's vocabulary, tool
results decoded into records and values with their paths, and the schema check."""

from __future__ import annotations

import json

from agentgym.agents.transcript import (
    BriefVocabulary,
    ResultList,
    ResultRecord,
    answer_calls,
    item_key,
    key_stem,
    path_key,
    result_records,
    result_values,
    transient,
    user_texts,
    value_check,
)
from agentgym.envs.dialog.domain import load_domains
from agentgym.envs.dialog.tasks import brief_for


def test_key_names_of_one_thing_share_a_stem() -> None:
    assert key_stem("from_account") == key_stem("account_id") == key_stem("accounts")
    assert key_stem("person_ids") == key_stem("person_id") == key_stem("persons")
    assert key_stem("expense_ids") == key_stem("expenses") == key_stem("expense")
    assert key_stem("root_cause_service") == key_stem("services")
    assert key_stem("free_starts_utc") == key_stem("start_utc") == "utc"
    assert item_key("person_ids") == "person_id" and item_key("attendees") == "attendee"


def test_a_booking_brief_states_its_vocabulary() -> None:
    domain = load_domains()["stays"]
    vocab = BriefVocabulary.of(brief_for(domain))
    assert vocab.label == domain.category_label and vocab.categories == domain.categories
    assert vocab.noun == domain.noun and vocab.lists()["category"] == list(domain.categories)
    assert BriefVocabulary.of("No lists here.") == BriefVocabulary()


def test_a_result_is_read_into_records_and_values_with_their_paths() -> None:
    data = {"employee_id": "E-1", "expenses": [{"expense_id": "X-1", "amount": 12.5, "approved": True},
                                               {"expense_id": "X-2", "amount": 7}], "tags": ["a", "b"]}
    parts = result_records(data)
    top, first, second = (p for p in parts if isinstance(p, ResultRecord))
    assert top.path == () and first.path == ("expenses", 0) and second.path == ("expenses", 1)
    assert first.list_key == "expenses" and first.index == 0 and first.inherited == {"employee_id": "E-1"}
    lists = [p for p in parts if isinstance(p, ResultList)]
    assert [(lst.key, len(lst.records), lst.scalars) for lst in lists] == [("expenses", 2, []), ("tags", 0, ["a", "b"])]
    assert parts.index(lists[0]) > parts.index(second), "a list comes after its records"
    values = dict(result_values(data))
    assert values[("expenses", 1, "amount")] == 7 and values[("tags", 1)] == "b"
    assert list(values)[:3] == [("employee_id",), ("expenses", 0, "expense_id"), ("expenses", 0, "amount")]
    assert path_key(("tags", 1)) == "tag" and path_key(("expenses", 0, "amount")) == "amount" and path_key((0,)) is None


def test_tool_messages_pair_with_the_calls_that_made_them() -> None:
    pending = [("find", {"q": "a"}), ("list", {}), ("find", {"q": "b"})]
    messages = [{"role": "user", "content": "hi"}, {"role": "tool", "name": "find", "content": json.dumps({"x": 1})},
                {"role": "tool", "name": "find", "content": "[error TOOL_ERROR] find: the request timed out"},
                {"role": "user", "content": "[error PARSE_ERROR] not an action"}]
    first, second = answer_calls(pending, messages)
    assert first.call == ("find", {"q": "a"}) and first.data == {"x": 1} and not first.failed
    assert second.call == ("find", {"q": "b"}) and second.failed and second.data is None
    assert transient(second.text) and not transient("[error TOOL_ERROR] no customer 'C-42931'")
    assert pending == [("list", {})] and user_texts(messages) == ["hi"]


def test_a_value_fits_an_argument_by_the_envs_own_check() -> None:
    amount = value_check({"type": "number", "minimum": 0, "maximum": 100})
    assert amount(5) and amount(2.5) and not amount(-1) and not amount(True) and not amount("5")
    name = value_check({"type": ["string", "null"], "maxLength": 3})
    assert name("abc") and not name("abcd") and name(None)
    assert value_check({"enum": ["EUR", "USD"]})("EUR") and not value_check({"enum": ["EUR", "USD"]})("GBP")
    assert value_check({})(object()), "a schema that says nothing takes anything"
    assert not value_check({"type": "object"})({}), "a type the check does not know takes nothing"
