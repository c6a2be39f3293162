"""`G.masked`: torch.masked's reductions and normalizations of strided tensors under a `mask=`.

Every function is a composition of opgen's ops, so autograd, dtypes and devices come from them: the
input's masked-out elements are replaced by the identity of the operation (`where(mask, input,
identity)`: 0 for sums, 1 for products, the lowest value for maxima, ...) and the plain op reduces the
result. A fully masked-out slice therefore gives what the plain op gives on identities only: 0 for
`sum`, -inf for `amax` of floats, NaN for `mean` (0/0), `median`, `var` and the softmaxes. The mask is
broadcast to the input's shape (it may have fewer dimensions, not more) and read as bool. Only strided
tensors exist in opgen, so the sparse layouts of torch.masked are not here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from runtime import opcall
from runtime.dtypes import DType, bool_, float32, int64
from runtime.tensor import Tensor

__all__ = [
    "amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp", "logsumexp", "mean",
    "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var",
]

Dims = int | Sequence[int] | None

# sum/prod of these integer (and bool) inputs accumulate in int64, as torch.sum does
_WIDENED = ("bool", "uint8", "int8", "int16", "int32")


def _check_input(name: str, input: Any) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"masked.{name}(): argument 'input' must be a Tensor, not {type(input).__name__}")


def _input_mask(input: Tensor, mask: Tensor | None) -> Tensor | None:
    """`mask` broadcast to `input`'s shape, as bool (None stays None: nothing masked out)."""
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        raise TypeError(f"masked: mask must be a Tensor, not {type(mask).__name__}")
    if mask.ndim > input.ndim:
        raise IndexError(f"masked: the mask has {mask.ndim} dimensions, more than the input's {input.ndim}")
    if tuple(mask.shape) != tuple(input.shape):
        mask = opcall.api.broadcast_to(mask, tuple(input.shape))
    return mask if mask.dtype is bool_ else mask.to(dtype=bool_)


def _canonical_dim(dim: Dims, ndim: int) -> tuple[int, ...]:
    """`dim` as a sorted tuple of non-negative dims; None and () mean every dim."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    size = max(ndim, 1)
    seen: list[int] = []
    for d in dims:
        if not -size <= d < size:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-size}, {size - 1}], but got {d})")
        if d % size in seen:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        seen.append(d % size)
    return tuple(sorted(seen))


def _lowest(dtype: DType) -> float | int:
    if dtype.is_floating_point:
        return -math.inf
    if dtype is bool_:
        raise TypeError("masked: the identity of a maximum of a bool tensor is not defined")
    return opcall.api.iinfo(dtype).min


def _highest(dtype: DType) -> float | int:
    if dtype.is_floating_point:
        return math.inf
    if dtype is bool_:
        raise TypeError("masked: the identity of a minimum of a bool tensor is not defined")
    return opcall.api.iinfo(dtype).max


def _fill(input: Tensor, mask: Tensor | None, identity: float | int) -> Tensor:
    """`input` with its masked-out elements replaced by `identity` (of input's dtype)."""
    canonical = _input_mask(input, mask)
    if canonical is None:
        return input
    value = opcall.api.full((), identity, dtype=input.dtype, device=input.device)
    return opcall.api.where(canonical, input, value)


def _accumulate_dtype(input: Tensor, dtype: DType | None) -> DType:
    if dtype is not None:
        return dtype
    return int64 if input.dtype.name in _WIDENED else input.dtype


def _one_dim(name: str, dim: Any, ndim: int) -> int:
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"masked.{name}(): dim must be an int, not {type(dim).__name__}")
    return _canonical_dim(dim, ndim)[0] if ndim else 0


# ---- reductions -----------------------------------------------------------------------------------------

def sum(input: Tensor, dim: Dims = None, *, keepdim: bool | None = False, dtype: DType | None = None,
        mask: Tensor | None = None) -> Tensor:
    """Sum of the elements the mask keeps (masked-out elements count as 0)."""
    _check_input("sum", input)
    dims = _canonical_dim(dim, input.ndim)
    filled = _fill(input, mask, 0)
    return opcall.api.sum(filled, dims, bool(keepdim), dtype=_accumulate_dtype(input, dtype))


