"""Named random streams: the fast construction gives exactly the generator `Rng(n)` would."""

from __future__ import annotations

import hashlib

import pytest

from agentgym.core.seeding import Rng, fast_stream


@pytest.mark.parametrize("seed", [0, 1, 7, 2**31, 2**63 - 1])
@pytest.mark.parametrize("name", ["task", "user", "noise/typos", "noise/typos/trial3", "ü"])
def test_fast_stream_equals_a_plainly_seeded_rng(seed: int, name: str) -> None:
    digest = hashlib.blake2b(f"{seed}/{name}".encode(), digest_size=16).digest()
    plain = Rng(int.from_bytes(digest, "little"))
    fast = fast_stream(seed, name)
    assert type(fast) is Rng
    assert fast.getstate() == plain.getstate()
    assert [fast.integers(1000) for _ in range(20)] == [plain.integers(1000) for _ in range(20)]
    assert fast.gauss(0, 1) == plain.gauss(0, 1)


def test_streams_differ_by_name_and_seed() -> None:
    draws = {(s, n): fast_stream(s, n).random() for s in (0, 1) for n in ("task", "user")}
    assert len(set(draws.values())) == 4


@pytest.mark.parametrize("bad", [-1, True, 1.5, "3"])
def test_bad_seeds_are_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        fast_stream(bad, "task")  # type: ignore[arg-type]


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10, 36, 257])
def test_permutation_is_random_shuffle_draw_for_draw(n: int) -> None:
    for seed in range(30):
        ours, reference = fast_stream(seed, "perm"), fast_stream(seed, "perm")
        expected = list(range(n))
        reference.shuffle(expected)
        assert ours.permutation(n) == expected
        assert ours.getstate() == reference.getstate()  # the same draws were consumed
