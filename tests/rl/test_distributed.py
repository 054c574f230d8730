"""Two-process gloo training on the CPU: identical learned state on every rank, synchronized
normalizers, distinct seeds, resume with the same world size, and ranks that die or raise.

Each run is a real `canter train --nproc 2` (torchrun's launcher) or two hand-started ranks, on
cartpole with 16 envs per rank; every subprocess has a hard timeout so a hang fails the test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

from canter.cli.launch import free_port
from canter.cli.train_cmd import train_main
from canter.core.errors import CanterError
from canter.rl.checkpoint import load_checkpoint
from canter.rl.distributed import state_digest

pytestmark = pytest.mark.skipif(not torch.distributed.is_gloo_available(), reason="needs torch.distributed with gloo")

ENTRY = "from canter.cli.main import entrypoint; entrypoint()"
SMALL = ["--num-envs", "32", "--quiet", "--agent.save-interval", "1", "--agent.policy.normalize-obs"]
STEPS_PER_ITERATION = 16  # cartpole's num_steps_per_env
TIMEOUT_S = 600  # generous: a shared, loaded machine can slow start-up tenfold


def _env(extra_path: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    paths = [str(extra_path)] if extra_path else []
    env["PYTHONPATH"] = os.pathsep.join([*paths, src, env.get("PYTHONPATH", "")])
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        env.pop(name, None)
    return env


def _canter(*args: str, extra_path: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, text=True,
                          timeout=TIMEOUT_S, env=_env(extra_path))


def _train_2(run_dir: Path, *extra: str) -> dict:
    result = _canter("train", "cartpole", "--nproc", "2", "--run-dir", str(run_dir), *SMALL, *extra)
    assert result.returncode == 0, result.stderr[-2000:]
    return load_checkpoint(run_dir / "checkpoint.pt")


def _learned_digest(algorithm: dict) -> str:
    """The digest OnPolicyRunner.digest computes, from a checkpoint's algorithm state."""
    tensors = list(algorithm["policy"].items())
    optimizer_state = algorithm["optimizer"]["state"]
    for index in sorted(optimizer_state):
        for key, value in sorted(optimizer_state[index].items()):
            if isinstance(value, torch.Tensor):
                tensors.append((f"optimizer/{index}/{key}", value))
    tensors.append(("learning_rate", algorithm["learning_rate"]))
    return state_digest(tensors)


def _tensors(tree, prefix=""):
    if isinstance(tree, torch.Tensor):
        yield prefix, tree
    elif isinstance(tree, dict):
        for key, value in tree.items():
            yield from _tensors(value, f"{prefix}/{key}")
    elif isinstance(tree, (list, tuple)):
        for index, value in enumerate(tree):
            yield from _tensors(value, f"{prefix}/{index}")


def _same(a, b) -> bool:
    ta, tb = dict(_tensors(a)), dict(_tensors(b))
    return ta.keys() == tb.keys() and all(torch.equal(ta[k], tb[k]) for k in ta)


@pytest.fixture(scope="module")
def straight(tmp_path_factory) -> tuple[Path, dict]:
    """Three iterations on two ranks; every iteration's checkpoint compared the ranks' digests."""
    run_dir = tmp_path_factory.mktemp("dist") / "straight"
    return run_dir, _train_2(run_dir, "--max-iterations", "3")


def test_ranks_hold_bitwise_identical_learned_state(straight):
    _, checkpoint = straight
    assert checkpoint["world_size"] == 2 and len(checkpoint["ranks"]) == 2
    digests = [part["digest"] for part in checkpoint["ranks"]]
    assert digests[0] == digests[1] == _learned_digest(checkpoint["algorithm"])
    # the digest is of the state: one flipped bit changes it
    altered = {**checkpoint["algorithm"], "learning_rate": checkpoint["algorithm"]["learning_rate"].clone()}
    altered["learning_rate"] = torch.nextafter(altered["learning_rate"], torch.tensor(1.0))
    assert _learned_digest(altered) != digests[0]


def test_normalizer_statistics_cover_every_ranks_samples(straight):
    _, checkpoint = straight
    policy = checkpoint["algorithm"]["policy"]
    counts = {key: int(value) for key, value in policy.items() if key.endswith(".count")}
    assert counts, "the policy normalizes its observations (--agent.policy.normalize-obs)"
    # both ranks' 16 envs, at each of 16 steps of 3 iterations: 32 * 16 * 3 samples
    assert set(counts.values()) == {32 * STEPS_PER_ITERATION * 3}


def test_ranks_have_distinct_seeds_and_envs(straight):
    _, checkpoint = straight
    first, second = checkpoint["ranks"]
    assert first["num_envs"] == second["num_envs"] == 16
    assert not torch.equal(first["generator"], second["generator"])
    assert not torch.equal(first["env"]["generator"], second["env"]["generator"])
    assert not torch.equal(first["env"]["sim"]["state"], second["env"]["sim"]["state"])


