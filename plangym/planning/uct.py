"""UCT (Monte Carlo tree search with upper confidence bounds), expanding leaves in waves.

Every tree node holds the exact state it stands for, so expanding a node is one step from
its state and nothing is ever replayed. One *wave* of the search:

1. **Select** up to ``wave_size`` leaves. Each descent from the root follows the child with
   the best UCB score ``Q + c * sqrt(ln N_parent / N_child)`` (``Q`` rescaled to [0, 1]
   among siblings) until it reaches a node with an untried action, and takes that action.
   Every node on the way gets a *virtual loss*, a pretend visit worth nothing, so the next
   descent of the same wave prefers other branches.
2. **Expand** all selected (node, action) pairs with one ``step_batch`` call.
3. **Roll out** from every new node with random actions, ``rollout_depth`` steps of
   ``rollout_dt`` agent steps each, one ``step_batch`` call per depth for all the wave's
   rollouts together.
4. **Back up** each discounted return along its path, replacing the virtual losses with
   real visits.

An episode's end or a lost life ends a rollout and counts as a dead end for the search:
nothing more is collected past it. After ``waves`` waves the planner plays the most
visited action of the root, and keeps that child's subtree for the next decision. A tree
edge is one agent step, so the subtree's root is exactly the state the game moves to.

>>> import plangym
>>> from plangym.planning.common import play
>>> env = plangym.make("CartPole-v1")
>>> planner = UCTPlanner(env, waves=4, wave_size=8, rollout_depth=10, seed=0)
>>> trajectory = play(env, planner, max_steps=30, seed=0)
>>> trajectory.score, trajectory.ended
(30.0, False)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gymnasium import spaces

from plangym.planning.common import ActionSampler, Decision, as_action, life_lost, same_state
from plangym.validation import check_positive_int


class Node:
    """A node of the search tree: a state, how it was reached and what was found below it."""

    __slots__ = ("children", "dead", "reward", "state", "untried", "value_sum", "visits")

    def __init__(self, state: Any, reward: float, dead: bool, untried: list):
        self.state = state
        self.reward = reward  # collected by the step from the parent
        self.dead = dead  # episode over or life lost: nothing to search below
        self.untried = untried  # actions not expanded yet, in the order they will be
        self.children: dict[Any, Node] = {}
        self.visits = 0
        self.value_sum = 0.0  # sum of the returns backed up through this node

    @property
    def value(self) -> float:
        """Mean return from this node's parent through this node."""
        return self.value_sum / self.visits if self.visits else 0.0


