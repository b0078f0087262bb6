"""A session's brief, kept as its parts (`SessionTask`), reads as the one string it stands for."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from agentgym.envs.crosstask.session import _PREAMBLE, SessionTask
from agentgym.envs.crosstask.tier import generate


def _joined(task: SessionTask) -> str:
    """The brief as one string, written out: the preamble, the rule, each area's brief."""
    segments = [s for s in task.world.segments if s.task is not None]
    briefs = "\n\n".join(f"## Task area {k + 1}: {s.family} / {s.domain}\n{s.task.brief}"
                         for k, s in enumerate(segments))
    rule = task.brief_parts[1]
    return _PREAMBLE + rule + briefs


@pytest.mark.parametrize("difficulty", [None, "easy", "hard"])
@pytest.mark.parametrize("split", ["train", "test"])
def test_the_brief_is_its_parts_joined(difficulty: str | None, split: str) -> None:
    for seed in range(12):
        task = generate(seed, {"split": split, "difficulty": difficulty})
        assert isinstance(task, SessionTask)
        assert task.brief == _joined(task)
        assert "The session has at most" in task.brief_parts[1]
        # The sub-tasks' briefs are parts as they are, not copies.
        assert all(any(p is s.task.brief for p in task.brief_parts) for s in task.world.segments if s.task)


def test_a_copy_or_replacement_keeps_the_brief() -> None:
    task = generate(7, {"split": "train", "difficulty": "hard"})
    for other in (copy.deepcopy(task), pickle.loads(pickle.dumps(task)), dataclasses.replace(task, seed=8)):
        assert other.brief == task.brief
    assert dataclasses.replace(task, seed=8) != task
    task.brief = "Another brief."
    assert task.brief == "Another brief." and task.brief_parts == ("Another brief.",)
