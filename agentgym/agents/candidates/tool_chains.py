"""`ToolChainCandidates`: the next calls of a tool chain, with arguments filled from what is known.

A tool-use request takes a chain of dependent calls: the ids one look-up returns feed the next,
amounts are converted and added up, a free slot found by one call is booked by the next. This
builder knows no domain. It reads the tool schemas, the brief, the user's words and the tool
results, and offers each tool with its arguments filled from values that public information
gives, in the ways chains pass values on:

* by key: an argument takes the values seen under a key of the same stem (``from_account`` and
  ``account_id`` share ``account``, ``root_cause_service`` and ``service`` share ``service``,
  ``person_ids`` and ``person_id`` share ``person``), most recent first;
* by record: the arguments a result record has fields for are filled from that one record
  (``convert`` from one expense: its amount, currency and date; ``refund_item`` from one item:
  its order, id and price), so values that belong together stay together;
* by set: an array argument takes the stem's values over the latest list of records, over the
  records the user's words select (the ``approved`` ones), and with each record's value replaced
  by the result of the call made from it (a converted amount); or an array used in an earlier
  call (the attendees of a free-slot search), or every id of one kind seen so far;
* from the user's and the brief's words by what the argument's name says it holds: ISO dates,
  months (a month's name and the brief's year), times, emails, ids, quoted titles, capitalised
  names, enum values the user mentions, numbers next to the unit the argument names, and a
  phrase after "for" (``swap it for the 34 variant``);
* from free text in results: words shaped like the stem's known values (a service named in a
  log line), those after a preposition first.

Arguments of one stem in one call get distinct values (a conversion from a currency to itself is
never offered), enum values the user named win over the rest, and a call that already succeeded
is not offered again. Besides calls: a question for each detail the tools need that nothing has
given yet (worded from the argument's name), and the plain replies.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any, Iterable, Mapping, Sequence

from agentgym.agents.candidates.chain_memory import ChainMemory, IndexedRecord, kindred
from agentgym.agents.candidates.chain_tools import FROM_TOOLS, PROSE, Arg, Tool, is_id, names_another
from agentgym.agents.candidates.chain_values import ArgumentValues
from agentgym.agents.transcript import key_stem
from agentgym.core.render import call_text

__all__ = ["ToolChainCandidates", "CHAIN_REPLIES"]


#: Plain replies of a tool chain: moving on, the generic question, and the final answer.
CHAIN_REPLIES = (
    "Okay, let me look into that.",
    "Is there anything else I should know?",
    "Done. Is there anything else you need?",
)


class ToolChainCandidates:
    """The tool-chain candidate logic; `agentgym.agents.candidates.tooluse.ToolUseCandidates` is the
    `CandidateBuilder` around it. It builds the calls and questions; what the episode taught is in
    its `ChainMemory`, the values each argument may take come from its `ArgumentValues`.

    Args:
        max_entities: records of results that get calls, most recent first.
        values_per_argument: values tried per argument (most relevant first).
        calls_per_tool: calls offered per tool at most.
    """

    def __init__(self, max_entities: int = 8, values_per_argument: int = 3, calls_per_tool: int = 6) -> None:
        self.max_entities = max_entities
        self.calls_per_tool = calls_per_tool
        self.memory = ChainMemory()
        self.values = ArgumentValues(self.memory, values_per_argument)

    def start(self, tools: Iterable[Any], brief: str) -> None:
        """Clear the episode state: the tools on offer and the system brief."""
        self.memory.start(tools, brief)

    def acted(self, action: Any) -> None:
        """Fold in the agent's own action: its calls wait for their results."""
        self.memory.acted(action)

    def observe(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Fold in new chat messages: the user's words, tool results (matched to the calls)."""
        self.memory.observe(messages)


    def _bind(self, tool: Tool, rec: IndexedRecord) -> dict[str, Any] | None:
        """The arguments `rec` fills, or None when it fills none from its own fields.

        An argument takes the record's field of its stem (its own name first, the record's own
        fields before its parents'); a number with no such field takes the record's only
        number (a refund's amount, an item's price). Two arguments of one stem never both bind
        (``from_currency`` does, ``to_currency`` draws on the user's words).
        """
        bound: dict[str, Any] = {}
        keys_used: set[str] = set()
        stems_bound: set[str] = set()
        for arg in tool.args:
            # new_variant, to_version, to_currency name a value other than the record's own.
            if not arg.required or arg.kind == "array" or arg.stem in stems_bound or names_another(arg.name):
                continue
            keys = rec.keys_by_stem.get(arg.stem, ())
            if arg.name in keys:
                keys = [arg.name, *(k for k in keys if k != arg.name)]
            for k in keys:
                if arg.fits(rec.fields[k]):
                    bound[arg.name] = rec.fields[k]
                    keys_used.add(k)
                    stems_bound.add(arg.stem)
                    break
        for arg in tool.args:
            if arg.required and arg.name not in bound and arg.kind in ("number", "integer") and "enum" not in arg.schema:
                nums = [k for k in rec.own if k not in keys_used and isinstance(rec.fields[k], (int, float))
                        and not isinstance(rec.fields[k], bool) and arg.fits(rec.fields[k])]
                if len(nums) == 1:
                    bound[arg.name] = rec.fields[nums[0]]
                    keys_used.add(nums[0])
        own = [k for k in rec.own if k in keys_used]
        required = [a for a in tool.args if a.required]
        # The record's identity (its own id), or two fields (one its own): else the call is no
        # more this record's than the pools' (an amount alone picks nothing out).
        identified = any(k == "id" or k.endswith("_id") for k in own)
        return bound if own and (identified or len(keys_used) >= min(2, len(required))) else None

    def _complete(self, tool: Tool, fixed: dict[str, Any]) -> list[dict[str, Any]]:
        """Calls of `tool` that keep `fixed` and fill its other required arguments."""
        fixed = dict(fixed)
        names, choices = [], []
        open_args = [a for a in tool.args if a.required and a.name not in fixed]
        # A call with one open argument offers as many of its values as calls fit.
        limit = self.calls_per_tool if len(open_args) == 1 else None
        for arg in tool.args:
            if arg.name in fixed:
                continue
            if not arg.required:
                extra = self._optional(arg)
                if extra is not None:
                    fixed[arg.name] = extra
                continue
            values = [_PROSE_SLOT] if arg.stem in PROSE and arg.kind == "string" else self.values.values(arg, limit)
            if not values:
                return []
            names.append(arg)
            choices.append(values)
        out: list[dict[str, Any]] = []
        for rank in _diverse_ranks(tuple(len(c) for c in choices), self.calls_per_tool * 4):
            combo = [c[i] for c, i in zip(choices, rank)]
            args = {**fixed, **{a.name: v for a, v in zip(names, combo)}}
            if not _distinct_per_stem(args) or not self._agrees(tool, args) or self._contradicted(args, fixed):
                continue
            for a, v in args.items():
                if v is _PROSE_SLOT:
                    args[a] = " ".join(str(x) for k, x in args.items() if k != a and not isinstance(x, list)
                                       and x is not _PROSE_SLOT)[:200]
            out.append({a.name: args[a.name] for a in tool.args if a.name in args})
            if len(out) >= self.calls_per_tool:
                break
        return out

    def _contradicted(self, args: Mapping[str, Any], fixed: Mapping[str, Any]) -> bool:
        """Whether a record says the values do not go together. A record holding one argument's
        value as its own field contradicts another argument's value when it holds a different
        id of that argument's stem (the item of another order); a record identified by an
        argument's id also contradicts any other value it holds differently under that
        argument's stem or a kindred one (another item's price as this item's amount). An
        attribute alone contradicts nothing: it may differ on purpose (the variant to check)."""
        index = self.memory.memo.get("index")
        if index is None:
            index = self.memory.memo["index"] = {}
            for rec in self.memory.records[-64:]:
                for k in rec.own:
                    v = rec.fields[k]
                    if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                        index.setdefault((key_stem(k), v), []).append(rec)
        values = [(a, key_stem(a), v) for a, v in args.items()
                  if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
        if all(a in fixed for a, _, _ in values):
            return False  # the record's own values (or none): nothing the pools put together
        for a, s, v in values:
            recs = index.get((s, v))
            if not recs:
                continue
            identified = is_id(a, v)
            for rec in recs:
                for b, t, w in values:
                    if t == s or (a in fixed and b in fixed) or names_another(b):
                        continue
                    held = list(rec.ids_by_stem.get(t, ()))
                    if identified:
                        for k in kindred(t):
                            held += rec.own_by_stem.get(k, ())
                    if held and w not in held:
                        return True
        return False

    def _agrees(self, tool: Tool, args: Mapping[str, Any]) -> bool:
        """Whether the call keeps to the enum values the user named: where the user named values
        of an enum, some argument of that stem takes one (a transfer from the account in another
        currency than the one asked for does not; a conversion to it does)."""
        for arg in tool.args:
            enum = arg.schema.get("enum")
            if not enum or arg.name not in args:
                continue
            named = self.values.mentioned(enum)
            if named and not any(args.get(a.name) in named for a in tool.args if a.stem == arg.stem):
                return False
        return True

    def _optional(self, arg: Arg) -> Any:
        """An optional argument is given only when a tool result handed out its value just now
        (an approval id for the call that needs it)."""
        if arg.kind != "string" or "enum" in arg.schema:
            return None
        last = self.memory.records[-1] if self.memory.records else None
        if last is None or last.step != self.memory.step:
            return None
        return next((v for k, v in last.fields.items() if k in last.own and key_stem(k) == arg.stem), None)

    def calls(self) -> list[str]:
        """Every tool call on offer now: per tool, up to `calls_per_tool` filled from the pools
        (the most relevant values of each argument) and up to as many from single records (the
        records no call has used yet first, most recent first)."""
        out: list[str] = []
        selection = self._selection()
        records = [r for r in self.memory.records[::-1]
                   if selection is None or r not in selection[0] or r in selection[1]][: self.max_entities * 4]
        records.sort(key=lambda r: bool(r.derived))  # stable: unused records first, each most recent first
        for tool in self.memory.tools:
            if not any(a.required for a in tool.args):
                plain = call_text(tool.name)
                if plain not in self.memory.done:
                    out.append(plain)
                continue
            pooled = [call_text(tool.name, **args) for args in self._complete(tool, {})]
            bound: list[str] = []
            for rec in records:
                if rec.tool == tool.name:
                    continue  # a tool's output is not its own next input (no convert of a conversion)
                if not tool.stems & rec.stems and not any(a.kind in ("number", "integer") for a in tool.args):
                    continue
                fixed = self._bind(tool, rec)
                if fixed is not None:
                    bound += [call_text(tool.name, **args) for args in self._complete(tool, fixed)[:2]]
                if len(bound) >= self.max_entities:
                    break
            fresh = [c for c in dict.fromkeys(pooled[: max(1, self.calls_per_tool // 2)] + bound + pooled)
                     if c not in self.memory.done]
            out += fresh[: self.calls_per_tool]
        return out

    def _selection(self) -> tuple[list[IndexedRecord], list[IndexedRecord]] | None:
        """The latest listing and the records of it the user's words select, if they do."""
        for listing in self.memory.listings[:1]:
            chosen = self.values.selected(listing.records)
            if chosen is not None:
                return listing.records, chosen
        return None

    def questions(self) -> list[str]:
        """A question per detail the tools need that nothing has given yet."""
        out: list[str] = []
        for tool in self.memory.tools:
            for arg in tool.args:
                if not arg.required or arg.stem in FROM_TOOLS or arg.stem in PROSE or arg.kind == "array":
                    continue
                if self.values.values(arg) and ("enum" not in arg.schema or self.values.mentioned(arg.schema["enum"])):
                    continue
                noun = " ".join(w for w in arg.name.lower().split("_") if w not in ("id", "ids", "from", "to", "new"))
                q = f"Which {noun} should I use?"
                if q not in out:
                    out.append(q)
        return out[:4]


@functools.lru_cache(maxsize=1024)
def _diverse_ranks(sizes: tuple[int, ...], limit: int) -> tuple[tuple[int, ...], ...]:
    """Index tuples into per-argument value lists, best first (the top value of every argument,
    then one argument at its next value, and so on), but every value of every argument shows up
    once as early as it can: the combinations that bring in a value not yet used come first."""
    ranks = sorted(itertools.product(*(range(n) for n in sizes)), key=lambda r: (sum(r), max(r, default=0), r))
    seen: set[tuple[int, int]] = set()
    first: list[tuple[int, ...]] = []
    rest: list[tuple[int, ...]] = []
    for r in ranks:
        pairs = {(i, v) for i, v in enumerate(r)}
        if pairs - seen:
            first.append(r)
            seen |= pairs
        else:
            rest.append(r)
    return tuple((first + rest)[:limit])


#: Stands for a free-text argument until the call's other values are known.
_PROSE_SLOT: Any = object()


def _distinct_per_stem(args: Mapping[str, Any]) -> bool:
    """Whether the scalar arguments that share a stem all have different values."""
    seen: dict[str, list[Any]] = {}
    for k, v in args.items():
        if isinstance(v, list) or v is _PROSE_SLOT:
            continue
        values = seen.setdefault(key_stem(k), [])
        if v in values:
            return False
        values.append(v)
    return True
