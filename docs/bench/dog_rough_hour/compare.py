"""BENCHMARKS §6: the mean terrain level of commands.sh's two terrain hours at entropy 0.0025 (bf16, and float32
with the learner on both cores) against ../dog_rough_adam's hour at rsl_rl's 0.01 (bf16), all three from the same
5-minute flat run with its Adam state carried, at equal env steps and equal minutes on the terrain; with RUN
directories also the action noise. Writes level_vs_steps.png beside this file.
Usage: python compare.py [BF16_RUN FP32_RUN ADAM_RUN] (the rough run directories, for the noise)"""
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "dog_rough_steps12"))
from compare import compare, print_noise  # noqa: E402

compare([("entropy 0.01, bf16 (dog_rough_adam)", HERE.parent / "dog_rough_adam" / "terrain_levels.json", 24),
         ("entropy 0.0025, bf16", HERE / "bf16" / "terrain_levels.json", 24),
         ("entropy 0.0025, float32", HERE / "fp32" / "terrain_levels.json", 24)],
        HERE / "level_vs_steps.png", [3.0 * k for k in range(1, 12)], minute_marks=[5.0 * k for k in range(1, 12)])

if len(sys.argv) > 3:
    print_noise([("entropy 0.01, bf16", sys.argv[3]), ("entropy 0.0025, bf16", sys.argv[1]),
                 ("entropy 0.0025, float32", sys.argv[2])], [0, 200, 400, 600, 800, 1000, 1200])
