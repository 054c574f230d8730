from __future__ import annotations

import imageio.v3 as iio
import numpy as np
import pytest
import torch

from canter.core.errors import ConfigError
from canter.sensors.photos import TRAIN_PHOTOS, UNSEEN_PHOTOS, PhotoBank, compose, crops, surface_mask


def test_crops_take_each_envs_photo_at_its_offset():
    # photo p has value 100·p + 10·row + column at every channel: a crop's pixels name their source
    rows, cols = torch.meshgrid(torch.arange(6), torch.arange(6), indexing="ij")
    bank = torch.stack([(100 * p + 10 * rows + cols).expand(3, 6, 6) for p in range(3)]).to(torch.int32)
    index = torch.tensor([2, 0])
    offset = torch.tensor([[1, 3], [4, 0]])
    out = crops(bank, index, offset, height=2, width=3)
    assert out.shape == (2, 3, 2, 3)
    assert out[0, 1].tolist() == [[213, 214, 215], [223, 224, 225]]  # photo 2 from row 1, column 3
    assert out[1, 0].tolist() == [[40, 41, 42], [50, 51, 52]]  # photo 0 from row 4, column 0


def test_compose_and_surface_mask():
    segmentation = torch.tensor([[[[-1, 3], [5, 7]]]])  # background, geom 3, 5, 7
    mask = surface_mask(segmentation, [5])
    assert mask.tolist() == [[[[True, False], [True, False]]]]
    rgb = torch.zeros(1, 3, 2, 2, dtype=torch.uint8)
    photo = torch.full((1, 3, 2, 2), 200, dtype=torch.uint8)
    assert compose(rgb, mask, photo)[0, 0].tolist() == [[200, 0], [200, 0]]


def test_photo_banks_from_scikit_image_and_a_folder(tmp_path):
    assert not set(TRAIN_PHOTOS) & set(UNSEEN_PHOTOS)  # photos for evaluation are never trained on
    train = PhotoBank("train", 32)
    assert train.photos.shape == (len(TRAIN_PHOTOS), 3, 32, 32) and train.photos.dtype == torch.uint8
    assert train.photos.float().std() > 20  # real images, not blank
    gradient = np.tile(np.linspace(0, 255, 40, dtype=np.uint8)[None, :, None], (20, 1, 3))  # 20 x 40
    iio.imwrite(tmp_path / "lab.png", gradient)
    (tmp_path / "notes.txt").write_text("not a photo")
    mine = PhotoBank(str(tmp_path), 10)
    assert mine.names == ["lab.png"] and mine.photos.shape == (1, 3, 10, 10)
    # centre crop of a left-to-right ramp: the square's columns still rise left to right
    assert (mine.photos[0, 0, 5].diff() >= 0).all() and mine.photos[0, 0, 5, -1] > mine.photos[0, 0, 5, 0]


def test_bad_photo_sources_name_the_problem(tmp_path):
    with pytest.raises(ConfigError, match="no folder at"):
        PhotoBank(str(tmp_path / "missing"), 8)
    with pytest.raises(ConfigError, match="holds no PNG or JPEG"):
        PhotoBank(str(tmp_path), 8)
    (tmp_path / "broken.png").write_bytes(b"not a png")
    with pytest.raises(ConfigError, match=r"cannot read .*broken\.png"):
        PhotoBank(str(tmp_path), 8)
