"""Real photographs for visual domain randomization and sim-real composition (seed 002).

Sim-real composition pastes the rendered scene over a real photograph: wherever a pixel shows no
geometry (the background) or a geom named as a "surface" (e.g. the table top), the camera image takes
the pixel of a photo crop drawn per env and per episode. Photos come from scikit-image's sample
images, which ship inside its wheel (no download), split into those seen in training and those kept
unseen for evaluation, or from a user's own folder (their lab, their table): PNG/JPEG files.

A `PhotoBank` holds the photos as one uint8 tensor (P, 3, S, S): each photo centre-cropped to a square
and resized to S × S with anti-aliasing (grayscale photos repeated over the three channels).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from canter.core.errors import ConfigError

# scikit-image sample photographs (files inside the installed package)
TRAIN_PHOTOS = ("astronaut", "brick", "camera", "chelsea", "coffee", "coins", "grass", "gravel",
                "immunohistochemistry")
UNSEEN_PHOTOS = ("hubble_deep_field", "retina", "rocket", "moon", "page")
PHOTO_SUFFIXES = (".png", ".jpg", ".jpeg")


def _skimage_photo(name: str) -> np.ndarray:
    import skimage.data

    loader = getattr(skimage.data, name, None)
    if loader is None:
        raise ConfigError(f"photos: scikit-image has no sample image {name!r}")
    return np.asarray(loader())


def _square(image: np.ndarray, size: int) -> np.ndarray:
    """Centre crop to a square, resize to size × size, RGB uint8 (H, W, 3)."""
    from skimage.transform import resize

    if image.ndim == 2:
        image = np.repeat(image[..., None], 3, axis=-1)
    image = image[..., :3]
    height, width = image.shape[:2]
    side = min(height, width)
    top, left = (height - side) // 2, (width - side) // 2
    crop = image[top : top + side, left : left + side]
    resized = np.asarray(resize(crop, (size, size), anti_aliasing=True, preserve_range=True), dtype=np.float64)
    return np.clip(np.rint(resized), 0, 255).astype(np.uint8)


def photo_files(directory: str | Path) -> list[Path]:
    """The PNG/JPEG files of a folder, sorted; ConfigError if it has none."""
    folder = Path(directory)
    if not folder.is_dir():
        raise ConfigError(f"photos: no folder at {folder}")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in PHOTO_SUFFIXES)
    if not files:
        raise ConfigError(f"photos: {folder} holds no PNG or JPEG file")
    return files


class PhotoBank:
    """P photos as one (P, 3, size, size) uint8 tensor on `device`.

    source: "train" (scikit-image photos seen in training), "unseen" (scikit-image photos kept out of
    training) or a folder of PNG/JPEG files.
    """

    def __init__(self, source: str, size: int, device: torch.device | str = "cpu"):
        self.source = source
        if source == "train":
            images, self.names = [_skimage_photo(n) for n in TRAIN_PHOTOS], list(TRAIN_PHOTOS)
        elif source == "unseen":
            images, self.names = [_skimage_photo(n) for n in UNSEEN_PHOTOS], list(UNSEEN_PHOTOS)
        else:
            import imageio.v3 as iio

            files = photo_files(source)
            images, self.names = [], [f.name for f in files]
            for file in files:
                try:
                    images.append(np.asarray(iio.imread(file)))
                except Exception as err:  # a broken file is named, not a traceback
                    raise ConfigError(f"photos: cannot read {file} ({type(err).__name__})") from err
        squares = np.stack([_square(image, size) for image in images])  # (P, S, S, 3)
        self.photos = torch.from_numpy(squares).permute(0, 3, 1, 2).contiguous().to(device)
        self.size = size

    def __len__(self) -> int:
        return self.photos.shape[0]


def crops(bank: torch.Tensor, index: torch.Tensor, offset: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """Per-env crops of the photo bank: bank (P, 3, S, S), index (N,) photo per env, offset (N, 2) top-left
    (row, column) per env with 0 ≤ offset ≤ S − (height, width) -> (N, 3, height, width), same dtype."""
    rows = offset[:, 0, None] + torch.arange(height, device=bank.device)  # (N, H)
    cols = offset[:, 1, None] + torch.arange(width, device=bank.device)  # (N, W)
    # advanced indexing: (N, 1, 1) photo, (N, H, 1) row, (N, 1, W) column -> (N, H, W, 3)
    picked = bank.permute(0, 2, 3, 1)[index[:, None, None], rows[:, :, None], cols[:, None, :]]
    return picked.permute(0, 3, 1, 2)


def compose(rgb: torch.Tensor, mask: torch.Tensor, photo: torch.Tensor) -> torch.Tensor:
    """Sim-real composition: rgb (N, 3, H, W) with the photo's pixels where mask (N, 1, H, W) is True."""
    return torch.where(mask, photo, rgb)


def surface_mask(segmentation: torch.Tensor, geom_ids: Sequence[int]) -> torch.Tensor:
    """(N, 1, H, W) bool: pixels showing no geom (-1) or one of `geom_ids` (the photo surfaces)."""
    mask = segmentation < 0
    for geom in geom_ids:
        mask |= segmentation == geom
    return mask
