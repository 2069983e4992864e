"""The forked walker compares its walk with the index's stats sent as columns
(vaultmem.services.index.sync_walk.column_differences): it must find exactly what the map
comparison finds (new, changed, vanished notes) and name the changed ones the index holds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from vaultmem import Vault
from vaultmem.services.index.sync_walk import StatMap, column_differences, differences

paths = st.sampled_from([f"{top}note {i}.md" for top in ("", "STM/", "A/b/") for i in range(6)])
stats = st.tuples(st.integers(0, 3), st.integers(-2, 2))
stat_maps = st.dictionaries(paths, stats, max_size=12)


def _columns(known: StatMap) -> tuple[list[str], list[int]]:
    return list(known), [value for pair in known.values() for value in pair]


@given(stat_maps, stat_maps)
def test_columns_find_what_the_map_finds(present: StatMap, known: StatMap) -> None:
    to_read, vanished = differences(present, known)
    assert column_differences(present, _columns(known)) == (
        to_read,
        vanished,
        [rel for rel in to_read if rel in known],
    )


@given(stat_maps)
def test_an_unchanged_vault_has_nothing_to_read(known: StatMap) -> None:
    assert column_differences(dict(reversed(known.items())), _columns(known)) == ([], [], [])


def test_the_index_hands_over_its_stats_as_columns(copy_vault: Callable[[str], Path]) -> None:
    with Vault.open(copy_vault("13th-age-srd")) as vault:
        vault.sync()
        paths, flat = vault.index.stat_columns()
        states = vault.index.stat_states()
    assert dict(zip(paths, zip(flat[::2], flat[1::2], strict=True), strict=True)) == states
    assert len(paths) == 1003
