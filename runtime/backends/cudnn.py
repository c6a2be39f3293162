"""`G.backends.cudnn`: opgen never calls cuDNN; the flags are kept for programs that set them."""

enabled: bool = True
benchmark: bool = False
benchmark_limit: int = 10
deterministic: bool = False
allow_tf32: bool = True


def is_available() -> bool:
    """False: opgen's CUDA kernels are its own (NVRTC), none comes from cuDNN."""
    return False


def version() -> None:
    """None: no cuDNN is loaded."""
    return None


def is_acceptable(tensor: object) -> bool:
    return False


__all__ = ["allow_tf32", "benchmark", "benchmark_limit", "deterministic", "enabled", "is_acceptable",
           "is_available", "version"]
