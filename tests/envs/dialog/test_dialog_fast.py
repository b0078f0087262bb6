"""Each speed kernel of `agentgym.envs.dialog._fast` equals the plain code it stands for."""

from __future__ import annotations

import dataclasses

import pytest

from agentgym.core.seeding import fast_stream
from agentgym.envs.dialog import _fast, tasks
from agentgym.envs.dialog.domain import load_domains


def test_place_is_a_plain_slots_dataclass() -> None:
    """The world kernel's invariant: `Place.__init__` only stores its fields."""
    fields = dataclasses.fields(tasks.Place)
    assert tasks.Place.__slots__ == tuple(f.name for f in fields)
    assert all(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING for f in fields)
    assert not hasattr(tasks.Place, "__post_init__")


@pytest.mark.parametrize("domain", sorted(load_domains()))
def test_make_world_equals_plain(domain: str) -> None:
    """The same places (values and types), ids and generator state after the world, on the
    streams tasks draw worlds from and on others (repeated names and their suffixes included)."""
    d = load_domains()[domain]
    repeated = 0
    for seed in range(400):
        name = f"task/world/{domain}" if seed % 2 else f"check/{domain}"
        plain_rng, fast_rng = fast_stream(seed, name), fast_stream(seed, name)
        plain = tasks._make_world(d, plain_rng)
        fast = _fast.make_world(d, fast_rng, tasks._tables(d), tasks.Place, tasks.World)
        assert fast == plain, (domain, seed)
        assert [[type(getattr(p, f)) for f in p.__slots__] for p in fast.places] == \
               [[type(getattr(p, f)) for f in p.__slots__] for p in plain.places]
        assert list(fast.by_id) == list(plain.by_id) and fast_rng.getstate() == plain_rng.getstate()
        repeated += sum(p.name not in tasks._tables(d).names for p in plain.places)
    assert repeated > 100  # the suffix draws are exercised


def test_generate_task_uses_the_kernel_world() -> None:
    """A generated task's world is the plain world of its stream."""
    for seed in range(40):
        task = tasks.generate_task(seed, {})
        plain = tasks._make_world(load_domains()[task.domain], fast_stream(seed, f"task/world/{task.domain}"))
        assert task.world == plain
