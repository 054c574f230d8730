"""arm-grasp, the pixel student's task: the wrist image group, photo composition, the visual
randomization events, and a DAgger iteration through the runner with the scripted expert."""

from __future__ import annotations

import copy

import pytest
import torch

from canter.core.errors import ConfigError
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.rl.dagger import Dagger, EnvExpert
from canter.rl.runner import OnPolicyRunner
from canter.tasks import REGISTRY
from canter.tasks.grasp.vision import PARKING_X

NUM_ENVS = 4


def grasp_env(num_envs: int = NUM_ENVS, seed: int = 0, photos: str = "train") -> ManagerBasedRLEnv:
    cfg = REGISTRY.get("arm-grasp").env_cfg()
    cfg.num_envs, cfg.seed = num_envs, seed
    cfg.sim.num_threads = 1
    cfg.observations["wrist"].terms["rgb"].params["photos"] = photos
    return ManagerBasedRLEnv(cfg)


@pytest.fixture(scope="module")
def env():
    return grasp_env()


def test_the_student_sees_a_uint8_wrist_image_and_proprioception(env):
    assert env.observation_shapes["wrist"] == (3, 64, 64)
    assert env.observation_dtypes["wrist"] == torch.uint8
    obs, _ = env.reset()
    assert obs["wrist"].dtype == torch.uint8 and obs["wrist"].shape == (NUM_ENVS, 3, 64, 64)
    policy_terms = set(env.cfg.observations["policy"].terms)
    assert not policy_terms & {"sphere_rel_tcp", "distractors_rel_tcp"}  # no privileged state for the student
    assert {"sphere_rel_tcp", "distractors_rel_tcp"} <= set(env.cfg.observations["privileged"].terms)


def test_the_sphere_is_in_view_and_photos_fill_background_and_table(env):
    env.reset()
    term = env.observation_manager.groups["wrist"][0].func
    camera = term.camera
    segmentation = camera.render()["segmentation"]
    sphere = env.sim.model.geom("sphere").id
    table = env.sim.model.geom("table").id
    assert bool((segmentation == sphere).any(dim=(1, 2, 3)).all())  # every env's wrist camera sees the sphere
    term.composed[:] = True
    term.brightness[:] = 1.0
    image = term(env, **env.observation_manager.groups["wrist"][0].params)
    rgb = camera.outputs["rgb"]
    on_table = (segmentation == table).expand_as(rgb)
    on_sphere = (segmentation == sphere).expand_as(rgb)
    # table pixels come from the photo crop (not the flat shaded color), sphere pixels from the render
    assert torch.equal(image[on_sphere], rgb[on_sphere])
    assert not torch.equal(image[on_table], rgb[on_table])
    assert image[on_table].float().std() > 5.0  # a photo's texture, not one color


def test_visual_randomization_draws_per_env_colors_camera_and_distractor_counts():
    env = grasp_env(num_envs=16, seed=3)
    env.reset()
    sphere = env.sim.model.geom("sphere").id
    colors = env.sim.expand("geom_rgba")[:, sphere, :3]
    assert colors.std(dim=0).min() > 0.05  # every env its own sphere color
    assert bool((colors[:, 0] >= 0.65).all() and (colors[:, 1:] <= 0.3).all())  # always reddish: the target
    distractors = [env.sim.model.geom(g).id for g in ("box_blue", "cylinder_green", "box_yellow")]
    others = env.sim.expand("geom_rgba")[:, distractors, :3]
    assert bool((others[..., 0] <= 0.5).all() and (others[..., 1:] >= 0.3).all())  # never reddish
    fovy = env.sim.expand("cam_fovy")[:, env.sim.model.camera("wrist").id]
    assert float(fovy.min()) >= 65.0 and float(fovy.max()) <= 85.0 and float(fovy.std()) > 1.0
    for key in ("geom_color", "light_direction", "wrist_camera"):
        assert f"Randomization/{key}/mean" in env.extras["log"]
    x = env.sim.qpos[:, [int(env.sim.model.jnt_qposadr[env.sim.model.body(b).jntadr[0]])
                         for b in ("box_blue", "cylinder_green", "box_yellow")]]
    on_table = (x > 0).sum(dim=1)
    assert set(on_table.tolist()) > {0} and int(on_table.max()) <= 3  # 0..3 distractors, varying per env
    assert bool(((x > 0) | (x < PARKING_X + 0.01)).all())  # parked ones wait off the table


