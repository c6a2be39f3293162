"""`G.backends`: what this machine and opgen's backends have, as PyTorch's torch.backends reports it.

Every `is_available()` answers truthfully for opgen: its CUDA backend compiles its own kernels with NVRTC
and calls cuBLAS through CuPy, so cuDNN, MPS, oneDNN (mkldnn) and OpenMP are never used. The flags
PyTorch programs set (`cudnn.benchmark`, `cudnn.deterministic`, `cuda.matmul.allow_tf32` ...) are plain
module attributes: they are kept and read back, and change nothing in opgen's kernels (which never use
TF32 and pick no algorithms by benchmarking).
"""

from runtime.backends import (
    cpu,
    cuda,
    cudnn,
    cusparselt,
    kleidiai,
    mha,
    miopen,
    mkl,
    mkldnn,
    mps,
    nnpack,
    openmp,
    opt_einsum,
    quantized,
)

__all__ = ["cpu", "cuda", "cudnn", "cusparselt", "kleidiai", "mha", "miopen", "mkl", "mkldnn", "mps", "nnpack",
           "openmp", "opt_einsum", "quantized"]
