"""G.signal.windows and the torch.<name>_window factories against PyTorch: every window for lengths
0..7, symmetric and periodic, float32 and float64, their extra parameters, and the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")

WINDOWS = {  # name -> extra keyword arguments to try
    "bartlett": [{}], "blackman": [{}], "cosine": [{}], "hamming": [{}], "hann": [{}], "nuttall": [{}],
    "exponential": [{}, {"tau": 0.5}, {"tau": 3.0}],
    "gaussian": [{}, {"std": 0.3}, {"std": 4.0}],
    "kaiser": [{}, {"beta": 0.0}, {"beta": 5.5}],
    "general_hamming": [{}, {"alpha": 0.3}],
    "general_cosine": [{"a": [0.5, 0.5]}, {"a": [0.3, 0.2, 0.1, 0.05]}, {"a": (1.0,)}],
}


def _check(t, g, dtype: str) -> None:
    assert str(g.dtype) == f"opgen.{dtype}"
    assert tuple(g.shape) == tuple(t.shape)
    tol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(WINDOWS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_window_agrees_with_torch(name: str, dtype: str) -> None:
    for extra in WINDOWS[name]:
        for M in range(8):
            for sym in (True, False):
                t = getattr(torch.signal.windows, name)(M, sym=sym, dtype=getattr(torch, dtype), **extra)
                g = getattr(G.signal.windows, name)(M, sym=sym, dtype=getattr(G, dtype), **extra)
                _check(t, g, dtype)


def test_exponential_center_of_a_periodic_window() -> None:
    t = torch.signal.windows.exponential(6, center=1.5, sym=False, dtype=torch.float64)
    g = G.signal.windows.exponential(6, center=1.5, sym=False, dtype=G.float64)
    _check(t, g, "float64")


def test_default_dtype_device_and_requires_grad() -> None:
    w = G.signal.windows.hann(5, requires_grad=True)
    assert w.dtype == G.get_default_dtype() and w.requires_grad and w.device.type == "cpu"


@pytest.mark.parametrize("call", [
    lambda: G.signal.windows.hann(-1),
    lambda: G.signal.windows.hann(4, dtype=G.int64),
    lambda: G.signal.windows.exponential(4, tau=0.0),
    lambda: G.signal.windows.exponential(4, center=1.0),
    lambda: G.signal.windows.gaussian(4, std=-1.0),
    lambda: G.signal.windows.kaiser(4, beta=-1.0),
    lambda: G.signal.windows.general_cosine(4, a=[]),
])
def test_window_refusals_are_value_errors(call) -> None:
    with pytest.raises(ValueError):
        call()


def test_window_length_must_be_an_int() -> None:
    with pytest.raises(TypeError):
        G.signal.windows.hann(4.0)
    with pytest.raises(TypeError):
        G.signal.windows.general_cosine(4, a=0.5)


ATEN = {"hann_window": [{}], "bartlett_window": [{}], "blackman_window": [{}],
        "hamming_window": [{}, {"alpha": 0.5, "beta": 0.3}], "kaiser_window": [{}, {"beta": 3.0}]}


@pytest.mark.parametrize("name", sorted(ATEN))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_aten_window_agrees_with_torch(name: str, dtype: str) -> None:
    for extra in ATEN[name]:
        for n in range(8):
            for periodic in (True, False):
                t = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype), **extra)
                g = getattr(G, name)(n, periodic, dtype=getattr(G, dtype), **extra)
                _check(t, g, dtype)


def test_aten_window_refusals() -> None:
    with pytest.raises(RuntimeError):
        G.hann_window(-2)
    with pytest.raises(RuntimeError):
        G.kaiser_window(4, dtype=G.int32)
    assert math.isclose(float(G.hann_window(4, False)[0]), 0.0, abs_tol=1e-12)