def prod(input: Tensor, dim: Dims = None, *, keepdim: bool | None = False, dtype: DType | None = None,
         mask: Tensor | None = None) -> Tensor:
    """Product of the elements the mask keeps (masked-out elements count as 1)."""
    _check_input("prod", input)
    dims = _canonical_dim(dim, input.ndim)
    result = _fill(input, mask, 1).to(dtype=_accumulate_dtype(input, dtype))
    if input.ndim == 0:
        return result
    for d in reversed(dims):
        result = opcall.api.prod(result, d, keepdim=bool(keepdim))
    return result


def cumsum(input: Tensor, dim: int, *, dtype: DType | None = None, mask: Tensor | None = None) -> Tensor:
    """Cumulative sum along `dim` where masked-out elements add 0."""
    _check_input("cumsum", input)
    d = _one_dim("cumsum", dim, input.ndim)
    out_dtype = input.dtype if dtype is None else dtype
    return opcall.api.cumsum(_fill(input, mask, 0), d, dtype=out_dtype).to(dtype=out_dtype)


def cumprod(input: Tensor, dim: int, *, dtype: DType | None = None, mask: Tensor | None = None) -> Tensor:
    """Cumulative product along `dim` where masked-out elements multiply by 1."""
    _check_input("cumprod", input)
    d = _one_dim("cumprod", dim, input.ndim)
    out_dtype = input.dtype if dtype is None else dtype
    return opcall.api.cumprod(_fill(input, mask, 1), d, dtype=out_dtype).to(dtype=out_dtype)


def amax(input: Tensor, dim: Dims = None, *, keepdim: bool | None = False, dtype: DType | None = None,
         mask: Tensor | None = None) -> Tensor:
    """Maximum of the kept elements (-inf, or the dtype's lowest value, where none is kept)."""
    _check_input("amax", input)
    filled = _fill(input, mask, _lowest(input.dtype)) if mask is not None else input
    dims = _canonical_dim(dim, input.ndim)
    return opcall.api.amax(filled, dims, bool(keepdim)).to(dtype=input.dtype if dtype is None else dtype)


def amin(input: Tensor, dim: Dims = None, *, keepdim: bool | None = False, dtype: DType | None = None,
         mask: Tensor | None = None) -> Tensor:
    """Minimum of the kept elements (inf, or the dtype's highest value, where none is kept)."""
    _check_input("amin", input)
    filled = _fill(input, mask, _highest(input.dtype)) if mask is not None else input
    dims = _canonical_dim(dim, input.ndim)
    return opcall.api.amin(filled, dims, bool(keepdim)).to(dtype=input.dtype if dtype is None else dtype)


def argmax(input: Tensor, dim: int | None = None, *, keepdim: bool | None = False, dtype: DType | None = None,
           mask: Tensor | None = None) -> Tensor:
    """Index of the maximum among the kept elements (converted to `dtype`, the input's by default)."""
    _check_input("argmax", input)
    filled = _fill(input, mask, _lowest(input.dtype)) if mask is not None else input
    result = opcall.api.argmax(filled, dim, bool(keepdim))
    return result.to(dtype=input.dtype if dtype is None else dtype)


def argmin(input: Tensor, dim: int | None = None, *, keepdim: bool | None = False, dtype: DType | None = None,
           mask: Tensor | None = None) -> Tensor:
    """Index of the minimum among the kept elements (converted to `dtype`, the input's by default)."""
    _check_input("argmin", input)
    filled = _fill(input, mask, _highest(input.dtype)) if mask is not None else input
    result = opcall.api.argmin(filled, dim, bool(keepdim))
    return result.to(dtype=input.dtype if dtype is None else dtype)


def _count(input: Tensor, canonical: Tensor | None, dim: Dims, keepdim: bool) -> Tensor:
    """How many elements each reduced slice keeps (int64)."""
    if canonical is None:
        canonical = opcall.api.ones(tuple(input.shape), dtype=bool_, device=input.device)
    return opcall.api.sum(canonical, _canonical_dim(dim, input.ndim), keepdim, dtype=int64)


