"""`canter bench ga3c TASK`: GA3C then synchronous A2C for the same wall time, the summary of both,
ga3c.json and ga3c.png, and progress on stderr whether or not stdout is the JSON."""

from __future__ import annotations

import json
import math

from canter.cli.main import main

FAST = ["--num-envs", "16", "--agent.algo.ga3c.adjust-every-s", "0.5", "--agent.algo.num-steps-per-env", "8"]


def test_bench_ga3c_writes_both_sides_and_shows_progress_with_json(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["bench", "ga3c", "cartpole", "--minutes", "0.04", "--num-agents", "2", "--json", "--out", str(out),
                 *FAST]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)  # stdout is the JSON alone
    assert result == json.loads((out / "ga3c.json").read_text())
    assert (out / "ga3c.png").stat().st_size > 0
    summary = result["summary"]
    for side in ("ga3c", "a2c"):
        assert summary[f"{side}_pps"] > 0 and summary[f"{side}_tps"] > 0, side
    assert result["ga3c"]["num_agents"] == 2 and result["ga3c"]["num_envs"] == 16
    assert all(math.isfinite(p["wall_time_s"]) for p in result["ga3c"]["periods"])
    # progress lines of both sides went to stderr
    assert "ga3c " in captured.err and "a2c " in captured.err
