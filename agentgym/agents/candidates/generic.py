"""`GenericCandidates` (any family without a builder of its own): each tool of ``info["tools"]``
with arguments filled from values seen so far (schema enums, values under the same key in earlier
tool results, ids, dates, times, numbers and quoted or capitalised phrases in the messages), and
plain replies.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Mapping

from agentgym.agents.candidates.base import PLAIN_REPLIES, CandidateBuilder
from agentgym.agents.transcript import (
    ANY_ID,
    DATE,
    EMAIL,
    NAME,
    NUMBER,
    QUOTED,
    TIME,
    decode_json,
    item_key,
    path_key,
    result_values,
    value_check,
)
from agentgym.core.render import call_text

__all__ = ["GenericCandidates"]


#: The schema of an array's items when it gives none: any value.
_ANY_VALUE: Mapping[str, Any] = {}


class GenericCandidates(CandidateBuilder):
    """Candidates for any family: every tool with arguments filled from values seen so far."""

    family = "*"

    def _start(self, view: dict[str, Any]) -> None:
        self._tools: list[dict[str, Any]] = [t.get("function", t) for t in view.get("tools", ())
                                              if isinstance(t, dict)]
        #: Key -> values seen under it in tool results (and call arguments), most recent first.
        self._by_key: dict[str, list[Any]] = {}
        #: Text pattern kind -> values found in messages, most recent first.
        self._texts: dict[str, list[Any]] = {k: [] for k in ("date", "time", "email", "id", "number", "phrase")}
        #: Schema (by identity: the tools' own, held for the episode) -> its value check.
        self._checks: dict[int, Callable[[Any], bool]] = {}

    def _check(self, schema: Mapping[str, Any]) -> Callable[[Any], bool]:
        """`value_check` of a schema of this episode's tools, compiled once."""
        check = self._checks.get(id(schema))
        if check is None:
            check = self._checks[id(schema)] = value_check(schema)
        return check

    @staticmethod
    def _push(bucket: list[Any], value: Any, limit: int = 32) -> None:
        if value in bucket:
            bucket.remove(value)
        bucket.insert(0, value)
        del bucket[limit:]

    def _scan(self, text: str, role: str) -> None:
        for kind, pattern in (("date", DATE), ("time", TIME), ("email", EMAIL), ("id", ANY_ID)):
            for v in pattern.findall(text):
                self._push(self._texts[kind], v)
        # Numbers and phrases of a JSON result are already under their keys; the brief's
        # quoted phrases are its own examples, not the user's words.
        if role != "user":
            return
        for v in NUMBER.findall(text):
            self._push(self._texts["number"], float(v) if "." in v else int(v))
        for v in QUOTED.findall(text) + NAME.findall(text):
            self._push(self._texts["phrase"], v)

    def _observe(self, messages: Any) -> None:
        for m in messages:
            content = m.get("content") or ""
            role = m.get("role", "")
            if role == "tool":
                for path, value in result_values(decode_json(content)):
                    key = path_key(path)
                    if key is not None:
                        self._push(self._by_key.setdefault(key, []), value)
            self._scan(content, role)

    def _values(self, name: str, schema: Mapping[str, Any]) -> list[Any]:
        k = self.config.values_per_argument
        if "enum" in schema:
            return list(schema["enum"])[:k]
        if schema.get("type") == "array":
            fits = self._check(schema.get("items", _ANY_VALUE))
            pool = [v for v in self._key_values(item_key(name)) if fits(v)]
            return [pool[: int(schema.get("maxItems", 8))]] if pool else []
        pool = self._key_values(name)
        lowered = name.lower()
        # A name that says what the value looks like draws only from that kind of value.
        hinted = [kind for kind, hint in (("date", "date"), ("time", "time"), ("time", "start"), ("email", "email"),
                                          ("id", "id")) if hint in lowered.split("_")]
        for kind in hinted:
            pool += self._texts[kind]
        if not hinted:
            if schema.get("type") in ("integer", "number"):
                pool += self._texts["number"]
            elif schema.get("type") == "string":
                pool += self._texts["phrase"]
            elif schema.get("type") == "boolean":
                pool += [True, False]
        fits = self._check(schema)
        out: list[Any] = []
        for v in pool:
            if fits(v) and v not in out:
                out.append(v)
        return out[:k]

    def _key_values(self, name: str) -> list[Any]:
        out = list(self._by_key.get(name, ()))
        for key, values in self._by_key.items():
            if key != name and (name.endswith("_" + key) or key.endswith("_" + name)):
                out += values
        return out

    def _build(self) -> list[str]:
        out: list[str] = []
        for tool in self._tools:
            params = tool.get("parameters", {}) or {}
            props: dict[str, Any] = params.get("properties", {}) or {}
            required = [p for p in params.get("required", ()) if p in props]
            choices = [self._values(p, props[p]) for p in required]
            if any(not c for c in choices):
                continue
            for combo in itertools.islice(itertools.product(*choices), self.config.calls_per_tool):
                out.append(call_text(tool["name"], **dict(zip(required, combo))))
        return out + list(PLAIN_REPLIES)
