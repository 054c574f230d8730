"""BENCHMARKS §6: the mean terrain level against env steps on the terrain for the desired_kl 0.02 terrain hour
of commands.sh, against the task's 0.01 with 24 steps (../dog_rough_entry) and with 12 (../dog_rough_steps12).
Prints the level every 1.2 M steps and writes level_vs_steps.png beside this file.
Usage: python compare.py [LEVELS_JSON_OF_THE_KL_0.02_RUN]"""
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "dog_rough_steps12"))
from compare import compare  # noqa: E402

compare([("kl 0.01, 24 steps (dog_rough_entry)", HERE.parent / "dog_rough_entry" / "terrain_levels.json", 24),
         ("kl 0.01, 12 steps (dog_rough_steps12)", HERE.parent / "dog_rough_steps12" / "terrain_levels.json", 12),
         ("kl 0.02, 24 steps", Path(sys.argv[1]) if len(sys.argv) > 1 else HERE / "terrain_levels.json", 24)],
        HERE / "level_vs_steps.png", [1.2 * k for k in range(1, 16)])
