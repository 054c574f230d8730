"""BENCHMARKS §6: the mean terrain level of commands.sh's terrain hour (the learner on both cores, its update in
bfloat16) against ../dog_rough_kl02's (one core, float32; otherwise the same recipe and machine type), at equal
env steps and at equal minutes on the terrain. Writes level_vs_steps.png (both panels) beside this file.
Usage: python compare.py [LEVELS_JSON_OF_THE_BF16_RUN]"""
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "dog_rough_steps12"))
from compare import compare  # noqa: E402

compare([("one learner thread, float32 (dog_rough_kl02)", HERE.parent / "dog_rough_kl02" / "terrain_levels.json", 24),
         ("two learner threads, bf16", Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "terrain_levels.json", 24)],
        HERE / "level_vs_steps.png", [2.4 * k for k in range(1, 15)], minute_marks=[5.0 * k for k in range(1, 12)])
