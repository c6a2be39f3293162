"""The `*_copy` forms of the view ops (a fresh tensor with the view's values: `diagonal_copy`, `t_copy` ...)
and the `*_scatter` ops (self with a view's positions replaced by `src`: `diagonal_scatter`,
`select_scatter`, `slice_scatter`, `as_strided_scatter`). All are built from the view ops, `clone` and
`copy_`, so their gradients come from those (the scatters through CopySlices)."""

from __future__ import annotations

from typing import Any

from runtime.layout import contiguous_format


def _copied(view: Any) -> Any:
    return view.clone(memory_format=contiguous_format)  # PyTorch's *_copy results are row-major


def expand_copy(self: Any, size: Any, implicit: bool = False) -> Any:
    return _copied(self.expand(list(size)))


def diagonal_copy(self: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    return _copied(self.diagonal(offset, dim1, dim2))


def alias_copy(self: Any) -> Any:
    return _copied(self)


def as_strided_copy(self: Any, size: Any, stride: Any, storage_offset: int | None = None) -> Any:
    return _copied(self.as_strided(list(size), list(stride), storage_offset))


def narrow_copy(self: Any, dim: int, start: int, length: int) -> Any:
    return _copied(self.narrow(dim, start, length))


def view_copy(self: Any, size: Any) -> Any:
    return _copied(self.view(list(size)))


def permute_copy(self: Any, dims: Any) -> Any:
    return _copied(self.permute(list(dims)))


def squeeze_copy(self: Any) -> Any:
    return _copied(self.squeeze())


def squeeze_copy_dims(self: Any, dim: Any) -> Any:
    """squeeze_copy.dims, which serves squeeze_copy.dim's calls too (one int or a list)."""
    return _copied(self.squeeze(dim if isinstance(dim, int) else list(dim)))


def t_copy(self: Any) -> Any:
    return _copied(self.t())


def transpose_copy(self: Any, dim0: int, dim1: int) -> Any:
    return _copied(self.transpose(dim0, dim1))


def unsqueeze_copy(self: Any, dim: int) -> Any:
    return _copied(self.unsqueeze(dim))


def unfold_copy(self: Any, dimension: int, size: int, step: int) -> Any:
    return _copied(self.unfold(dimension, size, step))


def unbind_copy(self: Any, dim: int = 0) -> Any:
    return [t.clone() for t in self.unbind(dim)]


def split_with_sizes_copy(self: Any, split_sizes: Any, dim: int = 0) -> Any:
    return [t.clone() for t in self.split_with_sizes(list(split_sizes), dim)]


def _scatter_into(view_of: Any, self: Any, src: Any) -> Any:
    out = self.clone()
    view = view_of(out)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(view.shape)}")
    view.copy_(src)
    return out


def diagonal_scatter(self: Any, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    return _scatter_into(lambda t: t.diagonal(offset, dim1, dim2), self, src)


def select_scatter(self: Any, src: Any, dim: int, index: int) -> Any:
    return _scatter_into(lambda t: t.select(dim, index), self, src)


def slice_scatter(self: Any, src: Any, dim: int = 0, start: int | None = None, end: int | None = None,
                  step: int = 1) -> Any:
    def view(t: Any) -> Any:
        index = [slice(None)] * t.dim()
        index[dim] = slice(start, end, step)
        return t[tuple(index)]
    return _scatter_into(view, self, src)


def as_strided_scatter(self: Any, src: Any, size: Any, stride: Any, storage_offset: int | None = None) -> Any:
    out = self.clone()  # keeps self's strides: the view reads the storage as PyTorch's does
    out.as_strided(list(size), list(stride), storage_offset).copy_(src)
    return out