class UCTPlanner:
    """UCT tree search whose expansions and rollouts are batched over ``step_batch``.

    Args:
        env: Environment with a Discrete action space (a ``ParallelEnv`` spreads every
            batch over its workers).
        waves: Waves per decision.
        wave_size: Leaves expanded per wave: the batch size of its ``step_batch`` calls.
        rollout_depth: Random steps after each expansion (0: no rollouts).
        rollout_dt: Agent steps per rollout step: a longer look-ahead for the same calls.
        exploration: The UCB constant ``c``.
        discount: Discount per tree edge or rollout step.
        seed: Seed of the planner's random generator.
    """

    name = "uct"

    def __init__(
        self,
        env: Any,
        waves: int = 2,
        wave_size: int = 32,
        rollout_depth: int = 3,
        rollout_dt: int = 2,
        exploration: float = 1.0,
        discount: float = 0.99,
        seed: int = 0,
    ):
        if not isinstance(env.action_space, spaces.Discrete):
            raise TypeError(
                "env: UCT needs a Discrete action space, received "
                f"{type(env.action_space).__name__}; use the swarm planner instead"
            )
        self.env = env
        self.waves = check_positive_int("waves", waves)
        self.wave_size = check_positive_int("wave_size", wave_size)
        if int(rollout_depth) < 0:
            raise ValueError(f"rollout_depth: expected an integer >= 0, received {rollout_depth}")
        self.rollout_depth = int(rollout_depth)
        self.rollout_dt = check_positive_int("rollout_dt", rollout_dt)
        self.exploration = float(exploration)
        self.discount = float(discount)
        self.rng = np.random.default_rng(seed)
        self.sampler = ActionSampler(env.action_space, self.rng)
        # The subtree under the action played last: reused if the next state is its root.
        self._kept: Node | None = None

    def decide(self, state: Any) -> Decision:
        """Search from ``state`` and return its most visited action."""
        root = self._root_for(state)
        frames = 0
        for _ in range(self.waves):
            leaves = self._select_wave(root)
            if not leaves:
                break
            frames += self._expand_and_evaluate(leaves)
        action = self._best_action(root)
        self._kept = root.children.get(action)
        return Decision(action=as_action(action), frames=frames)

    # Tree -------------------------------------------------------------------------------------
    def _root_for(self, state: Any) -> Node:
        kept = self._kept
        if kept is not None and same_state(kept.state, state) and not kept.dead:
            return kept
        return Node(state, reward=0.0, dead=False, untried=self._shuffled_actions())

    def _shuffled_actions(self) -> list:
        return self.rng.permutation(self.sampler.all_actions()).tolist()

    def _ucb_child(self, node: Node, pending: dict[int, int]) -> Node | None:
        """Return the child with the best UCB score, counting the wave's virtual losses."""
        # Plain Python: nodes have a handful of children, too few for NumPy to pay off.
        scored = []
        for child in node.children.values():
            visits = child.visits + pending.get(id(child), 0)
            if visits:
                # A virtual loss is a visit that adds nothing: it lowers the mean, raises N.
                scored.append((child, visits, child.value_sum / visits))
        if not scored:
            return None
        low = min(mean for _, _, mean in scored)
        spread = max(mean for _, _, mean in scored) - low
        log_total = math.log(max(sum(visits for _, visits, _ in scored), 1))
        best, best_score = None, -math.inf
        for child, visits, mean in scored:
            scaled = (mean - low) / spread if spread > 0 else 0.5
            score = scaled + self.exploration * math.sqrt(log_total / visits)
            if score > best_score:
                best, best_score = child, score
        return best

    def _select_wave(self, root: Node) -> list[tuple[list[Node], Any]]:
        """Up to ``wave_size`` (path, untried action) pairs, spread by virtual losses."""
        leaves: list[tuple[list[Node], Any]] = []
        pending: dict[int, int] = {}
        for _ in range(self.wave_size):
            path = [root]
            node = root
            while not node.untried and not node.dead:
                child = self._ucb_child(node, pending)
                if child is None:
                    break
                path.append(child)
                node = child
            if node.dead:
                # A dead end: a visit worth its reward alone, and nothing to step.
                self._backup(path, 0.0)
                continue
            if not node.untried:
                # Every action below is already in this wave: the tree is too small to
                # fill it, and the next wave will see the new nodes.
                break
            action = node.untried.pop()
            leaves.append((path, action))
            for visited in path[1:]:
                pending[id(visited)] = pending.get(id(visited), 0) + 1
        return leaves

    def _expand_and_evaluate(self, leaves: list[tuple[list[Node], Any]]) -> int:
        """Step every leaf's action in one batch, roll out in batches, back up; frames used."""
        actions = [action for _, action in leaves]
        parents = [path[-1].state for path, _ in leaves]
        states, _, rewards, terminals, truncateds, infos = self.env.step_batch(
            actions, states=parents
        )
        frames = sum(int(info.get("n_step", 1)) for info in infos)
        children = []
        for (path, action), state, reward, terminal, truncated, info in zip(
            leaves, states, rewards, terminals, truncateds, infos, strict=True
        ):
            dead = bool(terminal or truncated or life_lost(info))
            untried = [] if dead else self._shuffled_actions()
            child = Node(state, reward=float(reward), dead=dead, untried=untried)
            path[-1].children[action] = child
            children.append(child)
        returns, rollout_frames = self._rollouts(children)
        for (path, _), child, future in zip(leaves, children, returns, strict=True):
            self._backup([*path, child], future)
        return frames + rollout_frames

    def _rollouts(self, nodes: list[Node]) -> tuple[np.ndarray, int]:
        """Discounted random-rollout return below each node, one batch per depth."""
        returns = np.zeros(len(nodes))
        active = np.array([not node.dead for node in nodes])
        states = [node.state for node in nodes]
        frames = 0
        weight = 1.0  # the edge into the node discounts the whole rollout once more
        for _ in range(self.rollout_depth):
            index = np.flatnonzero(active)
            if not len(index):
                break
            actions = self.sampler.sample(len(nodes))[index]
            stepped, _, rewards, terminals, truncateds, infos = self.env.step_batch(
                actions, states=[states[i] for i in index.tolist()], dt=self.rollout_dt
            )
            frames += sum(int(info.get("n_step", 1)) for info in infos)
            returns[index] += weight * np.asarray(rewards, dtype=np.float64)
            weight *= self.discount
            for i, state, terminal, truncated, info in zip(
                index.tolist(), stepped, terminals, truncateds, infos, strict=True
            ):
                states[i] = state
                if terminal or truncated or life_lost(info):
                    active[i] = False
        return returns, frames

    def _backup(self, path: list[Node], future: float) -> None:
        """Add the return seen from each node of ``path`` (root excluded) to its statistics.

        The wave's virtual losses are not stored in the nodes, so a real visit replaces
        them simply by the wave ending.
        """
        value = future
        for node in reversed(path[1:]):
            value = node.reward + self.discount * value
            node.visits += 1
            node.value_sum += value
        path[0].visits += 1

    def _best_action(self, root: Node) -> Any:
        """Return the most visited action of the root (best mean return among ties)."""
        if not root.children:
            return self.sampler.sample(1)[0]
        visited = list(root.children.items())
        return max(visited, key=lambda item: (item[1].visits, item[1].value))[0]
