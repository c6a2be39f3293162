"""F.interpolate (every mode, size / scale_factor / recompute_scale_factor, align_corners), pixel_shuffle,
pixel_unshuffle, affine_grid and grid_sample against PyTorch, values and gradients."""

from __future__ import annotations

import numpy as np
import pytest

from tests.torch_oracle import compare

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _F():
    import generated as G
    return G.nn.functional


def r(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape) * 3 + len(shape)).standard_normal(shape)


SIZES = [dict(size=(8, 3, 6)), dict(scale_factor=1.7), dict(scale_factor=(2.0, 0.5, 3.0)),
         dict(scale_factor=1.3, recompute_scale_factor=True)]
MODES = [("nearest", 1), ("nearest", 3), ("nearest-exact", 2), ("linear", 1), ("bilinear", 2), ("bicubic", 2),
         ("trilinear", 3), ("area", 2), ("area", 3)]


@pytest.mark.parametrize("mode,nd", MODES)
@pytest.mark.parametrize("how", range(len(SIZES)))
def test_interpolate(mode: str, nd: int, how: int) -> None:
    F = _F()
    kwargs = {k: (v[:nd] if isinstance(v, tuple) else v) for k, v in SIZES[how].items()}
    corners = [None] if mode in ("nearest", "nearest-exact", "area") else [False, True]
    x = r(*((2, 3) + (5, 7, 4)[:nd]))
    for ac in corners:
        compare(lambda t, a=ac: F.interpolate(t, mode=mode, align_corners=a, **kwargs),
                lambda t, a=ac: TF.interpolate(t, mode=mode, align_corners=a, **kwargs), x)


def test_upsample_aliases_and_errors() -> None:
    import generated as G
    F = _F()
    compare(lambda t: F.upsample_bilinear(t, scale_factor=2), lambda t: TF.upsample_bilinear(t, scale_factor=2),
            r(1, 2, 3, 4))
    compare(lambda t: F.upsample_nearest(t, size=5), lambda t: TF.upsample_nearest(t, size=5), r(1, 2, 3))
    with pytest.raises(ValueError, match="align_corners"):
        F.interpolate(G.zeros(1, 1, 4), size=3, align_corners=True)
    with pytest.raises(NotImplementedError, match="bilinear"):
        F.interpolate(G.zeros(1, 1, 4), size=3, mode="bilinear")


def test_pixel_shuffle_round_trip() -> None:
    F = _F()
    compare(lambda t: F.pixel_shuffle(t, 2), lambda t: TF.pixel_shuffle(t, 2), r(2, 3, 8, 3, 4))
    compare(lambda t: F.pixel_unshuffle(t, 2), lambda t: TF.pixel_unshuffle(t, 2), r(3, 2, 4, 6))


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(align_corners: bool) -> None:
    F = _F()
    compare(lambda t: F.affine_grid(t, (2, 3, 4, 5), align_corners),
            lambda t: TF.affine_grid(t, (2, 3, 4, 5), align_corners), r(2, 2, 3))
    compare(lambda t: F.affine_grid(t, (2, 3, 4, 5, 3), align_corners),
            lambda t: TF.affine_grid(t, (2, 3, 4, 5, 3), align_corners), r(2, 3, 4))


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample(mode: str, padding_mode: str, align_corners: bool) -> None:
    F = _F()
    compare(lambda x, g: F.grid_sample(x, g, mode, padding_mode, align_corners),
            lambda x, g: TF.grid_sample(x, g, mode, padding_mode, align_corners), r(2, 3, 4, 5), r(2, 3, 6, 2) * 1.3)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_3d(mode: str, padding_mode: str) -> None:
    F = _F()
    compare(lambda x, g: F.grid_sample(x, g, mode, padding_mode, False),
            lambda x, g: TF.grid_sample(x, g, mode, padding_mode, False), r(2, 2, 3, 4, 5), r(2, 2, 3, 2, 3) * 1.2)
