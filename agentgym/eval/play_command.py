"""`agentgym play`: one episode in the terminal, turn by turn, as an agent sees it.

What is shown is what an ordinary agent gets: the observation text of each step (the brief, the
user's messages, tool results and error observations) and, at the start, the tools it may call.
Never the hidden goal: the verdict, its reasons, the gold plan and what each tool call counted
for in tool-call accuracy are printed only once the episode has ended.

Turns come from the terminal (one line a turn), or from a file (`--actions FILE`): one turn a
line, or, in a ``.jsonl`` file, one JSON value a line (a string, an assistant-message dict, or
a tool call or a list of them, played as the same JSON written on a line of a text file), so a
turn may hold newlines. A file that ends before the episode does leaves it where it stands,
and the command says so: add the next turn to the file and run it again. Episodes are
deterministic, so the file's turns replay to the same point; that is how a language-model agent
plays one turn at a time through a shell (`--tail` shows only what the last turn brought).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterator, TextIO

from agentgym.eval.episode import ended_summary

__all__ = ["add_play_command", "read_actions", "tool_lines", "gold_of", "tool_accounting"]

_PROMPT = "assistant> "


def read_actions(path: Path) -> list[Any]:
    """The turns a file holds: one per non-blank line (a ``.jsonl`` file: one JSON value per line).

    Raises:
        ValueError: a ``.jsonl`` line that is not JSON, or not a string, an object or a list.
    """
    turns: list[Any] = []
    with path.open(encoding="utf-8", errors="surrogateescape") as fh:
        for number, line in enumerate(fh, 1):
            line = line.rstrip("\n").rstrip("\r")
            if not line.strip():
                continue
            if path.suffix != ".jsonl":
                turns.append(line)
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from exc
            if isinstance(value, list) or (isinstance(value, dict) and "name" in value and "role" not in value):
                # A call, or several in one turn: the env reads their text as it reads that line
                # of a text file (a dict with a role is an assistant message).
                value = json.dumps(value)
            if not isinstance(value, (str, dict)):
                raise ValueError(f"{path}:{number}: a turn is a JSON string, object or list, got {type(value).__name__}")
            turns.append(value)
    return turns


def _type_of(schema: dict[str, Any]) -> str:
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        kind = "|".join(k for k in kind if k != "null") or "null"
    if kind == "array":
        kind = f"list[{_type_of(schema.get('items', {}))}]"
    if "enum" in schema:
        kind = " | ".join(json.dumps(v) for v in schema["enum"] if v is not None)
    return str(kind)


def tool_lines(tools: list[dict[str, Any]]) -> list[str]:
    """The tools an episode offers, one line each: ``name(arg: type, [optional: type]): description``."""
    lines = []
    for tool in tools:
        fn = tool.get("function", tool)
        params = fn.get("parameters", {})
        required = set(params.get("required", ()))
        args = []
        for name, schema in params.get("properties", {}).items():
            arg = f"{name}: {_type_of(schema)}"
            args.append(arg if name in required else f"[{arg}]")
        lines.append(f"  {fn.get('name', '?')}({', '.join(args)}): {fn.get('description', '').strip()}")
    return lines


def gold_of(env: Any) -> Any:
    """The task's gold as plain data (the reference outcome and plan), for after the episode."""
    gold = env.unwrapped.task.gold
    return gold.to_dict() if hasattr(gold, "to_dict") else repr(gold)


def _turns_from(stream: TextIO, out: TextIO) -> Iterator[str]:
    interactive = stream.isatty()
    while True:
        if interactive:
            out.write(_PROMPT)
            out.flush()
        line = stream.readline()
        if not line:
            return
        line = line.rstrip("\n")
        if line.strip() in (":q", ":quit"):
            return
        if line.strip():
            yield line


def _show_end(env: Any, info: dict[str, Any], reward: float, truncated: bool, out: TextIO) -> None:
    summary = ended_summary(env, info) or {}
    verdict = "SUCCESS" if summary.get("success") else "FAILURE"
    how = "truncated (turn budget spent)" if truncated else f"ended ({summary.get('outcome') or 'terminated'})"
    print(f"\n=== episode over: {verdict}, score {reward:.3f}, {how} after {summary.get('turns', '?')} turns ===",
          file=out)
    reasons = {k: summary[k] for k in ("outcome", "score_details", "policy_violations") if summary.get(k)}
    if reasons:
        print("why:", json.dumps(reasons, indent=2, sort_keys=True, default=str), sep="\n", file=out)
    if summary.get("noise"):
        print("noise injected:", json.dumps(summary["noise"], sort_keys=True, default=str), sep="\n", file=out)
    print("gold:", json.dumps(summary.get("gold") or gold_of(env), indent=2, sort_keys=True, default=str),
          sep="\n", file=out)
    if summary:
        print(*tool_accounting(summary), sep="\n", file=out)


def _ratio(num: int, den: int) -> str:
    return f"{num}/{den}" if den else "n/a"


