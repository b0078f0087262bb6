"""What each metric of the benchmark gets from an env: `check_agent_env`'s report.

The contract checks say whether an env runs correctly; this says whether the benchmark can
measure anything on it. It plays a few probe episodes (privileged: a "gold follower" that makes
the gold plan's calls as written, after one open question to the user), each noise kind alone at
a high rate, and reads what the episodes' summaries and noise logs hold:

- completion: success and score (always there once the contract holds); a gold plan that never
  succeeds when played as written is flagged, as the gold and the scorer then disagree;
- tool accuracy: tools, and a gold plan (``gold.calls``) of tools that exist; without one, recall
  is undefined and efficiency is 0 for every agent;
- recovery: whether each fault kind injects and is tied to what it hits (``hits``: a gold step,
  a constraint), and whether latency charges time (recovery in milliseconds);
- goal consistency: constraints the user states (``known_constraints``), commitments (write
  calls, proposals, a final state) and a user that can find a contradiction.

Each finding names the metric, what it is about, a status (``ok``, ``missing``: the value will be
n/a or meaningless, ``suspect``: present but probably wrong) and one sentence saying why.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal, Mapping

import gymnasium as gym
import numpy as np

from agentgym.core.gold import OPERATORS, call_matches

__all__ = ["METRICS", "Finding", "EnvReport", "metric_findings"]

#: The metrics the report covers, in report order, and the noise kinds that feed no metric.
METRICS: tuple[str, ...] = ("completion", "tool_accuracy", "recovery", "goal_consistency", "noise")
_TITLES = {"completion": "completion", "tool_accuracy": "tool accuracy", "recovery": "recovery",
           "goal_consistency": "goal consistency", "noise": "noise"}
Status = Literal["ok", "missing", "suspect"]

#: Each noise kind alone, at a rate that makes it inject whenever it can.
_PROBE_NOISE: dict[str, Any] = {
    "tool_failure": 1.0, "corruption": 1.0, "ambiguity": 1.0, "goal_shift": 1.0, "distractors": 1,
    "typos": 1.0, "latency": 500.0,
}
_OPENING = "Hello! Could you tell me the details of your request, and is there anything else I should know?"
_CONFIRM = "Shall I go ahead with that?"
#: Fault kinds that must be tied to what they hit (``hits``), and how many probe episodes may be
#: played to find one that is.
_TIED = frozenset({"tool_failure", "corruption", "ambiguity", "goal_shift"})
_MAX_SEEDS = 16
#: A probe episode that has not ended after this many steps has no turn budget (the contract
#: checks catch that first).
_MAX_PROBE_STEPS = 1000


@dataclass(frozen=True)
class Finding:
    """One thing the report says about a metric."""

    metric: str
    subject: str
    status: Status
    message: str


@dataclass(frozen=True)
class EnvReport:
    """`check_agent_env`'s answer: the contract checks passed, and what each metric gets.

    Attributes:
        env: the env's id (or class name).
        checks: the contract checks that passed.
        findings: per metric, what it has and what it lacks (empty when not asked for).
    """

    env: str
    checks: tuple[str, ...]
    findings: tuple[Finding, ...] = field(default_factory=tuple)

    def missing(self, metric: str | None = None) -> list[Finding]:
        """The findings that are not ``ok`` (of one metric, or of all)."""
        return [f for f in self.findings if f.status != "ok" and (metric is None or f.metric == metric)]

    @property
    def ok(self) -> bool:
        """Whether every metric has what it needs (the contract always holds in a report)."""
        return not self.missing()

    def to_dict(self) -> dict[str, Any]:
        return {"env": self.env, "checks": list(self.checks), "ok": self.ok,
                "findings": [{"metric": f.metric, "subject": f.subject, "status": f.status, "message": f.message}
                             for f in self.findings]}

    def render(self) -> str:
        """The report as text: the contract line, then one line per finding, by metric."""
        lines = [f"{self.env}: env contract ok ({len(self.checks)} checks)"]
        for metric in METRICS:
            mine = [f for f in self.findings if f.metric == metric]
            for i, f in enumerate(mine):
                title = _TITLES[metric] if i == 0 else ""
                lines.append(f"  {title:17s} {f.status:8s} {f.subject}: {f.message}")
        return "\n".join(lines)

    __str__ = render


def _summary(info: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The end-of-episode summary of a last step's info (the one place this module reads it)."""
    summary = info.get("episode_summary")
    return summary if isinstance(summary, Mapping) else None


