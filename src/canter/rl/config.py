"""Typed configs of the policy network and of the on-policy learning algorithm.

Defaults are the values legged_gym / rsl_rl users know. Each config validates itself at construction
(canter.core.validate) and raises ConfigError naming the offending field. `ppo_cfg()` and
`a2c_cfg()` return fresh configs.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Literal

from canter.core.validate import (
    Validated,
    fail,
    require_at_least,
    require_choice,
    require_in_range,
    require_positive,
)

Activation = Literal["elu", "relu", "tanh"]
NoiseStdType = Literal["scalar", "log"]
RnnType = Literal["none", "gru", "lstm"]
Distribution = Literal["gaussian", "categorical"]
Algorithm = Literal["ppo", "a2c", "dagger", "ga3c"]
BetaSchedule = Literal["exponential", "linear"]
Schedule = Literal["adaptive", "fixed", "linear"]
CompileBackend = Literal["inductor", "aot_eager"]
CompileMode = Literal["default", "reduce-overhead", "max-autotune-no-cudagraphs"]
Autocast = Literal["off", "bf16", "auto"]
Symmetry = Literal["off", "augment", "loss", "both"]


@dataclass(kw_only=True)
class CnnCfg(Validated):
    """The convolutional encoder of each image observation group (see canter.rl.encoders).

    channels, kernel_sizes, strides: one entry per conv layer (no padding); the defaults are the
        Nature DQN encoder (Mnih et al. 2015), which maps 84x84 to 7x7 and 64x64 to 4x4.
    output_dim: width of the linear layer after the flattened conv output (the group's features).
    activation: after every conv layer and after the linear layer.
    shared: one encoder per image group serves actor and critic (True), or each has its own.
    """

    channels: tuple[int, ...] = (32, 64, 64)
    kernel_sizes: tuple[int, ...] = (8, 4, 3)
    strides: tuple[int, ...] = (4, 2, 1)
    output_dim: int = 512
    activation: Activation = "relu"
    shared: bool = True

    config_name = "policy.cnn"

    def validate(self) -> None:
        if len({len(self.channels), len(self.kernel_sizes), len(self.strides)}) != 1 or not self.channels:
            raise fail("channels", "channels, kernel_sizes and strides need one entry per layer (got "
                       f"{len(self.channels)}, {len(self.kernel_sizes)}, {len(self.strides)})")
        for name in ("channels", "kernel_sizes", "strides"):
            values = tuple(getattr(self, name))
            if any(isinstance(v, bool) or not isinstance(v, int) or v < 1 for v in values):
                raise fail(name, f"every entry must be a positive int, got {values}")
            setattr(self, name, values)
        require_at_least(self, "output_dim", 1, integer=True)
        require_choice(self, "activation")


DEFAULT_CRITIC_OBS_GROUPS = ("critic",)  # where an env has no such group, the critic reads the actor's


@dataclass(kw_only=True)
class PolicyCfg(Validated):
    """The actor-critic network.

    actor_hidden_dims, critic_hidden_dims: widths of the hidden layers of each MLP.
    activation: nonlinearity after every hidden layer.
    init_noise_std: initial standard deviation of the Gaussian policy (action units).
    noise_std_type: "scalar" learns std directly; "log" learns log(std) (always positive).
    rnn_type: "none" for a feed-forward policy; "gru" or "lstm" put one recurrent memory in front of
        the actor MLP and another in front of the critic MLP.
    rnn_hidden_dim, rnn_num_layers: size of each recurrent memory (ignored when rnn_type is "none").
    actor_obs_groups: observation groups fed to the actor, concatenated in this order.
    critic_obs_groups: observation groups fed to the critic; left at the default ("critic",) in an env
        without a "critic" group, the critic sees the actor's groups (a symmetric actor-critic).
    normalize_obs: normalize every vector observation group with running mean/variance statistics
        (image groups are never normalized).
    image_obs_groups: the groups that are images (C, H, W) and go through a CNN encoder (cnn); every
        other group must be a vector (dim,).
    distribution: "gaussian" for continuous (Box) actions; "categorical" for an env with discrete
        actions (`env.discrete_actions`, e.g. Atari): softmax over num_actions logits, actions as
        one-hot rows (init_noise_std and noise_std_type are then unused).
    """

    actor_hidden_dims: tuple[int, ...] = (512, 256, 128)
    critic_hidden_dims: tuple[int, ...] = (512, 256, 128)
    activation: Activation = "elu"
    init_noise_std: float = 1.0
    noise_std_type: NoiseStdType = "scalar"
    rnn_type: RnnType = "none"
    rnn_hidden_dim: int = 256
    rnn_num_layers: int = 1
    actor_obs_groups: tuple[str, ...] = ("policy",)
    critic_obs_groups: tuple[str, ...] = DEFAULT_CRITIC_OBS_GROUPS
    normalize_obs: bool = False
    image_obs_groups: tuple[str, ...] = ()
    cnn: CnnCfg = dataclass_field(default_factory=CnnCfg)
    distribution: Distribution = "gaussian"

    config_name = "policy"

    def validate(self) -> None:
        self.image_obs_groups = tuple(self.image_obs_groups)
        for field in ("actor_hidden_dims", "critic_hidden_dims"):
            dims = tuple(getattr(self, field))
            if any(isinstance(d, bool) or not isinstance(d, int) or d < 1 for d in dims):
                raise fail(field, f"every width must be a positive int, got {dims}")
            setattr(self, field, dims)
        require_choice(self, "activation", "noise_std_type", "rnn_type", "distribution")
        require_positive(self, "init_noise_std")
        require_at_least(self, "rnn_hidden_dim", 1, integer=True)
        require_at_least(self, "rnn_num_layers", 1, integer=True)
        for field in ("actor_obs_groups", "critic_obs_groups"):
            groups = tuple(getattr(self, field))
            if not groups or len(set(groups)) != len(groups):
                raise fail(field, f"must be a non-empty tuple of distinct names, got {groups}")
            setattr(self, field, groups)


@dataclass(kw_only=True)
class DaggerCfg(Validated):
    """DAgger (Ross, Gordon & Bagnell 2011) and teacher-student distillation (its β = 0 case).

    At iteration i the env is driven by the expert with probability β_i and by the student otherwise,
    drawn per env and step; the expert labels every visited state, and the student regresses the
    expert's actions over the aggregated dataset (FIFO, the newest dataset_size transitions).

    beta_schedule: "exponential": β_i = max(beta_min, beta_initial · beta_decay^i) (Ross et al. use
        β_i = p^(i−1)); "linear": β_i falls from beta_initial to beta_min over beta_decay_iterations.
    beta_initial, beta_decay, beta_min: see beta_schedule (beta_initial = 0: pure distillation, the
        student drives from the start, as in rsl_rl's teacher-student distillation).
    dataset_size: transitions kept in the aggregated dataset (per process).
    auxiliary_group: "" (off) or an observation group of the env (1-D) that the student must also
        predict from its own inputs: a head (one hidden layer of auxiliary_hidden_dim ELUs) on the
        actor's input features regresses the group, normalized by its running mean and std, with weight
        auxiliary_coef next to the imitation loss. With privileged targets (e.g. the object's position
        relative to the gripper) it teaches a pixel encoder what to look at, as auxiliary tasks do in
        vision-based manipulation; the head is part of the learner, not of the exported policy.
    """

    beta_schedule: BetaSchedule = "exponential"
    beta_initial: float = 1.0
    beta_decay: float = 0.5
    beta_min: float = 0.0
    beta_decay_iterations: int = 50
    dataset_size: int = 100_000
    auxiliary_group: str = ""
    auxiliary_coef: float = 1.0
    auxiliary_hidden_dim: int = 64

    config_name = "algo.dagger"

    def validate(self) -> None:
        require_choice(self, "beta_schedule")
        for name in ("beta_initial", "beta_decay", "beta_min"):
            require_in_range(self, name, 0.0, 1.0)
        if self.beta_min > self.beta_initial:
            raise fail("beta_min", f"must be <= beta_initial ({self.beta_initial}), got {self.beta_min}")
        require_at_least(self, "beta_decay_iterations", 1, integer=True)
        require_at_least(self, "dataset_size", 1, integer=True)
        require_at_least(self, "auxiliary_coef", 0.0)
        require_at_least(self, "auxiliary_hidden_dim", 1, integer=True)

    def beta(self, iteration: int) -> float:
        """β of iteration `iteration` (0-based): the probability that the expert drives a step."""
        if self.beta_schedule == "exponential":
            return max(self.beta_min, self.beta_initial * self.beta_decay**iteration)
        fraction = min(1.0, iteration / self.beta_decay_iterations)
        return self.beta_initial + (self.beta_min - self.beta_initial) * fraction


@dataclass(kw_only=True)
class Ga3cCfg(Validated):
    """GA3C's system settings (canter.rl.ga3c). Its learning settings are AlgoCfg's: num_steps_per_env
    is t_max, gamma, lam (V-trace's λ), learning_rate (fixed: GA3C has no adaptive schedule),
    value_loss_coef, entropy_coef, max_grad_norm, autocast.

    num_agents: env batches, one agent thread each (the env's envs split evenly among them).
    predictors, trainers: threads at the start; max_predictors, max_trainers: the balancer's bounds.
    max_prediction_batch: agent requests a predictor serves at once. min_training_batch: transitions
    per update (0: a quarter of one rollout of all envs, num_envs * num_steps_per_env / 4).
    adjust_every_s: seconds between two balancing decisions (and log lines, and with `canter train`
    checkpoints); dynamic: balance the counts (False: keep them). rho_bar, c_bar: V-trace's clips of
    the importance weights. max_training_queue: agent rollouts the training queue holds before agents
    wait (0: no bound). Unbounded, agents that outrun the trainers fill the queue and the policy lag
    grows without end (Pong on 2 cores: 120 updates after 7 minutes, BENCHMARKS.md §16); bounded at
    4, the agents slow to the trainers' pace, the lag stays at 7 and more updates get done.
    share_cores: the n predictors, and the n trainers, each run torch's ops on cores / n threads
    (at least 1), so that a second thread of a kind splits the cores with the first instead of
    running a second full set of OpenMP threads beside it (False: every thread uses torch's default).
    On Pong on 2 cores this made two trainers 26 % faster than one, where they had been 20 % slower
    (BENCHMARKS.md §16).
    normalize_advantages: each update's V-trace advantages scaled to zero mean and unit variance over
    its training batch, as the synchronous learners do over their rollout. Without it, GA3C's ant
    means passed 25 and its return fell to -800 or lower within 2-4 minutes in 3 of 4 runs, where
    synchronous A2C with the same batch size and a fixed rate learned steadily (BENCHMARKS.md §16).
    """

    num_agents: int = 4
    predictors: int = 1
    trainers: int = 1
    max_predictors: int = 4
    max_trainers: int = 4
    max_prediction_batch: int = 8
    min_training_batch: int = 0
    adjust_every_s: float = 10.0
    dynamic: bool = True
    rho_bar: float = 1.0
    c_bar: float = 1.0
    max_training_queue: int = 4
    share_cores: bool = True
    normalize_advantages: bool = True

    config_name = "algo.ga3c"

    def validate(self) -> None:
        for name in ("num_agents", "predictors", "trainers", "max_prediction_batch"):
            require_at_least(self, name, 1, integer=True)
        require_at_least(self, "min_training_batch", 0, integer=True)
        require_at_least(self, "max_training_queue", 0, integer=True)
        require_at_least(self, "max_predictors", self.predictors, integer=True)
        require_at_least(self, "max_trainers", self.trainers, integer=True)
        require_positive(self, "adjust_every_s", "rho_bar", "c_bar")

    def training_batch(self, num_envs: int, num_steps_per_env: int) -> int:
        """Transitions per update: min_training_batch, or a quarter of a rollout of all envs."""
        return self.min_training_batch or max(1, num_envs * num_steps_per_env // 4)


@dataclass(kw_only=True)
class AlgoCfg(Validated):
    """The on-policy algorithm (PPO or A2C), its rollout length and its optimizer.

    algo: "ppo" (clipped surrogate, several epochs of minibatches), "a2c" (one gradient step on the
        whole rollout; ignores num_learning_epochs, num_mini_batches and the clipping fields) or
        "ga3c" (asynchronous A2C with V-trace, canter.rl.ga3c; `canter train` runs it on its own
        runner, one process on the CPU; settings in `ga3c`).
    num_steps_per_env: env steps per rollout; also the truncation length of backpropagation through
        time for recurrent policies.
    num_learning_epochs, num_mini_batches: PPO passes over the rollout and splits per pass.
    clip_param: PPO ratio clip ε, also the clip of the value change when use_clipped_value_loss.
    value_loss_coef, entropy_coef: weights of the value loss and of the entropy bonus.
    gamma: discount per env step; lam: GAE λ (1.0 gives Monte-Carlo-like n-step returns).
    learning_rate: Adam step size at the start (and throughout when schedule is "fixed").
    schedule: "adaptive" scales the learning rate by 1/1.5 when the policy KL exceeds 2·desired_kl
        and by 1.5 when it falls below desired_kl/2, within [min_learning_rate, max_learning_rate].
        "linear" anneals it from learning_rate to min_learning_rate over the training budget: after
        each iteration it is set for the next update from the fraction of the budget spent, the
        larger of iterations/max_iterations and the run's trained seconds/max_time_s (as in
        Schulman et al.'s Atari runs; `canter bench time-to-target` makes its --minutes the
        budget). Under a time budget the rate therefore follows the machine's speed: two runs of
        one seed anneal differently from the first iteration on and diverge as two seeds would,
        and a resumed run is not bitwise the run never interrupted; with an iteration budget alone
        (max_time_s None) the anneal is the same on every machine. "fixed": learning_rate throughout.
    max_grad_norm: global gradient-norm clip.
    bounds_loss_coef: weight c_b of the penalty c_b·E[Σ_a max(|μ_a| - action_bound, 0)²] on the
        Gaussian policy's action means beyond ±action_bound (canter.rl.losses.bounds_loss; rl_games
        calls it the bound loss). Actions past the actuators' range do nothing more, so a
        policy-gradient step without a trust region can let the means drift out there, where a task
        that penalizes |a|² pays for them. None: the algorithm's own default, 0.01 for "ga3c" and
        "a2c", 0 for "ppo" (its clipped ratio bounds each step) and "dagger"; categorical policies
        have no means and take none (an explicit value > 0 is a configuration error there). On
        `ant` it did not stop GA3C's collapse alone (Ga3cCfg.normalize_advantages did); beside the
        normalization it kept GA3C's means nearer the range (BENCHMARKS.md §16).
    action_bound: the |μ| the penalty starts at (1.1: a margin past the usual ±1 actuator range).
    normalize_advantage_per_mini_batch: normalize advantages per minibatch instead of per rollout.
    compile: torch.compile the learner: the whole minibatch update (forward, losses, backward through
        AOTAutograd, gradient clip; the optimizer step as its own graph), GAE, and the policy's act
        (the first iteration pays the compile time). Off by default: measured on a 2-core CPU it
        does not speed the update (its matmuls already bound it; BENCHMARKS.md §14).
    compile_backend: "inductor" (generated kernels) or "aot_eager" (traced graphs run by eager
        kernels: no codegen, for checking the traced program).
    compile_mode: torch.compile's mode; "reduce-overhead" replays CUDA graphs of the compiled
        functions on a GPU (no effect on the CPU).
    cuda_graph: capture the learner's hot functions as CUDA graphs and replay them (PPO and A2C on a
        CUDA device; canter.rl.cuda_graph): the minibatch step (forward, losses, backward, clip, Adam
        with capturable state), GAE, and the act of feed-forward policies with its normalizer update.
        Each runs eagerly for its first two calls, then one launch per call. Not with `compile`, nor
        under torch.distributed; on the CPU it is a configuration error.
    autocast: "bf16" runs the update's forward pass (PPO, A2C, GA3C, DAgger) under torch.autocast in
        bfloat16: convolutions and the hidden layers' matmuls; the MLPs' output layers, parameters,
        losses and optimizer state stay float32 (canter.rl.modules.MLP). About 2x faster for the
        Nature CNN on a CPU with AVX512-BF16 (BENCHMARKS.md §16). "off": float32 throughout. "auto":
        bf16 on CUDA and on CPUs with bfloat16 in hardware (x86: AVX512-BF16 or AMX), float32 elsewhere:
        oneDNN emulates bfloat16 there, some 13x slower than float32 on AVX2 and 3x on AVX-512 without
        AVX512-BF16 (BENCHMARKS.md §20).
    symmetry: left-right symmetry for tasks that declare their mirror (EnvCfg.symmetry): "augment"
        adds the mirror image of every minibatch sample (mirrored observations and actions, the same
        advantages, returns and old log-probabilities) to the PPO loss; "loss" adds
        symmetry_loss_coef * E|π(mirror(s)) - mirror(π(s))|² on the action means; "both"; "off".
    dagger: the β schedule and dataset of algo "dagger" (which regresses the expert's actions with
        num_learning_epochs passes of num_mini_batches minibatches over the dataset per iteration and
        ignores the PPO-only fields).
    ga3c: the agents, predictors, trainers and V-trace clips of algo "ga3c".
    """

    algo: Algorithm = "ppo"
    num_steps_per_env: int = 24
    num_learning_epochs: int = 5
    num_mini_batches: int = 4
    clip_param: float = 0.2
    value_loss_coef: float = 1.0
    use_clipped_value_loss: bool = True
    entropy_coef: float = 0.01
    gamma: float = 0.99
    lam: float = 0.95
    learning_rate: float = 1e-3
    schedule: Schedule = "adaptive"
    desired_kl: float = 0.01
    min_learning_rate: float = 1e-5
    max_learning_rate: float = 1e-2
    max_grad_norm: float = 1.0
    bounds_loss_coef: float | None = None
    action_bound: float = 1.1
    normalize_advantage_per_mini_batch: bool = False
    compile: bool = False
    compile_backend: CompileBackend = "inductor"
    compile_mode: CompileMode = "default"
    cuda_graph: bool = False
    autocast: Autocast = "off"
    symmetry: Symmetry = "off"
    symmetry_loss_coef: float = 1.0
    dagger: DaggerCfg = dataclass_field(default_factory=DaggerCfg)
    ga3c: Ga3cCfg = dataclass_field(default_factory=Ga3cCfg)

    config_name = "algo"

    def validate(self) -> None:
        require_choice(self, "algo", "schedule", "autocast", "symmetry")
        require_at_least(self, "symmetry_loss_coef", 0.0)
        if self.cuda_graph and self.compile:
            raise fail("cuda_graph", "and compile are two ways to the same end; choose one")
        for field in ("num_steps_per_env", "num_learning_epochs", "num_mini_batches"):
            require_at_least(self, field, 1, integer=True)
        require_positive(self, "clip_param", "learning_rate", "desired_kl", "max_grad_norm", "action_bound")
        if self.bounds_loss_coef is not None:
            require_at_least(self, "bounds_loss_coef", 0.0)
            if self.algo == "dagger" and self.bounds_loss_coef > 0:
                raise fail("bounds_loss_coef", "is for ppo, a2c and ga3c; dagger regresses the expert's actions")
        require_at_least(self, "min_learning_rate", 0.0)
        require_at_least(self, "value_loss_coef", 0.0)
        require_at_least(self, "entropy_coef", 0.0)
        require_in_range(self, "gamma", 0.0, 1.0)
        require_in_range(self, "lam", 0.0, 1.0)
        require_positive(self, "max_learning_rate")
        if self.max_learning_rate < self.min_learning_rate:
            raise fail(
                "max_learning_rate",
                f"must be >= min_learning_rate ({self.min_learning_rate}), got {self.max_learning_rate}",
            )
        if self.schedule == "linear" and self.min_learning_rate > self.learning_rate:
            raise fail(
                "min_learning_rate",
                f"with the linear schedule it is the final rate and must be <= learning_rate ({self.learning_rate}), "
                f"got {self.min_learning_rate}",
            )
        if self.schedule == "adaptive" and not (
            self.min_learning_rate <= self.learning_rate <= self.max_learning_rate
        ):
            raise fail(
                "learning_rate",
                f"with the adaptive schedule it must lie in [{self.min_learning_rate}, {self.max_learning_rate}], "
                f"got {self.learning_rate}",
            )

    def bounds_coef(self, discrete: bool) -> float:
        """The bound loss's weight in force for a policy that is `discrete` (categorical) or not:
        bounds_loss_coef, or the algorithm's default when it is None (see the class doc)."""
        if discrete:
            return 0.0
        if self.bounds_loss_coef is not None:
            return self.bounds_loss_coef
        return DEFAULT_BOUNDS_LOSS_COEF.get(self.algo, 0.0)


# AlgoCfg.bounds_loss_coef when None: the plain policy-gradient learners bound their Gaussian means
DEFAULT_BOUNDS_LOSS_COEF: dict[str, float] = {"a2c": 0.01, "ga3c": 0.01}


def ppo_cfg() -> AlgoCfg:
    """A fresh PPO config with the legged_gym defaults."""
    return AlgoCfg(algo="ppo")


def dagger_cfg() -> AlgoCfg:
    """A fresh DAgger config: β halves every iteration, fixed learning rate."""
    return AlgoCfg(algo="dagger", num_steps_per_env=16, num_learning_epochs=2, num_mini_batches=8,
                   learning_rate=1e-3, schedule="fixed")


def a2c_cfg() -> AlgoCfg:
    """A fresh A2C config: short rollouts, one step per rollout, fixed learning rate."""
    return AlgoCfg(algo="a2c", num_steps_per_env=8, learning_rate=7e-4, schedule="fixed", lam=1.0)