#: Characters of each argument value that names a call in the accounting.
_HINT = 40
#: How many of a call's plain argument values name it (the place and the day of a check, a
#: search's filters).
_HINT_VALUES = 6


def _hint_value(value: Any) -> str | None:
    """An argument value as a call's name shows it: a scalar as it is, a list of scalars in
    brackets (two searches told apart by their amenities), about `_HINT` characters of it; None
    for anything else. What is cut is marked "...", and a list is cut between its items, never
    inside one: "[P-197, P-25]" would name another attendee than the P-252 that was passed."""
    def plain(v: Any) -> bool:
        return isinstance(v, (str, int, float)) and not isinstance(v, bool)

    if plain(value):
        text = str(value)
        return text if len(text) <= _HINT else text[:_HINT] + "..."
    if isinstance(value, list) and value and all(plain(v) for v in value):
        shown, size = [], 0
        for item in map(str, value):
            if shown and size + len(item) > _HINT:
                shown.append("...")
                break
            shown.append(item)
            size += len(item) + 2
        return "[" + ", ".join(shown) + "]"
    return None


def _why_not_judged(c: Any, kind: Any) -> str:
    """Why correctness leaves a valid call out (a `CallVerdict`; `kind`: its record's "read" or
    "write"), in the words `agentgym play` lists it under."""
    if c.decoy:
        return "a decoy"
    # A repeat first: a call an injected fault stopped that repeats one already judged has no
    # retry to be judged at (the earlier call is).
    if c.repeat:
        return "a repeat of an earlier call (same tool and arguments)"
    if c.retried:
        return "stopped by an injected fault (its retry is judged)"
    if kind == "read":
        # What the read showed may well have decided the agent's next move (a place found full);
        # correctness judges the plan's steps and writes only, and efficiency judges this read,
        # unless an injected fault stopped it (efficiency leaves such a call out).
        if c.injected:
            return ("a read that is no step of the plan, stopped by an injected fault (correctness judges the plan's "
                    "steps and the writes; efficiency leaves out what a fault stopped)")
        return "a read that is no step of the plan (correctness judges the plan's steps and the writes; efficiency judges this read)"
    return "a write of a tool no plan uses"


def _why_not_useful(c: Any, counted: bool) -> str:
    """Why a valid call did not count as useful in efficiency (a `CallVerdict`; `counted`:
    whether a call it repeats counted, so the check rule is what left it out)."""
    if c.decoy:
        return "a decoy tool"
    if c.repeat and counted:
        return ("a repeat: one check of a read counts, sent in a later turn than the read and before a write, "
                "and one more read per corrupted result")
    return "no step of the plan" if not c.steps else "it failed"


def tool_accounting(summary: dict[str, Any]) -> list[str]:
    """What the episode's tool calls counted for in tool-call accuracy (docs/METRICS.md): the
    four rates, each call that was judged wrong and why, the calls that were not useful and why,
    the calls correctness leaves out, the calls an injected fault acted on and those that pass on
    a value a tool returned corrupted, and the gold steps left undone. A call is named by its
    turn, its tool and its first few argument values (a list of them in brackets)."""
    from agentgym.eval.judging import judge_episode

    verdict = judge_episode({"metrics": summary, "steps": [], "agent_error": None})
    t = verdict.tools
    lines = [f"tool calls (docs/METRICS.md): validity {_ratio(t.valid, t.attempts)}, correctness "
             f"{_ratio(t.right, t.judged)}, efficiency {_ratio(t.useful, t.spent)}, recall {_ratio(t.done, t.gold)}"]
    calls = summary.get("calls") or []

    def record(c: Any) -> dict[str, Any]:  # the episode's record of the call a verdict is about
        return calls[c.index] if c.index < len(calls) else {}

    def named(c: Any) -> str:  # "turn 6 check_availability(cowork_044, friday)": which call of a turn
        args = record(c).get("arguments")
        values = [shown for v in args.values() if (shown := _hint_value(v)) is not None] if isinstance(args, dict) else []
        hint = ", ".join(values[:_HINT_VALUES]) if values else ("..." if args else "")
        return f"turn {c.turn} {c.name}({hint})"

    for c in verdict.calls:
        if c.judged and not c.right:
            lines.append(f"  wrong: {named(c)}: {'; '.join(c.wrong_because)}")
    spent: dict[str, list[str]] = {}
    counted: list[tuple[Any, Any]] = []  # (name, arguments) of the calls that counted
    for c in verdict.calls:
        key = (c.name, record(c).get("arguments"))
        if c.useful:
            counted.append(key)
        elif c.useful is False:
            spent.setdefault(_why_not_useful(c, key in counted), []).append(named(c))
    for why, names in spent.items():
        lines.append(f"  not efficient ({why}): {', '.join(names)}")
    left_out = [named(c) for c in verdict.calls if c.injected]
    if left_out:
        lines.append("  left out of validity and efficiency (an injected failure stopped them; a read whose result was "
                     f"corrupted counts as the read it was): {', '.join(left_out)}")
    carried = [named(c) for c in verdict.calls if c.valid and not c.injected and c.useful is None and c.carries_corrupted]
    if carried:
        lines.append(f"  left out of efficiency (they pass on a value a tool returned corrupted): {', '.join(carried)}")
    unjudged: dict[str, list[str]] = {}
    for c in verdict.calls:
        if c.valid and not c.judged:
            unjudged.setdefault(_why_not_judged(c, record(c).get("kind")), []).append(named(c))
    if unjudged:
        lines.append("  not judged for correctness: " + "; ".join(f"{why}: {', '.join(names)}"
                                                              for why, names in unjudged.items()))
    gold = summary.get("gold")
    steps = gold.get("calls") if isinstance(gold, dict) else None
    if steps:
        done = {c.completes for c in verdict.calls if c.completes is not None} | {i for c in verdict.calls
                                                                               for i in c.routed}
        for i, step in enumerate(steps):
            if i not in done:
                lines.append(f"  gold step not done: {json.dumps(step, sort_keys=True, default=str)}")
    return lines


