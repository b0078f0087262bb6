"""`AgentEnv`: the episode state machine every agentgym family shares.

A family injects four parts: a task generator (seed -> world, goal, gold), a toolkit factory (the
tools over that world), a user factory (the rule-based simulated user) and a scorer (final world
state -> score). The env parses each assistant turn, dispatches tool calls or hands the message to
the user, keeps the metric inputs, and ends the episode with its summary in ``info["episode"]`` (the key
every Gymnasium loop reads) and, the same dict, ``info["episode_summary"]``. Gymnasium's
`RecordEpisodeStatistics` wrappers refuse an env that sets ``episode``: give them another key
(``RecordEpisodeStatistics(env, stats_key="episode_stats")``). A step's ``info["messages"]`` is a slice of the conversation that chat templates accept:
the env's normalised reading of the assistant's turn first (its ``tool_calls`` ids are the
``tool_call_id`` of the tool messages after it), then the tool results and the user's words.
The observation renders only what is new from the env (`agentgym.core.render.answer_messages`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import gymnasium as gym
from gymnasium.error import ResetNeeded

from agentgym.core._fast import DoneSteps, LazyNpRandom, copy_json, copy_record, schema_copy, schemas_copy
from agentgym.core.brief import with_turn_budget
from agentgym.core.call_draws import CallDraws
from agentgym.core.commitments import NO_JUDGE, CommitmentJudge
from agentgym.core.emoji import emoji_sentence_breaks
from agentgym.core.gold import call_matches, carries, done_steps, plan_calls
from agentgym.core.hooks import EnvHooks, ExtraTool, Intercept
from agentgym.core.protocol import (
    MAX_ACTION_BYTES,
    ErrorCode,
    ParsedAction,
    ToolCall,
    join_surrogate_pairs,
    parse_action,
    parse_text,
)
from agentgym.core.render import MESSAGE_MAX_CHARS, OBS_MAX_CHARS, cap, error_text, render_messages, to_json
from agentgym.core.seeding import MAX_SEED, draw_episode_seed, fast_stream
from agentgym.core.spaces import UnicodeText
from agentgym.core.task import (
    DIFFICULTIES,
    SPLITS,
    Score,
    SimulatedUser,
    Task,
    UserTurn,
    hold_sign_off,
    signed_off,
    told,
)
from agentgym.core.tools import READ, WRITE, PolicyViolation, ToolError, Toolkit

__all__ = ["AgentEnv", "EnvParts"]

_READ_VALUE, _WRITE_VALUE = READ.value, WRITE.value
#: Each code's value: `ErrorCode.X.value` runs `enum`'s Python property on every read.
_CODE_VALUE = {code: code.value for code in ErrorCode}
_BLOCKED, _POLICY_VIOLATION, _TOOL_ERROR = (ErrorCode.BLOCKED.value, ErrorCode.POLICY_VIOLATION.value,
                                            ErrorCode.TOOL_ERROR.value)
#: `trial` re-draws the noise (not the task) for pass^k: the same task under other faults.
_OPTION_KEYS = frozenset({"difficulty", "domain", "trial"})
#: The key of the episode's `CallDraws` among its noise streams (no kind is named so).
_CALL_DRAWS = "\x00calls"
Progress = tuple[list[dict[str, Any]], list[bool]]  # `AgentEnv.gold_progress`


@dataclass(frozen=True)
class EnvParts:
    """A family's parts (a dataclass, so the functions never bind as methods)."""

    task_generator: Callable[[int, dict[str, Any]], Task]
    toolkit_factory: Callable[[Task], Any]
    user_factory: Callable[[Task, Any], SimulatedUser]
    scorer: Callable[[Task, Any], Score]
    #: Judges proposals and the final state for goal consistency (None: none to judge).
    judge: CommitmentJudge | None = None


