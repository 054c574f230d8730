"""BENCHMARKS §6: the mean terrain level of commands.sh's terrain hour (the flat policy's Adam state carried into
the grown network, the update in bf16) against ../dog_rough_bf16's (the same warm start and flags, a fresh Adam)
and ../dog_rough_kl02's (one learner thread, float32, a fresh Adam), at equal env steps and equal minutes on the
terrain. Writes level_vs_steps.png (both panels) beside this file. Usage: python compare.py [LEVELS_JSON]"""
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "dog_rough_steps12"))
from compare import compare  # noqa: E402

compare([("fresh Adam, one learner thread, float32 (dog_rough_kl02)", HERE.parent / "dog_rough_kl02" / "terrain_levels.json", 24),
         ("fresh Adam, two threads, bf16 (dog_rough_bf16)", HERE.parent / "dog_rough_bf16" / "terrain_levels.json", 24),
         ("Adam state carried, two threads, bf16", Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "terrain_levels.json", 24)],
        HERE / "level_vs_steps.png", [2.4 * k for k in range(1, 15)], minute_marks=[5.0 * k for k in range(1, 12)])
