"""`PlaceIndex`, a generated world's `by_id`: the plain dict of its places by id, read every way."""

from __future__ import annotations

import copy
import pickle

import pytest

from agentgym.core.seeding import fast_stream
from agentgym.envs.dialog import _fast, tasks
from agentgym.envs.dialog.domain import load_domains
from agentgym.envs.dialog.place_index import PlaceIndex


@pytest.mark.parametrize("domain", sorted(load_domains()))
def test_it_reads_as_the_plain_dict(domain: str) -> None:
    d = load_domains()[domain]
    t = tasks._tables(d)
    for seed in range(60):
        world, _ = _fast.make_world(d, fast_stream(seed, f"task/world/{domain}"), t, tasks.Place, tasks.World)
        index, plain = world.by_id, dict(zip(t.ids, world.places))
        assert isinstance(index, PlaceIndex)
        assert index == plain and plain == index and len(index) == len(plain)
        assert list(index) == list(plain) and list(index.items()) == list(plain.items())
        for key in (*t.ids, "nope", "", t.ids[0].lower()):  # beyond the world's places too
            assert (key in index) == (key in plain)
            assert index.get(key) is plain.get(key) and index.get(key, 7) is plain.get(key, 7)
            if key in plain:
                assert index[key] is plain[key]
            else:
                with pytest.raises(KeyError):
                    index[key]
        assert repr(index) == repr(plain)
    with pytest.raises(TypeError):
        index.get(["unhashable"])  # type: ignore[arg-type]


def test_a_copied_world_indexes_its_own_places() -> None:
    d = load_domains()["cafes"]
    world, _ = _fast.make_world(d, fast_stream(3, "task/world/cafes"), tasks._tables(d), tasks.Place, tasks.World)
    for other in (copy.deepcopy(world), pickle.loads(pickle.dumps(world))):
        assert other == world
        assert all(other.by_id[p.id] is p for p in other.places)
