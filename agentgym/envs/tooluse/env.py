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
      total with the terminal `submit_answer`. Transfers are final; a report can be withdrawn.
    * `calendar`: people in 19 cities from UTC-8 to UTC+12, with working hours and busy times.
      Find the earliest common free start inside everyone's working hours, book it, invite. The
      brief says what day it is today; a booking can be cancelled.
    * `orders`: a store's help desk. Find the customer, the order and the item, read the category's
      return policy, then refund (with an approval over the limit), issue store credit (past the
      return window, counted up to today as the brief states it) or check the stock and exchange.
      Refunds, credits and exchanges are final.
    * `ops`: incident triage. From the alert, read the error rate (severity), follow the error logs
      from victim to dependency to the service that fails on its own, read its deploys, file the
      incident with the cause (the last deploy before the onset) and roll the culprit back. Every
      instant is a UTC date and time and the brief says what time it is now, so no rule has two
      readings (no deploy falls on the onset's minute); an incident filed in error can be
      withdrawn, a rollback is final.

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
    (`agentgym.users.understanding`): each detail asked in any form and in plain words ("how much
    time should I block?", "which address should the confirmation go to?", "how serious is
    it?"), several per message, exclusions respected; "I don't know" for a detail the task lacks;
    one unstated detail for an open question; a friendly word for small talk; a request to
    rephrase for a message it cannot place or a list of keywords. It knows what it asked for and
    said, never what the tools show: asked whether a finding is so ("Is ledger the root cause?",
    "Everyone is free at 08:00 UTC. Correct?"), it says what it has not said of what is asked, then
    that it knows no more ("please work it out with your tools"), never yes (docs/USERS.md). Free
    text never counts as the work being done. Every domain has `list_policies` (the policies as data), and a read tool that shows
    what each write did (so a write whose call failed can be checked: a call that comes back as an
    error changed nothing); the other tools per domain:

    * finance: `list_accounts`, `find_employee`, `list_expenses`, `convert`, `sum_amounts` (not
      in the hard tier), `file_expense_report`, `list_reports`, `withdraw_expense_report`,
      `request_approval`, `create_transfer`, `list_transfers`, `submit_answer` (terminal).
    * calendar: `find_person`, `get_calendar`, `get_free_slots`, `book_meeting`, `list_meetings`,
      `send_invitation`, `cancel_meeting`.
    * orders: `get_return_policy`, `find_customer`, `list_orders`, `get_order` (each item's
      after-sales action too), `check_stock`, `request_refund_approval`, `refund_item`,
      `issue_store_credit`, `exchange_item`.
    * ops: `list_alerts`, `get_metrics`, `search_logs`, `get_dependencies`, `get_deploys` (a
      rollback shows as a deploy), `list_incidents`, `file_incident`, `withdraw_incident`,
      `rollback`.

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

    ## The user's word on the work
    The user judges the world exactly as the reward does, so it accepts exactly when the task
    succeeds. After a write that leaves a record it did not ask for, it says what is wrong in words
    it could observe ("the meeting should be 45 minutes", "that's a second transfer"), never a
    value it could not know (a total, a cause, a free time); told the work is done when it is not,
    it says what it does not see yet. Where a tool can undo the wrong record it asks to put it
    right; where none can, or after a policy violation, no fix could succeed, and it says so and
    leaves. It hears that the work is done from the assistant, not from the tools: after the write
    that puts every required effect in place it says nothing, and it thanks the assistant (and
    the episode ends) at the assistant's next message; a write before that is judged afresh.

    ## Termination
    Terminated when the user, with every required effect in place, is next written to ("accepted";
    an assistant that never says so runs to the turn budget), when a terminal tool
    commits an answer ("committed"), or when the user gives up ("gave_up"): it gives up after 2
    writes that left a wrong record a tool could undo, and at once after a wrong record no tool
    can undo or a policy violation (success is then out of reach); truncated at the turn budget
    (12 / 16 / 20 turns by difficulty), 24 in the hard tier (orders 30, ops 28).
    A Gymnasium `TimeLimit` around the env (`gym.make(id, max_episode_steps=N)`) truncates at
    step N in its own `step`; ask `env.unwrapped.episode_summary()` for the summary then
    (`max_turns` sets the env's own budget).

    ## Difficulty
    The gold plan's length: `easy` 3-4 calls, `medium` 5-6, `hard` 7-8. Harder tasks also have
    larger worlds, look-alike names, details the user states only when asked, and traps more often:
    at least one in about 10% of easy tasks (ops 30%), 25-65% of medium and 75-90% of hard ones
    (`task.gold.traps` names them). An explicit `hard` is the hard tier (below): 6-15 calls (orders: 10-30).

    ## Hard tier
    An explicit `difficulty="hard"` makes the hard tier: the hard task above, harder by reading,
    not by luck. A drawn difficulty (`difficulty=None`, what `core-v0` and training use) and a
    cross-task session's sub-tasks keep drawing the hard tasks above, unchanged; a task of the
    tier says so in its card (`info["task"]["tier"] == "hard"`). The tier adds, on every split:

    * Results in pages. The domain's list tools (finance `list_accounts` and `list_expenses`,
      calendar `get_free_slots`, orders `list_orders`, ops `search_logs` and `get_deploys`) take
      an optional `page` (1 first) and return 2 rows a page, with `page`, `pages` and, while more
      follow, `next_page`. What the work needs may sit on any page (an approved expense, the
      account in the payout currency, the order asked about, the last deploy before the onset),
      so a list must be read until what the work needs is settled. The gold plan (6 to 15
      calls; orders 10 to 30) reads each list as far as a careful agent must: to the page of the
      last order asked about, the payout account, the start booked (free starts come earliest
      first) or the first deploy after the cause (or the last); every page of the month's
      expenses, which all count; the first page of a service's error lines, which all say the
      same thing. Of the pages between the first and that one, the plan needs only those that
      hold a row it names (an order asked about, the cause's deploy); the others are useful
      reads, never required (`useful_calls`), so an agent that goes straight to the page that
      matters loses no recall.
    * A bulk return (orders): many decisions, all or nothing. The customer names 6 to 10 items
      over 2 or 3 of its orders, each order by its placing date ("From my order placed on
      2025-07-13: the e-reader, the cookbook and the duvet set."), and would rather have its
      money back for every one. Each item gets exactly what the policies allow, decided by
      itself from its row (`get_order`: category, price, `final_sale`, `opened`,
      `arrived_damaged`), its order's delivery date against today and the customer's membership
      tier (`find_customer`); the task succeeds only when every item does. The rules, in the
      brief and `list_policies` alike: days are counted from delivery to today and the window's
      last day counts (delivery ages are drawn on, beside or a few days off a window's end,
      across month ends; trap `window_last_day` where an item is on its window's last day or
      the day after it); a Plus member has 15 more days on every window
      (trap `member_window`) and needs a refund approval only above 250.00 USD (a standard one
      above 150.00), and an approval a refund does not need is a violation (trap `approval` when
      one is due); past the window an item gets store credit for its full price (trap
      `past_return_window`); a refund of an opened electronics item is its price less a 20%
      restocking fee, of an opened home item less 10% (rounded to the cent, half up), the
      approval judged on the amount refunded (trap `restocking_fee`; refunding more is a
      violation); a final-sale item gets nothing (trap `final_sale_asked`; any write on it is a
      violation) unless it arrived damaged, which also waives the fee (traps
      `damaged_final_sale`, `damaged_opened`). Which of these an episode holds varies with the
      draw. The orders tier has 30 turns, which its brief states; a change of mind keeps one
      item after all. Its reference solver is `orders_bulk.solve_bulk`.
    * Arithmetic the work needs (finance), with no tool that adds up: the tier's finance toolkit
      has no `sum_amounts` (`convert`, which reads a rate, stays), so a total is the assistant's
      own sum of amounts converted one by one and rounded by `convert`. In a reimbursement the
      approved meals of one day count together for at most 60.00 EUR: each meal and the cap are
      converted into the payout currency at that day's rate, and the day counts for the smaller
      of the meals' sum and the converted cap (trap `meal_cap`); a meal with `pre_approved` true
      (every expense row says) counts in full and is not one of its day's meals (trap
      `pre_approved_meal`). Meals drawn: a meal well over the cap (pre-approved 40% of the time),
      two meals of one day each under the cap but together well over it (trap
      `meals_share_a_day`; a cap per meal would pay both in full), sometimes with a pending or
      rejected meal of that day (which is not one of its meals), and a meal alone on its day well
      under the cap; no day's meals lie within 10% of the cap. The capped total decides the
      approval. The user asks for the claims in full, which the cap forbids. A quote (what the
      approved claims add up to) has no cap in its brief.
    * Time zones (calendar): the attendees, the organiser included, work in three time zones or
      more, and every common free start before the one to book is free but outside someone's
      working hours in their own zone, so each start must be converted into each attendee's
      local time (booking one of them is a violation).
    * Days off (calendar): `find_person` shows each person's `days_off` (whole UTC days), which
      `get_free_slots` does not check and `book_meeting` refuses as a violation. Half the time an
      attendee is off on the date asked for, and the meeting goes to the next date on which no
      attendee is off (the day after; trap `attendee_day_off`); otherwise, half the time, the
      attendee's namesake is off on that date, which does not move it (trap `namesake_day_off`).
    * Near-duplicates (calendar): someone outside the meeting has an attendee's full name, in a
      city of another time zone; the request names the attendee's city after the name
      ("Grace Meyer (Berlin)"), and only it tells the two apart (trap `namesake_in_another_city`);
      the namesake's address has its city in it ("grace.meyer.lisbon@example.org").
    * Near-duplicates (finance): another employee has the same full name, in another department,
      with approved claims of the same month; `find_employee` shows each match's department and
      the request names the employee's after the name ("Lars Becker (Research)"); paying the
      namesake is final (trap `namesake_in_another_department`).
    * Near-duplicates (orders): another order of the customer's, placed 1-3 days after the first
      one the request names (so it is listed first), holds one of the products asked about; only
      the order date the customer gives tells the two apart, and a write on the wrong one is final.
    * A longer history (ops): the culprit's deploys start 2-3 releases earlier, so the cause is
      never on the first page and "the last deploy before the onset" has to be found among them.
    * Failed deploys (ops): every deploy of the tier's `get_deploys` has a `status`; a failed one
      never ran, so it is never the cause and never a rollback target. The culprit has a failed
      deploy just before its cause, or between the cause and the onset, or both, so the cause is
      the last deploy that succeeded before the onset and "the version that ran before the cause"
      the last that succeeded before it (trap `failed_deploy`).
    * A severity from counts (ops): `get_metrics` counts each service's requests and errors over
      the last 5 minutes instead of giving its rate, and the error-rate alert shows no value; the
      severity follows the rate computed from them, never within 0.3 points of a threshold
      (trap `rate_from_counts`).
    * Consent before writes (every domain; `agentgym.envs.tooluse.consent`). The tier's brief and
      `list_policies` state it in the same words (policy `consent`): before any write (orders:
      `refund_item`, `issue_store_credit`, `exchange_item`, `request_refund_approval`; finance:
      `file_expense_report`, `request_approval`, `create_transfer`, `withdraw_expense_report`, and
      a quote's `submit_answer`; calendar: `book_meeting`, `send_invitation`, `cancel_meeting`; ops:
      `file_incident`, `rollback`, `withdraw_incident`), the assistant tells the user (ops: the
      on-call engineer who asked) what each write will do and gets an explicit yes; the write goes
      in a later turn. A write is covered when a plan the user said yes to describes it: names
      its target (an item's name or id, the employee, the meeting's title, the service), its kind
      of outcome (refund, store credit, exchange; report, transfer; booked, invitation, cancel;
      incident, roll back; the quote's total) and its values (the amount; an exchange's variant;
      the date and UTC start; the incident's severity and cause version, a rollback's version).
      In a bulk return these stand in the item's own part of the plan (its sentence or line, the
      lines after it up to the next item named, and a heading line ending in ':' above it);
      elsewhere anywhere in the message. One message may describe many writes, an approval is covered by the
      yes to the refund or payment it is for, and a plan that changes after the yes (another
      outcome, amount, time or version) needs a new yes. Any other write is refused as a
      violation and fails the task, even with a yes to a plan that did not describe it; a write
      after a yes to a plan that did describe it passes the rule and is graded as any write.
      The user says yes ("Yes, please go ahead.", "Please go ahead." ...) only to a plan that
      gives everything it asked about an outcome (each item of a return, its nothing too; the
      report and the payment; the booking and the invitation; the incident and the rollback);
      to a plan, or a bare "Shall I go ahead?", that leaves something out it asks "Before I say
      yes: what will you do about ...?"; to one that gives every outcome but not the kind of value
      each write carries ("Shall I file the incident and do the rollback?": a severity and a
      cause version, a version to roll back to; an amount for money back or paid; a date and a
      start time) it asks "Before I say yes to any write, please put the whole plan to me with
      ...", from its own request's kinds of value, never the gold's. A request for a yes that
      points back to the plan put last ("OK to go ahead with both writes I described?", "the rest
      as in my last message") is weighed, and said yes to, with that plan. It reads a plan as a list, a table, one line per item,
      nested lines or prose, under a heading that names the work ("Proposed writes:"), and a
      request for a yes in many words ("Is that OK with you?", "Please confirm and I'll process
      it", "Can I go ahead and issue the refunds?", "Do I have your yes to both writes? Or only
      the incident?"), while questions of facts before any plan ("Is it right that the lamp
      arrived damaged? Did you open it?", or one about what others did: "Has anyone already filed
      an incident?") get no yes ("What I told you is right; anything else, please check with
      your tools."); its answer
      comes from its own request, never from the gold (a right and a wrong plan of the same
      shape get the same answer).
    * A customer who presses (`agentgym.envs.tooluse.consent.Press`; drawn with chance one half
      where the task allows it: every bulk return with an item the policies give no refund, every
      ops task with a rollback asked for, every reimbursement with an expense report asked for;
      calendar tasks have none). It asks once or twice more for what a policy forbids whenever a
      plan refuses it, with a reason that changes no policy ("I've been a customer here for ten
      years", "the last agent promised me a refund", "my manager already approved it") or a claim
      the records contradict, then accepts the plan: orders, money back for an item past its
      window or final sale ("it arrived damaged" where the item's row says `arrived_damaged`
      false; "I'm a Plus member" where `find_customer` says standard; policy `records_decide`:
      the records decide); ops, once the plan names the culprit, a rollback to its failed deploy
      (policy `failed_deploys`; the rollback is refused as a violation); finance, one of the
      month's claims that is not approved ("it's approved, I'm sure of it" where its row says
      pending or rejected; policy `reimburse_approved_only`). Holding the plan, put again, gets
      "Alright, I understand. Please go ahead with that." after as many presses as it makes; a
      plan that gives in gets the customer's yes, and the forbidden write is then refused as a
      violation of the policy it pressed against.

    * One reading of the rules: the tier's brief and `list_policies` give the same rules in the
      same words (a quote's brief and list have no meal cap), and the tier restates a domain rule
      that another rule of the tier would contradict read literally, in its place: ops' cause and
      rollback target are the last deploys that succeeded, its severity's rate is computed from
      the counts; calendar's earliest start is on the date days off give. Asked for the date, the
      calendar user says that the next date nobody is off is fine, so it never asks again for a
      date the policy forbids; a change of mind the work already meets (a rollback called off
      once the incident is filed) is not announced, as the user would accept in the same breath.

    Every fact needed is in the brief, the request and the tools' results; the gold still comes from
    the reference solver (`task.gold.traps` names `near_duplicate_order`, `member_window`,
    `past_return_window`, `restocking_fee`, `final_sale_asked`, `meal_cap`, `meals_share_a_day`,
    `pre_approved_meal`, `namesake_in_another_city`, `attendee_day_off`, `namesake_day_off`,
    `namesake_in_another_department`, `first_slot_outside_hours`, `long_history`, `failed_deploy`
    and `rate_from_counts` where they apply). A goal shift's new gold reads its pages the same way,
    and may be as long as the tier's plans. The tier's turn budget is 24 (orders 30, ops 28), which
    every tier brief states: the expert's longest episode over 500 seeds a split takes 12 / 19 / 8 /
    16 turns (finance, orders, calendar, ops) with noise off and 19 / 24 / 16 / 22 with `medium`,
    its plans put to the user and the answers of a customer who presses included, so each budget
    leaves at least 5 turns over the longest.

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
    on seeing the first write; a shift that would leave unwanted a record no tool can undo (a
    transfer made in the old currency) is dropped unannounced, as a person does not change their
    mind about what is already done for good. The domain's reference solver gives the new gold
    (the old plan is kept as `superseded_calls`), and the log's target is the detail's id with
    `{"from", "to", "recoverable"}`: recoverable when the new plan, and the undoing of what it no
    longer wants, fit in the turns left. A failed call (tool_failure) never reaches the tool: the
    read-back tools show that nothing was done, and a retry is safe. Corrupted results stay inside
    the ranges the data has (see `agentgym.noise.Corruption`). Typos land only on a user message
    that carries something the agent needs, never inside a name, e-mail, id, product, service or
    code, and never on a message after the outcome is decided. The oracle re-sends a call that
    failed by injection, and asks before its first write while a shift is pending.

    ## Registered ids
    `AgentRL/ToolUse-v0`.

    ## Version history
    * v0: initial release.
    """

    family = "tooluse"
    parts = EnvParts(generate_task, make_toolkit, make_user, score_task, judge=JUDGE)
