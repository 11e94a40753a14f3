"""A short demo: plan Ms. Pac-Man moves with ``step_batch`` and check the replay is exact.

Each agent step tries every action from the current state, follows each with a few random
moves (all in one ``step_batch`` call per depth), and plays the action whose rollouts
scored best. At the end the chosen actions are replayed from the first state in a fresh
env, which must land on the very same state.

Run it with ``make demo`` or ``python -m plangym.demo``.

>>> summary = run(agent_steps=2, rollouts=1, depth=1, verbose=False)
>>> summary["replay_exact"], summary["agent_steps"]
(True, 2)
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import plangym

GAME = "ALE/MsPacman-v5"


def choose_action(
    env, state, rng: np.random.Generator, rollouts: int, depth: int
) -> tuple[int, int]:
    """Score each action by short random rollouts from ``state``.

    Returns the best action and the number of emulator frames the rollouts simulated.
    """
    n_actions = env.action_space.n
    first_actions = np.repeat(np.arange(n_actions), rollouts)
    states, _, rewards, terminals, _, infos = env.step_batch(
        first_actions, states=[state] * len(first_actions)
    )
    frames = sum(info["n_step"] for info in infos)
    totals = np.asarray(rewards, dtype=float)
    alive = ~np.asarray(terminals)
    for _ in range(depth - 1):
        actions = rng.integers(n_actions, size=len(states))
        states, _, rewards, terminals, _, infos = env.step_batch(actions, states=states)
        frames += sum(info["n_step"] for info in infos)
        totals += np.asarray(rewards) * alive
        alive &= ~np.asarray(terminals)
    totals -= 1000.0 * ~alive  # dying is worse than any pellet
    per_action = totals.reshape(n_actions, rollouts).mean(axis=1)
    best = np.flatnonzero(per_action == per_action.max())
    return int(rng.choice(best)), frames


def run(
    agent_steps: int = 120, rollouts: int = 2, depth: int = 4, seed: int = 0, verbose: bool = True
) -> dict:
    """Play ``agent_steps`` planned moves and return a summary of what happened."""
    env = plangym.make(GAME, frameskip=5, repeat_action_probability=0.25)
    env.seed(seed)
    rng = np.random.default_rng(seed)
    first_state, *_ = env.reset()
    state = first_state
    score, chosen, frames = 0.0, [], 0
    start = time.perf_counter()
    for step in range(1, agent_steps + 1):
        action, rollout_frames = choose_action(env, state, rng, rollouts, depth)
        state, _, reward, terminal, truncated, info = env.step(action, state=state)
        frames += rollout_frames + info["n_step"]
        chosen.append(action)
        score += reward
        if verbose and (step % 10 == 0 or step == agent_steps):
            rate = frames / (time.perf_counter() - start)
            print(f"step {step:4d}  score {score:7.1f}  frames/s {rate:7.0f}")
        if terminal or truncated:
            break
    elapsed = time.perf_counter() - start
    replayed = env.clone()
    replay_state = first_state
    for action in chosen:
        replay_state, *_ = replayed.step(action, state=replay_state)
    summary = {
        "env": GAME,
        "agent_steps": len(chosen),
        "score": score,
        "frames_simulated": frames,
        "frames_per_s": frames / elapsed if elapsed else 0.0,
        "state_bytes": int(state.nbytes),
        "replay_exact": bool(np.array_equal(replay_state, state)),
    }
    env.close()
    replayed.close()
    if verbose:
        print()
        for key, value in summary.items():
            shown = f"{value:,.1f}" if isinstance(value, float) else value
            print(f"{key:>18}  {shown}")
    return summary


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=120, help="agent steps to play")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    run(agent_steps=args.steps, seed=args.seed)


if __name__ == "__main__":
    main()