def mean(input: Tensor, dim: Dims = None, *, keepdim: bool | None = False, dtype: DType | None = None,
         mask: Tensor | None = None) -> Tensor:
    """Mean of the kept elements (NaN where none is kept); the dtype must be floating."""
    _check_input("mean", input)
    out_dtype = input.dtype if dtype is None else dtype
    if not out_dtype.is_floating_point:
        source = "Input" if dtype is None else "Optional"
        raise ValueError(f"masked.mean(): could not infer the output dtype: the {source} dtype must be a "
                         f"floating dtype, got {out_dtype}")
    canonical = _input_mask(input, mask)
    total = sum(input, dim, keepdim=keepdim, dtype=out_dtype, mask=canonical)
    return total / _count(input, canonical, dim, bool(keepdim))


def median(input: Tensor, dim: int = -1, *, keepdim: bool = False, dtype: DType | None = None,
           mask: Tensor | None = None) -> Tensor:
    """Median of the kept elements along `dim` (NaN where none is kept: an error for integer inputs)."""
    _check_input("median", input)
    out_dtype = input.dtype if dtype is None else dtype
    d = _one_dim("median", dim, input.ndim)
    is_float = input.dtype.is_floating_point
    x = input if is_float else input.to(dtype=float32)
    output = _nanmedian(_fill(x, mask, math.nan), d, keepdim)
    if is_float:
        return output
    if bool(opcall.api.isnan(output).any()):
        raise ValueError("masked.median(): a fully masked-out slice has no median for a non-floating dtype")
    return output.to(dtype=out_dtype)


def _nanmedian(x: Tensor, dim: int, keepdim: bool) -> Tensor:
    """The lower median of the non-NaN values along `dim` (NaN where all are NaN), by sorting: sort puts
    NaN last, so the median of k values is at position (k - 1) // 2."""
    if x.ndim == 0:
        return x.clone()
    values = opcall.api.sort(x, dim)[0]
    valid = opcall.api.sum(opcall.api.logical_not(opcall.api.isnan(x)), dim, True, dtype=int64)
    position = opcall.api.clamp_min(opcall.api.div(valid - 1, 2, rounding_mode="floor"), 0)
    output = opcall.api.gather(values, dim, position)
    return output if keepdim else output.squeeze(dim)


def logsumexp(input: Tensor, dim: Dims = None, *, keepdim: bool = False, dtype: DType | None = None,
              mask: Tensor | None = None) -> Tensor:
    """log(sum(exp)) of the kept elements (-inf where none is kept)."""
    _check_input("logsumexp", input)
    filled = _fill(input, mask, _lowest(input.dtype)) if mask is not None else input
    dims = _canonical_dim(dim, input.ndim)
    result = opcall.api.logsumexp(filled, dims, keepdim=keepdim)
    return result.to(dtype=input.dtype if dtype is None else dtype)


def logaddexp(input: Tensor, other: Tensor, *, dtype: DType | None = None, input_mask: Tensor | None = None,
              other_mask: Tensor | None = None) -> Tensor:
    """log(exp(input) + exp(other)) with masked-out elements of either side counting as -inf."""
    _check_input("logaddexp", input)
    _check_input("logaddexp", other)
    a = _fill(input, input_mask, _lowest(input.dtype)) if input_mask is not None else input
    b = _fill(other, other_mask, _lowest(other.dtype)) if other_mask is not None else other
    return opcall.api.logaddexp(a, b).to(dtype=input.dtype if dtype is None else dtype)


def norm(input: Tensor, ord: float | None = 2.0, dim: Dims = None, *, keepdim: bool | None = False,
         dtype: DType | None = None, mask: Tensor | None = None) -> Tensor:
    """Vector norm of the kept elements (masked-out ones count as 0, as inf for ord=-inf)."""
    _check_input("norm", input)
    order = 2.0 if ord is None else ord
    if mask is not None:
        if order == -math.inf and not input.dtype.is_floating_point:
            raise TypeError(f"masked.norm(): ord=-inf needs a floating input, got {input.dtype}")
        filled = _fill(input, mask, math.inf if order == -math.inf else 0)
    else:
        filled = input
    dims = _canonical_dim(dim, input.ndim)
    return opcall.api.linalg.vector_norm(filled, order, dims, bool(keepdim),
                                         dtype=input.dtype if dtype is None else dtype)


