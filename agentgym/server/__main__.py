"""``python -m agentgym.server``: run the env server (the same options as ``agentgym serve``)."""

import sys

from agentgym.server.commands import main

sys.exit(main())
