"""Pooling in 1, 2 and 3 dims (max with indices, avg with ceil_mode/count_include_pad/divisor_override, int64 avg,
lp, adaptive max/avg, max_unpool) against PyTorch, values and gradients."""

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
    return np.random.default_rng(sum(shape) * 7 + len(shape)).standard_normal(shape)


POOL_CASES = [
    ("max_pool1d", (2, 3, 10), dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)),
    ("max_pool3d", (2, 3, 5, 6, 7), dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0),
                                         dilation=(1, 1, 2), ceil_mode=True)),
    ("max_pool3d", (3, 5, 6, 7), dict(kernel_size=2)),
    ("avg_pool1d", (2, 3, 10), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ("avg_pool3d", (2, 3, 5, 6, 7), dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0),
                                         ceil_mode=True)),
    ("avg_pool3d", (3, 5, 6, 7), dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0),
                                      count_include_pad=False)),
    ("avg_pool3d", (3, 5, 6, 7), dict(kernel_size=2, divisor_override=3)),
    ("adaptive_max_pool1d", (2, 3, 10), dict(output_size=4)),
    ("adaptive_max_pool2d", (2, 3, 7, 10), dict(output_size=(3, None))),
    ("adaptive_max_pool3d", (3, 5, 7, 6), dict(output_size=(2, 3, 4))),
    ("adaptive_avg_pool1d", (2, 3, 10), dict(output_size=4)),
    ("adaptive_avg_pool3d", (3, 5, 7, 6), dict(output_size=(2, 3, 4))),
]


@pytest.mark.parametrize("name,shape,kwargs", POOL_CASES)
def test_pooling(name: str, shape: tuple, kwargs: dict) -> None:
    F = _F()
    compare(lambda x: getattr(F, name)(x, **kwargs), lambda x: getattr(TF, name)(x, **kwargs), r(*shape))


@pytest.mark.parametrize("name,shape,kwargs", [
    ("max_pool1d", (2, 3, 10), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
    ("max_pool2d", (3, 5, 6), dict(kernel_size=2)),
    ("max_pool3d", (3, 5, 6, 7), dict(kernel_size=(2, 3, 2), stride=(1, 2, 2), padding=(1, 1, 0),
                                      dilation=(1, 1, 2))),
    ("adaptive_max_pool2d", (2, 3, 5, 7), dict(output_size=(2, 3))),
    ("adaptive_max_pool3d", (2, 3, 5, 7, 6), dict(output_size=(2, 3, 4))),
])
def test_pooling_indices(name: str, shape: tuple, kwargs: dict) -> None:
    F = _F()
    x = r(*shape)
    values, indices = getattr(F, name)(__import__("generated").tensor(x), return_indices=True, **kwargs)
    t_values, t_indices = getattr(TF, name)(torch.tensor(x), return_indices=True, **kwargs)
    np.testing.assert_array_equal(indices.numpy(), t_indices.numpy())
    np.testing.assert_allclose(values.numpy(), t_values.numpy())


@pytest.mark.parametrize("nd,shape", [(1, (2, 3, 9)), (2, (2, 3, 6, 4)), (3, (3, 4, 6, 4))])
def test_max_unpool_round_trip(nd: int, shape: tuple) -> None:
    F = _F()

    def run(lib, x):
        values, indices = getattr(lib, f"max_pool{nd}d")(x, 2, return_indices=True)
        return getattr(lib, f"max_unpool{nd}d")(values, indices, 2)

    compare(lambda x: run(F, x), lambda x: run(TF, x), r(*shape))


@pytest.mark.parametrize("name,shape,args", [("lp_pool1d", (2, 3, 10), (2, 3, 2)),
                                             ("lp_pool2d", (2, 3, 7, 10), (3, (2, 3), 2, True)),
                                             ("lp_pool3d", (2, 3, 4, 4, 5), (1.5, 2))])
def test_lp_pool(name: str, shape: tuple, args: tuple) -> None:
    F = _F()
    x = np.abs(r(*shape)) + 0.1
    compare(lambda t: getattr(F, name)(t, *args), lambda t: getattr(TF, name)(t, *args), x)


def test_avg_pool2d_int64_matches_torch_dtype_and_rounding() -> None:
    """PyTorch keeps int64 (truncating division); opgen returned float32 before."""
    x = np.random.default_rng(3).integers(-9, 9, (2, 3, 5, 6))
    F = _F()
    compare(lambda t: F.avg_pool2d(t, 3, 1, 1), lambda t: TF.avg_pool2d(t, 3, 1, 1), x, grad=False)
    compare(lambda t: F.avg_pool2d(t, 2), lambda t: TF.avg_pool2d(t, 2), x, grad=False)


def test_pool_errors() -> None:
    import generated as G
    F = _F()
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool1d(G.zeros(1, 1, 5), 2, padding=2)
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool1d(G.zeros(1, 1, 2), G.tensor([[[0, 9]]]), 2)


@pytest.mark.parametrize("nd,shape,kernel,kwargs,dtype", [
    (2, (2, 3, 9, 11), (2, 3), dict(output_size=(4, 5)), np.float64),
    (2, (3, 10, 10), 2, dict(output_ratio=(0.5, 0.5)), np.float32),
    (3, (2, 2, 7, 8, 9), 2, dict(output_size=(3, 4, 5)), np.float64),
    (3, (2, 7, 8, 9), (2, 3, 2), dict(output_size=(3, 4, 5)), np.float32),
])
def test_fractional_max_pool_with_given_samples(nd: int, shape: tuple, kernel: object, kwargs: dict,
                                                dtype: type) -> None:
    import generated as G
    F = _F()
    planes = (shape[0] if len(shape) == nd + 2 else 1, shape[-nd - 1], nd)
    samples = np.random.default_rng(5).random(planes).astype(dtype)
    name = f"fractional_max_pool{nd}d"
    for output in (0, 1):
        compare(lambda x, i=output: getattr(F, name)(x, kernel, return_indices=True,
                                                    _random_samples=G.tensor(samples), **kwargs)[i],
                lambda x, i=output: getattr(TF, name)(x, kernel, return_indices=True,
                                                     _random_samples=torch.tensor(samples), **kwargs)[i],
                r(*shape).astype(dtype), grad=dtype == np.float64, atol=1e-6)


def test_fractional_max_pool_draws_samples() -> None:
    import generated as G
    layer = G.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))
    out = layer(G.randn(2, 3, 12, 12))
    assert tuple(out.shape) == (2, 3, 6, 6)


POOL_NAMES = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
              "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
              "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"]


@pytest.mark.parametrize("name", POOL_NAMES)
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "int32", "int64"])
def test_bool_and_integer_inputs_are_taken_or_refused_as_torch_does(name: str, dtype: str) -> None:
    """Note [Pooling dtypes]: whether the kernel takes the dtype, and the result's dtype and values when it does."""
    import generated as G

    nd = int(name[-2])
    shape = (2, 3, *[4] * nd)
    a = (np.arange(np.prod(shape)).reshape(shape) % 5).astype(dtype)
    size = {"output_size": 2} if name.startswith("adaptive") else {"kernel_size": 2}
    try:
        want = getattr(TF, name)(torch.from_numpy(a), **size)
    except RuntimeError:  # (NotImplementedError is one)
        with pytest.raises(RuntimeError):
            getattr(_F(), name)(G.from_numpy(a), **size)
        return
    got = getattr(_F(), name)(G.from_numpy(a), **size)
    assert got.dtype.name == str(want.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(got.numpy(), want.numpy())
