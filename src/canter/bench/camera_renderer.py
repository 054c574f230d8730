"""The classic baseline of `canter bench camera`: one `mujoco.Renderer` (offscreen OpenGL) rendering
the same camera env by env, in a child process.

MuJoCo picks its OpenGL backend (MUJOCO_GL: egl, osmesa) when it is first imported, which in the
benchmark's own process has long happened; so the loop runs here, started by the benchmark with
MUJOCO_GL set:

    python -m canter.bench.camera_renderer MODEL.mjb QPOS.npy CAMERA_ID WIDTH HEIGHT OUTPUTS

It loads the compiled model and the (num_envs, nq) positions, renders one warm-up pass, prints
`ready`, then answers each stdin line `run K` with the images/s of K passes over all envs (one
line; also the images per CPU-second of this process, all its threads), until `quit` or end of input. One pass: for each env, copy its qpos into one MjData,
mj_kinematics, update_scene, and one render per requested output (depth, rgb, segmentation) into
preallocated arrays.
"""

from __future__ import annotations

import sys
import time


def main(argv: list[str]) -> int:
    import mujoco  # imported here, after the parent set MUJOCO_GL
    import numpy as np

    model_path, qpos_path, cam, width, height, outputs = argv
    model = mujoco.MjModel.from_binary_path(model_path)
    qpos = np.load(qpos_path)
    data = mujoco.MjData(model)
    renderer = mujoco.Renderer(model, int(height), int(width))
    camera = int(cam)
    passes = []
    for output in outputs.split(","):
        shape = {"depth": (), "rgb": (3,), "segmentation": (2,)}[output]  # segmentation: (id, type)
        dtype = {"depth": np.float32, "rgb": np.uint8, "segmentation": np.int32}[output]
        passes.append((output, np.empty((int(height), int(width), *shape), dtype=dtype)))

    def one_pass() -> None:
        for env in range(qpos.shape[0]):
            data.qpos[:] = qpos[env]
            mujoco.mj_kinematics(model, data)
            renderer.update_scene(data, camera=camera)
            for output, buffer in passes:
                if output == "depth":
                    renderer.enable_depth_rendering()
                elif output == "segmentation":
                    renderer.enable_segmentation_rendering()
                renderer.render(out=buffer)
                renderer.disable_depth_rendering()
                renderer.disable_segmentation_rendering()

    one_pass()
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        count = int(words[1])
        start, start_cpu = time.perf_counter(), time.process_time()
        for _ in range(count):
            one_pass()
        elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        print(f"{count * qpos.shape[0] / elapsed} {count * qpos.shape[0] / max(cpu, 1e-9)}", flush=True)
    renderer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