# ------------------------------------------------------------------------------ probe episodes
@dataclass
class _Episode:
    """What one probe episode showed."""

    summary: Mapping[str, Any]
    tools: int
    user: Any
    toolkit: Any
    gold_seen: list[dict[str, Any]]
    #: The names of every tool the episode offered (a session may change its tools as it goes).
    tool_names: set[str]


def _operator(spec: Any) -> str | None:
    return next(iter(spec)) if isinstance(spec, dict) and len(spec) == 1 and next(iter(spec)) in OPERATORS else None


def _concrete(key: str, spec: Any, later: list[dict[str, Any]], schema: Mapping[str, Any],
              rng: np.random.Generator) -> tuple[bool, Any]:
    """A value for argument `key` of spec `spec`: (give it?, the value). Left out when the spec
    allows it; a free one ({"any": true}) takes the value a later step of the plan pins for the
    same argument (the place the booking after a check names), else one drawn from its schema."""
    op = _operator(spec)
    if op is None:
        return True, spec
    want = spec[op]
    if op == "if_given":
        return False, None
    if op == "any_of":
        return bool(want), want[0] if want else None
    if op in ("at_least", "at_most", "words_of"):
        return True, want
    if op == "subset_of":
        return True, []
    if op == "any_order":
        return True, list(want)
    for other in later:
        pinned = (other.get("arguments") or {}).get(key)
        if _operator(pinned) is None and pinned is not None:
            return True, pinned
        if _operator(pinned) == "any_of" and pinned["any_of"]:
            return True, pinned["any_of"][0]
    from agentgym.agents.random_agent import sample_value

    return True, sample_value(dict(schema), rng)


def _gold_action(step: Mapping[str, Any], plan: list[dict[str, Any]], schemas: Mapping[str, Mapping[str, Any]],
                 rng: np.random.Generator) -> str:
    props = (schemas.get(step["name"]) or {}).get("properties") or {}
    later = plan[plan.index(step) + 1:] if step in plan else []
    arguments = {}
    for key, spec in (step.get("arguments") or {}).items():
        give, value = _concrete(key, spec, later, props.get(key) or {}, rng)
        if give:
            arguments[key] = value
    return json.dumps({"name": step["name"], "arguments": arguments})


def _play(env: gym.Env, seed: int) -> _Episode:
    """One probe episode: an open question, then the gold plan's next step each turn."""
    from agentgym.core.env import AgentEnv

    base = env.unwrapped
    rng = np.random.Generator(np.random.PCG64(seed))
    _, info = env.reset(seed=seed)
    schemas = {t["function"]["name"]: t["function"].get("parameters") or {} for t in info["tools"]}
    tools = len(info["tools"])
    names = set(schemas)
    user, toolkit = (base.user, base.toolkit) if isinstance(base, AgentEnv) else (None, None)
    done: list[dict[str, Any]] = []
    seen: list[dict[str, Any]] = []
    confirmed = False
    action = _OPENING
    for _ in range(_MAX_PROBE_STEPS):
        _, _, terminated, truncated, info = env.step(action)
        summary = _summary(info)
        if terminated or truncated:
            return _Episode(summary or {}, tools, user, toolkit, seen, names)
        if toolkit is not None:
            names |= _tool_names(toolkit)
        done += [c for c in info.get("calls", ()) if c.get("valid") and c.get("error") is None
                 and not c.get("distractor")]
        plan = base.gold_calls() if isinstance(base, AgentEnv) else []
        seen = seen or plan
        todo = _next_step(plan, done)
        if todo is not None:
            action = _gold_action(todo, plan, schemas, rng)
        elif not confirmed:
            action, confirmed = _CONFIRM, True
        else:
            action = "OK."
    raise AssertionError(f"a probe episode did not end within {_MAX_PROBE_STEPS} steps (no turn budget?)")


