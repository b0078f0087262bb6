"""The expert's tool-use playbooks, one module per domain (`PLAYBOOKS` names them).

A playbook is what a careful assistant who read the brief knows of one domain: which tools
answer which question, which policy figures the brief states, and how the user words a request
and a change of mind. Every value it uses comes from the brief, the user or a tool result.
"""

from __future__ import annotations

from agentgym.agents.experts.tooluse_playbooks.base import Playbook
from agentgym.agents.experts.tooluse_playbooks.calendar import CalendarPlaybook
from agentgym.agents.experts.tooluse_playbooks.finance import FinancePlaybook
from agentgym.agents.experts.tooluse_playbooks.ops import OpsPlaybook
from agentgym.agents.experts.tooluse_playbooks.orders import OrdersPlaybook

__all__ = ["Playbook", "PLAYBOOKS"]

#: The playbook of each tool-use domain, by the domain's name in the public task card.
PLAYBOOKS: dict[str, type[Playbook]] = {
    "finance": FinancePlaybook,
    "calendar": CalendarPlaybook,
    "orders": OrdersPlaybook,
    "ops": OpsPlaybook,
}
