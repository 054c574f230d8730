"""BENCHMARKS §6: how high a dog-rough policy lifts its feet. On one sub-terrain block row (64 envs, every one
commanded 0.6 m/s straight ahead, the deterministic policy, 400 control steps = 8 s), the peak height of each
swing (the foot site, the centre of the 2.2-cm foot sphere, above the terrain under it, from lift-off to the next
touchdown; swings that end in the first second are left out) and the mean feet_clearance penalty at a 10-cm
target. Usage: python swing.py RUN_DIR SUB_TERRAIN LEVEL"""
import sys

import torch

from canter.cli.terrain_report import pin_terrain
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.mdp import locomotion
from canter.runs.load import load_run
from canter.tasks.dog.env_cfg import FEET_POS, FEET_TOUCH, FEET_VEL

NUM_ENVS, STEPS, SETTLE = 64, 400, 50


def main(run: str, sub_terrain: str, level: int) -> None:
    _, _, runner = load_run(run, NUM_ENVS, velocity=(0.6, 0.0, 0.0))
    env, policy = runner.env, runner.algorithm.policy
    assert isinstance(env, ManagerBasedRLEnv)
    pin_terrain(env, level, sub_terrain, False)
    position, velocity, touch = (s.resolve(env.scene) for s in (FEET_POS, FEET_VEL, FEET_TOUCH))
    params = {"position": position, "velocity": velocity, "target_height": 0.10, "command_name": "base_velocity"}
    obs, _ = env.reset()
    peak = torch.zeros(NUM_ENVS, 4, dtype=env.sim.dtype)
    peaks, penalties = [], []
    with torch.no_grad():
        for step in range(STEPS):
            obs, _, terminated, truncated, _ = env.step(policy.act_inference(obs))
            height = locomotion._sole_heights(env, position)
            contact = env.sim.sensordata[:, touch.data_adr] > 1.0
            alive = ~(terminated | truncated)
            if step > SETTLE:  # a swing ends at touchdown; an env that just ended is left out
                peaks.append(peak[contact & (peak > 0) & alive[:, None]])
            peak = torch.where(contact, torch.zeros_like(peak), torch.maximum(peak, height))
            penalties.append(locomotion.feet_clearance(env, **params).mean())
    p = torch.cat(peaks)
    print(f"{sub_terrain} {level}: swings {p.numel()}, peak centre height median {p.median():.3f} m, "
          f"p10 {p.quantile(0.1):.3f}, p90 {p.quantile(0.9):.3f}; mean penalty {torch.stack(penalties).mean():.5f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
