"""PyTorch's numeric odds and ends that are not pointwise: `nanmedian`, `frexp` and `histogram` (kernels
on the tensor's array module), and `combinations`, `masked_scatter`, `put`, `unique_consecutive` (built
from ops, so their gradients are autograd's through those ops and they run on every device)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from runtime import dtypes, opcall, return_types
from runtime import strides as S
from runtime.kernels._xp import wrap, xp_of
from runtime.kernels.sort_ops import _argsort
from runtime.tensor import Tensor


def _G() -> Any:
    return opcall.api  # the generated package (Note [The runtime reaches generated/ through opcall])


# -- nanmedian: the lower median of the values that are not NaN --------------------------------------------

def nanmedian(self: Tensor) -> Tensor:
    a = self._data
    xp = xp_of(a)
    flat = a.reshape(-1)
    if flat.size == 0:
        return wrap(xp.full((), np.nan), a, self._dtype)
    count = int(flat.size - xp.isnan(flat).sum()) if flat.dtype.kind == "f" else flat.size
    ordered = flat[_argsort(xp, flat, 0, False)]  # NaN sorts last
    return wrap(ordered[max(count - 1, 0) // 2], a, self._dtype)


def nanmedian_dim(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """Per row along `dim`: the lower median of the non-NaN values and its index (NaN at index 0 for a row of
    NaN only, as PyTorch)."""
    a = self._data
    xp = xp_of(a)
    cls = return_types.make("nanmedian", ("values", "indices"))
    if a.ndim == 0:
        S.wrap_dim(dim, 0)
        return cls(wrap(a.copy(), a, self._dtype), wrap(xp.zeros((), np.int64), a, dtypes.int64))
    d = S.wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if n == 0:
        raise IndexError(f"nanmedian(): Expected reduction dim {d} to have non-zero size.")
    order = _argsort(xp, a, d, False)
    if a.dtype.kind == "f":
        count = n - xp.isnan(a).sum(axis=d, keepdims=True)
    else:
        count = xp.full([1 if i == d else s for i, s in enumerate(a.shape)], n)
    rank = xp.maximum(count - 1, 0) // 2
    idx = xp.take_along_axis(order, rank.astype(np.int64), axis=d)
    if a.dtype.kind == "f":
        idx = xp.where(count == 0, 0, idx)
    values = xp.take_along_axis(a, idx, axis=d)
    if not keepdim:
        idx, values = xp.squeeze(idx, d), xp.squeeze(values, d)
    return cls(wrap(values, a, self._dtype), wrap(idx.astype(np.int64), a, dtypes.int64))


# -- frexp ---------------------------------------------------------------------------------------------------

def frexp(self: Tensor) -> tuple[Tensor, Tensor]:
    """mantissa * 2**exponent == self, |mantissa| in [0.5, 1) (0, inf and NaN keep themselves, exponent 0)."""
    a = self._data
    if a.dtype.kind != "f" and not self._dtype.is_floating_point:
        raise RuntimeError(f"torch.frexp() only supports floating-point dtypes, got {self.dtype}")
    cls = return_types.make("frexp", ("mantissa", "exponent"))
    mantissa, exponent = xp_of(a).frexp(a)
    return cls(wrap(mantissa, a, self._dtype), wrap(exponent.astype(np.int32), a, dtypes.int32))


# -- histogram -----------------------------------------------------------------------------------------------

def _check_histogram(op: str, self: Any, weight: Any) -> None:
    if not self.is_floating_point():
        raise RuntimeError(f"torch.{op}: input tensor and bins tensors should have the same dtype and be "
                           f"floating point, got {self.dtype}")
    if weight is not None and tuple(weight.shape) != tuple(self.shape):
        raise RuntimeError(f"torch.{op}: if weight tensor is provided, it should have the same shape as the "
                           f"input tensor excluding its innermost dimension, got {tuple(weight.shape)}")
    if weight is not None and weight.dtype != self.dtype:
        raise RuntimeError(f"torch.{op}: if weight tensor is provided it should have the same dtype as the "
                           f"input tensor, got {weight.dtype} and {self.dtype}")


def outer_edges(values: np.ndarray, lo_hi: Any) -> tuple[float, float]:
    """The leftmost and rightmost edges: `range`, or the data's min and max (0 and 1 without data); equal
    edges are widened by 0.5 each way. (histogram and histogramdd, per dimension)"""
    if lo_hi is not None:
        lo, hi = float(lo_hi[0]), float(lo_hi[1])
        if lo > hi:
            raise ValueError(f"torch.histogram: min should not exceed max, but got min {lo} max {hi}")
    elif values.size:
        lo, hi = float(values.min()), float(values.max())
    else:
        lo, hi = 0.0, 1.0
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"torch.histogram: range of [{lo}, {hi}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def _upper_bound(edges: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The binary search of C++'s std::upper_bound, element-wise: the first position whose edge exceeds x.
    (For ascending edges, np.searchsorted(side="right"); written out so that edges which are not ascending
    give what PyTorch's kernel gives.)"""
    first = np.zeros(x.shape, np.int64)
    count = np.full(x.shape, len(edges), np.int64)
    while (count > 0).any():
        step = count // 2
        probe = first + step
        live = count > 0
        after = live & ~(x < edges[np.minimum(probe, len(edges) - 1)])
        first = np.where(after, probe + 1, first)
        count = np.where(after, count - step - 1, np.where(live, step, 0))
    return first


