"""Functions that take their tensors as varargs, as torch/functional.py's (`G.einsum("ij,jk", a, b)`,
`G.meshgrid(x, y, indexing="ij")`, `G.broadcast_tensors(a, b)`); built from ops, so autograd comes free."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from runtime import dtypes, opcall
from runtime import strides as S
from runtime.amp.autocast_mode import autocast_function
from runtime.tensor import Size, Tensor

__all__ = ["block_diag", "broadcast_shapes", "broadcast_tensors", "cartesian_prod", "einsum", "meshgrid",
           "scalar_tensor", "tensordot", "tril_indices", "triu_indices"]


def _G() -> Any:
    return opcall.api


def _tensors(args: Sequence[Any]) -> list[Any]:
    """Varargs tensors, or one list/tuple of them."""
    if len(args) == 1 and isinstance(args[0], list | tuple):
        return list(args[0])
    return list(args)


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape that the given shapes broadcast to (a Size); an error when they do not broadcast."""
    return Size(S.broadcast_shapes(*((s,) if isinstance(s, int) else tuple(s) for s in shapes)))


def broadcast_tensors(*tensors: Any) -> tuple[Any, ...]:
    """The tensors expanded to their common broadcast shape (views; a tensor of that shape is returned as is)."""
    ts = _tensors(tensors)
    shape = S.broadcast_shapes(*(t.shape for t in ts))
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in ts)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Any, ...]:
    """Grids of the 0-D or 1-D inputs: `ij` indexing (the default) or `xy` (the first two dims swapped)."""
    ts = _tensors(tensors)
    indexing = "ij" if indexing is None else indexing
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not ts:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in ts:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a "
                               f"{t.dim()}D tensor of shape {list(t.shape)}")
    if any(t.dtype is not ts[0].dtype for t in ts) or any(t.device != ts[0].device for t in ts):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype and device")
    swap = indexing == "xy" and len(ts) >= 2
    order = [ts[1], ts[0], *ts[2:]] if swap else ts
    shape = [t.numel() for t in order]
    grids = []
    for i, t in enumerate(order):
        view = [1] * len(order)
        view[i] = -1
        grids.append(t.reshape(view).expand(shape))
    if swap:  # the grids of the swapped inputs already have xy's shape; give them back in input order
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@autocast_function("einsum")
def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation: each operand's subscripts (with `...` for broadcast dims and repeated letters for
    diagonals) are aligned on one index order, multiplied with broadcasting and summed over the indices not
    in the output (`->` explicit, else the letters seen once, in alphabetical order)."""
    G = _G()
    ops = _tensors(operands)
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ops):
        more = "fewer" if len(ops) < len(terms) else "more"
        raise RuntimeError(f"einsum(): {more} operands were provided than specified in the equation")
    ell_dims = 0
    for t, term in zip(ops, terms, strict=True):
        letters = term.replace("...", "")
        if "..." in term:
            ell_dims = max(ell_dims, t.dim() - len(letters))
        elif len(letters) != t.dim():
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(letters)}) does not "
                               f"match the number of dimensions ({t.dim()}) for operand {terms.index(term)} and "
                               "no ellipsis was given")
    ell = [f"\0{i}" for i in range(ell_dims)]  # names of the broadcast dims

    def labels(term: str, ndim: int) -> list[str]:
        head, dots, tail = term.partition("...")
        if not dots:
            return list(head)
        return list(head) + ell[ell_dims - (ndim - len(head) - len(tail)):] + list(tail)

    counts: dict[str, int] = {}
    for term in terms:
        for c in term.replace("...", ""):
            if not (c.isalpha() and c.isascii()):
                raise RuntimeError(f"einsum(): invalid subscript given at index {eq.index(c)} in the equation "
                                   f"string, subscripts must be in [a-zA-Z]")
            counts[c] = counts.get(c, 0) + 1
    if arrow:
        out = labels(rhs, ell_dims + len(rhs.replace("...", ""))) if "..." in rhs else list(rhs)
        for c in rhs.replace("...", ""):
            if c not in counts:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any "
                                   "input operand")
    else:
        out = ell + sorted(c for c, n in counts.items() if n == 1)
    order = out + [e for e in ell if e not in out] + sorted({c for c in counts if c not in out})
    sizes: dict[str, int] = {}
    aligned = []
    owners: dict[str, int] = {}  # how many operands hold each label
    for i, (t, term) in enumerate(zip(ops, terms, strict=True)):
        labs = labels(term, t.dim())
        for c in set(labs):
            owners[c] = owners.get(c, 0) + 1
        # a letter repeated within one operand takes its diagonal
        while len(set(labs)) != len(labs):
            c = next(c for c in labs if labs.count(c) > 1)
            d0 = labs.index(c)
            d1 = labs.index(c, d0 + 1)
            if t.shape[d0] != t.shape[d1]:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but the sizes don't "
                                   f"match, {t.shape[d0]} != {t.shape[d1]}")
            t = G.diagonal(t, 0, d0, d1)
            labs = [x for j, x in enumerate(labs) if j not in (d0, d1)] + [c]
        for c, n in zip(labs, t.shape, strict=True):
            if c in sizes and n != sizes[c] and 1 not in (n, sizes[c]):
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which does not "
                                   f"broadcast with previously seen size {sizes[c]}")
            if n != 1 or c not in sizes:
                sizes[c] = n
        perm = sorted(range(len(labs)), key=lambda j: order.index(labs[j]))
        t = G.permute(t, perm)
        present = [labs[j] for j in perm]
        view = [t.shape[present.index(c)] if c in present else 1 for c in order]
        aligned.append(t.reshape(view))
    # Integer operands, as PyTorch's: a label summed out of the one operand that holds it is a plain sum, which
    # widens to int64 (so the whole result is int64, computed here exactly); labels contracted between operands
    # keep the operands' dtype, wrapping.
    widen = any(owners.get(c, 0) == 1 for c in order[len(out):])
    if widen:
        aligned = [t.to(dtypes.int64) if t.dtype.category == dtypes.INTEGRAL else t for t in aligned]
    result = aligned[0]
    for t in aligned[1:]:
        result = result * t
    summed = list(range(len(out), len(order)))
    if summed:
        kept = _bool_contraction(aligned, summed, sizes, out) if result.dtype is dtypes.bool_ and not widen \
            else _kept_integer(result)
        result = result.sum(summed, dtype=None if widen else kept)
    shape = [sizes.get(c, 1) for c in out]
    return result if tuple(result.shape) == tuple(shape) else result.expand(shape).contiguous()


def _bool_contraction(aligned: list[Tensor], summed: list[int], sizes: dict[str, int], out: list[str]) -> Any:
    """The dtype of a bool einsum's sum, as PyTorch's: a label of size > 1 in one operand only is summed
    first (int64); one of size > 1 in two or more is a batched matrix product, which has no bool kernel on
    the CPU or CUDA (NotImplementedError, as `mm` refuses: runtime/kernels/checks.py check_product_dtype)
    unless it has no terms (an empty result or contraction keeps bool); labels of size <= 1 keep bool."""
    shared = [j for j in summed if sum(t.shape[j] > 1 for t in aligned) >= 2]
    if any(t.shape[j] > 1 for j in summed if j not in shared for t in aligned):
        return None  # a one-sided sum widens to int64 first
    terms = math.prod(sizes.get(c, 1) for c in out) * math.prod(max(t.shape[j] for t in aligned) for j in shared)
    if shared and terms and aligned[0].device.type != "meta":
        raise NotImplementedError("einsum(): a contraction of bool tensors is a matrix product, which has no "
                                  "bool kernel (as in PyTorch); convert the operands with .int() or .float() "
                                  "first")
    return dtypes.bool_


def _kept_integer(t: Tensor) -> Any:
    """The dtype a contraction's sum keeps: an integer operand's own (PyTorch's products wrap in it), else None."""
    return t.dtype if t.dtype.category == dtypes.INTEGRAL else None


def tensordot(a: Any, b: Any, dims: Any = 2, out: Any = None) -> Any:
    """torch.tensordot: `dims` an int (the last dims of a against the first of b), a pair of dim lists,
    or a 2 x n tensor of them."""
    G = _G()
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    da = [S.wrap_dim(d, a.dim()) for d in da]
    db = [S.wrap_dim(d, b.dim()) for d in db]
    for x, y in zip(da, db, strict=True):
        # a size-1 dim contracted with a longer one broadcasts, as PyTorch's: the longer side is summed first
        if a.shape[x] == 1 and b.shape[y] != 1:
            b = b.sum(y, keepdim=True, dtype=_kept_integer(b))
        elif b.shape[y] == 1 and a.shape[x] != 1:
            a = a.sum(x, keepdim=True, dtype=_kept_integer(a))
        elif a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} "
                               f"and second has size {b.shape[y]} in dim {y}")
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    k = 1
    for d in da:
        k *= a.shape[d]
    left = a.permute(free_a + da).reshape(-1, k)
    right = b.permute(db + free_b).reshape(k, -1)
    result = G.mm(left, right).reshape([a.shape[d] for d in free_a] + [b.shape[d] for d in free_b])
    if out is not None:
        if tuple(out.shape) != tuple(result.shape):
            raise RuntimeError(f"tensordot: out has shape {list(out.shape)}, the result {list(result.shape)}")
        return out.copy_(result)
    return result


