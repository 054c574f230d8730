"""Terrains: determinism, the shape of every sub-terrain, the MuJoCo heightfield, height queries,
the level curriculum, spawning on the terrain and the height scan."""

from __future__ import annotations

import itertools
import math
import re
from functools import partial

import mujoco
import numpy as np
import pytest
import torch

from canter import mdp
from canter.core.errors import ConfigError
from canter.core.math import quat_from_yaw, quat_mul, yaw_from_quat
from canter.envs.env_cfg import EnvCfg
from canter.envs.manager_env import ManagerBasedRLEnv
from canter.managers.curriculum import CurriculumTermCfg
from canter.managers.event import EventTermCfg
from canter.managers.observation import ObsGroupCfg, ObsTermCfg
from canter.managers.term import TermCfg
from canter.managers.termination import TerminationTermCfg
from canter.mdp.actions import joint_position_action
from canter.mdp.commands import UniformVelocityCommandCfg
from canter.sim.config import SimCfg
from canter.sim.model import asset_path, load_model
from canter.terrains import (
    SUB_TERRAIN_TYPES,
    Block,
    FlatCfg,
    ObstaclesCfg,
    RoughCfg,
    SlopeCfg,
    StairsCfg,
    SteppingStonesCfg,
    StoneRowsCfg,
    Terrain,
    TerrainCfg,
    column_types,
    flat_terrain_cfg,
    generate_terrain,
    sub_terrain_mix,
)
from canter.terrains import sub_terrains as st
from canter.terrains.terrain import scan_grid

N = 40  # points per side of a 4 m sub-terrain at 0.1 m


def _cfg(proportions: dict[str, float] | None = None, **overrides) -> TerrainCfg:
    """3 rows x 4 columns of 4 m squares at 0.1 m, 1 m border, 1 m platform; `proportions` picks
    standard sub-terrains (sub_terrain_mix)."""
    fields = {
        "size": (4.0, 4.0),
        "num_rows": 3,
        "num_cols": 4,
        "border_width": 1.0,
        "platform_width": 1.0,
    }
    if proportions is not None:
        fields["sub_terrains"] = sub_terrain_mix(**proportions)
    fields.update(overrides)
    return TerrainCfg(**fields)


BLOCK = Block(nx=N, ny=N, h=0.1, platform_width=1.0)


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


# --- generation ---------------------------------------------------------------------------------
def test_same_seed_is_bitwise_identical_different_seed_differs():
    every_type = {name: 1.0 for name in SUB_TERRAIN_TYPES}
    a = generate_terrain(_cfg(num_cols=8, proportions=every_type, seed=3)).heights
    b = generate_terrain(_cfg(num_cols=8, proportions=every_type, seed=3)).heights
    c = generate_terrain(_cfg(num_cols=8, proportions=every_type, seed=4)).heights
    assert a.dtype == np.float32 and a.shape == (2 * 10 + 3 * N, 2 * 10 + 8 * N)
    assert np.array_equal(a, b) and a.tobytes() == b.tobytes()
    assert not np.array_equal(a, c)


def test_columns_follow_the_proportions_and_rows_the_difficulty():
    assert column_types(_cfg(proportions={"flat": 1.0, "stairs_up": 3.0})).tolist() == [0, 1, 1, 1]
    cfg = _cfg(num_cols=5, proportions={"rough": 1.0, "obstacles": 1.0})
    assert column_types(cfg).tolist() == [0, 0, 1, 1, 1]
    terrain_map = generate_terrain(_cfg(proportions={"stairs_up": 1.0}))
    np.testing.assert_array_equal(terrain_map.difficulty[:, 0], [0.0, 0.5, 1.0])
    # the top of each stair pyramid: 4 steps of lerp(stair_height_range, row / 2)
    tops = [terrain_map.heights[10 + r * N : 10 + (r + 1) * N, 10 : 10 + N].max() for r in range(3)]
    np.testing.assert_allclose(tops, [4 * 0.05, 4 * 0.115, 4 * 0.18], rtol=1e-6)
    shuffled = generate_terrain(_cfg(curriculum=False, proportions={"flat": 1.0, "slope_up": 1.0}))
    assert shuffled.names == ("flat", "slope_up") and set(shuffled.types.ravel().tolist()) <= {0, 1}
    assert ((shuffled.difficulty >= 0) & (shuffled.difficulty <= 1)).all()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("num_rows", 0),
        ("horizontal_scale", 0.0),
        ("size", (4.0, 0.2)),
        ("sub_terrains", {"flat": FlatCfg(proportion=0.0)}),
        ("sub_terrains", {}),
        ("vertical_range", (0.5, 1.0)),
        ("platform_width", 5.0),
        ("sub_terrains.stairs.step_width", {"stairs": StairsCfg(step_width=0.01)}),
        ("sub_terrains.stones.width_range", {"stones": SteppingStonesCfg(width_range=(0.5, 0.05))}),
        ("kind", "mesh"),
        ("max_init_level", -1),
    ],
)
def test_config_errors_name_the_field(field, value):
    name = field.split(".")[0]
    with pytest.raises(ConfigError, match=f"^terrain\\.{re.escape(field)}: "):
        _cfg(**{name: value})


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: RoughCfg(noise_step=0.0), r"^RoughCfg.noise_step: must be > 0, got 0.0$"),
        (lambda: SlopeCfg(slope_range=(-0.1, 0.4)), r"^SlopeCfg.slope_range: values must be >= 0"),
        (lambda: ObstaclesCfg(width_range=(1.0, 0.5)), r"^ObstaclesCfg.width_range: need low <= high"),
        (lambda: ObstaclesCfg(count=-1), r"^ObstaclesCfg.count: must be >= 0"),
        (lambda: SteppingStonesCfg(pit_depth=math.nan), r"^SteppingStonesCfg.pit_depth: must be finite"),
        (lambda: StoneRowsCfg(proportion=-1.0), r"^StoneRowsCfg.proportion: must be >= 0.0"),
        (lambda: sub_terrain_mix(lava=1.0), r"^sub_terrains: unknown type\(s\) lava"),
    ],
)
def test_each_sub_terrain_config_validates_its_own_fields(make, message):
    with pytest.raises(ConfigError, match=message):
        make()


