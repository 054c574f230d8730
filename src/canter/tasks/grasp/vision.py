"""`arm-grasp`: seed 002's student. The policy sees only its wrist camera (64x64 RGB, composed over
real photographs) and proprioception, and learns by DAgger from the scripted expert, which reads the
full state (canter.tasks.grasp.expert).

Visual domain randomization, drawn per episode (event terms, logged as Randomization/*): the colors
of the table, the floor and the arm's links (any), of the sphere (any reddish shade) and of the
distractors (never reddish: from above the cylinder is a disc the sphere's size); the light's direction; the
wrist camera's mounting (±5 mm, ±3°) and field of view (65–85°); how many distractors are on the table
(0–3); and in image space the photos behind and under the scene, the brightness and pixel noise
(canter.sensors.photo_terms). `arm-grasp` trains on scikit-image's "train" photos; `canter eval
--photos unseen` (or a folder of one's own) tests on photos the policy never saw.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch

from canter.core import selection
from canter.envs.env_cfg import EnvCfg
from canter.managers.event import EventTermCfg
from canter.managers.observation import ObsGroupCfg, ObsTermCfg, unoise
from canter.managers.term import ManagerTerm, TermCfg
from canter.mdp import visual
from canter.rl.config import AlgoCfg, CnnCfg, DaggerCfg, PolicyCfg
from canter.rl.runner import RunnerCfg
from canter.scene.entity import Resolved, geoms
from canter.sensors.camera_cfg import CameraCfg
from canter.sensors.photo_terms import PhotoCameraImage
from canter.tasks.grasp import mdp as grasp
from canter.tasks.grasp.env_cfg import arm_grasp_state_env_cfg, privileged_terms, proprio_terms

WRIST_CAMERA = CameraCfg(name="wrist", width=64, height=64, near=0.01, far=3.0, outputs=("rgb", "segmentation"))
PARKING_X = -1.5  # m: distractors taken off the table wait on the floor here, out of the wrist camera's view


class ParkDistractors(ManagerTerm):
    """Reset event (after the objects are placed): each env keeps U{keep_range} of the distractors on
    the table, a random subset, and parks the others on the floor far behind the arm."""

    def __init__(self, cfg: TermCfg, env: Any):
        super().__init__(cfg, env)
        model = env.sim.model
        distractors: Resolved = cfg.params["distractors"].resolve(env.scene)
        joints = [int(model.body_jntadr[b]) for b in distractors.ids.tolist()]
        self.qpos_adr = torch.tensor([int(model.jnt_qposadr[j]) for j in joints], device=env.device)
        self.count = len(joints)

    def __call__(self, env: Any, env_ids: torch.Tensor, distractors: Any,
                 keep_range: tuple[int, int] = (0, 3)) -> None:
        n, generator = selection.rows(env_ids), env.generator
        keep = torch.randint(keep_range[0], keep_range[1] + 1, (n, 1), generator=generator, device=env.device)
        rank = torch.rand(n, self.count, generator=generator, device=env.device).argsort(dim=1).argsort(dim=1)
        parked = rank >= keep  # (n, count): a random subset of count - keep distractors
        slot = torch.arange(self.count, device=env.device, dtype=env.sim.qpos.dtype)
        qpos = env.sim.qpos
        for axis, value in ((0, PARKING_X - 0.3 * slot), (1, torch.zeros_like(slot)), (2, torch.full_like(slot, 0.05))):
            cols = self.qpos_adr + axis
            selection.put(qpos, env_ids, torch.where(parked, value.expand(n, -1), selection.take(qpos, env_ids, cols)), cols)


def visual_randomization_events() -> dict[str, EventTermCfg]:
    """The per-episode visual randomization of `arm-grasp` (see the module doc)."""
    # The sphere and the cylinder both look like discs of 2 cm radius from above: only color can tell
    # the target, so the sphere stays reddish (its hue and shade drawn) and distractors never are.
    scene = geoms("table", "floor", "upper_arm", "forearm")
    return {
        "park_distractors": EventTermCfg(func=ParkDistractors, mode="reset",
                                         params={"distractors": grasp.DISTRACTORS, "keep_range": (0, 3)}),
        "geom_colors": EventTermCfg(func=visual.randomize_geom_colors, mode="reset",
                                    params={"geoms": scene, "color_range": (0.05, 0.95), "name": "geom_color"}),
        "sphere_color": EventTermCfg(func=visual.randomize_geom_colors, mode="reset", params={
            "geoms": geoms("sphere"), "color_range": ((0.65, 1.0), (0.0, 0.3), (0.0, 0.3)), "name": "sphere_color"}),
        "distractor_colors": EventTermCfg(func=visual.randomize_geom_colors, mode="reset", params={
            "geoms": geoms("box_blue", "cylinder_green", "box_yellow"),
            "color_range": ((0.0, 0.5), (0.3, 1.0), (0.3, 1.0)), "name": "distractor_color"}),
        "light": EventTermCfg(func=visual.randomize_light, mode="reset",
                              params={"direction_noise_rad": 0.6, "name": "light_direction"}),
        "camera": EventTermCfg(func=visual.randomize_camera, mode="reset",
                               params={"camera": "wrist", "position_noise": 0.005, "rotation_noise_rad": 0.05,
                                       "fovy_range": (65.0, 85.0), "name": "wrist_camera"}),
    }


def arm_grasp_env_cfg(photos: str = "train") -> EnvCfg:
    """A fresh config of `arm-grasp`: groups "policy" (proprioception), "wrist" (3x64x64 uint8 RGB),
    "privileged" (proprioception + object positions, for a critic or a learned teacher), "auxiliary"
    (the sphere relative to the tcp: a target for the student's auxiliary task, algo.dagger.auxiliary_group)."""
    cfg = arm_grasp_state_env_cfg()
    cfg.num_envs = 128
    cfg.observations = {
        "policy": ObsGroupCfg(terms=proprio_terms()),
        "wrist": ObsGroupCfg(terms={"rgb": ObsTermCfg(
            func=PhotoCameraImage, noise=unoise(6.0),
            params={"camera": WRIST_CAMERA, "photos": photos, "surfaces": ("table",), "photo_probability": 0.8},
        )}),
        "privileged": ObsGroupCfg(terms={**proprio_terms(), **privileged_terms()}, enable_corruption=False),
        "auxiliary": ObsGroupCfg(terms={"sphere_rel_tcp": privileged_terms()["sphere_rel_tcp"]}, enable_corruption=False),
    }
    cfg.events = {**cfg.events, **visual_randomization_events()}
    return cfg


WRIST_DEPTH_RANGE = (0.0, 0.5)  # m: 2 mm per level; the table is ~0.3 m below the camera at the start


def arm_grasp_rgbd_env_cfg(photos: str = "train") -> EnvCfg:
    """`arm-grasp-rgbd`: `arm-grasp` with the wrist image's fourth channel the depth (quantized to uint8
    over WRIST_DEPTH_RANGE, canter.sensors.photo_terms), as an RGB-D wrist camera gives it: the sphere
    stands out of a table photo of its own color (a red photograph under the red sphere is where the RGB
    student loses it, BENCHMARKS §12). The training photos are recolored per episode (channel order and
    gains: `photo_recolor`), so tables of the sphere's red are common in training (measured: +0.8
    points on unseen photos, within the noise; BENCHMARKS §12); `canter eval --photos` shows photos as they are."""
    cfg = arm_grasp_env_cfg(photos)
    term = cfg.observations["wrist"].terms["rgb"]
    term.params["camera"] = dataclasses.replace(WRIST_CAMERA, outputs=("rgb", "segmentation", "depth"))
    term.params["depth_range"] = WRIST_DEPTH_RANGE
    term.params["photo_recolor"] = True
    return cfg


def arm_grasp_agent_cfg() -> RunnerCfg:
    """DAgger of the scripted expert (algo "dagger", β_i = 0.7^i), a CNN over the wrist image."""
    return RunnerCfg(
        policy=PolicyCfg(
            actor_hidden_dims=(256, 128),
            critic_hidden_dims=(64,),
            activation="elu",
            actor_obs_groups=("wrist", "policy"),
            critic_obs_groups=("privileged",),
            image_obs_groups=("wrist",),
            normalize_obs=True,
            cnn=CnnCfg(channels=(16, 32, 32), kernel_sizes=(8, 4, 3), strides=(4, 2, 1), output_dim=256),
        ),
        # one pass over the newest 50k labelled frames per iteration of 32 x 128 new ones (each frame
        # is learnt from ~12 times) in 64 minibatches of ~780: many small Adam steps learn faster than
        # a few large ones at the same cost; the dataset (614 MB of uint8 frames) is in the checkpoint
        # DAgger proper, β_i = 0.7^i (the student drives from iteration ~10): with the expert a feedback
        # law of the state, it beat behaviour cloning (β = 1, --agent.algo.dagger.beta-decay 1) 78.9 % to
        # 62.1 % on unseen photos after 22 minutes, and at every mark of the label curve (BENCHMARKS.md §12)
        algo=AlgoCfg(algo="dagger", num_steps_per_env=32, num_learning_epochs=1, num_mini_batches=64,
                     learning_rate=1e-3, schedule="fixed", dagger=DaggerCfg(beta_decay=0.7, dataset_size=50_000)),
        max_iterations=1000,
        save_interval=10,
    )
