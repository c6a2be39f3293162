"""Process-wide numerics switches PyTorch programs set: float32 matmul precision and deterministic algorithms.

opgen's float32 matmuls are IEEE float32 products on every backend (NumPy's BLAS; cuBLAS without TF32), so
every precision setting computes the same way, and its kernels pick no algorithm by speed, so the
deterministic switch has nothing to forbid. Both settings are kept and read back, as programs expect.
"""

from __future__ import annotations

_PRECISIONS = ("highest", "high", "medium")
_state: dict[str, object] = {"precision": "highest", "deterministic": False, "warn_only": False}


def set_float32_matmul_precision(precision: str) -> None:
    """Record "highest", "high" or "medium" (opgen computes float32 matmuls in float32 under all three)."""
    if precision not in _PRECISIONS:
        raise RuntimeError(f"Invalid precision {precision!r}: expected one of {', '.join(_PRECISIONS)}")
    _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    """The precision last given to set_float32_matmul_precision ("highest" until set)."""
    return str(_state["precision"])


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Record the switch (opgen's kernels have no nondeterministic alternative to forbid)."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"use_deterministic_algorithms expects a bool, but got {type(mode).__name__}")
    _state["deterministic"] = mode
    _state["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    """The mode last given to use_deterministic_algorithms (False until set)."""
    return bool(_state["deterministic"])


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """The warn_only flag last given to use_deterministic_algorithms (False until set)."""
    return bool(_state["warn_only"])


__all__ = ["are_deterministic_algorithms_enabled", "get_float32_matmul_precision",
           "is_deterministic_algorithms_warn_only_enabled", "set_float32_matmul_precision",
           "use_deterministic_algorithms"]