def test_a_sub_terrain_edited_after_construction_is_caught_by_path():
    cfg = _cfg(proportions={"rough": 1.0})
    cfg.sub_terrains["rough"].amplitude_range = (0.1, math.inf)  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"^sub_terrains.rough.amplitude_range: must hold two finite numbers"):
        generate_terrain(cfg)


def test_pyramid_slope_rises_monotonically_to_the_centre_platform():
    up = SlopeCfg().heights(_rng(), 1.0, BLOCK)  # slope 0.4
    line = up[:, 19]  # a line through the centre
    assert (np.diff(line[:20]) >= 0).all() and (np.diff(line[20:]) <= 0).all()
    # 0 at the edge, 0.4 per metre up to the platform edge at (39/2) 0.1 - 0.5 = 1.45 m
    np.testing.assert_allclose(line[:15], 0.04 * np.arange(15), atol=1e-12)
    assert up.max() == pytest.approx(0.4 * 1.45)
    assert (up[st.platform_mask(N, N, 0.1, 1.0)] == up.max()).all()
    assert (up[0] == 0).all() and (up[:, -1] == 0).all()
    np.testing.assert_array_equal(SlopeCfg(inverted=True).heights(_rng(), 1.0, BLOCK), -up)
    assert SlopeCfg().heights(_rng(), 0.0, BLOCK).max() == 0.0  # slope_range starts at 0