def histogram_counts(values: np.ndarray, edges: list[np.ndarray], weight: np.ndarray | None,
                     density: bool) -> np.ndarray:
    """Counts (or weight sums) of the rows of `values` (n, D) in the bins between `edges` (one array per
    dimension): a value outside [first edge, last edge] (or NaN) leaves its row out, the last bin includes
    its right edge; normalised when `density` so that the histogram integrates to 1."""
    n, D = values.shape
    keep = np.ones(n, bool)
    flat = np.zeros(n, np.int64)
    for i, e in enumerate(edges):
        x = values[:, i]
        with np.errstate(invalid="ignore"):
            keep &= (x >= e[0]) & (x <= e[-1])
        pos = _upper_bound(e, x) - 1
        pos = np.where(pos == len(e) - 1, pos - 1, pos)
        keep &= (pos >= 0) & (pos < max(len(e) - 1, 0))
        flat = flat * max(len(e) - 1, 1) + np.clip(pos, 0, max(len(e) - 2, 0))
    shape = tuple(max(len(e) - 1, 0) for e in edges)
    size = int(np.prod(shape))
    w = None if weight is None else weight[keep]
    hist = np.bincount(flat[keep], weights=w, minlength=size).astype(np.float64)[:size].reshape(shape)
    if density:
        total = hist.sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            hist = hist / total
            for i, e in enumerate(edges):
                widths = np.diff(e).reshape([-1 if j == i else 1 for j in range(D)])
                hist = hist / widths
    return hist


def _host(t: Any) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy())


def histogram(self: Tensor, bins: Any = 100, *, range: Any = None, weight: Any = None,
              density: bool = False) -> Any:
    """`bins` equal bins over `range` (or the data's extent), or the bins between the edges of a 1-D `bins`
    tensor; the counts (weight sums, densities) and the edges, both of self's dtype."""
    G = _G()
    _check_histogram("histogram", self, weight)
    values = _host(self).reshape(-1).astype(np.float64)
    if isinstance(bins, Tensor):
        if bins.dim() != 1 or bins.shape[0] < 1:
            raise RuntimeError("torch.histogram: bins tensor should have one dimension and at least 1 entry")
        edges = bins.detach().to(self.dtype)
    else:
        if int(bins) <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        lo, hi = outer_edges(values, range)
        edges = G.linspace(lo, hi, int(bins) + 1, dtype=self.dtype, device=self.device)
    e = _host(edges).astype(np.float64)
    w = None if weight is None else _host(weight).reshape(-1).astype(np.float64)
    hist = histogram_counts(values[:, None], [e], w, density)
    cls = return_types.make("histogram", ("hist", "bin_edges"))
    return cls(G.tensor(hist, dtype=self.dtype, device=self.device), edges.clone())


def histogram_bins_tensor(self: Tensor, bins: Tensor, weight: Any = None, density: bool = False) -> Any:
    return histogram(self, bins, weight=weight, density=density)


def histogram_bin_ct(self: Tensor, bins: int = 100, range: Any = None, weight: Any = None,
                     density: bool = False) -> Any:
    return histogram(self, bins, range=range, weight=weight, density=density)


# -- compositions --------------------------------------------------------------------------------------------