def _std_var(name: str, input: Tensor, dim: Dims, unbiased: bool | None, correction: float | None,
             keepdim: bool, dtype: DType | None, mask: Tensor | None, take_sqrt: bool) -> Tensor:
    _check_input(name, input)
    if unbiased is not None and correction is not None:
        raise ValueError(f"masked.{name}(): give only one of unbiased and correction")
    corr = 1.0
    if unbiased is not None:
        corr = 1.0 if unbiased else 0.0
    if correction is not None:
        corr = float(correction)
    out_dtype = dtype if dtype is not None else (input.dtype if input.dtype.is_floating_point else float32)
    compute = out_dtype if out_dtype.is_floating_point else float32
    canonical = _input_mask(input, mask)
    count = _count(input, canonical, dim, True)
    mean_ = opcall.api.div(sum(input, dim, keepdim=True, dtype=out_dtype, mask=canonical), count)
    x = opcall.api.sub(input, mean_)
    total = sum(x * x, dim, keepdim=keepdim, dtype=compute, mask=canonical)
    if not keepdim:
        count = count.reshape(tuple(total.shape))
    if corr != 0:
        count = opcall.api.clamp_min(count.to(dtype=compute) - corr, 0)
    output = opcall.api.div(total, count).to(dtype=out_dtype)
    return opcall.api.sqrt(output) if take_sqrt else output


def var(input: Tensor, dim: Dims = None, unbiased: bool | None = None, *, correction: float | None = None,
        keepdim: bool | None = False, dtype: DType | None = None, mask: Tensor | None = None) -> Tensor:
    """Variance of the kept elements, divided by max(count - correction, 0) (correction 1 by default)."""
    return _std_var("var", input, dim, unbiased, correction, bool(keepdim), dtype, mask, take_sqrt=False)


def std(input: Tensor, dim: Dims = None, unbiased: bool | None = None, *, correction: float | None = None,
        keepdim: bool | None = False, dtype: DType | None = None, mask: Tensor | None = None) -> Tensor:
    """Standard deviation of the kept elements (the square root of `var`)."""
    return _std_var("std", input, dim, unbiased, correction, bool(keepdim), dtype, mask, take_sqrt=True)


# ---- normalizations -------------------------------------------------------------------------------------

def softmax(input: Tensor, dim: int, *, dtype: DType | None = None, mask: Tensor | None = None) -> Tensor:
    """Softmax along `dim` over the kept elements: masked-out ones get 0 (a fully masked-out slice NaN)."""
    _check_input("softmax", input)
    d = _one_dim("softmax", dim, input.ndim)
    filled = _fill(input, mask, _lowest(input.dtype)) if mask is not None else input
    return opcall.api.nn.functional.softmax(filled, d, dtype=input.dtype if dtype is None else dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: DType | None = None, mask: Tensor | None = None) -> Tensor:
    """log(softmax) along `dim` over the kept elements: masked-out ones get -inf."""
    _check_input("log_softmax", input)
    d = _one_dim("log_softmax", dim, input.ndim)
    filled = _fill(input, mask, _lowest(input.dtype)) if mask is not None else input
    return opcall.api.nn.functional.log_softmax(filled, d, dtype=input.dtype if dtype is None else dtype)


def softmin(input: Tensor, dim: int, *, dtype: DType | None = None, mask: Tensor | None = None) -> Tensor:
    """softmax(-input) along `dim` over the kept elements: masked-out ones get 0."""
    _check_input("softmin", input)
    d = _one_dim("softmin", dim, input.ndim)
    filled = _fill(input, mask, _highest(input.dtype)) if mask is not None else input
    return opcall.api.nn.functional.softmin(filled, d, dtype=input.dtype if dtype is None else dtype)


def normalize(input: Tensor, ord: float, dim: int, *, eps: float = 1e-12, dtype: DType | None = None,
              mask: Tensor | None = None) -> Tensor:
    """The kept elements divided by their `ord`-norm along `dim` (at least `eps`); masked-out ones get 0."""
    _check_input("normalize", input)
    out_dtype = input.dtype if dtype is None else dtype
    filled = _fill(input, mask, 0)
    nrm = norm(input, ord, dim, keepdim=True, dtype=out_dtype, mask=mask)
    denom = opcall.api.maximum(nrm, opcall.api.full((), eps, dtype=nrm.dtype, device=nrm.device))
    return opcall.api.div(filled, denom)