def test_pyramid_stairs_are_discrete_steps_of_the_configured_height():
    cfg = StairsCfg(step_height_range=(0.05, 0.15), step_width=0.3)
    up = cfg.heights(_rng(), 1.0, BLOCK)
    levels = np.unique(up)
    # floor(1.45 m / 0.3 m) = 4 steps of 0.15 m above the ground ring
    np.testing.assert_allclose(levels, 0.15 * np.arange(5), atol=1e-12)
    np.testing.assert_allclose(np.diff(levels), 0.15, atol=1e-12)
    # each step is 0.3 m = 3 cells deep
    np.testing.assert_allclose(up[:12, 19], 0.15 * (np.arange(12) // 3), atol=1e-12)
    down = StairsCfg(step_height_range=(0.05, 0.15), step_width=0.3, inverted=True)
    np.testing.assert_array_equal(down.heights(_rng(), 1.0, BLOCK), -up)
    easy = cfg.heights(_rng(), 0.0, BLOCK)
    np.testing.assert_allclose(np.diff(np.unique(easy)), 0.05, atol=1e-12)


def test_stepping_stones_have_deep_pits_and_harder_rows_spread_more():
    cfg = SteppingStonesCfg(pit_depth=1.0, height_range=(0.0, 0.1), gap_range=(0.3, 0.4))
    easy = cfg.heights(_rng(), 0.0, BLOCK)
    hard = cfg.heights(_rng(), 1.0, BLOCK)
    platform = st.platform_mask(N, N, 0.1, BLOCK.platform_width)
    for heights in (easy, hard):
        assert (heights[platform] == 0).all()
        pits = heights == -1.0
        assert pits.any() and heights.min() == -1.0
        # everything that is not a pit is a stone within the height spread
        assert (np.abs(heights[~pits]) <= 0.1).all()
    assert (easy[~(easy == -1.0)] == 0).all()  # spread 0 at difficulty 0
    assert (hard == -1.0).mean() > (easy == -1.0).mean()
    assert hard[hard > -1.0].std() > 0.02


def test_default_stepping_stones_start_gap_free_and_open_up_row_by_row():
    """The curriculum's entry rung: with the default gap_range (0, 0.4 m) at 0.1 m resolution, rows 0-3
    are solid ground (their gaps, at most 0.13 m, round to no opening), pits appear from row 4 and
    cover more of the block on every harder row; the old minimum of one cell put 0.2 m V-trenches 1 m
    deep into row 0, and counting pit points put them into row 2 (nominal gaps of 0.04-0.09 m)."""
    cfg = SteppingStonesCfg()
    pit_share = [float((cfg.heights(_rng(), row / 9, BLOCK) == -cfg.pit_depth).mean()) for row in range(10)]
    assert pit_share[:4] == [0.0] * 4
    assert 0.05 < pit_share[4] < 0.2 and pit_share[9] > 0.4
    assert all(b >= a - 0.02 for a, b in itertools.pairwise(pit_share))


def _surface_runs(index: np.ndarray, h: float, below: bool) -> list[float]:
    """Lengths (m) of the runs where MuJoCo's surface over a profile with pits at -1 (index < 0) and
    stones at 0 is below -0.01 m (a gap's opening) or above it (a stone's top): the heightfield
    interpolates linearly between points h apart, sampled here every h / 100."""
    x = np.arange(index.size) * h
    fine = np.arange(0.0, x[-1], h / 100.0)
    surface = np.interp(fine, x, np.where(index < 0, -1.0, 0.0))
    mask = (surface < -0.01) == below
    edges = np.flatnonzero(np.diff(mask.astype(int)))
    return [float(b - a) * h / 100.0 for a, b in itertools.pairwise(edges) if mask[a + 1]]


@pytest.mark.parametrize("h", [0.1, 0.05])
def test_stepping_stone_gaps_and_tops_are_measured_on_the_collision_surface(h: float):
    """Gaps U(g/2, g) open (to the nearest cell) as wide at the top as drawn, not one cell wider: a
    pit point's two slopes belong to the gap; stones keep their width as flat tops."""
    for gap in (0.04, 0.12, 0.3):
        index = st._stone_index(_rng(), 400, h, width=0.5, gap=gap)
        openings = _surface_runs(index, h, below=True)
        tops = _surface_runs(index, h, below=False)
        if gap < 1.5 * h:  # every draw rounds to an opening of at most one cell: the stones meet
            assert (index >= 0).all() and not openings
            continue
        assert openings and tops
        # an opening of k + 1 cells at the top, less the 0.01 m the slopes fall to the threshold
        assert min(openings) > max(gap / 2.0 - h / 2.0, h) and max(openings) < gap + h / 2.0
        # a stone's flat top is its width (plus the slopes down to -0.01 m, sampled every h / 100); where
        # a drawn gap rounds to no opening, neighbours merge into one top of both widths and a cell
        every = tops if gap / 2.0 >= 1.5 * h else [min(tops)]
        np.testing.assert_allclose(every, 0.5, atol=0.03 * h)
        assert min(tops) > 0.5 - 0.03 * h



def test_rough_and_obstacles_grow_with_difficulty():
    rough = [RoughCfg(amplitude_range=(0.01, 0.1)).heights(_rng(), d, BLOCK) for d in (0.0, 0.5, 1.0)]
    assert rough[0].std() < rough[1].std() < rough[2].std()
    assert np.abs(rough[2]).max() <= 0.1
    boxes = [ObstaclesCfg(height_range=(0.05, 0.2), count=30).heights(_rng(), d, BLOCK) for d in (0.0, 1.0)]
    assert np.abs(boxes[0]).max() < np.abs(boxes[1]).max() <= 0.2
    for heights, top in zip(boxes, (0.05, 0.2), strict=True):
        assert (heights[st.platform_mask(N, N, 0.1, BLOCK.platform_width)] == 0).all()
        raised = np.abs(heights[heights != 0])
        assert raised.size > 0 and (raised >= top / 2 - 1e-12).all()


# --- MuJoCo model -------------------------------------------------------------------------------
def _terrain(cfg: TerrainCfg, num_envs: int = 8, seed: int = 0) -> Terrain:
    return Terrain(cfg, num_envs, "cpu", torch.Generator().manual_seed(seed))


def test_heightfield_model_matches_the_heights_and_the_dog_stands_on_it():
    terrain = _terrain(_cfg(proportions={"rough": 1.0, "stairs_up": 1.0, "stepping_stones": 2.0}))
    model = load_model(asset_path("dog.xml"), (terrain.edit_spec,))
    floor = model.geom("floor")
    assert int(floor.type[0]) == mujoco.mjtGeom.mjGEOM_HFIELD
    assert int(floor.contype[0]) == 1 and int(floor.conaffinity[0]) == 1
    assert [model.geom(i).name for i in range(model.ngeom)].count("floor") == 1
    data = mujoco.MjData(model)
    data.qpos[0] = 100.0  # the dog out of the way of the rays
    mujoco.mj_forward(model, data)
    heights = terrain.map.heights
    x0, y0 = terrain.map.origin
    rng = np.random.default_rng(1)
    geom_id = np.zeros(1, dtype=np.int32)
    for i, j in zip(
        rng.integers(0, heights.shape[0], 60), rng.integers(0, heights.shape[1], 60), strict=True
    ):
        start = np.array([x0 + i * 0.1, y0 + j * 0.1, 5.0])
        distance = mujoco.mj_ray(model, data, start, np.array([0.0, 0.0, -1.0]), None, 1, -1, geom_id)
        assert geom_id[0] == floor.id
        assert 5.0 - distance == pytest.approx(float(heights[i, j]), abs=1e-4)
    # the dog dropped onto a stair pyramid's top platform stays on it
    origin = terrain.origins_grid[2, 1].double().numpy()
    mujoco.mj_resetDataKeyframe(model, data, model.key("home").id)
    data.qpos[0:3] = origin + np.array([0.0, 0.0, 0.33])
    for _ in range(200):
        mujoco.mj_step(model, data)
    assert np.isfinite(data.qpos).all()
    assert any(floor.id in (c.geom1, c.geom2) for c in data.contact[: data.ncon])
    assert data.qpos[2] - origin[2] > 0.15


def test_a_window_of_the_heightfield_has_the_same_ground_inside_and_none_outside():
    """edit_spec(window=...) (what a terrain video renders): rays down inside the window hit the
    cut field at the full field's heights, to the cell edges the window covers; outside it, nothing."""
    terrain = _terrain(_cfg(proportions={"rough": 1.0, "stairs_up": 1.0, "slope_up": 1.0}))
    full = load_model(asset_path("dog.xml"), (terrain.edit_spec,))
    x0, y0 = terrain.map.origin
    cx, cy, half = x0 + 1.33, y0 + 9.87, 2.5  # near the map's edge: the window is clipped on x
    cut = load_model(asset_path("dog.xml"), (partial(terrain.edit_spec, window=(cx, cy, half)),))
    # grid points [0 (clipped from -11.7) .. ceil(38.3)] on x, [floor(73.7) .. ceil(123.7)] on y
    assert (int(cut.hfield_ncol[0]), int(cut.hfield_nrow[0])) == (40, 124 - 73 + 1)
    assert full.nq == cut.nq and full.nbody == cut.nbody
    # the floor's checker (16 x 16 repeats over the whole field) keeps its size per metre
    nx, ny = terrain.map.heights.shape
    np.testing.assert_allclose(cut.material("grid").texrepeat, [16 * 39 / (nx - 1), 16 * 51 / (ny - 1)], rtol=1e-6)
    np.testing.assert_allclose(full.material("grid").texrepeat, [16, 16])
    geom_id = np.zeros(1, dtype=np.int32)
    down = np.array([0.0, 0.0, -1.0])

    def ground(model: mujoco.MjModel, x: float, y: float) -> float | None:
        data = mujoco.MjData(model)
        data.qpos[0] = 100.0  # the dog out of the way
        mujoco.mj_forward(model, data)
        distance = mujoco.mj_ray(model, data, np.array([x, y, 5.0]), down, None, 1, -1, geom_id)
        return None if geom_id[0] != model.geom("floor").id else 5.0 - distance

    rng = np.random.default_rng(3)
    for u, v in rng.uniform((-1.32, -half + 0.01), half - 0.01, (40, 2)):
        expected = ground(full, cx + u, cy + v)
        assert expected is not None
        assert ground(cut, cx + u, cy + v) == pytest.approx(expected, abs=1e-4)
    # grid point (5, 80) exactly, a stair edge or rough cell of the corner block
    assert ground(cut, x0 + 0.5, y0 + 8.0) == pytest.approx(float(terrain.map.heights[5, 80]), abs=1e-4)
    assert ground(cut, cx + half + 0.3, cy) is None and ground(cut, cx, cy - half - 0.3) is None
    with pytest.raises(ConfigError, match="half-width must be > 0"):
        load_model(asset_path("dog.xml"), (partial(terrain.edit_spec, window=(cx, cy, 0.0)),))


def test_pin_puts_every_env_on_one_row_of_one_type_and_the_curriculum_leaves_it_there():
    terrain = _terrain(_cfg(proportions={"flat": 1.0, "stairs_up": 3.0}), num_envs=7)
    stairs = terrain.map.names.index("stairs_up")
    stair_columns = [c for c in range(4) if terrain.map.types[2, c] == stairs]
    assert stair_columns == [1, 2, 3]  # a quarter flat, three quarters stairs
    terrain.pin(2, "stairs_up")
    assert terrain.terrain_levels.tolist() == [2] * 7
    assert terrain.terrain_types.tolist() == [1, 2, 3, 1, 2, 3, 1]  # spread over the row's stair blocks in turn
    assert torch.equal(terrain.env_origins, terrain.origins_grid[2, terrain.terrain_types])
    # the stair pyramid's top platform: the origin stands above the border's height 0
    assert (terrain.env_origins[:, 2] > 0).all()
    ids = torch.arange(7)
    terrain.update_levels(ids, torch.ones(7, dtype=torch.bool), torch.zeros(7, dtype=torch.bool), torch.Generator())
    assert terrain.terrain_levels.tolist() == [2] * 7
    assert torch.equal(terrain.env_origins, terrain.origins_grid[2, terrain.terrain_types])
    # without a type, the columns stay as they were
    other = _terrain(_cfg(proportions={"flat": 1.0, "stairs_up": 3.0}), num_envs=8)
    types = other.terrain_types.clone()
    other.pin(0)
    assert other.terrain_levels.tolist() == [0] * 8 and torch.equal(other.terrain_types, types)


@pytest.mark.parametrize(
    ("level", "sub_terrain", "message"),
    [
        (3, None, r"--terrain-level: 3 is out of range \(this terrain has levels 0..2\)"),
        (-1, None, "out of range"),
        (1, "slope_up", r"--sub-terrain: 'slope_up' is not in this terrain \(it has: flat, stairs_up\)"),
    ],
)
def test_pin_names_a_bad_level_or_type(level, sub_terrain, message):
    terrain = _terrain(_cfg(proportions={"flat": 1.0, "stairs_up": 3.0}))
    with pytest.raises(ConfigError, match=message):
        terrain.pin(level, sub_terrain)
    assert not terrain.pinned
    with pytest.raises(ConfigError, match="no generated terrain"):
        _terrain(flat_terrain_cfg()).pin(0)


def test_flat_preset_keeps_the_plane():
    terrain = _terrain(flat_terrain_cfg())
    model = load_model(asset_path("dog.xml"), (terrain.edit_spec,))
    assert model.nhfield == 0 and int(model.geom("floor").type[0]) == mujoco.mjtGeom.mjGEOM_PLANE
    assert terrain.env_origins.abs().sum() == 0
    assert torch.equal(terrain.height_at(torch.rand(5, 3, 2)), torch.zeros(5, 3))


# --- height queries -----------------------------------------------------------------------------
def test_height_at_is_exact_at_grid_points_and_bilinear_between():
    cfg = _cfg(
        horizontal_scale=0.125,
        sub_terrains={"rough": RoughCfg(noise_step=0.25), "stairs_up": StairsCfg()},
    )
    terrain = _terrain(cfg)
    heights = torch.from_numpy(terrain.map.heights).double()
    nx, ny = heights.shape
    x0, y0 = terrain.map.origin
    i, j = torch.meshgrid(torch.arange(nx), torch.arange(ny), indexing="ij")
    grid = torch.stack((x0 + i * 0.125, y0 + j * 0.125), dim=-1).double()
    assert torch.equal(terrain.height_at(grid), heights)
    # random points inside cells against a direct bilinear evaluation
    g = torch.Generator().manual_seed(0)
    cell = torch.stack(
        (torch.randint(0, nx - 1, (500,), generator=g), torch.randint(0, ny - 1, (500,), generator=g)), 1
    )
    frac = torch.rand(500, 2, generator=g, dtype=torch.float64)
    xy = torch.stack((x0 + (cell[:, 0] + frac[:, 0]) * 0.125, y0 + (cell[:, 1] + frac[:, 1]) * 0.125), 1)
    a, b = cell[:, 0], cell[:, 1]
    tx, ty = frac[:, 0], frac[:, 1]
    expected = (
        (1 - tx) * (1 - ty) * heights[a, b]
        + tx * (1 - ty) * heights[a + 1, b]
        + (1 - tx) * ty * heights[a, b + 1]
        + tx * ty * heights[a + 1, b + 1]
    )
    torch.testing.assert_close(terrain.height_at(xy), expected, rtol=0, atol=1e-12)
    # outside the map: the border's height (0); float32 queries come back as float32
    far = torch.tensor([[-100.0, 0.0], [0.0, 100.0], [1e3, -1e3]], dtype=torch.float32)
    out = terrain.height_at(far)
    assert out.dtype == torch.float32 and torch.equal(out, torch.zeros(3))


def _height_at_by_four_gathers(terrain: Terrain, xy: torch.Tensor) -> torch.Tensor:
    """The bilinear interpolation written plainly: four gathers of the flat grid, then
    (1 - tx) ((1 - ty) h00 + ty h01) + tx ((1 - ty) h10 + ty h11)."""
    heights = terrain.heights
    nx, ny = heights.shape
    h = terrain.cfg.horizontal_scale
    x0, y0 = terrain.map.origin
    u = ((xy[..., 0] - x0) / h).clamp(0.0, nx - 1)
    v = ((xy[..., 1] - y0) / h).clamp(0.0, ny - 1)
    i = u.floor().clamp(max=nx - 2)
    j = v.floor().clamp(max=ny - 2)
    tx, ty = u - i, v - j
    index = i.long() * ny + j.long()
    flat = heights.reshape(-1)
    h00, h01, h10, h11 = (flat[index + k].to(xy.dtype) for k in (0, 1, ny, ny + 1))
    return (1.0 - tx) * ((1.0 - ty) * h00 + ty * h01) + tx * ((1.0 - ty) * h10 + ty * h11)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_height_at_is_bitwise_the_plain_four_gather_formula(dtype):
    every_type = dict.fromkeys(SUB_TERRAIN_TYPES, 1.0)
    terrain = _terrain(_cfg(every_type, num_cols=len(SUB_TERRAIN_TYPES)))
    nx, ny = terrain.heights.shape
    x0, y0 = terrain.map.origin
    g = torch.Generator().manual_seed(2)
    extent = torch.tensor([nx * 0.1, ny * 0.1], dtype=torch.float64)
    # points inside, beyond every edge, on grid points and on the last row / column
    inside = torch.rand(64, 50, 2, generator=g, dtype=torch.float64) * extent * 1.2 - 0.1 * extent
    i, j = torch.randint(0, nx, (300,), generator=g), torch.randint(0, ny, (300,), generator=g)
    on_grid = torch.stack((x0 + i * 0.1, y0 + j * 0.1), dim=-1)
    last = torch.tensor([[x0 + (nx - 1) * 0.1, y0], [x0, y0 + (ny - 1) * 0.1], [x0 + (nx - 1) * 0.1, y0 + (ny - 1) * 0.1]])
    origin = torch.tensor([x0, y0], dtype=torch.float64)
    for xy in (inside + origin, on_grid, last.double()):
        xy = xy.to(dtype)
        expected = _height_at_by_four_gathers(terrain, xy)
        assert torch.equal(terrain.height_at(xy), expected)
        assert torch.equal(terrain.height_at_xy(xy[..., 0].contiguous(), xy[..., 1].contiguous()), expected)
        assert terrain.height_at(xy).dtype == dtype
        assert xy.shape[0] == 3 or expected.std() > 0.05  # not a flat map (the edges are the border)


def test_set_heights_moves_the_queries_and_rejects_other_shapes():
    terrain = _terrain(_cfg(proportions={"rough": 1.0}))
    raised = terrain.heights + 0.25
    terrain.set_heights(raised)
    xy = torch.rand(40, 2, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 8 - 4
    assert torch.equal(terrain.height_at(xy), _height_at_by_four_gathers(terrain, xy))
    with pytest.raises(ConfigError, match="set_heights"):
        terrain.set_heights(raised[:-1])
    with pytest.raises(ConfigError, match="plane"):
        _terrain(flat_terrain_cfg()).set_heights(raised)


# --- curriculum ---------------------------------------------------------------------------------
def test_update_levels_promotes_demotes_clamps_and_wraps_the_top_row():
    terrain = _terrain(_cfg(max_init_level=0))
    assert terrain.terrain_levels.tolist() == [0] * 8
    assert terrain.terrain_types.tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    terrain.terrain_levels.copy_(torch.tensor([0, 0, 1, 1, 2, 2, 2, 1]))
    up = torch.tensor([0, 1, 1, 0, 1, 0, 0, 0], dtype=torch.bool)
    down = torch.tensor([1, 0, 0, 1, 0, 1, 0, 0], dtype=torch.bool)
    generator = torch.Generator().manual_seed(7)
    random_rows = torch.randint(0, 3, (8,), generator=torch.Generator().manual_seed(7))
    terrain.update_levels(torch.arange(8), up, down, generator)
    expected = torch.tensor([0, 1, 2, 0, int(random_rows[4]), 1, 2, 1])
    assert torch.equal(terrain.terrain_levels, expected)
    assert torch.equal(terrain.env_origins, terrain.origins_grid[expected, terrain.terrain_types])
    # only the given envs change
    terrain.update_levels(torch.tensor([6]), torch.tensor([False]), torch.tensor([True]), generator)
    expected[6] = 1
    assert torch.equal(terrain.terrain_levels, expected)
    spread = _terrain(_cfg(max_init_level=1), num_envs=64)
    assert set(spread.terrain_levels.tolist()) == {0, 1}


def _env(terrain: TerrainCfg | None, num_envs: int = 8, **fields) -> ManagerBasedRLEnv:
    """The dog with joint position actions, one observation term and time-outs, plus `fields`."""
    observations = {"policy": ObsGroupCfg(terms={"joint_pos": ObsTermCfg(func=mdp.joint_pos_rel)})}
    cfg = EnvCfg(
        model_path=str(asset_path("dog.xml")),
        default_keyframe="home",
        num_envs=num_envs,
        episode_length_s=2.0,
        sim=SimCfg(num_threads=1),
        terrain=terrain,
        actions={"joints": joint_position_action()},
        observations=fields.pop("observations", observations),
        terminations={"time_out": TerminationTermCfg(func=mdp.time_out, time_out=True)},
        **fields,
    )
    return ManagerBasedRLEnv(cfg)


def test_terrain_levels_curriculum_term_moves_by_distance_walked():
    command = UniformVelocityCommandCfg(
        lin_vel_x=(1.0, 1.0), lin_vel_y=(0.0, 0.0), ang_vel_z=(0.0, 0.0), resampling_time_range=(100.0, 100.0)
    )
    curriculum = {"terrain_levels": CurriculumTermCfg(func=mdp.terrain_levels)}
    env = _env(_cfg(), commands={"base_velocity": command}, curriculum=curriculum)
    _, extras = env.reset()
    assert "Curriculum/terrain_levels" in extras["log"]
    terrain = env.terrain
    # up if walked > 4 m / 2; down if walked < 0.5 * |(1, 0)| m/s * 2 s = 1 m
    terrain.terrain_levels.fill_(1)
    terrain.env_origins.copy_(terrain.origins_grid[terrain.terrain_levels, terrain.terrain_types])
    walked = torch.tensor([3.0, 1.5, 0.5, 0.0, 2.5, 1.1, 0.9, 3.0], dtype=torch.float64)
    env.sim.qpos[:, 0:2] = terrain.env_origins[:, 0:2].double() + torch.stack((0.6 * walked, 0.8 * walked), 1)
    env.episode_length_buf.fill_(10)
    env.episode_length_buf[7] = 0  # has not stepped since its reset: keeps its level
    mean = mdp.terrain_levels(env, torch.arange(8))
    assert terrain.terrain_levels.tolist() == [2, 1, 0, 0, 2, 1, 0, 1]
    assert mean.item() == pytest.approx(7 / 8)
    # without the command only the promotion rule applies
    env_no_command = _env(_cfg())
    terrain = env_no_command.terrain
    terrain.terrain_levels.fill_(1)
    terrain.env_origins.copy_(terrain.origins_grid[terrain.terrain_levels, terrain.terrain_types])
    env_no_command.sim.qpos[:, 0:2] = terrain.env_origins[:, 0:2].double() + torch.stack(
        (walked, 0 * walked), 1
    )
    env_no_command.episode_length_buf.fill_(1)
    mdp.terrain_levels(env_no_command, torch.arange(8), command_name="base_velocity")
    assert terrain.terrain_levels.tolist() == [2, 1, 1, 1, 2, 1, 1, 2]


def test_walked_out_truncates_where_the_curriculum_promotes():
    curriculum = {"terrain_levels": CurriculumTermCfg(func=mdp.terrain_levels)}
    cfg = _env(_cfg(), curriculum=curriculum).cfg
    cfg.terminations["walked_out"] = TerminationTermCfg(func=mdp.walked_out, time_out=True, params={"factor": 1.0})
    env = ManagerBasedRLEnv(cfg)
    env.reset()
    terrain = env.terrain
    terrain.terrain_levels.fill_(1)
    terrain.env_origins.copy_(terrain.origins_grid[terrain.terrain_levels, terrain.terrain_types])
    # 4 m blocks: out beyond 2 m from the origin at factor 1, beyond 1 m at 0.5, never at 0
    walked = torch.tensor([3.0, 1.5, 0.5, 0.0, 2.5, 1.1, 0.9, 2.05], dtype=torch.float64)
    env.sim.qpos[:, 0:2] = terrain.env_origins[:, 0:2].double() + torch.stack((0.6 * walked, -0.8 * walked), 1)
    assert mdp.walked_out(env, factor=1.0).tolist() == [True, False, False, False, True, False, False, True]
    assert mdp.walked_out(env, factor=0.5).tolist() == [True, True, False, False, True, True, False, True]
    assert not mdp.walked_out(env, factor=0.0).any()
    # in the env: the walked-out envs are cut short (truncated, not terminated) and promoted at that reset
    env.episode_length_buf.fill_(10)
    _, _, terminated, truncated, _ = env.step(torch.zeros(8, env.num_actions))
    assert truncated.tolist() == [True, False, False, False, True, False, False, True]
    assert not terminated.any()
    assert terrain.terrain_levels.tolist() == [2, 1, 1, 1, 2, 1, 1, 2]


# --- spawning and the height scan ---------------------------------------------------------------
_RESET = EventTermCfg(
    func=mdp.reset_root_state_from_terrain,
    mode="reset",
    params={"position_range": (-0.5, 0.5), "velocity_range": (-0.1, 0.1), "height_offset": 0.05},
)


@pytest.mark.parametrize("with_terrain", [True, False])
def test_reset_places_robots_at_their_origins_above_the_terrain(with_terrain):
    cfg = (
        _cfg(proportions={"slope_up": 1.0, "stairs_down": 1.0, "stepping_stones": 1.0})
        if with_terrain
        else None
    )
    env = _env(cfg, events={"reset_base": _RESET})
    env.reset()
    root = env.sim.qpos[:, 0:3]
    origins = env.terrain.env_origins.double() if with_terrain else torch.zeros(8, 3, dtype=torch.float64)
    assert ((root[:, 0:2] - origins[:, 0:2]).abs() <= 0.5).all()
    ground = env.terrain.height_at(root[:, 0:2]) if with_terrain else torch.zeros(8, dtype=torch.float64)
    torch.testing.assert_close(root[:, 2], ground + env.scene.default_qpos[2] + 0.05, rtol=0, atol=1e-12)
    torch.testing.assert_close(env.sim.qpos[:, 3:7].norm(dim=1), torch.ones(8, dtype=torch.float64))
    for _ in range(5):
        env.step(torch.zeros(8, env.num_actions))
    assert torch.isfinite(env.sim.qpos).all()
    if with_terrain:
        saved = env.state_dict()
        levels = env.terrain.terrain_levels.clone()
        env.terrain.terrain_levels.add_(1)
        env.load_state_dict(saved)
        assert torch.equal(env.terrain.terrain_levels, levels)
    else:
        assert env.terrain is None and "terrain" not in env.state_dict()


def _scan(env: ManagerBasedRLEnv, **params) -> torch.Tensor:
    term = mdp.HeightScan(TermCfg(func=mdp.HeightScan, params=params), env)
    return term(env, **params)


@pytest.mark.parametrize("terrain", [None, flat_terrain_cfg()])
def test_height_scan_on_flat_ground_is_the_base_height(terrain):
    scan_obs = {"height_scan": ObsTermCfg(func=mdp.HeightScan, params={"clip": None})}
    env = _env(terrain, observations={"policy": ObsGroupCfg(terms=scan_obs)})
    env.reset()
    env.sim.qpos[:, 2] = torch.linspace(0.2, 0.9, 8, dtype=torch.float64)
    env.sim.qpos[:, 3:7] = quat_from_yaw(torch.linspace(-3, 3, 8, dtype=torch.float64))
    env.scene.invalidate()  # state written by hand: drop the values cached for this step
    obs = env.observation_manager.compute()["policy"]
    assert obs.shape == (8, 17 * 11)  # 1.6 m x 1.0 m at 0.1 m
    torch.testing.assert_close(obs, torch.linspace(0.2, 0.9, 8)[:, None].expand(8, 187))
    clipped = _scan(env, grid_size=(0.4, 0.2), resolution=0.1, offset=0.5, clip=(-0.1, 0.1))
    assert clipped.shape == (8, 15)
    expected = (torch.linspace(0.2, 0.9, 8, dtype=torch.float64) - 0.5).clamp(-0.1, 0.1)
    torch.testing.assert_close(clipped, expected[:, None].expand(8, 15))


def test_height_scan_on_a_known_slope_rotates_with_yaw_only():
    env = _env(_cfg(), num_envs=4)
    env.reset()
    terrain = env.terrain
    nx, ny = terrain.heights.shape
    x0, y0 = terrain.map.origin
    gx = x0 + torch.arange(nx, dtype=torch.float64) * 0.1
    gy = y0 + torch.arange(ny, dtype=torch.float64) * 0.1
    # the ground becomes the plane z = 0.2 x - 0.1 y + 0.3, which bilinear interpolation reproduces
    terrain.set_heights((0.2 * gx[:, None] - 0.1 * gy[None, :] + 0.3).float())
    yaw = torch.tensor([0.0, 0.7, -2.0, math.pi / 2], dtype=torch.float64)
    base = torch.tensor(
        [[0.3, -0.2, 1.0], [1.0, 2.0, 1.5], [-3.0, 1.0, 0.8], [0.0, 0.0, 1.2]], dtype=torch.float64
    )
    env.sim.qpos[:, 0:3] = base
    env.sim.qpos[:, 3:7] = quat_from_yaw(yaw)
    env.scene.invalidate()
    scan = _scan(env, grid_size=(0.6, 0.4), resolution=0.2, offset=0.1, clip=None)
    local = scan_grid((0.6, 0.4), 0.2)
    assert local.shape == (12, 2)
    cos, sin = torch.cos(yaw)[:, None], torch.sin(yaw)[:, None]
    px = base[:, 0:1] + cos * local[:, 0] - sin * local[:, 1]
    py = base[:, 1:2] + sin * local[:, 0] + cos * local[:, 1]
    expected = base[:, 2:3] - (0.2 * px - 0.1 * py + 0.3) - 0.1
    torch.testing.assert_close(scan, expected, rtol=0, atol=1e-5)
    # pitching the base does not tilt the scan grid
    pitch = torch.tensor([math.cos(0.2), 0.0, math.sin(0.2), 0.0], dtype=torch.float64)
    env.sim.qpos[:, 3:7] = quat_mul(quat_from_yaw(yaw), pitch.expand(4, 4))
    env.scene.invalidate()
    torch.testing.assert_close(_scan(env, grid_size=(0.6, 0.4), resolution=0.2, offset=0.1, clip=None), scan)


def test_height_scan_is_evaluated_once_per_step_for_both_groups_and_is_the_plain_formula():
    params = {"grid_size": (0.8, 0.6), "resolution": 0.2, "offset": 0.05, "clip": (-0.3, 0.4)}
    groups = {
        name: ObsGroupCfg(terms={"scan": ObsTermCfg(func=mdp.HeightScan, params=dict(params))})
        for name in ("policy", "critic")
    }
    cfg = _cfg(proportions={"rough": 1.0, "stairs_up": 1.0, "stepping_stones": 1.0})
    env = _env(cfg, num_envs=6, observations=groups, events={"reset_base": _RESET})
    env.reset()
    terrain = env.terrain
    evaluations = []
    height_at_xy = terrain.height_at_xy
    terrain.height_at_xy = lambda x, y: evaluations.append(x.shape) or height_at_xy(x, y)
    generator = torch.Generator().manual_seed(0)
    for _ in range(3):
        obs, *_ = env.step(torch.rand(6, env.num_actions, generator=generator) - 0.5)
    assert evaluations == [(6, 20)] * 3  # 5 x 4 points, one evaluation per step
    root = env.sim.qpos[:, 0:3]
    yaw = yaw_from_quat(env.sim.qpos[:, 3:7])
    local = scan_grid((0.8, 0.6), 0.2)
    cos, sin = torch.cos(yaw)[:, None], torch.sin(yaw)[:, None]
    points = torch.stack(
        (root[:, 0:1] + cos * local[:, 0] - sin * local[:, 1], root[:, 1:2] + sin * local[:, 0] + cos * local[:, 1]),
        dim=-1,
    )
    expected = (root[:, 2:3] - _height_at_by_four_gathers(terrain, points) - 0.05).clamp(-0.3, 0.4).float()
    assert torch.equal(obs["policy"], expected) and torch.equal(obs["critic"], expected)
    assert expected.std() > 0.01  # the robots stand on uneven ground