def block_diag(*tensors: Any) -> Any:
    """A block-diagonal matrix with the given tensors (0-, 1- or 2-d) on its diagonal, zeros elsewhere."""
    G = _G()
    ts = [t if t.dim() == 2 else t.reshape(1, -1) if t.dim() == 1 else t.reshape(1, 1) for t in _tensors(tensors)]
    if not ts:
        return G.empty(1, 0)
    for i, t in enumerate(_tensors(tensors)):
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.dim()} dimensions")
    dt = ts[0].dtype
    for t in ts[1:]:
        dt = G.promote_types(dt, t.dtype)
    rows, cols = sum(t.shape[0] for t in ts), sum(t.shape[1] for t in ts)
    out = G.zeros(rows, cols, dtype=dt, device=ts[0].device)
    r = c = 0
    pieces = []
    for t in ts:
        pieces.append((r, c, t))
        r, c = r + t.shape[0], c + t.shape[1]
    for r0, c0, t in pieces:
        if t.numel():
            out[r0:r0 + t.shape[0], c0:c0 + t.shape[1]] = t
    return out


def cartesian_prod(*tensors: Any) -> Any:
    """Every combination of one element of each 1-d tensor, as rows of a (prod of lengths, n) tensor."""
    G = _G()
    ts = _tensors(tensors)
    if len(ts) == 1:
        return ts[0]
    grids = G.meshgrid(*ts, indexing="ij")
    return G.stack([g.reshape(-1) for g in grids], 1)