class AgentEnv(LazyNpRandom, gym.Env[str, str]):
    """The shared episode logic; families subclass only to set defaults and the card.

    Seeding is Gymnasium's (`LazyNpRandom` makes the env's own generator on its first read).

    Args:
        task_generator: ``(seed, options) -> Task``.
        toolkit_factory: ``Task -> Toolkit`` over the task's world.
        user_factory: ``(Task, Generator) -> SimulatedUser``.
        scorer: ``(Task, Toolkit) -> Score`` on the final world state.
        judge: a `CommitmentJudge` for proposals and the final state (None: the family's).
        difficulty: ``easy``, ``medium``, ``hard``, or None to draw one per episode.
        domain: a domain name, or None to draw one of the split's domains per episode.
        split: ``train`` or ``test``; the two hold disjoint domains or templates.
        max_turns: the turn budget (None: the task's own). The env truncates itself when it
            runs out, with the summary in that step's info and the score as its reward.
        render_mode: None or ``ansi`` (the transcript so far).
    """

    # The episode's state lives in slots: with these in the instance dict it would hold about 40
    # names, past the 30 that CPython keeps as a key-sharing dict, and every env would carry a
    # dict of its own (about 1.3 KB more per live env). Gymnasium's names stay in the dict.
    __slots__ = ("_task", "_done", "_trial", "_episode_seed", "_toolkit", "_user", "_noise_rngs", "_noise_log",
                 "_step_noise", "_elapsed_ms", "_turn", "_max_turns", "_summary", "_calls", "_errors",
                 "_violations", "_known", "_commitments", "_current_call", "_transcript", "_steps_done")

    metadata = {"render_modes": ["ansi"], "render_fps": 1}
    family: str = "agent"
    #: A family's default parts (None for the bare AgentEnv, which needs all four given).
    parts: "EnvParts | None" = None

    def __init__(
        self,
        *,
        task_generator: Callable[[int, dict[str, Any]], Task] | None = None,
        toolkit_factory: Callable[[Task], Toolkit] | None = None,
        user_factory: Callable[[Task, Any], SimulatedUser] | None = None,
        scorer: Callable[[Task, Toolkit], Score] | None = None,
        judge: CommitmentJudge | None = None,
        difficulty: str | None = None,
        domain: str | None = None,
        split: str = "train",
        max_turns: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        if difficulty is not None and difficulty not in DIFFICULTIES:
            raise ValueError(f"difficulty must be one of {DIFFICULTIES} or None, got {difficulty!r}")
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        if max_turns is not None and (not isinstance(max_turns, int) or max_turns < 1):
            raise ValueError(f"max_turns must be a positive int or None, got {max_turns!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        # A part not given is the family's default (its `parts`): inject, do not subclass.
        defaults = type(self).parts
        parts = (task_generator, toolkit_factory, user_factory, scorer)
        if defaults is None and None in parts:
            raise TypeError(f"{type(self).__name__} has no default parts: pass all four")
        self._generate = task_generator or defaults.task_generator
        self._toolkit_factory = toolkit_factory or defaults.toolkit_factory
        self._user_factory = user_factory or defaults.user_factory
        self._scorer = scorer or defaults.scorer
        self._judge = judge or (defaults.judge if defaults is not None else None) or NO_JUDGE
        # Asked of every message the assistant sends: looked up once, not per step.
        self._propose = self._judge.proposal
        self.difficulty = difficulty
        self.domain = domain
        self.split = split
        self.max_turns = max_turns
        self.render_mode = render_mode
        self.observation_space = UnicodeText(OBS_MAX_CHARS)
        self.action_space = UnicodeText(MAX_ACTION_BYTES)
        #: The noise layers acting now, while their own reset or step runs (see `agentgym.core.hooks`).
        self.hooks = EnvHooks()
        self._task: Task | None = None
        self._done = True

    # ------------------------------------------------------------------ public read-only state
    @property
    def task(self) -> Task:
        """The current task (hidden parts included: for oracles, scorers and tests only)."""
        if self._task is None:
            raise ResetNeeded("call reset() first")
        return self._task

    @property
    def toolkit(self) -> Toolkit:
        """The current episode's toolkit, bound to the task's world."""
        if self._task is None:
            raise ResetNeeded("call reset() first")
        return self._toolkit

    @property
    def user(self) -> SimulatedUser:
        """The current episode's simulated user."""
        if self._task is None:
            raise ResetNeeded("call reset() first")
        return self._user

    @property
    def turn(self) -> int:
        """Agent turns taken in this episode."""
        return self._turn

    @property
    def episode_seed(self) -> int:
        """The seed of the current episode (drawn and echoed when reset got none)."""
        return self._episode_seed

    @property
    def episode_max_turns(self) -> int:
        """The current episode's turn budget: the env's `max_turns`, or the task's own."""
        if self._task is None:
            raise ResetNeeded("call reset() first")
        return self._max_turns

    @property
    def elapsed_ms(self) -> float:
        """Simulated time charged in this episode (by the latency noise), in milliseconds."""
        return self._elapsed_ms

    @property
    def awaiting_report(self) -> bool:
        """Whether the user is satisfied with the work and waits to hear so from the assistant:
        its next message ends the request (for privileged agents, replays and tests)."""
        return self._task is not None and (self._held is not None or bool(getattr(self._user, "awaiting_report", False)))

    @property
    def noise_log(self) -> list[dict[str, Any]]:
        """The injections of this episode so far, as logged (for privileged agents and tests)."""
        return list(self._noise_log)

    # ------------------------------------------------------------------ for wrappers
    def call_uniform(self, kind: str, call: ToolCall) -> float:
        """The uniform draw in [0, 1) of noise `kind` for `call`, the call being made: keyed on
        the call and how often the episode made it before, never on the calls around it
        (`agentgym.core.call_draws`; the noise spec's ``draws=call``)."""
        return CallDraws.uniform(self._call_words(call), kind)

    def call_rng(self, kind: str, call: ToolCall) -> Any:
        """A generator for noise `kind`'s further draws on `call` (a fault that struck it)."""
        return CallDraws.rng(self._call_words(call), kind)

    def _call_words(self, call: ToolCall) -> tuple[int, ...]:
        draws = self._noise_rngs.get(_CALL_DRAWS)
        if draws is None:
            draws = self._noise_rngs[_CALL_DRAWS] = CallDraws(self._episode_seed, self._trial)
        return draws.words(self._calls, call)

    def noise_rng(self, kind: str, *, once: bool = False) -> Any:
        """The episode's generator for noise `kind`: derived from the episode seed and the kind,
        so adding or removing one wrapper never shifts another's draws or the task.

        The env keeps it, so later calls continue the same stream. A kind that draws only once
        per episode (at reset) passes ``once=True``: the stream is not kept (a generator's state
        outweighs its few draws), and the kind must then not ask for it again.
        """
        rng = self._noise_rngs.get(kind)
        if rng is None:
            name = f"noise/{kind}" if self._trial == 0 else f"noise/{kind}/trial{self._trial}"
            rng = fast_stream(self._episode_seed, name)
            if not once:
                self._noise_rngs[kind] = rng
        return rng

    def log_noise(self, kind: str, target: str, detail: Any, *, hits: dict[str, Any] | None = None) -> None:
        """Record one injection; it appears in this step's `info["noise"]` and in the episode's.

        Args:
            kind: the noise kind.
            target: what it acted on (a tool, a constraint id, ``user`` ...).
            detail: the kind's description of what it did.
            hits: what the injection affects: ``{"gold_step": i}`` (step `i` of the gold plan as
                it stands now, see `gold_step_for`), ``{"constraint": id}``, or None when it
                affects neither (a failure of a call the plan does not need).

        The event also gets ``at_ms`` (the simulated time when it happened) and, when it happened
        during a tool call, ``call``: that call's id in the episode's call records.
        """
        event = {"step": self._turn, "kind": kind, "target": target, "detail": detail, "hits": hits,
                 "at_ms": self._elapsed_ms}
        if self._current_call is not None:
            event["call"] = self._current_call
        self._noise_log.append(event)
        self._step_noise.append(event)

    def gold_calls(self) -> list[dict[str, Any]]:
        """The gold plan as it stands now: ``[{"name", "arguments": {key: spec}}]`` (see
        `agentgym.core.gold`); empty for a family whose gold lists no calls. A noise fault asks
        for it each time it fires, so the calls are taken without the rest of the gold's dict
        (`agentgym.core.gold.plan_calls`)."""
        return plan_calls(self.task.gold)

    def _done_steps(self, plan: list[dict[str, Any]]) -> list[bool]:
        """Which steps of `plan` a successful call has completed (`gold.done_steps`; `DoneSteps`)."""
        calls = self._calls
        if self._steps_done is None:
            if len(calls) < DoneSteps.KEEP_FROM:  # few calls: matched afresh, nothing kept
                return done_steps(plan, calls)
            self._steps_done = DoneSteps()
        return self._steps_done.of(plan, calls)

    def gold_progress(self) -> Progress:
        """The gold plan as it stands (`gold_calls`) and which of its steps a successful call has
        completed; the methods below take it as `progress`, for a caller that asks several of
        them at one point (a corruption: its aim, then the step it hits)."""
        plan = self.gold_calls()
        return plan, self._done_steps(plan)

    def gold_step_for(self, name: str, arguments: dict[str, Any] | None, *, progress: Progress | None = None) -> int | None:
        """The step of the gold plan a call (about to run) is for: the first step it matches
        that no earlier successful call completed; None when it matches none still to do."""
        plan, done = progress or self.gold_progress()
        for i, step in enumerate(plan):
            if not done[i] and call_matches(name, arguments, step):
                return i
        return None

    def gold_steps_to_do(self, *, progress: Progress | None = None) -> list[dict[str, Any]]:
        """The steps of the gold plan that no successful call of this episode has completed."""
        plan, done = progress or self.gold_progress()
        return [step for step, d in zip(plan, done) if not d]

    def gold_step_consuming(self, value: Any, *, besides: int | None = None, progress: Progress | None = None) -> int | None:
        """The first step of the gold plan still to do, other than step `besides`, whose
        arguments consume `value` (see `agentgym.core.gold.carries`); None when none does."""
        plan, done = progress or self.gold_progress()
        for i, step in enumerate(plan):
            if i != besides and not done[i] and carries(step, value):
                return i
        return None

    def matches_gold(self, name: str, arguments: dict[str, Any] | None, *, progress: Progress | None = None) -> bool:
        """Whether a call matches any step of the gold plan, done or not."""
        plan = progress[0] if progress else self.gold_calls()
        return any(call_matches(name, arguments, step) for step in plan)

    def repeats_success(self, name: str, arguments: dict[str, Any] | None) -> bool:
        """Whether a call repeats one that already succeeded in this episode (same tool, equal arguments)."""
        return any(c["valid"] and c["error"] is None and c["name"] == name and c.get("arguments") == arguments
                   for c in self._calls)

    def charge_time(self, ms: float) -> None:
        """Charge simulated time against the task's time budget (never a real sleep)."""
        self._elapsed_ms = round(self._elapsed_ms + float(ms), 3)

    def _take_step_noise(self) -> list[dict[str, Any]]:
        events, self._step_noise = self._step_noise, []
        return events

    # ------------------------------------------------------------------ gymnasium API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is None:
            episode_seed = draw_episode_seed(self.np_random)
        elif seed > MAX_SEED:
            raise ValueError(f"seed must be in [0, 2**63 - 1], got {seed}")
        else:
            episode_seed = int(seed)
        opts = self._options(options)
        trial = opts.pop("trial", 0)
        if not isinstance(trial, int) or isinstance(trial, bool) or trial < 0:
            raise ValueError(f"options['trial'] must be a non-negative int, got {trial!r}")
        self._trial = trial
        task = self._generate(episode_seed, opts)
        self._episode_seed = episode_seed
        self._task = task
        self._toolkit = self._toolkit_factory(task)
        self._user = self._user_factory(task, fast_stream(episode_seed, "user"))
        self._noise_rngs: dict[str, Any] = {}
        self._noise_log: list[dict[str, Any]] = []
        self._step_noise: list[dict[str, Any]] = []
        self._elapsed_ms = 0.0
        self._turn = 0
        self._done = False
        self._max_turns = self.max_turns or task.max_turns
        self._summary: dict[str, Any] | None = None
        self._calls: list[dict[str, Any]] = []
        self._steps_done: DoneSteps | None = None  # made when a fault asks in a long episode (`_done_steps`)
        self._errors: dict[str, int] = {}
        self._violations: list[str] = []
        self._known: list[dict[str, Any]] = []
        self._commitments: list[dict[str, Any]] = []
        self._current_call: str | None = None
        #: The user's word that the work is done, held until the assistant next speaks
        #: (`agentgym.core.task.hold_sign_off`).
        self._held: UserTurn | None = None
        # Only `render()` reads the transcript: kept only when it can be rendered.
        self._transcript: list[dict[str, Any]] | None = [] if self.render_mode == "ansi" else None

        hooks = self.hooks
        for layer in hooks.on_reset:
            layer.on_reset(self, self._user)
        messages = [
            {"role": "system", "content": with_turn_budget(task.brief, self._max_turns, task.max_turns)},
            {"role": "user", "content": self._user.opening()},
        ]
        self._note_known()
        # Everything handed out in an info is the caller's to edit: copies, never the env's own.
        if self._transcript is not None:
            self._transcript.extend([dict(m) for m in messages])
        tools = schemas_copy(self._toolkit)
        for layer in hooks.extra_tools:
            tools += [schema_copy(t.spec.openai_schema()) for t in layer.extra_tools.values()]
        info = {
            "messages": messages,
            "tools": tools,
            "task": task.public(),
            "seed": episode_seed,
            "trial": trial,
            "turn": 0,
            "max_turns": self._max_turns,
            "noise": self._take_step_noise(),
        }
        return render_messages(messages), info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._task is None:
            raise ResetNeeded("step() called before reset()")
        if self._done:
            raise ResetNeeded("the episode has ended; call reset() before step()")
        self._turn += 1
        turn = self._turn
        if isinstance(action, str):
            if not action.isascii():
                action = join_surrogate_pairs(action)
            parsed = parse_text(action)
        else:
            parsed = parse_action(action)
        messages: list[dict[str, Any]] = []
        step_calls: list[dict[str, Any]] = []
        step_errors: list[str] = []
        end: str | None = None

        if parsed.error is not None:
            self._count_error(parsed.error.code.value, step_errors)
            messages.append({"role": "user", "content": error_text(parsed.error.code.value, parsed.error.message)})
        elif parsed.calls:
            end = self._run_calls(parsed, turn, messages, step_calls, step_errors)
        else:
            heard = emoji_sentence_breaks(parsed.content)  # what the user hears (the record keeps the text)
            if self._propose is not None:
                proposed = self._propose(self._task, self._user, heard)
                if proposed is not None:
                    self._commitments.append({"turn": turn, "kind": "proposal", "contradicts": proposed})
            if (held := self._held) is not None and told(heard):
                self._held, reply = None, signed_off(held, heard)
            else:
                reply = self._user.reply(heard, turn)
            text = reply.text
            messages.append({"role": "user", "content": text if len(text) <= MESSAGE_MAX_CHARS else cap(text)})
            end = reply.end

        # `_note_known`, inlined on this path.
        known = self._user.known_constraints()
        if not self._known or self._known[-1]["known"] != known:
            self._known.append({"turn": turn, "known": list(known)})
        terminated = end is not None
        over_time = self._elapsed_ms > self._task.time_budget_ms
        truncated = not terminated and (turn >= self._max_turns or over_time)
        assistant = _assistant_message(parsed, turn) if parsed.calls else {"role": "assistant", "content": parsed.content}
        if self._transcript is not None:
            self._transcript.append(copy_json(assistant))
            self._transcript.extend([dict(m) for m in messages])
        noise, self._step_noise = self._step_noise, []  # `_take_step_noise`, inlined
        info: dict[str, Any] = {
            "messages": [assistant, *messages],
            "turn": turn,
            "calls": step_calls,
            "errors": step_errors,
            "noise": noise,
        }
        if self._elapsed_ms:
            info["elapsed_ms"] = self._elapsed_ms
        reward = 0.0
        if terminated or truncated:
            outcome = end or ("time_budget" if over_time and turn < self._max_turns else "truncated")
            summary = info["episode"] = info["episode_summary"] = self._end_episode(outcome)
            reward = summary["score"]
        return render_messages(messages), reward, terminated, truncated, info

    def episode_summary(self) -> dict[str, Any]:
        """The episode's summary: success, score, turns, tool calls and every metric input.

        When the env ends the episode (the task ended, or its turn or time budget ran out), the
        info of that step carries this summary as ``info["episode"]`` (and, the same dict,
        ``info["episode_summary"]``). A wrapper that ends
        the episode in its own step, as Gymnasium's `TimeLimit` does (``gym.make(id,
        max_episode_steps=N)``, or applied by hand), ends it without the env knowing: the loop
        that sees such an end asks for the summary here (``env.unwrapped.episode_summary()``;
        `agentgym.eval.episode` does). Asked while the episode goes on, this ends it with the
        outcome ``truncated``, scored on the world as it stands, and the env needs a reset
        before its next step, as after any end. Asked again, it returns the same dict.

        Raises:
            ResetNeeded: before the first reset.
        """
        if self._task is None:
            raise ResetNeeded("call reset() first")
        return self._summary if self._summary is not None else self._end_episode("truncated")

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self._task is None or self._transcript is None:
            return None
        return render_messages(self._transcript)

    # ------------------------------------------------------------------ internals
    def _options(self, options: dict[str, Any] | None) -> dict[str, Any]:
        opts = {"difficulty": self.difficulty, "domain": self.domain, "split": self.split}
        if options:
            unknown = set(options) - _OPTION_KEYS
            if unknown:
                raise ValueError(f"unknown reset options {sorted(unknown)}; known: {sorted(_OPTION_KEYS)}")
            opts.update(options)
        if opts["difficulty"] is not None and opts["difficulty"] not in DIFFICULTIES:
            raise ValueError(f"difficulty must be one of {DIFFICULTIES}, got {opts['difficulty']!r}")
        return opts

    def _count_error(self, code: str, step_errors: list[str]) -> None:
        self._errors[code] = self._errors.get(code, 0) + 1
        step_errors.append(code)

    def _run_calls(
        self,
        parsed: ParsedAction,
        turn: int,
        messages: list[dict[str, Any]],
        step_calls: list[dict[str, Any]],
        step_errors: list[str],
    ) -> str | None:
        end: str | None = None
        wrote = refused = False
        i = 0
        for call in parsed.calls:
            call_id = call.id or f"call_{turn}_{i}"
            i += 1
            if end is not None:
                # A terminal tool ended the task earlier in this turn; later calls are not run.
                content = error_text("BLOCKED", "the task was already committed by an earlier call")
                record = _failed_record(turn, call_id, call.name, _BLOCKED)
            else:
                self._current_call = call_id
                record, content, terminal = self._run_one(call, turn, call_id)
                self._current_call = None
                if record["valid"] and record["error"] is None:
                    wrote = wrote or record["kind"] == _WRITE_VALUE
                    if terminal:
                        end = "committed"
            # Injected faults are the environment's, not the agent's: they are not its errors.
            error = record["error"]
            if error is not None and not record["injected"]:
                self._count_error(error, step_errors)
                refused = refused or error == _POLICY_VIOLATION
            self._calls.append(record)
            step_calls.append(copy_record(record))
            messages.append({"role": "tool", "tool_call_id": call_id, "name": call.name,
                             "content": content if len(content) <= MESSAGE_MAX_CHARS else cap(content)})
        if wrote or refused:  # a write done, or one a policy refused: the user sees what it came to
            reaction, self._held = hold_sign_off(self._user.react(self._toolkit.drain_events(), turn))
            if reaction is not None:
                messages.append({"role": "user", "content": cap(reaction.text)})
                if end is None:
                    end = reaction.end
        if end == "committed":
            # A session of several tasks goes on after one is committed (CrossTask).
            follow = self._user.on_commit(turn)
            if follow is not None:
                if follow.text:
                    messages.append({"role": "user", "content": cap(follow.text)})
                end = follow.end
        return end

    def _run_one(self, call: ToolCall, turn: int, call_id: str) -> tuple[dict[str, Any], str, bool]:
        """Run one call; return its record, the tool message and whether a terminal tool succeeded.

        A record's keys come in one order whatever the call came to: ``turn, id, name, valid,
        error, kind, injected, contradicts``, then ``arguments`` for a valid call, ``distractor``
        for a decoy's that ran and ``policy`` for a call a policy refused.
        """
        name = call.name
        if call.error is not None:
            code = _CODE_VALUE[call.error.code]
            return _failed_record(turn, call_id, name, code), error_text(code, call.error.message), False
        hooks = self.hooks
        # A tool an acting layer adds to this episode (a decoy), found innermost first.
        extra: ExtraTool | None = None
        for layer in hooks.extra_tools:
            extra = layer.extra_tools.get(name)
            if extra is not None:
                break
        arguments = call.arguments
        if extra is not None:
            spec = extra.spec
            problem = spec.validate(arguments)
        else:
            problem = self._toolkit.validate(name, arguments)
        if problem is not None:
            code = _CODE_VALUE[problem.code]
            return _failed_record(turn, call_id, name, code), error_text(code, problem.message), False
        if extra is None:
            spec = self._toolkit.spec(name)
        assert arguments is not None
        # A call without arguments (most reads) states nothing to contradict: the user is not asked.
        # `spec.kind.value` runs two Python frames of `enum` per call; a tool is read or write.
        record = {"turn": turn, "id": call_id, "name": name, "valid": True, "error": None,
                  "kind": _READ_VALUE if spec.kind is READ else _WRITE_VALUE, "injected": False,
                  "contradicts": self._user.contradictions(name, arguments) if arguments else [],
                  "arguments": arguments}
        # A policy refuses a call before any noise acts on it (see `agentgym.core.hooks`).
        for layer in hooks.policy:
            if (answer := layer.policy(self, call, turn)) is not None:
                return _intercepted(record, answer)
        for layer in hooks.before_call:
            if (answer := layer.before_call(self, call, turn)) is not None:
                return _intercepted(record, answer)
        try:
            if extra is not None:
                record["distractor"] = True
                result = extra.handler(self, arguments)
            else:
                result = self._toolkit.invoke(name, arguments)
        except PolicyViolation as exc:
            record["error"] = _POLICY_VIOLATION
            record["policy"] = exc.policy
            self._violations.append(exc.policy)
            return record, error_text(_POLICY_VIOLATION, str(exc)), False
        except ToolError as exc:
            record["error"] = _TOOL_ERROR
            return record, error_text(_TOOL_ERROR, str(exc)), False
        for layer in hooks.after_call:
            result = layer.after_call(self, call, spec, turn, result)
        return record, to_json(result), spec.terminal

    def _note_known(self) -> None:
        known = self._user.known_constraints()
        if not self._known or self._known[-1]["known"] != known:
            self._known.append({"turn": self._turn, "known": list(known)})

    def _episode_gold(self) -> Any:
        """The gold as the episode summary shows it: its ``to_dict()`` form, or as it is."""
        gold = self.task.gold
        return gold.to_dict() if hasattr(gold, "to_dict") else gold

    def _end_episode(self, outcome: str) -> dict[str, Any]:
        """End the episode with `outcome`: score the world as it stands and keep the summary."""
        self._done = True
        score = self._scorer(self._task, self._toolkit)
        self._summary = self._episode_summary(score, outcome)
        return self._summary

    def _episode_summary(self, score: Score, outcome: str) -> dict[str, Any]:
        task = self._task
        assert task is not None
        final = self._judge.final_state(task, self._user) if self._judge.final_state is not None else None
        if final is not None:
            self._commitments.append({"turn": self._turn, "kind": "final", "contradicts": final})
        return {
            "success": bool(score.success),
            "score": float(score.score),
            "turns": self._turn,
            "tool_calls": len(self._calls),
            "policy_violations": list(self._violations),
            "outcome": outcome,
            "task": task.public(),
            "seed": self._episode_seed,
            "calls": self._calls,
            "errors": dict(sorted(self._errors.items())),
            "constraints": self._known,
            "score_details": score.details,
            "noise": self._noise_log,
            "elapsed_ms": self._elapsed_ms,
            "gold": self._episode_gold(),
            "commitments": self._commitments,
            "max_turns": self._max_turns,
            "time_budget_ms": float(task.time_budget_ms),
        }


def _failed_record(turn: int, call_id: str, name: str, error: str) -> dict[str, Any]:
    """The record of a call that did not pass the checks (or was blocked): not valid, `error`."""
    return {"turn": turn, "id": call_id, "name": name, "valid": False, "error": error, "kind": None,
            "injected": False, "contradicts": []}


def _intercepted(record: dict[str, Any], answer: Intercept) -> tuple[dict[str, Any], str, bool]:
    """Book a layer's answer to a call in its record; the record, the tool message, and no
    terminal success."""
    record["error"] = answer.error
    record["injected"] = answer.injected
    return record, answer.content, False


def _assistant_message(parsed: ParsedAction, turn: int) -> dict[str, Any]:
    """The env's normalised reading of the agent's turn, as an OpenAI assistant message.

    Encoding the arguments cannot fail: `parse_action` hands on only plain JSON data (a dict
    action holding NaN, a set or bytes is a PARSE_ERROR turn, with no calls).
    """
    calls = parsed.calls
    if len(calls) == 1:  # most turns: the comprehension's frame left out
        c = calls[0]
        args = c.arguments
        return {"role": "assistant", "content": parsed.content, "tool_calls": [
            {"id": c.id or f"call_{turn}_0", "type": "function",
             "function": {"name": c.name, "arguments": to_json(args) if args else
                          ("{}" if args is not None else "null")}}]}
    msg: dict[str, Any] = {"role": "assistant", "content": parsed.content}
    if calls:
        msg["tool_calls"] = [
            {
                "id": c.id or f"call_{turn}_{i}",
                "type": "function",
                "function": {"name": c.name, "arguments": to_json(c.arguments) if c.arguments else
                             ("{}" if c.arguments is not None else "null")},
            }
            for i, c in enumerate(calls)
        ]
    return msg
