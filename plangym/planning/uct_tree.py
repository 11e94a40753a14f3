"""UCT's search tree: its nodes, the range of returns that scales UCB, and checkpoints of it.

A checkpoint holds a tree as a flat list of rows (parents before children, children in
their order), so that pickling a deep tree needs no deep recursion.

>>> root = Node("s0", reward=0.0, dead=False)
>>> root.children[1] = Node("s1", reward=1.0, dead=True)
>>> rows = flatten(root)
>>> [(parent, action, state) for parent, action, state, *_ in rows]
[(-1, None, 's0'), (0, 1, 's1')]
>>> copy = unflatten(rows)
>>> copy[0].children[1] is copy[1], copy[1].dead, copy[1].closed
(True, True, True)
"""

from __future__ import annotations

import math
from typing import Any


class Node:
    """A node of the search tree: a state, how it was reached and what was found below it."""

    __slots__ = (
        "best",
        "children",
        "closed",
        "dead",
        "reward",
        "state",
        "untried",
        "value_sum",
        "visits",
    )

    def __init__(self, state: Any, reward: float, dead: bool):
        self.state = state
        self.reward = reward  # collected by the step from the parent
        self.dead = dead  # episode over or life lost: nothing to search below
        # Actions to expand, in the order they will be; None until a descent first needs
        # them (most rollout nodes are never descended into, and skip the shuffle).
        self.untried: list | None = [] if dead else None
        self.children: dict[Any, Node] = {}
        self.visits = 1  # the step that created the node
        self.value_sum = 0.0  # sum of the returns backed up through this node
        self.best = reward  # best return found from the parent through this node
        # Nothing below this node can be selected: it is dead, or every action has a child
        # (or waits for one in the wave under way) and every child is closed. Selection
        # never descends into a closed child, so no descent of a wave is spent on a dead end.
        self.closed = dead


class ReturnRange:
    """The lowest and highest best return in the tree: the scale of UCB's value term.

    Backups widen it; it starts each decision from the best returns of the root's children.
    """

    __slots__ = ("high", "low")

    def __init__(self, values: list[float]):
        self.low = min(values, default=math.inf)
        self.high = max(values, default=-math.inf)


# The fields of a Node a checkpoint keeps (its children are rebuilt from the parents).
_SAVED = ("state", "reward", "dead", "untried", "visits", "value_sum", "best")


def flatten(root: Node) -> list[tuple]:
    """Return the tree below ``root`` as rows ``(parent row, action, *fields)``, breadth first."""
    rows: list[tuple] = []
    queue: list[tuple[int, Any, Node]] = [(-1, None, root)]
    for parent, action, node in queue:  # grows while read
        index = len(rows)
        rows.append((parent, action, *(getattr(node, field) for field in _SAVED)))
        queue.extend((index, key, child) for key, child in node.children.items())
    return rows


def unflatten(rows: list[tuple]) -> list[Node]:
    """Rebuild :func:`flatten`'s tree; return its nodes in row order (the root first).

    A node's ``closed`` flag is only its ``dead`` flag: whether its actions are all spent
    depends on the action space, which the planner knows.
    """
    built: list[Node] = []
    for parent, action, *values in rows:
        node = Node(None, 0.0, False)
        for field, value in zip(_SAVED, values, strict=True):
            setattr(node, field, value)
        node.closed = node.dead
        if parent >= 0:
            built[parent].children[action] = node
        built.append(node)
    return built