def cmd_play(args: argparse.Namespace) -> int:
    """Play one episode turn by turn (see the module docstring)."""
    import gymnasium as gym

    import agentgym  # noqa: F401  (registers the ids)
    from agentgym.errors import UserError

    turns: list[Any] | None = None
    if args.actions is not None:
        path = Path(args.actions)
        if not path.is_file():
            raise UserError(f"no actions file {str(path)!r}")
        try:
            turns = read_actions(path)
        except ValueError as exc:
            raise UserError(str(exc)) from exc
    kwargs = {k: v for k, v in (("split", args.split), ("difficulty", args.difficulty), ("domain", args.domain),
                                ("noise", args.noise)) if v is not None}
    try:
        env = gym.make(args.env, **kwargs)
    except gym.error.Error as exc:
        raise UserError(f"cannot make {args.env!r}: {exc}") from exc
    except ValueError as exc:
        raise UserError(f"cannot make {args.env!r}: {exc}") from exc
    out = sys.stdout
    try:
        obs, info = env.reset(seed=args.seed)
        quiet = bool(args.tail and turns)
        if not quiet:
            task = info.get("task", {})
            print(f"=== {args.env} seed {info.get('seed')} · " + ", ".join(f"{k} {task[k]}" for k in
                  ("split", "difficulty", "domain") if k in task) + f" · up to {info.get('max_turns', '?')} turns",
                  file=out)
            print("tools:", *tool_lines(info.get("tools", [])), sep="\n", file=out)
            print(f"\n--- turn 0 ---\n{obs}", file=out)
        source: Iterator[Any] = iter(turns) if turns is not None else _turns_from(sys.stdin, out)
        played = 0
        pending = len(turns) if turns is not None else -1
        for action in source:
            played += 1
            obs, reward, terminated, truncated, info = env.step(action)
            last = turns is not None and played == pending
            if not quiet or last or terminated or truncated:
                shown = action if isinstance(action, str) else json.dumps(action)
                print(f"\n--- turn {played} ---\n> {shown}\n{obs}", file=out)
            if terminated or truncated:
                _show_end(env, info, float(reward), truncated, out)
                if turns is not None and played < len(turns):
                    print(f"({len(turns) - played} turns of the file were not played: the episode had ended)",
                          file=out)
                return 0
        if turns is not None:
            print(f"\n(the episode goes on after {played} turns: add your next turn to {args.actions} and run "
                  "this again)", file=out)
        return 0
    finally:
        env.close()


def add_play_command(sub: Any) -> None:
    """Register `agentgym play` on the command line's subparsers."""
    p = sub.add_parser(
        "play", help="play one episode in the terminal, turn by turn, as an agent sees it",
        description="Play one episode: each turn you type (one line) is the assistant's turn, a message to the "
                    "user or a tool call as JSON ({\"name\": ..., \"arguments\": {...}}); what comes back is what "
                    "an agent sees. Never the hidden goal: the verdict, why, the gold plan and what each call "
                    "counted for are shown once the episode has ended. --actions FILE plays a file's turns instead (one a line; .jsonl: one JSON "
                    "string or message object a line); a file that ends first leaves the episode where it stands, "
                    "so adding a turn and running again plays one more (episodes replay exactly). ':q' quits.")
    p.add_argument("env", help="an environment id, e.g. AgentRL/Dialog-v0")
    p.add_argument("--seed", type=int, default=0, help="the episode's seed (default: 0)")
    p.add_argument("--split", choices=("train", "test"), default=None, help="the task split (default: train)")
    p.add_argument("--difficulty", choices=("easy", "medium", "hard"), default=None,
                   help="fix the difficulty (default: drawn from the seed)")
    p.add_argument("--domain", default=None, help="fix the domain (default: drawn from the split's domains)")
    p.add_argument("--noise", default=None, help="a noise spec or preset (none, light, medium, heavy)")
    p.add_argument("--actions", default=None, metavar="FILE", help="play the turns of FILE instead of the terminal")
    p.add_argument("--tail", action="store_true",
                   help="with --actions: print only what the file's last turn brought (and the end)")
    p.set_defaults(func=cmd_play)
