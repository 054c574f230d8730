"""On-policy learning algorithms. The algorithm layer sees only canter.envs.vec_env.

config        PolicyCfg, AlgoCfg (+ ppo_cfg(), a2c_cfg())
normalizer    EmpiricalNormalizer (running mean/variance per observation group)
distributions diagonal-Gaussian sample / log-prob / entropy / KL as pure functions
modules       build_mlp, ActorCritic (feed-forward)
recurrent     Memory (GRU/LSTM with per-env resets), ActorCriticRecurrent
storage       RolloutStorage, MiniBatch and the minibatch generators
gae           time-out bootstrap, GAE, advantage normalization (pure functions)
losses        clipped surrogate, value loss, policy-gradient loss, adaptive learning rate
algorithm     OnPolicyAlgorithm: act / process_env_step / compute_returns / checkpoints
ppo, a2c      PPO and A2C (their update())
factory       make_policy, make_algorithm
distributed   torch.distributed data parallelism: gradient all-reduce, normalizer merge, KL mean, collectives
"""