def test_no_camera_mounting_drawn_leaves_the_camera_inside_its_housing():
    env = grasp_env(num_envs=48, seed=2)  # ±5 mm of mounting noise once put the camera inside its housing: all misses
    env.reset()
    segmentation = env.observation_manager.groups["wrist"][0].func.camera.render()["segmentation"]
    assert bool((segmentation >= 0).flatten(1).any(dim=1).all())


def test_photos_option_and_a_bad_photo_folder(tmp_path):
    with pytest.raises(ConfigError, match="no folder at"):
        grasp_env(photos=str(tmp_path / "missing"))


def test_dagger_iterations_with_the_scripted_expert_resume_bitwise(tmp_path):
    def runner_for(env, run_dir):
        agent = REGISTRY.get("arm-grasp").agent_cfg()
        agent.algo.num_steps_per_env = 4
        agent.algo.num_mini_batches = 2
        agent.algo.dagger.dataset_size = 64
        assert agent.algo.dagger.beta_decay == 0.7  # DAgger proper is the task's default
        expert = EnvExpert(REGISTRY.get("arm-grasp").expert(env), env)
        return OnPolicyRunner(env, agent, run_dir, seed=0, cpu_physics=True, task="arm-grasp", expert=expert)

    env = grasp_env(seed=1)
    runner = runner_for(env, tmp_path / "a")
    assert isinstance(runner.algorithm, Dagger)
    obs = env.reset()[0]
    obs, stats = runner.run_iteration(obs)
    assert stats["beta"] == 1.0 and stats["expert_share"] == 1.0 and stats["dataset_size"] == 16
    runner.iteration += 1
    (tmp_path / "a").mkdir()
    runner.save()
    after = copy.deepcopy([p.detach() for p in runner.algorithm.policy.parameters()])
    obs, stats = runner.run_iteration(obs)
    assert stats["beta"] == pytest.approx(0.7) and stats["dataset_size"] == 32
    reference = [p.detach().clone() for p in runner.algorithm.policy.parameters()]
    resumed = runner_for(grasp_env(seed=9), tmp_path / "a")
    resumed.load(tmp_path / "a" / "checkpoint.pt")
    assert all(torch.equal(a, b) for a, b in zip(after, resumed.algorithm.policy.parameters(), strict=True))
    resumed.run_iteration(resumed.env.get_observations())
    assert all(torch.equal(a, b) for a, b in zip(reference, resumed.algorithm.policy.parameters(), strict=True))


def test_rgbd_variant_adds_quantized_depth_that_photos_and_brightness_leave_alone():
    """arm-grasp-rgbd: a fourth uint8 channel round(255 * clamp(depth, 0, 0.5) / 0.5) of the camera's
    planar depth; composing photos or dimming the image changes the color channels only; the sphere
    is nearer than the table around it (it stands 4 cm out of it), the background reads 255."""
    cfg = REGISTRY.get("arm-grasp-rgbd").env_cfg()
    cfg.num_envs, cfg.seed = NUM_ENVS, 0
    cfg.sim.num_threads = 1
    env = ManagerBasedRLEnv(cfg)
    assert env.observation_shapes["wrist"] == (4, 64, 64)
    env.reset()
    term = env.observation_manager.groups["wrist"][0].func
    params = env.observation_manager.groups["wrist"][0].params
    camera = term.camera
    term.composed[:] = False
    term.brightness[:] = 1.0
    plain = term(env, **params)
    depth = camera.outputs["depth"]
    expected = torch.round(depth.clamp(0.0, 0.5) / 0.5 * 255.0).to(torch.uint8)
    assert torch.equal(plain[:, 3:], expected)
    term.composed[:] = True
    term.brightness[:] = 0.7
    composed = term(env, **params)
    assert torch.equal(composed[:, 3], plain[:, 3])  # depth: unchanged by photos and brightness
    assert not torch.equal(composed[:, :3], plain[:, :3])
    segmentation = camera.outputs["segmentation"][:, 0]
    sphere, table = env.sim.model.geom("sphere").id, env.sim.model.geom("table").id
    d = plain[:, 3].int()
    seen = 0
    for i in range(NUM_ENVS):
        on_sphere, on_table = segmentation[i] == sphere, segmentation[i] == table
        assert bool((d[i][segmentation[i] < 0] == 255).all())
        if bool(on_sphere.any()):  # (the sphere may start out of view)
            seen += 1
            # against the table within 8 px of the sphere's pixels (the table's depth slopes across the view)
            rows, cols = on_sphere.nonzero().float().T
            grid_r, grid_c = torch.meshgrid(torch.arange(64.0), torch.arange(64.0), indexing="ij")
            near_sphere = ((grid_r[..., None] - rows).square() + (grid_c[..., None] - cols).square()).amin(-1) < 64
            assert d[i][on_sphere].float().mean() < d[i][on_table & near_sphere].float().mean() - 5  # > 1 cm nearer
    assert seen >= 2
    bad = copy.deepcopy(cfg)
    bad.observations["wrist"].terms["rgb"].params["depth_range"] = (0.5, 0.1)
    with pytest.raises(ConfigError, match="depth_range must satisfy"):
        ManagerBasedRLEnv(bad)
    no_depth = REGISTRY.get("arm-grasp").env_cfg()
    no_depth.num_envs = NUM_ENVS
    no_depth.observations["wrist"].terms["rgb"].params["depth_range"] = (0.0, 0.5)
    with pytest.raises(ConfigError, match="needs camera 'wrist' to render depth"):
        ManagerBasedRLEnv(no_depth)