def _next_step(plan: list[dict[str, Any]], done: list[dict[str, Any]]) -> dict[str, Any] | None:
    completed = [False] * len(plan)
    for c in done:
        for i, step in enumerate(plan):
            if not completed[i] and call_matches(c.get("name", ""), c.get("arguments"), step):
                completed[i] = True
                break
    return next((step for i, step in enumerate(plan) if not completed[i]), None)


class _Probe:
    """Makes fresh copies of an env, bare or with one noise kind, for probe episodes."""

    def __init__(self, env: gym.Env) -> None:
        self._spec = copy.deepcopy(env.spec) if env.spec is not None else None
        self._base: gym.Env | None = None
        if self._spec is not None:
            self._spec.kwargs.pop("noise", None)
            self._spec.additional_wrappers = ()
        else:
            from agentgym.core.env import AgentEnv
            from agentgym.core.hooks import EnvHooks

            # An instance without a spec cannot be made again: probe a copy of it without its
            # noise hooks (they belong to the wrappers around the original).
            u = env.unwrapped
            if isinstance(u, AgentEnv):
                hooks, u.hooks = u.hooks, EnvHooks()
                try:
                    self._base = copy.deepcopy(u)
                finally:
                    u.hooks = hooks
            else:  # no noise can be applied to it: the bare probe plays on the instance itself
                self._base = env
                self._own = True

    _own = False

    def make(self, noise: Mapping[str, Any] | None = None) -> gym.Env:
        from agentgym.noise.spec import apply_noise

        if self._spec is not None:
            env = gym.make(self._spec)
        else:
            env = self._base if self._own else copy.deepcopy(self._base)
        return apply_noise(env, noise) if noise else env

    def play(self, noise: Mapping[str, Any] | None, seeds: Iterable[int],
             enough: Callable[[_Episode], bool] | None = None) -> list[_Episode]:
        """One episode per seed, stopping after the first that is `enough`."""
        env = self.make(noise)
        episodes: list[_Episode] = []
        try:
            for seed in seeds:
                episodes.append(_play(env, seed))
                if enough is not None and enough(episodes[-1]):
                    break
            return episodes
        finally:
            if self._spec is not None:
                env.close()


# ------------------------------------------------------------------------------ findings
def _overrides(obj: Any, method: str) -> bool:
    """Whether a simulated user implements `method` itself (not `SimulatedUser`'s default)."""
    from agentgym.core.task import SimulatedUser

    return obj is not None and getattr(type(obj), method, None) is not getattr(SimulatedUser, method)


