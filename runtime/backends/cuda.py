"""`G.backends.cuda`: matmul precision flags (kept, without effect: opgen's kernels never use TF32)."""

from runtime import cuda as _cuda


class _MatmulFlags:
    """`backends.cuda.matmul`: the attributes PyTorch programs set before training."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True
        self.fp32_precision = "ieee"

    def __repr__(self) -> str:
        return f"<backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _MatmulFlags()


def is_built() -> bool:
    """True when opgen's CUDA backend can load (CuPy is installed); a device may still be absent."""
    try:
        _cuda.require_cupy()
    except _cuda.CudaUnavailableError:
        return False
    return True


def flash_sdp_enabled() -> bool:
    return False


def mem_efficient_sdp_enabled() -> bool:
    return False


def math_sdp_enabled() -> bool:
    return True


__all__ = ["flash_sdp_enabled", "is_built", "math_sdp_enabled", "matmul", "mem_efficient_sdp_enabled"]
