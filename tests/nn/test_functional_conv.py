"""F.pad (every mode, negative and empty), conv1d/2d/3d (groups, dilation, stride, 'same'/'valid'),
conv_transpose1d/2d/3d (output_padding) and F.unfold/F.fold against PyTorch, values and gradients."""

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
    return np.random.default_rng(sum(shape) + len(shape)).standard_normal(shape)


PAD_CASES = [
    ((2, 3, 4, 5), (1, 2, 2, 1), "reflect"),
    ((3, 4, 5), (2, 1), "reflect"),
    ((2, 3, 4, 5, 3), (1, 2, 2, 1, 1, 1), "replicate"),
    ((2, 3, 4, 5), (1, -2, 3, 1), "circular"),
    ((2, 3, 5), (-2, 3), "circular"),
    ((2, 3, 5), (1, -2), "reflect"),
    ((2, 3, 5), (-1, 2), "replicate"),
    ((2, 3, 4, 5), (-1, 2, 0, -1), "constant"),
    ((0, 3), (1, 1), "constant"),
    ((2, 0, 3), (1, 2, 0, 1), "constant"),
]


@pytest.mark.parametrize("shape,pads,mode", PAD_CASES)
def test_pad_modes(shape: tuple[int, ...], pads: tuple[int, ...], mode: str) -> None:
    F = _F()
    compare(lambda x: F.pad(x, pads, mode), lambda x: TF.pad(x, pads, mode), r(*shape))


def test_pad_constant_value_and_errors() -> None:
    F = _F()
    compare(lambda x: F.pad(x, (2, 1), value=3.5), lambda x: TF.pad(x, (2, 1), value=3.5), r(2, 4))
    import generated as G
    with pytest.raises(RuntimeError, match="reflect"):
        F.pad(G.zeros(1, 2, 3), (3, 0), "reflect")
    with pytest.raises(NotImplementedError, match="mode"):
        F.pad(G.zeros(1, 2, 3), (1, 1), "bogus")


CONV_CASES = [
    ("conv1d", dict(stride=2, padding=1, dilation=2, groups=2), (2, 4, 9), (6, 2, 3), True),
    ("conv1d", dict(padding="same"), (2, 4, 9), (6, 4, 4), False),
    ("conv1d", dict(padding="valid"), (4, 9), (6, 4, 3), True),
    ("conv2d", dict(padding="same", dilation=(1, 2)), (2, 4, 7, 6), (6, 4, 4, 3), False),
    ("conv2d", dict(padding="valid", stride=2), (4, 7, 6), (6, 4, 4, 3), True),
    ("conv3d", dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2), (2, 4, 6, 7, 5),
     (6, 2, 3, 2, 2), True),
    ("conv3d", dict(padding="same"), (4, 5, 6, 5), (3, 4, 2, 3, 2), False),
    ("conv_transpose1d", dict(stride=2, padding=1, output_padding=1, groups=2, dilation=2), (2, 4, 5), (4, 3, 3),
     True),
    ("conv_transpose2d", dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), dilation=(2, 1)), (2, 4, 5, 4),
     (4, 3, 3, 2), True),
    ("conv_transpose3d", dict(stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 1), groups=2,
                              dilation=(2, 1, 1)), (2, 4, 3, 4, 3), (4, 2, 3, 2, 2), True),
    ("conv_transpose3d", dict(), (4, 3, 4, 3), (4, 2, 3, 2, 2), False),
]


@pytest.mark.parametrize("name,kwargs,x_shape,w_shape,with_bias", CONV_CASES)
def test_convolutions(name: str, kwargs: dict, x_shape: tuple, w_shape: tuple, with_bias: bool) -> None:
    F = _F()
    out_c = w_shape[1] * kwargs.get("groups", 1) if "transpose" in name else w_shape[0]
    arrays = [r(*x_shape), r(*w_shape)] + ([r(out_c)] if with_bias else [])
    compare(lambda *a: getattr(F, name)(*a, **kwargs), lambda *a: getattr(TF, name)(*a, **kwargs), *arrays)


def test_conv_same_refuses_stride() -> None:
    import generated as G
    with pytest.raises(ValueError, match="strided"):
        _F().conv2d(G.zeros(1, 1, 4, 4), G.zeros(1, 1, 3, 3), padding="same", stride=2)


@pytest.mark.parametrize("shape,kwargs", [((2, 3, 5, 6), dict(kernel_size=(2, 3), padding=1, stride=(2, 1))),
                                          ((3, 5, 6), dict(kernel_size=2, dilation=2))])
def test_unfold(shape: tuple, kwargs: dict) -> None:
    F = _F()
    compare(lambda x: F.unfold(x, **kwargs), lambda x: TF.unfold(x, **kwargs), r(*shape))


@pytest.mark.parametrize("shape", [(2, 12, 12), (12, 12)])
def test_fold(shape: tuple) -> None:
    F = _F()
    compare(lambda x: F.fold(x, (4, 5), (2, 2)), lambda x: TF.fold(x, (4, 5), (2, 2)), r(*shape))
