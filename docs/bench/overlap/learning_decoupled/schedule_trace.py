"""The adaptive schedule's KL and learning rate at every minibatch of a short dog-flat run (BENCHMARKS §14).

Usage: python schedule_trace.py TAG ITERATIONS [canter train flags...]
  TAG "behaviour..." switches the decoupled objective off (the KL and the clip measured from the
  lagged policy that collected the rollout, as before 455e248); any other TAG runs the code as it is.
  python schedule_trace.py serial 10
  python schedule_trace.py decoupled 10 --agent.overlap
  python schedule_trace.py behaviour 10 --agent.overlap
Writes TAG.json (one [kl, learning rate] pair per minibatch) and prints one line per update.
"""

import json
import sys

from canter.cli.main import entrypoint
from canter.rl.algorithm import OnPolicyAlgorithm

records: list[tuple[float, float]] = []
adapt = OnPolicyAlgorithm._adapt_learning_rate


def recording(self, batch, mean, std):
    kl = adapt(self, batch, mean, std)
    records.append((float(kl), float(self.learning_rate)))
    return kl


OnPolicyAlgorithm._adapt_learning_rate = recording
tag, iterations, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
if tag.startswith("behaviour"):
    OnPolicyAlgorithm.decouple_from_behaviour = lambda self: None
try:
    entrypoint(["train", "dog-flat", "--max-iterations", iterations, "--quiet", "--run-dir", f"{tag}-run", *flags])
except SystemExit:
    pass
with open(f"{tag}.json", "w") as file:
    json.dump(records, file)
per_update = 20  # 5 epochs x 4 minibatches, PPO's defaults
for start in range(0, len(records), per_update):
    chunk = records[start:start + per_update]
    print(f"update {start // per_update}: kl first {chunk[0][0]:.4f} max {max(k for k, _ in chunk):.4f} "
          f"last {chunk[-1][0]:.4f}  lr first {chunk[0][1]:.2e} last {chunk[-1][1]:.2e}")
