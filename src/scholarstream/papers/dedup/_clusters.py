"""Union-find: pairs judged duplicates join their records' clusters (transitively).

Transitivity is where pairwise rules go wrong: A looks like B and B like C, yet A and C
are an article and its erratum. ``DisjointSets.join`` therefore takes a ``conflict`` check
and refuses to join two clusters when any record of one conflicts with any of the other.
"""

from __future__ import annotations

from collections.abc import Callable

Conflict = Callable[[int, int], bool]


class DisjointSets:
    """Union-find over ``0..size-1`` with path halving; the smaller index is a set's root,
    so every cluster is named by its first record."""

    def __init__(self, size: int) -> None:
        self._parent = list(range(size))
        self._members: dict[int, list[int]] = {}

    def find(self, item: int) -> int:
        parent = self._parent
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    def members(self, item: int) -> list[int]:
        root = self.find(item)
        return self._members.get(root, [root])

    def join(self, a: int, b: int, conflict: Conflict | None = None) -> bool:
        """Join the sets of ``a`` and ``b``; ``False`` if they already are one set or if
        ``conflict`` says some record of one cannot be a copy of some record of the other
        (the pair ``a, b`` itself is taken as judged)."""
        root_a, root_b = self.find(a), self.find(b)
        if root_a == root_b:
            return False
        group_a, group_b = self.members(root_a), self.members(root_b)
        if conflict is not None and any(
            conflict(x, y) for x in group_a for y in group_b if (x, y) not in ((a, b), (b, a))
        ):
            return False
        low, high = sorted((root_a, root_b))
        self._parent[high] = low
        self._members[low] = group_a + group_b
        self._members.pop(high, None)
        return True

    def groups(self) -> list[list[int]]:
        """Every set, members ascending, sets ordered by their first member."""
        members: dict[int, list[int]] = {}
        for item in range(len(self._parent)):
            members.setdefault(self.find(item), []).append(item)
        return list(members.values())
