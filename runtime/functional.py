"""Functions that take their tensors as varargs, as torch/functional.py's (`G.einsum("ij,jk", a, b)`,
`G.meshgrid(x, y, indexing="ij")`, `G.broadcast_tensors(a, b)`); built from ops, so autograd comes free."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runtime import opcall
from runtime import strides as S
from runtime.tensor import Size, Tensor

__all__ = ["broadcast_shapes", "broadcast_tensors", "einsum", "meshgrid"]


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
    for i, (t, term) in enumerate(zip(ops, terms, strict=True)):
        labs = labels(term, t.dim())
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
    result = aligned[0]
    for t in aligned[1:]:
        result = result * t
    summed = list(range(len(out), len(order)))
    if summed:
        result = result.sum(summed)
    shape = [sizes.get(c, 1) for c in out]
    return result if tuple(result.shape) == tuple(shape) else result.expand(shape).contiguous()
