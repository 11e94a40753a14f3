"""UCT (Monte Carlo tree search with upper confidence bounds) for deterministic envs.

Every tree node holds the exact state it stands for, so expanding a node is one step from
its state and nothing is ever replayed. The search runs in *waves*; one wave:

1. **Select** up to ``wave_size`` leaves. Each descent from the root follows the child with
   the best UCB score ``V + c * sqrt(ln N_parent / N_child)`` until it picks an untried
   action. ``V`` blends the best return found through the child with its mean return,
   ``mix * best + (1 - mix) * mean``, rescaled by the range of best returns in the tree.
   An untried action competes as a child worth the bottom of that range with one visit,
   so a promising line can be extended before every one of its siblings is tried. Visits
   are counted on the way down, so the next descent of the same wave goes elsewhere.
   Closed children are skipped (see below), so every descent ends at an untried action.
2. **Expand** all selected (node, action) pairs with one ``step_batch`` call.
3. **Roll out** from every new node: ``rollout_depth`` random actions, each held for
   ``rollout_dt`` agent steps, one ``step_batch`` call per agent step for the whole wave.
   Every rollout step is *kept in the tree* as a node.
4. **Back up** each path's discounted return: means add up, bests keep the maximum.

Why rollouts are kept and bests count: the environment is deterministic, so a rollout that
survived is a real path, and the best return below a node is a lower bound of what can be
achieved from it. Kept rollouts, and the subtree of the action played (reused as the next
root), carry look-ahead from one decision to the next, as the swarm's walkers do. The mean
still matters: a branch where one lucky path survives among many that fail is a risky
place to go. On CartPole this keeps the cart on the track, which random rollouts scored
by their mean alone did not: they see about 20 steps ahead, too few to notice the cart
drifting towards the edge of the track.

An episode's end or a lost life ends a path: nothing more is collected past it. A node is
*closed* when nothing below it can be expanded any more: it is dead, or each of its actions
has a child (or is being expanded in the wave under way) and every child is closed. After
``waves`` waves (or once ``budget`` samples are spent) the planner plays the root's action
with the best return found (the most visited among ties) and keeps that child's subtree for
the next decision. It stops sooner only when the root is closed: every line in the tree
ends in a lost life or the episode's end, so nothing is left to simulate, and the best
return found is the best the game allows from there. A tree edge is one agent step, so the
subtree's root is exactly the state the game moves to.

>>> import plangym
>>> from plangym.planning.common import play
>>> env = plangym.make("CartPole-v1")
>>> planner = UCTPlanner(env, waves=2, wave_size=8, rollout_depth=10, seed=0)
>>> trajectory = play(env, planner, max_steps=30, seed=0)
>>> trajectory.score, trajectory.ended
(30.0, False)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gymnasium import spaces

from plangym.planning.batches import split_states, step_states
from plangym.planning.checks import check_decide_state, check_plan_env, planner_repr
from plangym.planning.common import ActionSampler, Decision, as_action, same_state
from plangym.planning.uct_tree import Node, ReturnRange, flatten, unflatten
from plangym.validation import check_number, check_positive_int, check_seed, describe, is_integer


class UCTPlanner:
    """UCT tree search whose expansions and rollouts are batched over ``step_batch``.

    Args:
        env: Environment with a Discrete action space (a ``ParallelEnv`` spreads every
            batch over its workers).
        waves: Waves per decision (fewer only if every line in the tree ends first).
        wave_size: Leaves expanded per wave: the batch size of its ``step_batch`` calls.
        rollout_depth: Random actions after each expansion (0: no rollouts).
        rollout_dt: Agent steps each random action of a rollout is held for.
        exploration: The UCB constant ``c``.
        mix: Weight of the best return against the mean return in a node's value.
        discount: Discount per agent step.
        seed: Seed of the planner's random generator.
        budget: Agent steps to simulate per decision, counted exactly (expansions and
            rollout steps): waves go on until it is spent, and ``waves`` is ignored; the
            last wave is cut to what is left. Less is spent only if every line in the tree
            ends (a lost life or the episode's end) first. None: ``waves`` waves.
    """

    name = "uct"

    def __init__(
        self,
        env: Any,
        waves: int = 2,
        wave_size: int = 32,
        rollout_depth: int = 6,
        rollout_dt: int = 1,
        exploration: float = 0.3,
        mix: float = 0.25,
        discount: float = 0.99,
        seed: int = 0,
        budget: int | None = None,
    ):
        check_plan_env(env)
        if not isinstance(env.action_space, spaces.Discrete):
            raise TypeError(
                "env: UCT needs a Discrete action space, received "
                f"{type(env.action_space).__name__}; use the swarm planner instead"
            )
        self.env = env
        self.waves = check_positive_int("waves", waves)
        self.wave_size = check_positive_int("wave_size", wave_size)
        if not is_integer(rollout_depth):  # a wrong kind: "3", 1.5, True, None
            raise TypeError(
                f"rollout_depth: expected an integer >= 0, received {describe(rollout_depth)}"
            )
        if rollout_depth < 0:
            raise ValueError(f"rollout_depth: expected an integer >= 0, received {rollout_depth}")
        self.rollout_depth = int(rollout_depth)
        self.rollout_dt = check_positive_int("rollout_dt", rollout_dt)
        self.exploration = check_number("exploration", exploration, low=0)
        self.mix = check_number("mix", mix, 0, 1)
        # 0 is allowed: a discount in [0, 1], as in an MDP's definition (0: rewards of the
        # next step only).
        self.discount = check_number("discount", discount, 0, 1)
        self.budget = None if budget is None else check_positive_int("budget", budget)
        self._samples = 0  # agent steps simulated for the decision under way
        self.seed = check_seed(seed)
        self.rng = np.random.default_rng(self.seed)
        self.sampler = ActionSampler(env.action_space, self.rng)
        self._actions = self.sampler.all_actions()
        # The subtree under the action played last: reused if the next state is its root.
        self._kept: Node | None = None

    def __repr__(self) -> str:
        # With a budget, waves is ignored: the budget is shown in its place.
        first = "waves" if self.budget is None else "budget"
        main = (first, "wave_size", "rollout_depth", "seed")
        return planner_repr(self, main, extra=("rollout_dt", "exploration", "mix", "discount"))

    def decide(self, state: Any) -> Decision:
        """Search from ``state`` and return the action with the best return found."""
        check_decide_state(state)
        root = self._root_for(state)
        returns = ReturnRange([child.best for child in root.children.values()])
        frames, waves, self._samples = 0, 0, 0
        leaf_cost = 1 + self.rollout_depth * self.rollout_dt  # samples a leaf costs at most
        while True:
            if self.budget is None:
                size = self.wave_size if waves < self.waves else 0
            else:
                left = self.budget - self._samples
                size = min(self.wave_size, max(1, left // leaf_cost)) if left > 0 else 0
            leaves = self._select_wave(root, returns, size) if size else []
            if not leaves:  # spent, or nothing left to expand: every line ends in a death
                break
            frames += self._expand_and_evaluate(leaves, returns)
            waves += 1
        action = self._best_action(root)
        self._kept = root.children.get(action)
        return Decision(action=as_action(action), frames=frames, samples=self._samples)

    # Tree -------------------------------------------------------------------------------------
    def _root_for(self, state: Any) -> Node:
        kept = self._kept
        if kept is not None and same_state(kept.state, state) and not kept.dead:
            return kept
        return Node(state, reward=0.0, dead=False)

    def _untried(self, node: Node) -> list:
        """Return the actions of ``node`` without a child, shuffled when first asked for."""
        if node.untried is None:
            order = self.rng.permutation(self._actions).tolist()
            node.untried = [action for action in order if action not in node.children]
        return node.untried

    def _ucb_child(self, node: Node, returns: ReturnRange) -> Node | None:
        """Return the child with the best UCB score, or None when an untried action wins."""
        # Plain Python, with locals: descents run tens of nodes deep, and nodes have a
        # handful of children, too few for NumPy to pay off.
        c, mix, rest = self.exploration, self.mix, 1.0 - self.mix
        log_total = math.log(node.visits)
        low, spread = returns.low, returns.high - returns.low
        untried = node.untried
        if untried is None:
            untried = self._untried(node)
        best = None
        best_score = c * math.sqrt(log_total) if untried else -math.inf
        sqrt = math.sqrt
        for child in node.children.values():
            if child.closed:  # nothing to expand below it: a descent there would be wasted
                continue
            visits = child.visits
            value = mix * child.best + rest * child.value_sum / visits
            scaled = (value - low) / spread if spread > 0 else 0.5
            score = scaled + c * sqrt(log_total / visits)
            if score > best_score:
                best, best_score = child, score
        return best

    def _select_wave(
        self, root: Node, returns: ReturnRange, size: int
    ) -> list[tuple[list[Node], Any]]:
        """Up to ``size`` (path, untried action) pairs, spread by the visits counted.

        Fewer only when the whole tree is closed: then nothing is left to expand.
        """
        leaves: list[tuple[list[Node], Any]] = []
        while len(leaves) < size and not root.closed:
            path = [root]
            node = root
            root.visits += 1
            while True:  # closed children are skipped: the descent ends at an untried action
                child = self._ucb_child(node, returns)
                if child is None:
                    break
                child.visits += 1
                path.append(child)
                node = child
            untried = node.untried
            if untried is None:
                untried = self._untried(node)
            if untried:
                leaves.append((path, untried.pop()))
            # The action just taken may have been the last one open along the path: close
            # what it leaves without an option, so the next descent goes elsewhere.
            self._close_upwards(path)
        return leaves

    def _is_open(self, node: Node) -> bool:
        """Whether a descent can still find an action to expand at or below ``node``."""
        if node.dead:
            return False
        untried = node.untried
        if untried is None:  # not shuffled yet: every action without a child is untried
            if len(node.children) < len(self._actions):
                return True
        elif untried:
            return True
        return any(not child.closed for child in node.children.values())

    def _close_upwards(self, path: list[Node]) -> None:
        """Close the nodes of ``path`` that are left without an option, from its end up."""
        for node in reversed(path):
            if self._is_open(node):
                break
            node.closed = True

    def _update_closed(self, path: list[Node]) -> None:
        """Recompute the closed flags of ``path`` from its end up, once its leaf is grown.

        A node closed while its last action waited in the wave opens again if that action's
        line can be extended; a line that ended in a death closes what it leaves without an
        option.
        """
        for node in reversed(path):
            node.closed = not self._is_open(node)

    def _expand_and_evaluate(
        self, leaves: list[tuple[list[Node], Any]], returns: ReturnRange
    ) -> int:
        """Step every leaf's action in one batch, roll out, back up; return the frames used."""
        actions = [action for _, action in leaves]
        parents = [path[-1].state for path, _ in leaves]
        paths = [path for path, _ in leaves]
        frames = self._grow(paths, actions, parents)
        frames += self._rollouts(paths)
        for path in paths:
            self._backup(path, returns)
            self._update_closed(path)
        return frames

    def _grow(self, paths: list[list[Node]], actions: list, states: list) -> int:
        """Step ``actions`` from ``states`` in one batch; append each new node to its path."""
        stepped = step_states(self.env, actions, states)
        self._samples += len(actions)
        for path, action, state, reward, dead in zip(
            paths,
            actions,
            split_states(stepped.states),
            stepped.rewards.tolist(),
            stepped.dead.tolist(),
            strict=True,
        ):
            child = Node(state, reward=reward, dead=dead)
            path[-1].children[action] = child
            path.append(child)
        return stepped.frames

    def _rollouts(self, paths: list[list[Node]]) -> int:
        """Extend every live path with random actions, kept as nodes; return the frames used."""
        frames = 0
        active = [i for i, path in enumerate(paths) if not path[-1].dead]
        for _ in range(self.rollout_depth):
            if not active:
                break
            held = self.sampler.sample(len(active)).tolist()
            for _ in range(self.rollout_dt):
                if self.budget is not None:  # the last wave stops where the budget ends
                    left = max(0, self.budget - self._samples)
                    active, held = active[:left], held[:left]
                    if not active:
                        break
                tips = [paths[i][-1] for i in active]
                frames += self._grow([paths[i] for i in active], held, [tip.state for tip in tips])
                alive = [k for k, i in enumerate(active) if not paths[i][-1].dead]
                active, held = [active[k] for k in alive], [held[k] for k in alive]
                if not active:
                    break
        return frames

    def _backup(self, path: list[Node], returns: ReturnRange) -> None:
        """Add the return seen from each node of ``path`` (root excluded) to its statistics."""
        value = 0.0
        discount = self.discount
        low, high = returns.low, returns.high
        for node in reversed(path[1:]):
            value = node.reward + discount * value
            node.value_sum += value
            best = node.best
            if value > best:
                best = node.best = value
            low = min(low, best)
            high = max(high, best)
        returns.low, returns.high = low, high

    def _best_action(self, root: Node) -> Any:
        """Return the root's action with the best return found (most visited among ties)."""
        if not root.children:
            return self.sampler.sample(1)[0]
        visited = list(root.children.items())
        return max(visited, key=lambda item: (item[1].best, item[1].visits))[0]

    # Checkpoints ------------------------------------------------------------------------------
    def get_planner_state(self) -> dict[str, Any]:
        """Return what a checkpoint needs to continue exactly: the generator and the kept subtree.

        The subtree is a flat list (parents before children, children in their order), so
        that pickling a deep tree needs no deep recursion.
        """
        nodes = [] if self._kept is None else flatten(self._kept)
        return {"rng": self.rng.bit_generator.state, "kept": nodes}

    def set_planner_state(self, saved: dict[str, Any]) -> None:
        """Continue from :meth:`get_planner_state`'s result."""
        self.rng.bit_generator.state = saved["rng"]
        built = unflatten(saved["kept"])
        # The flags follow from the rest (a checkpoint is taken between decisions, with no
        # action waiting in a wave): children come after their parents, so read backwards.
        for node in reversed(built):
            node.closed = not self._is_open(node)
        self._kept = built[0] if built else None
