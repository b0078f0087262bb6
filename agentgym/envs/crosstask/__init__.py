"""The cross-task family: one session that switches between tasks of other families."""
