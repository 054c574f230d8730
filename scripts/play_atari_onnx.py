"""Play an exported Canter Atari policy on Gymnasium's ALE, with nothing of Canter's env or torch.

    python scripts/play_atari_onnx.py runs/atari-pong-.../exported/policy.onnx --games 3

Everything the frames need comes from the file's metadata (`game`): the ROM, the sticky actions, the
frame skip and the preprocessing, which Gymnasium's `AtariPreprocessing` + `FrameStackObservation(...,
padding_type="zero")` reproduce bit for bit (tests/export/test_atari_export.py). The policy runs through
`canter.export.runtime.PolicyRuntime` (numpy + onnxruntime). Prints each game's unclipped score.
"""

from __future__ import annotations

import sys

import numpy as np

from canter.core.errors import CanterError
from canter.export.runtime import PolicyRuntime
from canter.runs.parsing import ScriptParser


def make_env(game: dict, max_frames: int | None):
    """Gymnasium's ALE for the metadata's game: frames as the policy was trained on them."""
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)
    rom = "".join(part.capitalize() for part in str(game["rom"]).split("_"))
    env = gym.make(f"ALE/{rom}-v5", frameskip=1, repeat_action_probability=float(game["repeat_action_probability"]),
                   full_action_space=bool(game["full_action_space"]),
                   max_num_frames_per_episode=int(max_frames or game["max_episode_frames"]))
    env = gym.wrappers.AtariPreprocessing(env, noop_max=int(game["noop_max"]), frame_skip=int(game["frameskip"]),
                                          screen_size=int(game["resize"][0]), grayscale_obs=bool(game["grayscale"]))
    env = gym.wrappers.FrameStackObservation(env, int(game["stack"]), padding_type="zero")
    names = [action.name for action in env.unwrapped.ale.getMinimalActionSet()] if not game["full_action_space"] else None
    if names is not None and names != list(game["action_set"]):
        raise CanterError(f"Gymnasium's action set of {rom} is {names}, the policy's {game['action_set']}")
    return env


def play(policy: PolicyRuntime, env, game: dict, seed: int) -> tuple[float, int]:
    """One whole game with the greedy policy: (unclipped score, agent steps)."""
    frames, _ = env.reset(seed=seed)
    if game["fire_reset"] and "FIRE" in game["action_set"]:  # games that wait for FIRE to start
        frames, *_ = env.step(game["action_set"].index("FIRE"))
    policy.reset()
    score, steps, done = 0.0, 0, False
    while not done:
        logits = policy.act(None, {"policy": np.asarray(frames, dtype=np.uint8)})
        frames, reward, terminated, truncated, _ = env.step(int(policy.commands(logits)["game"]["action"]))
        score, steps, done = score + float(reward), steps + 1, bool(terminated or truncated)
    return score, steps


def main(argv: list[str] | None = None) -> int:
    parser = ScriptParser(description="Play an exported Canter Atari policy on Gymnasium's ALE.")
    parser.add_argument("policy", help="an Atari policy exported by `canter export` (.onnx)")
    parser.add_argument("--games", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-frames", type=int, default=None, help="cut each game at this many frames (default: the metadata's cap)")
    args = parser.parse_args(argv)
    try:
        policy = PolicyRuntime(args.policy)
        game = policy.metadata.game
        if game is None:
            raise CanterError(f"{args.policy} drives a robot (task {policy.metadata.task!r}); this script plays Atari policies")
        env = make_env(game, args.max_frames)
        scores = []
        for index in range(args.games):
            score, steps = play(policy, env, game, args.seed + index)
            scores.append(score)
            print(f"game {index + 1}: score {score:+.0f} in {steps} agent steps", flush=True)
        print(f"mean score {np.mean(scores):+.2f} over {len(scores)} games ({game['rom']}, Gymnasium's ALE)")
    except CanterError as err:
        print(f"play_atari_onnx: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
