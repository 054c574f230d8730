"""BENCHMARKS §6: how a dog-rough policy falls on one block type and row. 256 envs pinned to that row and type
(with the task's own heading commands, so the dogs walk out of their blocks as in training) for 1,500 control steps
(30 s); at every episode ended by a termination other than the time-out, the body's roll and pitch one control
step before (from the projected gravity; pitch > 0 is nose up) and the distance from the block's origin. With TASK,
in that task's env as registered (`canter eval --task`), e.g. dog-rough for a run trained with its tilt ending moved.
Usage: python falls.py RUN SUB_TERRAIN LEVEL [TASK]"""
import sys

import torch

from canter.cli.terrain_report import pin_terrain
from canter.runs.load import load_run

if len(sys.argv) not in (4, 5):
    sys.exit((__doc__ or '').splitlines()[-1].strip())
run, sub, level = sys.argv[1], sys.argv[2], int(sys.argv[3])
_, _, runner = load_run(run, 256, task=sys.argv[4] if len(sys.argv) == 5 else None)
env, policy = runner.env, runner.algorithm.policy
pin_terrain(env, level, sub, False)
terminations = env.termination_manager
# the terms that end an episode early (every term but the time-out), by their row in term_dones
falls = {i: name for i, name in enumerate(terminations.names) if not terminations.time_out[i]}
ended: dict[str, list[torch.Tensor]] = {name: [] for name in falls.values()}
obs, _ = env.reset()
with torch.no_grad():
    for _ in range(1500):
        gravity = env.scene.projected_gravity_b
        roll = torch.atan2(gravity[:, 1], -gravity[:, 2])
        pitch = torch.atan2(-gravity[:, 0], -gravity[:, 2])
        xy = env.scene.root_pos_w[:, :2]
        distance = torch.linalg.vector_norm(xy - env.terrain.env_origins[:, :2].to(xy.dtype), dim=1)
        before = torch.stack((roll, pitch, distance), dim=1)
        obs, *_ = env.step(policy.act_inference(obs))
        for i, name in falls.items():
            ended[name].append(before[terminations.term_dones[i]])
print(f"{sub}, row {level}, 256 envs x 30 s:")
for name, rows in ended.items():
    r = torch.cat(rows)
    if len(r) == 0:
        print(f"  {name}: no endings")
        continue
    print(f"  {name}: {len(r)} endings; roll larger than pitch in {float((r[:, 0].abs() > r[:, 1].abs()).float().mean()):.0%}, "
          f"nose up in {float((r[:, 1] > 0).float().mean()):.0%}; median |roll| {float(r[:, 0].abs().median()):.2f} rad, "
          f"|pitch| {float(r[:, 1].abs().median()):.2f} rad; {float(r[:, 2].median()):.2f} m from the origin "
          f"(quartiles {float(r[:, 2].quantile(0.25)):.2f}-{float(r[:, 2].quantile(0.75)):.2f})")