def test_rgbd_training_photos_are_recolored_per_episode_and_eval_photos_are_not():
    """arm-grasp-rgbd recolors its photos (photo_recolor): table pixels are gain_c * photo[order_c]
    (times the brightness), each env its own order and gains, redrawn at its reset and kept in the
    term's state; `canter eval/play --photos` (apply_photos(..., as_they_are=True)) shows them as they are."""
    from canter.runs.args import apply_photos
    from canter.sensors.photos import crops

    cfg = REGISTRY.get("arm-grasp-rgbd").env_cfg()
    cfg.num_envs, cfg.seed = 8, 4
    cfg.sim.num_threads = 1
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    term = env.observation_manager.groups["wrist"][0].func
    params = env.observation_manager.groups["wrist"][0].params
    assert term.recolor and params["photo_recolor"]
    orders = {tuple(o) for o in term.channel_order.flatten(0, 1).tolist()}
    assert len(orders) > 1 and all(sorted(o) == [0, 1, 2] for o in orders)
    assert float(term.channel_gain.min()) >= 0.6 and float(term.channel_gain.max()) <= 1.4
    term.composed[:] = True
    term.brightness[:] = 1.0
    term.channel_order[3, 1] = torch.tensor([2, 0, 1])  # env 3's table: R <- B, G <- R, B <- G
    term.channel_gain[3, 1] = torch.tensor([0.5, 1.0, 1.25])
    image = term(env, **params)[3, :3].float()
    table = term.camera.outputs["segmentation"][3, 0] == env.sim.model.geom("table").id
    assert int(table.sum()) > 100
    photo = crops(term.bank.photos, term.photo[3:4, 1], term.offset[3:4, 1], 64, 64)[0].float()
    expected = (torch.tensor([0.5, 1.0, 1.25])[:, None, None] * photo[[2, 0, 1]]).round().clamp(0, 255)
    assert torch.equal(image[:, table], expected[:, table])
    state = term.state_dict()
    assert torch.equal(state["channel_order"][3, 1], torch.tensor([2, 0, 1]))
    before = term.channel_gain.clone()
    term.reset(torch.tensor([3]))  # a reset of env 3 redraws its colors only
    assert not torch.equal(term.channel_gain[3], before[3]) and torch.equal(term.channel_gain[:3], before[:3])

    apply_photos(cfg, "unseen", as_they_are=True)
    assert cfg.observations["wrist"].terms["rgb"].params["photo_recolor"] is False
    cfg.num_envs = 2
    plain = ManagerBasedRLEnv(cfg).observation_manager.groups["wrist"][0].func
    assert not plain.recolor and bool((plain.channel_order == torch.arange(3)).all())
