"""Batched sensors beyond MuJoCo's own: cameras on both backends (cpu ray casting, MuJoCo Warp)."""

from canter.sensors.camera import Camera, make_camera
from canter.sensors.camera_cfg import CameraCfg

__all__ = ["Camera", "CameraCfg", "make_camera"]