def test_resume_with_the_same_world_size_is_bitwise_identical(straight, tmp_path):
    _, reference = straight
    split = tmp_path / "split"
    _train_2(split, "--max-iterations", "2")
    result = _canter("train", "--resume", str(split), "--nproc", "2", "--max-iterations", "3")
    assert result.returncode == 0, result.stderr[-2000:]
    resumed = load_checkpoint(split / "checkpoint.pt")
    assert resumed["iteration"] == reference["iteration"] == 3
    assert _same(resumed["algorithm"], reference["algorithm"])
    for part, reference_part in zip(resumed["ranks"], reference["ranks"], strict=True):
        assert _same(part["env"], reference_part["env"]) and torch.equal(part["generator"], reference_part["generator"])


def test_resume_with_another_world_size_names_the_right_one(straight):
    run_dir, _ = straight
    with pytest.raises(CanterError, match=r"written by 2 process\(es\).*--nproc 2"):
        train_main(["cartpole", "--resume", str(run_dir), "--max-iterations", "4"])


def _start_ranks(tmp_path: Path, *flags: str) -> tuple[list[subprocess.Popen], list[Path]]:
    """Two ranks of `canter.train cartpole` started by hand into tmp_path/run (no torchrun agent),
    training toward 100000 iterations; their stderr goes to tmp_path/rank<r>.err."""
    env = _env()
    env.update({"WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port())})
    argv = [sys.executable, "-m", "canter.train", "cartpole", "--run-dir", str(tmp_path / "run"), *flags,
            "--max-iterations", "100000", "--dist-timeout", "60"]
    logs = [tmp_path / f"rank{r}.err" for r in range(2)]
    ranks = [subprocess.Popen(argv, env={**env, "RANK": str(r), "LOCAL_RANK": str(r)}, stdout=subprocess.DEVNULL,
                              stderr=logs[r].open("w")) for r in range(2)]
    return ranks, logs


def test_killed_rank_stops_the_other_with_a_clear_error(tmp_path):
    """Two ranks started by hand (no torchrun agent to stop the survivor): kill rank 1 after the
    first checkpoint; rank 0 must notice on its own, say so, and exit with code 3."""
    run_dir = tmp_path / "run"
    ranks, logs = _start_ranks(tmp_path, *SMALL)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not (run_dir / "checkpoint.pt").exists():
            assert time.monotonic() < deadline and ranks[0].poll() is None, logs[0].read_text()[-2000:]
            time.sleep(0.2)
        ranks[1].send_signal(signal.SIGKILL)
        ranks[0].wait(timeout=180)
    finally:
        for process in ranks:
            if process.poll() is None:
                process.kill()
                process.wait()
    stderr = logs[0].read_text()
    assert ranks[0].returncode == 3, stderr[-2000:]
    assert "canter: error: rank 0: another rank failed or stopped answering" in stderr


FAULT = """
    import os
    if os.environ.get("RANK") == "1":
        from canter.rl import runner

        original = runner.OnPolicyRunner.run_iteration

        def run_iteration(self, *args, **kwargs):
            if self.iteration == 1:
                raise RuntimeError("injected fault")
            return original(self, *args, **kwargs)

        runner.OnPolicyRunner.run_iteration = run_iteration
"""


def test_raising_rank_fails_the_launch_naming_it(tmp_path):
    """Rank 1 raises in its second iteration (a sitecustomize injects the fault into that rank
    only); `canter train --nproc 2` must end with an error naming rank 1."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(textwrap.dedent(FAULT))
    result = _canter("train", "cartpole", "--nproc", "2", "--run-dir", str(tmp_path / "run"), *SMALL,
                     "--max-iterations", "100000", "--dist-timeout", "60", extra_path=hooks)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "rank 1: internal error: RuntimeError: injected fault" in result.stderr
    assert "distributed run failed: rank 1 exited with code 1" in result.stderr


def test_a_stop_signal_to_one_rank_stops_every_rank_at_the_same_iteration_with_a_checkpoint(tmp_path):
    """SIGTERM to rank 1 alone, once learning runs: the ranks agree on the stop through the
    iteration's all-reduce, stop after the same iteration and save one checkpoint with both parts
    (the default save interval would have written none for 50 iterations)."""
    run_dir = tmp_path / "run"
    ranks, logs = _start_ranks(tmp_path, "--num-envs", "32", "--quiet")
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not list(run_dir.glob("events.out.tfevents.*")):  # rank 0's logger exists: learning starts
            assert time.monotonic() < deadline and ranks[0].poll() is None, logs[0].read_text()[-2000:]
            time.sleep(0.2)
        time.sleep(1.0)
        ranks[1].send_signal(signal.SIGTERM)
        for process in ranks:
            process.wait(timeout=TIMEOUT_S)
    finally:
        for process in ranks:
            if process.poll() is None:
                process.kill()
                process.wait()
    for log in logs:
        assert "error" not in log.read_text(), log.read_text()[-2000:]
    saved = load_checkpoint(run_dir / "checkpoint.pt")
    assert 1 <= saved["iteration"] < 100000 and len(saved["ranks"]) == 2
    assert len(saved["history"]) == saved["iteration"]
