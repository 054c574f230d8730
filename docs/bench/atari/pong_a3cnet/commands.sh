#!/bin/bash
# §16, Pong's sixth run: the A3C network of Mnih et al. 2016 (16@8x8/4, 32@4x4/2, 256 features) in place
# of the Nature CNN, otherwise the Atari defaults. 2026-12-02, a 2-core Zen 5 EPYC, code of bc3fec0.
# First the throughput, one command after the other (throughput_{a,b1,b2,b3,b4}.json), then the 90-minute run.
D=${1:?output directory}
mkdir -p "$D"
A3C="--agent.policy.cnn.channels 16 32 --agent.policy.cnn.kernel-sizes 8 4 --agent.policy.cnn.strides 4 2 --agent.policy.cnn.output-dim 256"
B="canter bench train atari-pong --max-time 30 --num-envs 64 --json"
$B > "$D/throughput_a.json"                                        # defaults (Nature CNN, bf16)
$B $A3C > "$D/throughput_b1.json"                                  # A3C net, bf16
$B $A3C --agent.algo.autocast off > "$D/throughput_b2.json"        # A3C net, float32
$B > "$D/throughput_b3.json"                                       # defaults again
$B $A3C > "$D/throughput_b4.json"                                  # A3C net, bf16 again
canter bench time-to-target atari-pong --metric mean_return --target 18 --minutes 90 --eval-every 900 \
  --episodes 16 --eval-envs 16 --out "$D/ttt" --save-dir "$D/run" $A3C