def _items(summary: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    """The dict items of a summary's list field (a third-party env's summary may hold anything)."""
    value = summary.get(key)
    return [x for x in value if isinstance(x, Mapping)] if isinstance(value, list) else []


def _summary_plan(summary: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The gold plan an episode summary reports (``gold.calls``), or none."""
    gold = summary.get("gold")
    return _items(gold, "calls") if isinstance(gold, Mapping) else []


_Add = Callable[[str, str, Status, str], None]


def metric_findings(env: gym.Env, seeds: tuple[int, ...] = (0, 1, 2, 3)) -> tuple[Finding, ...]:
    """What each metric gets from `env` (see the module docstring).

    Args:
        env: an env instance. One with a spec is made again for the probes and an `AgentEnv`
            without one is copied, so neither is stepped; any other env is stepped itself.
        seeds: the seeds of the bare probe episodes (a noise probe may play up to 16 more).
    """
    from agentgym.core.env import AgentEnv

    out: list[Finding] = []

    def add(metric: str, subject: str, status: Status, message: str) -> None:
        out.append(Finding(metric, subject, status, message))

    probe = _Probe(env)
    bare = probe.play(None, seeds)
    plans = [e.gold_seen or _summary_plan(e.summary) for e in bare]
    user = bare[0].user if bare else None
    _completion(bare, plans, add)
    _tool_accuracy(bare, plans, user, add)
    if isinstance(env.unwrapped, AgentEnv):
        _noise(probe, seeds, user, add)
    else:
        add("recovery", "noise", "missing",
            "not an agentgym AgentEnv, so the noise wrappers cannot inject: recovery is n/a")
    _goal_consistency(bare, user, add)
    order = {m: i for i, m in enumerate(METRICS)}
    return tuple(sorted(out, key=lambda f: order[f.metric]))


def _completion(bare: list[_Episode], plans: list[Any], add: _Add) -> None:
    successes = sum(bool(e.summary.get("success")) for e in bare)
    if any(plans) and successes == 0:
        add("completion", "gold plan", "suspect",
            f"the gold plan, played as written, succeeded in none of {len(bare)} probe episodes: "
            "do the gold calls and the scorer agree?")
        return
    played = f"; the gold plan played as written succeeded in {successes} of {len(bare)}" if any(plans) else ""
    add("completion", "success, score", "ok", f"every episode summary has success and score{played}")


def _tool_accuracy(bare: list[_Episode], plans: list[Any], user: Any, add: _Add) -> None:
    if not bare or bare[0].tools == 0:
        add("tool_accuracy", "tools", "missing", "the env offers no tools, so tool accuracy is n/a")
        return
    if not any(plans):
        add("tool_accuracy", "gold calls", "missing",
            "no gold calls, so tool recall is undefined, efficiency is 0 for every agent and correctness "
            "cannot tell a step of the plan from padding")
    else:
        unknown = sorted({str(s.get("name")) for e, plan in zip(bare, plans) for s in plan
                          if s.get("name") not in e.tool_names})
        lengths = sorted({len(plan) for plan in plans if plan})
        span = f"{lengths[0]}" if len(lengths) == 1 else f"{lengths[0]}-{lengths[-1]}"
        if unknown:
            add("tool_accuracy", "gold calls", "suspect", f"the gold plan calls tools the env does not have: {unknown}")
        else:
            add("tool_accuracy", "gold calls", "ok",
                f"a gold plan of {span} calls: validity, correctness, efficiency and recall are defined")
    if user is not None and not _overrides(user, "contradictions"):
        add("tool_accuracy", "contradictions", "missing",
            "the user's contradictions() is the default, so correctness never sees an argument that "
            "contradicts what the user said")


def _goal_consistency(bare: list[_Episode], user: Any, add: _Add) -> None:
    if any(p.get("known") for e in bare for p in _items(e.summary, "constraints")):
        add("goal_consistency", "constraints", "ok", "the user states constraints (known_constraints())")
    else:
        add("goal_consistency", "constraints", "missing",
            "the user exposes no constraints, so goal consistency is n/a (known_constraints() stays empty)")
    # What commits: the write tools, and the kinds of commitment the probe episodes recorded.
    sources = ["write calls"] if bare and bare[0].toolkit is not None and _write_tools(bare[0].toolkit) else []
    kinds = {m.get("kind") for e in bare for m in _items(e.summary, "commitments")}
    sources += [label for kind, label in (("proposal", "proposals"), ("final", "the final state")) if kind in kinds]
    if sources:
        add("goal_consistency", "commitments", "ok", f"commitments are {', '.join(sources)}")
    else:
        add("goal_consistency", "commitments", "missing",
            "nothing commits (no write tool, no proposal or final state recorded), so goal consistency is n/a")
    if user is not None and not _overrides(user, "contradictions"):
        add("goal_consistency", "contradictions", "missing",
            "the user's contradictions() is the default (it never finds one): every commitment counts as "
            "consistent, so goal consistency cannot move")


def _tool_names(toolkit: Any) -> set[str]:
    try:
        return set(toolkit.tool_specs())
    except Exception:  # noqa: BLE001 - a toolkit of another shape: names unknown, nothing judged
        return set()


def _write_tools(toolkit: Any) -> list[str]:
    try:
        return [n for n, s in toolkit.tool_specs().items() if getattr(s.kind, "value", s.kind) == "write"]
    except Exception:  # noqa: BLE001 - as above
        return []


#: What each fault kind's finding says: (tied to what it hits, injected but tied to nothing,
#: never injected).
_FAULTS: dict[str, tuple[str, str, str]] = {
    "tool_failure": (
        "failed calls are tied to the gold step they were for",
        "failed calls hit no gold step (no gold calls), so their recovery is not measured",
        "no valid tool call was made in the probe episodes, so tool failures never injected",
    ),
    "corruption": (
        "corrupted read results are tied to the gold step that takes the value",
        "no corrupted value is one a later gold step takes (an id or an amount a read returns and a write "
        "uses), so corruption recovery is n/a",
        "no read result holds a value corruption can change (a number, a boolean, an id ending in digits "
        "under an 'id' or '*_id' key, an ISO date), so corruption never injects",
    ),
}


def _noise(probe: _Probe, seeds: tuple[int, ...], user: Any, add: _Add) -> None:
    for kind, value in _PROBE_NOISE.items():
        metric = "noise" if kind in ("distractors", "typos") else "recovery"

        def tied(ep: _Episode, kind: str = kind) -> bool:
            events = [e for e in _items(ep.summary, "noise") if e.get("kind") == kind]
            return any(isinstance(e.get("hits"), Mapping) for e in events)

        try:
            # A fault kind's target may be drawn (the leaf a corruption changes): play on until
            # an episode ties one to what it hits.
            if kind in _TIED:
                episodes = probe.play({kind: value}, range(_MAX_SEEDS), tied)
            else:
                episodes = probe.play({kind: value}, seeds)
        except ValueError as exc:  # e.g. fewer decoys than asked for
            add(metric, kind, "missing", f"cannot apply it: {exc}")
            continue
        events = [e for ep in episodes for e in _items(ep.summary, "noise") if e.get("kind") == kind]
        hit = any(isinstance(e.get("hits"), Mapping) for e in events)
        if kind in _FAULTS:
            ok, untied, never = _FAULTS[kind]
            add(metric, kind, *(("ok", ok) if hit else ("missing", untied) if events else ("missing", never)))
        elif kind in ("ambiguity", "goal_shift"):
            method = "blur" if kind == "ambiguity" else "plan_goal_shift"
            if hit:
                add(metric, kind, "ok", f"{method}() injects, tied to the constraint it changes")
            elif not _overrides(user, method):
                add(metric, kind, "missing", f"the user does not implement {method}(), so {kind} never injects "
                                             "and its recovery is n/a")
            else:
                add(metric, kind, "missing", f"{method}() offered nothing in {len(episodes)} probe episodes, so "
                                             f"{kind} never injected")
        elif kind == "latency":
            if any(ep.summary.get("elapsed_ms") for ep in episodes):
                add(metric, kind, "ok", "tool calls are charged simulated time: recovery times in ms are defined")
            else:
                add(metric, kind, "missing", "no tool call was charged time, so recovery in ms is n/a")
        elif kind == "distractors":
            if events:
                add(metric, kind, "ok", "decoy tools are derived from the env's tools")
            else:
                add(metric, kind, "missing", "no decoy tool could be derived from the env's tools")
        elif events:
            add(metric, kind, "ok", "user messages get typos")
        else:
            add(metric, kind, "missing", "no user message was perturbed (does the user say anything?)")
