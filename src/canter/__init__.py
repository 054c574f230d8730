"""Canter: massively parallel, tensor-resident reinforcement learning for robots (MuJoCo + PyTorch)."""

__version__ = "0.1.0"
