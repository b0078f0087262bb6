"""Domain policies as data (``data/policies.json``).

Each policy has an id, the text the brief shows (formatted with its parameters) and parameters the
domain's tools enforce. A write that breaks one is blocked and recorded as a policy violation,
which fails the task (the "minefield" of ToolSandbox).

A domain's hard tier (``<domain>_tier``) adds policies, and may restate one of the domain's under
its id (with its parameters), so that the tier's rules read one way: the tier's brief and its
`list_policies` show the restated text in the rule's place (``tier=True``), the other tiers the
domain's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from agentgym.envs.tooluse.data import read_json, strict

__all__ = ["Policy", "consent_who", "load_policies", "policy", "policy_lines", "policy_rows"]

#: The suffix of a hard tier's policies' key (``ops_tier`` beside ``ops``).
_TIER = "_tier"


@dataclass(frozen=True)
class Policy:
    """One rule of a domain: `params` are what the tools check, `text` what the brief says."""

    id: str
    text: str
    params: dict[str, Any]

    def render(self) -> str:
        return self.text.format(**self.params)


@lru_cache(maxsize=None)
def load_policies() -> dict[str, dict[str, Policy]]:
    """Every domain's policies, by domain and policy id, in file order."""
    raw = read_json("policies.json")
    if not isinstance(raw, dict):
        raise ValueError("policies.json: expected an object of domains")
    out: dict[str, dict[str, Policy]] = {}
    for domain, items in raw.items():
        if not isinstance(items, list) or not items:
            raise ValueError(f"policies.json.{domain}: expected a non-empty list")
        rules: dict[str, Policy] = {}
        for i, item in enumerate(items):
            where = f"policies.json.{domain}[{i}]"
            d = strict(item, {"id", "text", "params"}, where)
            if not isinstance(d["params"], dict) or not isinstance(d["text"], str) or d["id"] in rules:
                raise ValueError(f"{where}: bad or duplicate policy")
            rules[d["id"]] = Policy(d["id"], d["text"], dict(d["params"]))
        out[domain] = rules
    for domain, rules in out.items():
        base = out.get(domain.removesuffix(_TIER), {}) if domain.endswith(_TIER) else {}
        for rule in rules.values():
            if rule.id in base:  # a restatement: the domain's rule's parameters, one truth
                rules[rule.id] = rule = Policy(rule.id, rule.text, {**base[rule.id].params, **rule.params})
            rule.render()  # A placeholder without a parameter is an error now, not in a brief later.
    return out


def policy(domain: str, policy_id: str) -> Policy:
    """One policy; KeyError for an unknown domain or id."""
    return load_policies()[domain][policy_id]


def consent_who(domain: str) -> str:
    """Whose yes the hard tier's consent rule asks for, as `domain`'s brief words it ("the
    customer", "the on-call engineer who asked")."""
    rule = load_policies().get(domain + _TIER, {}).get("consent")
    return str(rule.params.get("who", "the person who asked")) if rule is not None else "the person who asked"


@lru_cache(maxsize=None)
def policy_lines(domain: str, tier: bool = False) -> str:
    """The domain's policies as brief text, one ``- `` line each (with `tier`, its hard tier's)."""
    return "\n".join(f"- {p.render()}" for p in _rules(domain, tier))


def policy_rows(domain: str, tier: bool = False) -> list[dict[str, str]]:
    """The domain's policies as tool-result rows, the same rules as `policy_lines` (fresh dicts:
    results are the agent's to keep)."""
    return [dict(row) for row in _rows(domain, tier)]


def _rules(domain: str, tier: bool) -> list[Policy]:
    """The domain's policies; with `tier`, each restated by the hard tier in its place, then the
    tier's own."""
    rules = dict(load_policies().get(domain, {}))
    if tier:
        rules.update(load_policies().get(domain + _TIER, {}))
    return list(rules.values())


@lru_cache(maxsize=None)
def _rows(domain: str, tier: bool) -> tuple[dict[str, str], ...]:
    return tuple({"id": p.id, "rule": p.render()} for p in _rules(domain, tier))
