"""The names a collective is called with: reduction operators and backend names (PyTorch's `ReduceOp`, `Backend`)."""

from __future__ import annotations

import enum


class ReduceOp(enum.Enum):
    """How `all_reduce`, `reduce` and `reduce_scatter_tensor` combine the ranks' tensors."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    def __repr__(self) -> str:
        return f"<ReduceOp.{self.name}>"


class Backend(str):
    """A backend name, as PyTorch's `dist.Backend`: `Backend("MPI") == "mpi"`."""

    MPI = "mpi"
    NCCL = "nccl"
    UNDEFINED = "undefined"

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name!r}")
        value = name.lower()
        if value not in (cls.MPI, cls.NCCL):
            raise ValueError(f"Invalid backend: {name!r}: opgen has the backends 'mpi' (CPU tensors, and the emulated "
                             "CUDA device) and 'nccl' (CUDA tensors)")
        return super().__new__(cls, value)
