"""PPO for the dog's velocity tracking (rsl_rl-style settings, networks sized for a CPU), and the
distillation of a trained dog-rough teacher into a blind student."""

from __future__ import annotations

from canter.rl.config import AlgoCfg, DaggerCfg
from canter.rl.runner import RunnerCfg
from canter.tasks.legged import legged_agent_cfg


def dog_agent_cfg() -> RunnerCfg:
    return legged_agent_cfg()


def dog_flat_agent_cfg() -> RunnerCfg:
    """dog-flat's PPO: rollouts of 12 steps instead of 24, so the policy is updated twice as often per
    sample (5 epochs x 4 minibatches of 3,072), and the adaptive schedule's desired KL at 0.02 instead of
    0.01, so its learning rate is held higher. Measured on a 2-core CPU with 1,024 envs (BENCHMARKS.md §15):
    12 steps took the worse tracking error at 2.5 M steps from 0.337 to 0.157-0.159 m/s (eight runs, two
    days; seven crossed 0.15 within 5 minutes, four by 4) at 7 % fewer total steps per second; desired KL
    0.02 took it on to 0.088, with all four seeds across 0.15 after 1.35-1.62 M steps (1.9-2.4 minutes;
    2.4-2.9 on an AVX2-only Zen 2, whose float32 update collects 21 % fewer steps per minute; 1.8-2.9 on an
    Intel Xeon without bfloat16).
    Rollouts of 8 steps learnt faster in three seeds of four and not at all in the fourth; desired KL 0.04
    crossed 0.04-0.22 minutes sooner in two seeds and tied at 2.5 M steps, within the seeds' spread; 8 steps at
    0.02 learnt in both seeds tried (seed 0 had stood and turned at 0.01) but stood at 0.081 after 5 minutes, against 0.060."""
    cfg = legged_agent_cfg()
    cfg.algo.num_steps_per_env = 12
    cfg.algo.desired_kl = 0.02
    return cfg


def dog_rough_agent_cfg() -> RunnerCfg:
    """dog-rough's PPO: rsl_rl's 24-step rollouts, with the adaptive schedule's desired KL at 0.02 as on flat
    ground. Measured on a 2-core CPU with 1,024 envs, warm-started from 5 minutes of dog-flat (BENCHMARKS.md §6):
    the early demotion on the terrain stayed at mean level 1.13 or above, where it had fallen to 0.51 at 0.01;
    the level was 2.03 at 13.2 M terrain steps, where 0.01 reached 1.22 with 24-step rollouts and 1.13 with 12;
    the 55-minute hour ended at 3.05 with 13.7 % of envs on the top third (one seed). Twelve-step rollouts were
    no better than 24 at equal steps on the terrain, so the rollout stays rsl_rl's. The entropy bonus is a quarter of
    rsl_rl's 0.01: at 0.01 the policy's action noise doubled on the terrain (std 0.27 -> 0.63 in 300 iterations, 0.69
    at the end of the hour) and every hour stalled near level 3; at 0.0025 it held at 0.27-0.31, the level was 3.42
    after 22 minutes where 0.01 stood at 1.83 from the same warm start, and the hour ended at 3.87 with 19.3 % on the
    top third (4.15 and 23.0 % after 120 minutes; one seed, BENCHMARKS.md §6). Since stepping stones are measured on the
    collision surface (their rows 2-3 had been drawn with 0.2 m trenches), the same hour ends at 4.18 with 20.4 % on the top
    third, and 120 minutes at 4.34 with 22.1 %: all of the gain is the stones' column, the skills missing are the same. A
    second seed of that hour ended at 4.09 with 20.0 %. legged_gym's 512-256-128 networks (their own 5-minute warm
    start, bf16 update) ran a fifth slower and ended the hour at 3.77 with 17.4 %, so the networks stay 256-128-64.
    desired_kl 0.04 held the learning rate 2.2 times higher (median 1.3e-3 against 5.8e-4) and ended the hour at 3.81
    with 19.3 %, behind both seeds from 6 M steps on, so the target stays 0.02. With friction and pushes only (the
    default since), three epochs instead of five ran 6-14 % more iterations per minute and trailed both seeds by steps
    and by time (3.97 against 4.16 at 32 terrain minutes), and symmetry augmentation learnt no more per step and ran
    28-32 % fewer iterations per minute (3.91 against 4.54 after 55 minutes), and 8 minibatches instead of 4 stood
    between the two seeds by steps (3.98 at 35 minutes against 4.12), so five epochs of four minibatches and no symmetry
    stay (one seed each, BENCHMARKS.md §6). No entropy bonus at all let the action noise fall from 0.27 to 0.15 in 40
    terrain minutes and learnt no more per step (4.24 at 15 M steps against 4.21), so the bonus stays at 0.0025."""
    cfg = legged_agent_cfg()
    cfg.algo.desired_kl = 0.02
    cfg.algo.entropy_coef = 0.0025
    return cfg


def dog_rough_blind_agent_cfg() -> RunnerCfg:
    """DAgger from a dog-rough teacher run (`--teacher RUN`, required): β_i = 0.8^i, so the teacher
    drives most steps of the first iterations (the student learns the gait where the teacher walks,
    on its own terrain levels) and the student all but every step after ~20 iterations (0.8^20 ≈ 1 %),
    when the teacher labels the states the student's own mistakes lead to. An MLP over the 0.2-s
    proprioceptive history; each iteration adds 24 x num_envs labelled steps to a dataset of the
    newest 100k, learnt in 2 passes of 8 minibatches (rsl_rl's distillation makes similar passes)."""
    cfg = legged_agent_cfg()
    cfg.policy.actor_obs_groups = ("proprio",)
    cfg.policy.normalize_obs = True  # ten stacked steps of mixed units: normalized as they come
    cfg.algo = AlgoCfg(algo="dagger", num_steps_per_env=24, num_learning_epochs=2, num_mini_batches=8, learning_rate=1e-3,
                       schedule="fixed", max_grad_norm=1.0, dagger=DaggerCfg(beta_initial=1.0, beta_decay=0.8, dataset_size=100_000))
    return cfg
