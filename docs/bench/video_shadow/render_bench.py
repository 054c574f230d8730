"""Render time per frame (default 640x480) on this machine's GL by shadow map size, median of 3 x 15 frames.

Run from the repository root: MUJOCO_GL=egl python docs/bench/video_shadow/render_bench.py [WIDTH HEIGHT]
"""

from __future__ import annotations

import statistics
import sys
import time

import mujoco
import OpenGL.GL as gl

MODELS = ("dog", "humanoid", "hand_cube", "arm_grasp", "cartpole")
SHADOW_SIZES = (4096, 2048, 1024)


def frame_ms(model: mujoco.MjModel, data: mujoco.MjData, width: int, height: int) -> float:
    renderer = mujoco.Renderer(model, height, width)
    camera = 0 if model.ncam else -1
    renderer.update_scene(data, camera=camera)
    renderer.render()
    times = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(15):
            renderer.update_scene(data, camera=camera)
            renderer.render()
        times.append((time.perf_counter() - start) / 15 * 1000)
    renderer.close()
    return statistics.median(times)


def main() -> None:
    width = int(sys.argv[1]) if len(sys.argv) > 1 else 640
    height = int(sys.argv[2]) if len(sys.argv) > 2 else 480
    rows = []
    for name in MODELS:
        model = mujoco.MjModel.from_xml_path(f"src/canter/assets/{name}.xml")
        model.vis.global_.offwidth = max(model.vis.global_.offwidth, width)
        model.vis.global_.offheight = max(model.vis.global_.offheight, height)
        data = mujoco.MjData(model)
        if model.nkey:
            mujoco.mj_resetDataKeyframe(model, data, 0)
        mujoco.mj_forward(model, data)
        row = [name]
        for size in SHADOW_SIZES:
            model.vis.quality.shadowsize = size
            row.append(f"{frame_ms(model, data, width, height):.1f}")
        rows.append(row)
    probe = mujoco.Renderer(model, 8, 8)
    print("GL:", gl.glGetString(gl.GL_RENDERER).decode(), f"{width}x{height}")
    probe.close()
    print("| model | " + " | ".join(f"{size} ms" for size in SHADOW_SIZES) + " |")
    print("|---|" + "---:|" * len(SHADOW_SIZES))
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
