"""`AgentRL/ToolUse-v0`: carry out a request that takes a chain of dependent tool calls."""

from __future__ import annotations

from agentgym.core.env import AgentEnv, EnvParts
from agentgym.envs.tooluse.commitments import JUDGE
from agentgym.envs.tooluse.tasks import generate_task, make_toolkit, score_task
from agentgym.envs.tooluse.user import make_user

__all__ = ["ToolUseEnv"]


class ToolUseEnv(AgentEnv):
    """Chains of dependent tool calls for a user's request, under the domain's policies.

    ## Description
    A user asks for something that takes a chain of 3 to 8 dependent tool calls, where the output
    of one call is the input of the next: ids found by one look-up feed the next, amounts are
    converted and added up, a slot is chosen from free times, a cause is traced from log to log.
    Each episode generates a small world (tens of records) in one of four domains, and the gold,
    the exact plan of calls and the effects it leaves on the world, comes from a reference solver
    over that world (`agentgym.envs.tooluse.domains.<domain>.solve`), so every task is solvable
    and its outcome unique.

    * `finance`: employees' expense claims in six currencies and dated exchange rates. Reimburse
      the approved expenses of a month (convert each at its own date's rate, add up, file a report,
      pay from the account in the payout currency, with an approval over the limit), or quote the
      total with the terminal `submit_answer`.
    * `calendar`: people in 19 cities from UTC-8 to UTC+12, with working hours and busy times.
      Find the earliest common free start inside everyone's working hours, book it, invite.
    * `orders`: a store's help desk. Find the customer, the order and the item, read the category's
      return policy, then refund (with an approval over the limit), issue store credit (past the
      return window) or check the stock and exchange.
    * `ops`: incident triage. From the alert, read the error rate (severity), follow the error logs
      from victim to dependency to the service that fails on its own, read its deploys, file the
      incident with the cause (the last deploy before the onset) and roll the culprit back.

    Domain policies are data (`data/policies.json`) and are shown in the brief. A write that
    breaks one is refused, recorded as a policy violation (the "minefield" of ToolSandbox) and
    fails the task. Harder tasks carry traps the policies describe: pending expenses among the
    approved ones, a first free slot outside someone's working hours, items past their return
    window, a deploy of the culprit after the onset, a recent deploy of an innocent service.

    ## Observation
    Text (`UnicodeText`): on reset the system brief (role, facts, policies, how to call tools) and
    the user's request; on each step only what is new (tool results, errors, the user's reply),
    one `[role] text` block per message. `info["messages"]` holds the same as OpenAI chat messages,
    after a step preceded by the env's reading of the assistant's turn (its `tool_calls` ids are
    the `tool_call_id` of the tool messages), so the episode's messages render with
    `apply_chat_template(messages, tools=info["tools"])`. `info["tools"]` holds the tool schemas
    of the episode's domain (on reset), `info["task"]` the public task card (family, domain,
    difficulty, split, id), `info["seed"]` the episode seed, and the last step's
    `info["episode_summary"]` success, score and the metric inputs.

    ## Actions and tools
    A string: the assistant's turn. Tool calls as JSON `{"name": ..., "arguments": {...}}`, in
    `<tool_call>` tags, in a fenced json block or OpenAI `tool_calls` (several per turn allowed);
    anything else is a message to the user, who answers questions about details of the request it
    knows (the payout currency, the meeting's length, the customer's email ...) and otherwise says
    to go ahead. The user reads every message with the shared rule-based understanding engine
    (`agentgym.core.understanding`): each detail asked in any form and in plain words ("how much
    time should I block?", "which address should the confirmation go to?", "how serious is
    it?"), several per message, exclusions respected; "I don't know" for a detail the task lacks;
    one unstated detail for an open question; a friendly word for small talk; a request to
    rephrase for a message it cannot place or a list of keywords. Free text never counts as the work being done. Every domain has
    `list_policies` (the policies as data); the other tools per domain:

    * finance: `list_accounts`, `find_employee`, `list_expenses`, `convert`, `sum_amounts`,
      `file_expense_report`, `request_approval`, `create_transfer`, `submit_answer` (terminal).
    * calendar: `find_person`, `get_calendar`, `get_free_slots`, `book_meeting`,
      `send_invitation`, `cancel_meeting`.
    * orders: `get_return_policy`, `find_customer`, `list_orders`, `get_order`, `check_stock`,
      `request_refund_approval`, `refund_item`, `issue_store_credit`, `exchange_item`.
    * ops: `list_alerts`, `get_metrics`, `search_logs`, `get_dependencies`, `get_deploys`,
      `file_incident`, `rollback`.

    Malformed or invalid calls come back as `[error CODE] ...` and count against the agent; a tool
    never runs on invalid arguments. A refused call (not found, busy, out of stock, a policy) comes
    back as `[error TOOL_ERROR] ...`; a policy refusal as `[error POLICY_VIOLATION] policy violation (<id>)`.

    ## Reward
    0 on every step but the last; then the score of the final world: the share of required effects
    met (a transfer of the right amount from the right account, a booking at the right time, a
    refund of the right item, an incident naming the right cause ...), divided by the required
    effects plus any extra effects (a second transfer, a refund of another item), and 0 after any
    policy violation. Success when every required effect is met, with no extra effect and no
    violation. `info["episode_summary"]["score_details"]` holds `met`, `extras` and `policy_violations`.

    ## Termination
    Terminated when the user has every required effect in place ("accepted"), when a terminal tool
    commits an answer ("committed"), or when the user gives up after 2 writes that meet no required
    effect ("gave_up"); truncated at the turn budget (12 / 16 / 20 turns by difficulty).
    A Gymnasium `TimeLimit` around the env (`gym.make(id, max_episode_steps=N)`, or applied
    by hand) caps the budget at N: the env truncates itself at that step, with its summary.

    ## Difficulty
    The gold plan's length: `easy` 3-4 calls, `medium` 5-6, `hard` 7-8. Harder tasks also have
    larger worlds, look-alike names, details the user states only when asked, and traps more often:
    at least one in about 10% of easy tasks (ops 30%), 25-65% of medium and 75-90% of hard ones
    (`task.gold.traps` names them).

    ## Splits
    `train`: finance, calendar, orders. `test`: ops (an unseen domain, with its own tools,
    templates and vocabulary), so training on `train` and evaluating on `test` measures transfer.
    `domain=` picks one domain whatever the split.

    ## Noise
    Every `agentgym.noise` kind composes with it, as a Gymnasium wrapper around the env
    (`gym.make(id, noise="...")` adds them and `env.spec.additional_wrappers` lists them); each acts
    only in its own `reset` and `step`, so `env.unwrapped` is the env without noise. Ambiguity words
    the request without one detail it states (the payout currency, the meeting's length, the
    customer's email, the severity), which the user then gives when asked. A goal shift changes
    one parameter of the job in the domain's own terms (finance: the payout currency; calendar:
    the meeting's length; orders: an exchange's variant, or keeping one of two items; ops: a
    rollback asked for or called off), where the task stays solvable within its difficulty's plan
    length. The user announces it at its first reply from turn 2-4 on, when asked to confirm, or
    on seeing the first write; the domain's reference solver gives the new gold (the old plan is
    kept as `superseded_calls`), and the log's target is the detail's id with `{"from", "to",
    "recoverable"}`: recoverable when every record made so far fits the new goal or can be undone
    (a meeting can be cancelled) and the new plan fits in the turns left. The oracle re-sends a
    call that failed by injection, and asks before its first write while a shift is pending.

    ## Registered ids
    `AgentRL/ToolUse-v0`.

    ## Version history
    * v0: initial release.
    """

    family = "tooluse"
    parts = EnvParts(generate_task, make_toolkit, make_user, score_task, judge=JUDGE)