def combinations(self: Any, r: int = 2, with_replacement: bool = False) -> Any:
    """The r-element combinations of a 1-D tensor's elements (with repetition when asked), one per row, in
    lexicographic order of positions; r = 0 gives an empty 1-D tensor."""
    G = _G()
    if self.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(self.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return self.new_empty([0])
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    table = np.array(list(pick(range(self.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    index = G.tensor(table.reshape(-1), dtype=G.int64, device=self.device)
    return self.index_select(0, index).reshape([table.shape[0], r])


def masked_scatter(self: Any, mask: Any, source: Any) -> Any:
    """self's elements where `mask` (broadcast together) is True replaced, in row-major order, by the first
    elements of `source`."""
    G = _G()
    if mask.dtype != G.bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got {self.dtype} "
                           f"and {source.dtype}")
    shape = list(G.broadcast_shapes(tuple(self.shape), tuple(mask.shape)))
    base, m = self.expand(shape), mask.expand(shape)
    if self.is_meta:  # the shape of self's; which elements are replaced is a matter of values (Note [Meta tensors])
        return base.clone()
    flags = _host(m).reshape(-1)
    count = int(flags.sum())
    if count > source.numel():
        raise RuntimeError(f"masked_scatter: the mask selects {count} elements but source has only "
                           f"{source.numel()}")
    if count == 0:
        return base.clone()
    positions = np.where(flags, np.cumsum(flags) - 1, 0).astype(np.int64)
    index = G.tensor(positions, dtype=G.int64, device=self.device)
    taken = source.reshape(-1).index_select(0, index).reshape(shape)
    return G.where(m, taken, base).contiguous()  # row-major whatever self's layout, as PyTorch's


def put(self: Any, index: Any, source: Any, accumulate: bool = False) -> Any:
    """self with the elements at the flat (row-major) positions `index` set to (or, accumulating, increased
    by) the elements of `source`."""
    G = _G()
    if index.dtype != G.int64:
        raise RuntimeError(f"put(): Expected a long tensor for index, but got {index.dtype}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"put(): self ({self.dtype}) and source ({source.dtype}) must have the same scalar type")
    if index.numel() != source.numel():
        raise RuntimeError(f"put_(): Expected source and index to have the same number of elements, but got "
                           f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n = self.numel()
    flat_index = index.reshape(-1)
    if flat_index.numel() and not flat_index.is_meta:  # a meta index has no values to check
        host = _host(flat_index)
        bad = (host < -n) | (host >= n)
        if bad.any():
            raise IndexError(f"put_(): index {int(host[bad][0])} is out of bounds for a tensor of {n} elements")
        flat_index = G.where(flat_index < 0, flat_index + n, flat_index)
    flat = self.reshape(-1)
    src = source.reshape(-1)
    out = flat.scatter_add(0, flat_index, src) if accumulate else flat.scatter(0, flat_index, src)
    return out.reshape(list(self.shape))


def unique_consecutive(self: Any, return_inverse: bool = False, return_counts: bool = False,
                       dim: int | None = None) -> Any:
    """The first element of each run of equal consecutive elements (of the flattened tensor, or of slices
    along `dim`), then the run each element falls in and the run lengths when asked for (a tuple then)."""
    G = _G()
    if dim is None:
        x = self.reshape(-1)
        d = 0
    else:
        d = S.wrap_dim(dim, max(self.dim(), 1))
        x = self if self.dim() else self.reshape(1)
    n = x.shape[d]
    if n == 0:
        values = x.clone() if dim is not None else x
        inverse = G.zeros(list(self.shape) if dim is None else [0], dtype=G.int64, device=self.device)
        counts = G.zeros([0], dtype=G.int64, device=self.device)
    else:
        changed = x.narrow(d, 1, n - 1) != x.narrow(d, 0, n - 1)
        if dim is not None and x.dim() > 1:
            other = [i for i in range(x.dim()) if i != d]
            changed = changed.any(other) if other else changed
        starts = G.cat([G.ones([1], dtype=G.bool, device=self.device), changed.reshape(-1)])
        first = starts.nonzero().reshape(-1)
        values = x.index_select(d, first)
        run = starts.to(G.int64).cumsum(0) - 1
        inverse = run.reshape(list(self.shape)) if dim is None else run
        ends = G.cat([first, G.tensor([n], dtype=G.int64, device=self.device)])
        counts = ends.narrow(0, 1, first.shape[0]) - first
    out = (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())
    return out[0] if len(out) == 1 else out


def _scalar_shift(op: str, self: Any, other: Any) -> Any:
    """`op(number, tensor)`: the number is a wrapped number (the tensor's integer dtype; a float or bool
    number promotes to a dtype the shifts do not take, and is refused)."""
    G = _G()
    if isinstance(self, bool) or not isinstance(self, int):
        raise NotImplementedError(f"\"{op}\" not implemented for a {type(self).__name__} number and a tensor "
                                  f"of {other.dtype}")
    return getattr(G, op)(G.full_like(other, self), other)


def bitwise_left_shift_scalar_tensor(self: Any, other: Any) -> Any:
    return _scalar_shift("bitwise_left_shift", self, other)


def bitwise_right_shift_scalar_tensor(self: Any, other: Any) -> Any:
    return _scalar_shift("bitwise_right_shift", self, other)
