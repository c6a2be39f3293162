"""Matrix products (CompositeExplicitAutograd): NumPy's matmul on CPU, cuBLAS through CuPy on CUDA."""

from __future__ import annotations

from runtime.tensor import Tensor


def _check(name: str, a: Tensor, b: Tensor, ndim: int) -> None:
    if a.dim() != ndim or b.dim() != ndim:
        raise RuntimeError(f"{name}: expected {ndim}D tensors, but got {a.dim()}D and {b.dim()}D")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{name}: expected m1 and m2 to have the same dtype, but got: {a.dtype.name} != "
                           f"{b.dtype.name}")
    if a.shape[-1] != b.shape[-2]:
        sa = "x".join(map(str, a.shape))
        sb = "x".join(map(str, b.shape))
        raise RuntimeError(f"{name}: mat1 and mat2 shapes cannot be multiplied ({sa} and {sb})")


def mm(self: Tensor, mat2: Tensor) -> Tensor:
    _check("mm", self, mat2, 2)
    return Tensor._wrap(self._data @ mat2._data, self._dtype)


def bmm(self: Tensor, mat2: Tensor) -> Tensor:
    _check("bmm", self, mat2, 3)
    if self.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {self.shape[0]} and {mat2.shape[0]}")
    return Tensor._wrap(self._data @ mat2._data, self._dtype)
