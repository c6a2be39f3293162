"""Without a usable CUDA device, asking for one says why and what to do (CuPy installed but no driver or GPU,
or no CuPy at all), instead of raising CuPy's raw driver error."""

from __future__ import annotations

import pytest

import generated as G
from runtime.cuda import device

pytestmark = pytest.mark.skipif(G.cuda.is_available(), reason="a CUDA device (real or emulated) is present")


def test_reason_names_the_cause_and_the_emulator() -> None:
    reason = G.cuda.unavailable_reason()
    assert reason.startswith("no CUDA device is available: ")
    assert "OPGEN_EMULATE_CUDA=1" in reason
    try:
        import cupy  # noqa: F401
    except ImportError:
        assert "pip install" in reason
    else:
        assert "CuPy is installed" in reason


def test_cuda_tensors_raise_the_clear_error() -> None:
    with pytest.raises(G.cuda.CudaUnavailableError, match="no CUDA device is available: .*OPGEN_EMULATE_CUDA"):
        G.zeros(2, device="cuda")
    with pytest.raises(G.cuda.CudaUnavailableError, match="no CUDA device is available"):
        G.ones(3).to("cuda")
    with pytest.raises(G.cuda.CudaUnavailableError):
        device.require_device()
