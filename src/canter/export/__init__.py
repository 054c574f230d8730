"""Export trained policies (ONNX, TorchScript, int8) with their metadata, and run them on a robot.

This package's __init__ imports nothing, so that `canter.export.runtime` stays importable without torch.
"""