def _tri_indices(row: int, col: int, offset: int, lower: bool, dtype: Any, device: Any) -> Any:
    import numpy as np

    G = _G()
    r, c = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return G.tensor(np.stack([r, c]).astype(np.int64), dtype=dtype or G.int64, device=device)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None, pin_memory: Any = None) -> Any:
    """The (2, N) indices of the lower triangle (on and below diagonal `offset`) of a row x col matrix."""
    return _tri_indices(row, col, offset, True, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None, pin_memory: Any = None) -> Any:
    """The (2, N) indices of the upper triangle (on and above diagonal `offset`) of a row x col matrix."""
    return _tri_indices(row, col, offset, False, dtype, device)


def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False,
                  pin_memory: Any = None) -> Any:
    """torch.scalar_tensor: a 0-d tensor of `s`, in the default float dtype unless `dtype` says otherwise."""
    from runtime import dtypes

    G = _G()
    if isinstance(s, Tensor):
        s = s.item()
    dt = dtypes.as_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()
    if dt.is_floating_point:  # a float rounds (1e10 as float16 is inf), as PyTorch's
        return G.tensor(s, dtype=dt, device=device, requires_grad=requires_grad)
    # an integral type takes the value as a fill does, as PyTorch's: an integer in the type's range or its negative
    # mirror wraps (-5 as uint8 is 251); a value outside both is an overflow error
    return G.full((), s, dtype=dt, device=device, requires_grad=requires_grad)
