"""The terrain an env is built on: the MuJoCo ground geom, per-env origins and levels, and height
queries in torch on the env's device.

Every env simulates its own copy of the same model, so all envs share one heightfield; each env's
robot is placed at the centre of its assigned sub-terrain (its origin). Rows are difficulty levels,
columns terrain types; `update_levels` moves envs between rows (the game-style curriculum).
"""

from __future__ import annotations

import mujoco
import numpy as np
import torch

from canter.core import selection
from canter.core.errors import ConfigError
from canter.core.validate import validate_tree
from canter.terrains.config import TerrainCfg
from canter.terrains.generator import TerrainMap, generate_terrain

HFIELD_NAME = "terrain"
GEOM_NAME = "floor"


def scan_grid(grid_size: tuple[float, float], resolution: float) -> torch.Tensor:
    """(num_points, 2) points of a grid_size[0] x grid_size[1] rectangle centred on the origin,
    `resolution` apart, x-major: round(size / resolution) + 1 points per axis."""
    axes = [
        torch.linspace(-size / 2.0, size / 2.0, round(size / resolution) + 1, dtype=torch.float64)
        for size in grid_size
    ]
    return torch.stack(torch.meshgrid(*axes, indexing="ij"), dim=-1).reshape(-1, 2)


class Terrain:
    """Sub-terrain grid, env origins and the curriculum state of `num_envs` envs.

    env_origins: (num_envs, 3) float32 spawn point of each env: centre of its sub-terrain at the
        terrain height there (the top or bottom platform of pyramids, the platform of stones).
    terrain_levels: (num_envs,) long row (difficulty level); terrain_types: (num_envs,) long column.
    origins_grid: (num_rows, num_cols, 3) float32 spawn point of every sub-terrain.
    heights: (nx, ny) float32 height grid on the device (None for a plane).
    Initial levels are drawn from `generator` (torch, on `device`).
    """

    def __init__(
        self, cfg: TerrainCfg, num_envs: int, device: torch.device | str, generator: torch.Generator
    ):
        validate_tree(cfg)
        self.cfg = cfg
        self.num_envs = num_envs
        self.device = torch.device(device)
        self.map: TerrainMap | None = None
        self.heights: torch.Tensor | None = None
        if cfg.kind == "plane":
            self.num_rows = self.num_cols = 1
            self.origins_grid = torch.zeros(1, 1, 3, device=self.device)
        else:
            self.map = generate_terrain(cfg)
            self.num_rows, self.num_cols = cfg.num_rows, cfg.num_cols
            self.heights = torch.from_numpy(self.map.heights).to(self.device)
            self._corners = _cell_corners(self.heights)
            self._origin = self.map.origin
            centers = torch.as_tensor(self.map.block_centers(), dtype=torch.float64, device=self.device)
            z = self.height_at(centers)
            self.origins_grid = torch.cat((centers, z[..., None]), dim=-1).to(torch.float32)
        self.terrain_types = (torch.arange(num_envs, device=self.device) * self.num_cols) // num_envs
        top = min(cfg.max_init_level, self.num_rows - 1) if cfg.curriculum else self.num_rows - 1
        self.terrain_levels = torch.randint(
            0, top + 1, (num_envs,), generator=generator, device=self.device, dtype=torch.long
        )
        self.env_origins = self.origins_grid[self.terrain_levels, self.terrain_types].clone()
        self.pinned = False  # set by `pin` / `pin_grid`: levels no longer move
        # per env: the distance from its origin at its last episode's end (the curriculum term writes it)
        self.last_distance = torch.zeros(num_envs, device=self.device)

    # --- MuJoCo model -------------------------------------------------------------------------
    def edit_spec(self, spec: mujoco.MjSpec, window: tuple[float, float, float] | None = None) -> None:
        """Spec edit: replace the world geom named "floor" (or add one) by the heightfield geom,
        colliding with everything (contype = conaffinity = 1) at cfg.friction. A plane terrain keeps
        (or adds) a flat floor plane and only sets its friction.

        window (x, y, half): only the part of the heightfield within `half` m of world (x, y) (each
        axis; the cells that cover the square, clipped to the map), at its place in the world and
        with its heights exact and its material's texture as large per metre (a texture that is not
        `texuniform` repeats over the geom). For rendering: a software renderer draws every triangle
        of the field, and a video's camera sees a few blocks of it."""
        floor = spec.geom(GEOM_NAME)
        material = floor.material if floor is not None else ""
        if self.map is None:
            if floor is None:
                floor = spec.worldbody.add_geom(
                    name=GEOM_NAME, type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.0, 0.0, 0.05]
                )
                floor.contype, floor.conaffinity = 1, 1
            floor.friction = list(self.cfg.friction)
            return
        if floor is not None:
            spec.delete(floor)
        heights = self.map.heights
        h = self.map.horizontal_scale
        center = [0.0, 0.0]
        if window is not None:
            full_shape = heights.shape
            heights, center = _crop(heights, self.map.origin, h, window)
            texture = spec.material(material) if material else None
            if texture is not None and not texture.texuniform:  # its repeat spans the geom: kept per metre
                texture.texrepeat = [r * (n - 1) / (f - 1) for r, n, f in
                                     zip(texture.texrepeat, heights.shape, full_shape, strict=True)]
        nx, ny = heights.shape
        low, high = float(heights.min()), float(heights.max())
        elevation = high - low
        # MuJoCo rescales elevation data to [0, 1] and maps it to [0, size[2]] above the geom frame
        if elevation > 0:
            data = (heights.astype(np.float64) - low) / elevation
        else:
            data = np.zeros_like(heights, dtype=np.float64)
        spec.add_hfield(
            name=HFIELD_NAME,
            size=[(nx - 1) * h / 2.0, (ny - 1) * h / 2.0, max(elevation, 1e-3), self.cfg.base_thickness],
            nrow=ny,  # MuJoCo rows run along y, columns along x
            ncol=nx,
            userdata=data.T.ravel().astype(np.float32),
        )
        geom = spec.worldbody.add_geom(
            name=GEOM_NAME,
            type=mujoco.mjtGeom.mjGEOM_HFIELD,
            hfieldname=HFIELD_NAME,
            pos=[center[0], center[1], low],
            friction=list(self.cfg.friction),
        )
        geom.contype, geom.conaffinity, geom.condim = 1, 1, 3
        if material:
            geom.material = material
        else:
            geom.rgba = [0.45, 0.45, 0.5, 1.0]

    # --- queries ------------------------------------------------------------------------------
    def set_heights(self, heights: torch.Tensor) -> None:
        """Replace the (nx, ny) height grid that height queries interpolate (not the MuJoCo
        heightfield, which is compiled into the model)."""
        if self.heights is None:
            raise ConfigError("terrain.set_heights: a plane terrain has no height grid")
        if heights.shape != self.heights.shape:
            raise ConfigError(
                f"terrain.set_heights: need shape {tuple(self.heights.shape)}, got {tuple(heights.shape)}"
            )
        self.heights.copy_(heights)
        self._corners = _cell_corners(self.heights)

    def height_at(self, xy: torch.Tensor) -> torch.Tensor:
        """Terrain height (...,) at world points xy (..., 2), by bilinear interpolation of the height
        grid; points outside the map get the height of its nearest edge (the flat border). Exact at
        grid points; returned in xy's dtype."""
        return self.height_at_xy(xy[..., 0], xy[..., 1])

    def height_at_xy(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """`height_at` for coordinates given apart, x and y (...,) of one dtype: no stacking.

        With (u, v) the point in grid units, clamped to the grid, (i, j) its cell (floor, at most the
        last cell) and (tx, ty) = (u - i, v - j):
        h = (1 - tx) ((1 - ty) h[i, j] + ty h[i, j+1]) + tx ((1 - ty) h[i+1, j] + ty h[i+1, j+1]).
        The four corners of a cell come from one gather of a (4, cells) table; the two inner
        interpolations run as one (2, ...) operation."""
        if self.heights is None:
            return torch.zeros(x.shape, dtype=x.dtype, device=x.device)
        nx, ny = self.heights.shape
        h = self.cfg.horizontal_scale
        tx = ((x - self._origin[0]) / h).clamp_(0.0, nx - 1)  # u, until the cell is taken off
        ty = ((y - self._origin[1]) / h).clamp_(0.0, ny - 1)
        i = tx.floor().clamp_(max=nx - 2)
        j = ty.floor().clamp_(max=ny - 2)
        tx.sub_(i)
        ty.sub_(j)
        cell = i.long().mul_(ny - 1).add_(j.long())
        corners = self._corners.index_select(1, cell.reshape(-1)).to(x.dtype).view(2, 2, *x.shape)
        # rows [h(i, j), h(i, j+1)] and [h(i+1, j), h(i+1, j+1)], each interpolated along y
        along_y = corners[:, 0].mul_(1.0 - ty).add_(corners[:, 1].mul_(ty))
        return along_y[0].mul_(1.0 - tx).add_(along_y[1].mul_(tx))

    # --- curriculum ---------------------------------------------------------------------------
    def update_levels(
        self,
        env_ids: torch.Tensor,
        move_up: torch.Tensor,
        move_down: torch.Tensor,
        generator: torch.Generator,
    ) -> None:
        """Game-style curriculum for the selection `env_ids` (indices or a mask, canter.core.selection;
        move_up/move_down have one row per selected row): level += move_up - move_down, clamped at 0;
        an env moved past the top row goes to a row drawn uniformly from `generator`. Origins follow.
        A pinned terrain (see `pin`, `pin_grid`) keeps every level."""
        if self.pinned:
            return
        levels = selection.take(self.terrain_levels, env_ids) + move_up.long() - move_down.long()
        # drawn for every env so the generator advances the same way whoever was promoted
        random_rows = torch.randint(
            0, self.num_rows, (selection.rows(env_ids),), generator=generator, device=self.device, dtype=torch.long
        )
        levels = torch.where(levels >= self.num_rows, random_rows, levels.clamp_min(0))
        selection.put(self.terrain_levels, env_ids, levels)
        origins = self.origins_grid[levels, selection.take(self.terrain_types, env_ids)]
        selection.put(self.env_origins, env_ids, origins)

    def pin(self, level: int, sub_terrain: str | None = None) -> None:
        """Put every env on row `level` (and, given `sub_terrain`, on the blocks of that type in this
        row, envs spread over them in turn) and keep them there: the curriculum no longer moves them.
        For watching or scoring a policy at one difficulty (`canter play/eval --terrain-level`).
        ConfigError (one line) for a plane, a row out of range or a type this row lacks."""
        if self.map is None:
            raise ConfigError("--terrain-level: this task has no generated terrain (a flat plane)")
        if not 0 <= level < self.num_rows:
            raise ConfigError(f"--terrain-level: {level} is out of range (this terrain has levels 0..{self.num_rows - 1})")
        columns = torch.arange(self.num_cols, device=self.device)
        if sub_terrain is not None:
            names = self.map.names
            if sub_terrain not in names:
                raise ConfigError(f"--sub-terrain: {sub_terrain!r} is not in this terrain (it has: {', '.join(names)})")
            row_types = torch.as_tensor(self.map.types[level], device=self.device)
            columns = columns[row_types == names.index(sub_terrain)]
            if columns.numel() == 0:
                raise ConfigError(f"--sub-terrain: level {level} has no {sub_terrain!r} block")
            self.terrain_types.copy_(columns[torch.arange(self.num_envs, device=self.device) % columns.numel()])
        self.terrain_levels.fill_(level)
        self.env_origins.copy_(self.origins_grid[self.terrain_levels, self.terrain_types])
        self.pinned = True

    def pin_grid(self) -> None:
        """Spread the envs over every block of the grid, in turn (env i on column i mod num_cols, row
        (i div num_cols) mod num_rows), and keep them there: one evaluation scores every difficulty
        of every sub-terrain type (`canter eval --terrain-grid`). ConfigError for a plane."""
        if self.map is None:
            raise ConfigError("--terrain-grid: this task has no generated terrain (a flat plane)")
        env = torch.arange(self.num_envs, device=self.device)
        self.terrain_types.copy_(env % self.num_cols)
        self.terrain_levels.copy_((env // self.num_cols) % self.num_rows)
        self.env_origins.copy_(self.origins_grid[self.terrain_levels, self.terrain_types])
        self.pinned = True

    def type_names(self) -> list[str]:
        """The sub-terrain type name of each env's block (a plane: "plane" for every env)."""
        if self.map is None:
            return ["plane"] * self.num_envs
        types = self.map.types[self.terrain_levels.cpu().numpy(), self.terrain_types.cpu().numpy()]
        return [self.map.names[int(t)] for t in types]

    # --- checkpointing ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, torch.Tensor]:
        return {
            "terrain_levels": self.terrain_levels.clone(),
            "terrain_types": self.terrain_types.clone(),
            "env_origins": self.env_origins.clone(),
        }

    def load_state_dict(self, state: dict[str, torch.Tensor]) -> None:
        self.terrain_levels.copy_(state["terrain_levels"])
        self.terrain_types.copy_(state["terrain_types"])
        self.env_origins.copy_(state["env_origins"])


def _cell_corners(heights: torch.Tensor) -> torch.Tensor:
    """(4, (nx - 1) * (ny - 1)) corners of every grid cell, cell (i, j) at column i * (ny - 1) + j:
    rows h[i, j], h[i, j+1], h[i+1, j], h[i+1, j+1]."""
    corners = (heights[:-1, :-1], heights[:-1, 1:], heights[1:, :-1], heights[1:, 1:])
    return torch.stack([c.reshape(-1) for c in corners])


def _crop(
    heights: np.ndarray, origin: tuple[float, float], h: float, window: tuple[float, float, float]
) -> tuple[np.ndarray, list[float]]:
    """The cells of the (nx, ny) height grid (point (0, 0) at world `origin`, spacing h) that cover
    the square of half-width window[2] around world window[:2], clipped to the grid (at least one
    cell each way), and the world (x, y) of the crop's centre."""
    x, y, half = window
    if not half > 0:
        raise ConfigError(f"terrain window: the half-width must be > 0, got {half}")
    bounds = []
    for c, o, n in ((x, origin[0], heights.shape[0]), (y, origin[1], heights.shape[1])):
        lo = int(np.clip(np.floor((c - half - o) / h), 0, n - 2))
        hi = int(np.clip(np.ceil((c + half - o) / h), lo + 1, n - 1))
        bounds.append((lo, hi))
    (i0, i1), (j0, j1) = bounds
    center = [origin[0] + (i0 + i1) / 2.0 * h, origin[1] + (j0 + j1) / 2.0 * h]
    return heights[i0:i1 + 1, j0:j1 + 1], center
