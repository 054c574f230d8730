"""BENCHMARKS §6: the mean terrain level and the policy's action noise of commands.sh's 22-minute terrain run
(entropy bonus 0.0025) against the first 22 minutes of ../dog_rough_adam's hour (0.01), from the same flat run,
at equal env steps and equal minutes. The noise (the mean standard deviation of the Gaussian policy) is read
from the runs' TensorBoard entropy. Writes level_vs_steps.png beside this file.
Usage: python compare.py ENTROPY_RUN ADAM_RUN (the rough run directories, for the noise)"""
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "dog_rough_steps12"))
from compare import compare, print_noise  # noqa: E402

compare([("entropy 0.01 (dog_rough_adam)", HERE.parent / "dog_rough_adam" / "terrain_levels.json", 24),
         ("entropy 0.0025", HERE / "terrain_levels.json", 24)],
        HERE / "level_vs_steps.png", [1.2 * k for k in range(1, 11)], minute_marks=[2.0 * k for k in range(1, 12)])

if len(sys.argv) > 2:
    print_noise([("entropy 0.01", sys.argv[2]), ("entropy 0.0025", sys.argv[1])], [0, 100, 200, 300, 400, 500])
