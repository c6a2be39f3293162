"""Operators of torch's namespace built from other ops (CompositeImplicitAutograd: autograd comes from
their parts): the gamma-family composites, logit, float_power, rsub, cross, diff, rot90, ravel, ..."""

from __future__ import annotations

import math
from typing import Any

from runtime import dtypes, opcall
from runtime.strides import wrap_dim


def _G() -> Any:
    return opcall.api


def _floating(t: Any) -> Any:
    return t if t.dtype.is_floating_point else t.to(dtypes.get_default_dtype())


def mvlgamma(self: Any, p: int) -> Any:
    G = _G()
    if self.dtype is dtypes.bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _floating(self)
    if x.numel() and not x.is_meta and bool((x <= (p - 1) / 2).any()):  # a meta tensor has no values to check
        raise RuntimeError(f"All elements must be greater than (p-1)/2 = {(p - 1) / 2}")
    out = G.lgamma(x)
    for j in range(1, p):
        out = out + G.lgamma(x - j / 2)
    return out + p * (p - 1) / 4 * math.log(math.pi)


def logit(self: Any, eps: float | None = None) -> Any:
    x = _floating(self)
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    return (x / (1 - x)).log()


def float_power_Tensor_Tensor(self: Any, exponent: Any) -> Any:
    return _G().pow(self.to(dtypes.float64), exponent.to(dtypes.float64))


def float_power_Tensor_Scalar(self: Any, exponent: Any) -> Any:
    return _G().pow(self.to(dtypes.float64), float(exponent))


def float_power_Scalar(self: Any, exponent: Any) -> Any:
    e = exponent.to(dtypes.float64)
    return _G().full_like(e, float(self)) ** e


def true_divide(self: Any, other: Any) -> Any:
    return _G().div(self, other)


def rsub_Tensor(self: Any, other: Any, alpha: Any = 1) -> Any:
    return _G().sub(other, self, alpha=alpha)


def rsub_Scalar(self: Any, other: Any, alpha: Any = 1) -> Any:
    return _G().sub(other, self * alpha) if alpha != 1 else other - self


def cross(self: Any, other: Any, dim: int | None = None) -> Any:
    if dim is None:  # the first dim of size 3 (deprecated in PyTorch, still its default)
        shape = _G().broadcast_shapes(self.shape, other.shape)
        dim = next((i for i, n in enumerate(shape) if n == 3), None)
        if dim is None:
            raise RuntimeError(f"no dimension of size 3 in input of shape {list(shape)}")
    return _G().linalg_cross(self, other, dim=dim)


def ravel(self: Any) -> Any:
    """A contiguous flattened tensor: a view of a contiguous self, else a copy (reshape would keep a view
    with a stride other than 1, as of a uniformly strided self; PyTorch's ravel never does)."""
    return self.contiguous().view(-1)


def rot90(self: Any, k: int = 1, dims: Any = (0, 1)) -> Any:
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if self.dim() < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.dim()}")
    d0, d1 = (d % self.dim() for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return self.flip([d1]).transpose(d0, d1)
    if k == 2:
        return self.flip([d0, d1])
    if k == 3:
        return self.flip([d0]).transpose(d0, d1)
    return self.clone()


def diff(self: Any, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:
    G = _G()
    if self.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"diff: order must be non-negative but got {n}")
    if n == 0:  # the input itself, without prepend and append (as PyTorch)
        return self
    x = self
    if prepend is not None or append is not None:
        parts = [t for t in (prepend, self, append) if t is not None]
        x = G.cat(parts, dim)
    for _ in range(n):
        size = x.shape[dim]
        if size == 0:
            break
        a, b = x.narrow(dim, 1, size - 1), x.narrow(dim, 0, size - 1)
        x = a.logical_xor(b) if x.dtype is dtypes.bool_ else a - b
    return x


def kron(self: Any, other: Any) -> Any:
    nd = max(self.dim(), other.dim())
    a = self.reshape((1,) * (nd - self.dim()) + tuple(self.shape))
    b = other.reshape((1,) * (nd - other.dim()) + tuple(other.shape))
    ai = a.reshape([s for n in a.shape for s in (n, 1)])
    bi = b.reshape([s for n in b.shape for s in (1, n)])
    return (ai * bi).reshape([x * y for x, y in zip(a.shape, b.shape, strict=True)])


def inner(self: Any, other: Any) -> Any:
    if self.dim() == 0 or other.dim() == 0:
        return self * other
    return _G().tensordot(self, other, ([-1], [-1]))


def vdot(self: Any, other: Any) -> Any:
    return _G().dot(self, other)


def baddbmm(self: Any, batch1: Any, batch2: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    return _scaled_sum(self, _G().bmm(batch1, batch2), beta, alpha, product_first=True)


def addbmm(self: Any, batch1: Any, batch2: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    prod = _G().bmm(batch1, batch2)
    return _scaled_sum(self, prod.sum(0, dtype=prod.dtype), beta, alpha, product_first=True)


def addmv(self: Any, mat: Any, vec: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    return _scaled_sum(self, _G().mv(mat, vec), beta, alpha)


def addr(self: Any, vec1: Any, vec2: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    if self.dtype is dtypes.bool_:
        return (self & bool(beta)) | (_G().outer(vec1, vec2) & bool(alpha))
    return _scaled_sum(self, _G().outer(vec1, vec2), beta, alpha)


def _scaled_sum(self: Any, prod: Any, beta: Any, alpha: Any, product_first: bool = False) -> Any:
    """beta * self + alpha * prod, where beta == 0 ignores self (NaN included), as PyTorch. With integer
    operands the scalars are cast to the integer type first (truncated, as PyTorch: beta=0.6 is 0).
    `product_first`: the sum is laid out as the (row-major) product, not as self, as PyTorch's baddbmm and
    addbmm lay theirs out (a pointwise sum follows its first operand's layout: Note [Pointwise output
    strides]); the values are the same either way."""
    G = _G()
    integral = not (self.is_floating_point() or prod.is_floating_point()) and dtypes.bool_ not in (self.dtype,
                                                                                                   prod.dtype)
    if integral:
        beta, alpha = int(beta), int(alpha)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return G.zeros_like(self).expand_as(prod) + prod if tuple(self.shape) != tuple(prod.shape) else \
            prod + G.zeros_like(prod)
    scaled = self * beta if beta != 1 else self
    return prod + scaled if product_first else scaled + prod


def take_along_dim(self: Any, indices: Any, dim: int | None = None) -> Any:
    G = _G()
    if dim is None:
        return self.reshape(-1).gather(0, indices.reshape(-1))
    d = dim % self.dim() if self.dim() else 0
    shape_s, shape_i = list(self.shape), list(indices.shape)
    shape_s[d] = shape_i[d] = 1
    b = list(G.broadcast_shapes(shape_s, shape_i))
    sb, ib = b.copy(), b.copy()
    sb[d], ib[d] = self.shape[d], indices.shape[d]
    return self.expand(sb).gather(d, indices.expand(ib))


def diag_embed(self: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
    G = _G()
    nd = self.dim() + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)   # out of range: IndexError, as PyTorch's
    if d1 == d2:
        raise RuntimeError("diagonal dimensions cannot be identical")
    n = self.shape[-1] + abs(offset)
    out_shape = list(self.shape[:-1])
    lo, hi = sorted((d1, d2))
    out_shape.insert(lo, n)
    out_shape.insert(hi, n)
    out = G.zeros(out_shape, dtype=self.dtype, device=self.device)
    out.diagonal(offset, d1, d2).copy_(self)
    return out


def nanmean(self: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    G = _G()
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"nanmean(): expected input to have floating point dtype but got {self.dtype.name}")
    keep = self.isnan().logical_not()
    return G.nansum(self, dim, keepdim=keepdim, dtype=dtype) / keep.sum(dim, keepdim=keepdim)


def logcumsumexp(self: Any, dim: int) -> Any:
    G = _G()
    x = _floating(self)
    if x.dim() == 0:
        if dim not in (0, -1):
            raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got {dim})")
        return x.clone()
    m = x.amax(dim, keepdim=True).detach() if x.numel() else G.zeros_like(x)
    m = G.where(m.isfinite(), m, G.zeros_like(m))
    return (x - m).exp().cumsum(dim).log() + m


def msort(self: Any) -> Any:
    return self.sort(0)[0]


def trapezoid_x(y: Any, x: Any, dim: int = -1) -> Any:
    G = _G()
    n = y.shape[dim] if y.dim() else 0
    if n == 0:
        return y.sum(dim) * 0
    dx = x.diff(dim=dim if x.dim() == y.dim() else -1) if x.dim() else x
    if x.dim() == 1 and y.dim() > 1:
        shape = [1] * y.dim()
        shape[dim] = n - 1
        dx = dx.reshape(shape)
    avg = (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) / 2
    return G.sum(avg * dx, dim)


def trapezoid_dx(y: Any, dx: Any = 1, dim: int = -1) -> Any:
    n = y.shape[dim] if y.dim() else 0
    if n == 0:
        return y.sum(dim) * 0
    return (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)).sum(dim) * (dx / 2)


def cumulative_trapezoid_x(y: Any, x: Any, dim: int = -1) -> Any:
    n = y.shape[dim]
    dx = x.diff(dim=dim if x.dim() == y.dim() else -1)
    if x.dim() == 1 and y.dim() > 1:
        shape = [1] * y.dim()
        shape[dim] = n - 1
        dx = dx.reshape(shape)
    return ((y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) / 2 * dx).cumsum(dim)


def cumulative_trapezoid_dx(y: Any, dx: Any = 1, dim: int = -1) -> Any:
    n = y.shape[dim]
    return ((y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) * (dx / 2)).cumsum(dim)


def diagflat(self: Any, offset: int = 0) -> Any:
    return _G().diag(self.reshape(-1), offset)


def logdet(self: Any) -> Any:
    G = _G()
    d = G.linalg_det(self)
    return G.where(d < 0, G.full_like(d, math.nan), d.log())


def sgn(self: Any) -> Any:
    return self.sign()


def identity(self: Any) -> Any:
    return self


def conj_physical(self: Any) -> Any:
    return self.clone()


def sum_to_size(self: Any, size: Any) -> Any:
    size = tuple(size)
    lead = self.dim() - len(size)
    if lead < 0 or any(n != 1 and n != m for n, m in zip(size, self.shape[lead:], strict=True)):
        raise RuntimeError(f"size {list(size)} is not expandable to size {list(self.shape)}.")
    dims = list(range(lead)) + [lead + i for i, n in enumerate(size) if n == 1 and self.shape[lead + i] != 1]
    if not size:  # a 0-d target: the whole sum (integers and bool give int64), as PyTorch
        return self.sum()
    if not dims:  # nothing to sum: the input itself, in its dtype (as PyTorch)
        return self
    return self.sum(dims, keepdim=True).reshape(size)


def ldexp(self: Any, other: Any) -> Any:
    """self * 2**other in the operands' promoted floating dtype (integers give the default dtype), as PyTorch's:
    float16 stays float16. A half-precision result is computed in float32 first and rounded once, so
    ldexp(2**-10, 20) is 1024 rather than inf * 2**-10."""
    G = _G()
    dt = G.result_type(self, other)
    if not dt.is_floating_point:
        dt = dtypes.get_default_dtype()
    acc = dtypes.float64 if dt is dtypes.float64 else dtypes.float32
    out = self.to(acc) * G.pow(G.full_like(other, 2.0, dtype=acc), other)
    return out if out.dtype is dt else out.to(dt)


def fill_Scalar(self: Any, value: Any) -> Any:
    G = _G()  # through where, so the result takes part in autograd (its gradient to self is zero)
    return G.where(G.ones_like(self, dtype=dtypes.bool_), G.full_like(self, value), self)


def fill_Tensor(self: Any, value: Any) -> Any:
    if value.dim() != 0:
        raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions.")
    return _G().zeros_like(self) + value.to(self.dtype)


def split_with_sizes(self: Any, split_sizes: Any, dim: int = 0) -> Any:
    sizes = list(split_sizes)
    d = dim % self.dim() if self.dim() else 0
    if sum(sizes) != self.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {self.shape[d]} (input tensor's "
                           f"size at dimension {dim}), but got split_sizes={sizes}")
    out, start = [], 0
    for n in sizes:
        out.append(self.narrow(d, start, n))
        start += n
    return out


def tensor_split_sections(self: Any, sections: int, dim: int = 0) -> Any:
    if isinstance(sections, (list, tuple)):  # `tensor_split(x, (2, 4))`: the binding tells the int and int[]
        return tensor_split_indices(self, sections, dim)  # overloads apart by keyword only
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    n = self.shape[dim]
    q, r = divmod(n, sections)
    return split_with_sizes(self, [q + 1] * r + [q] * (sections - r), dim)


def tensor_split_indices(self: Any, indices: Any, dim: int = 0) -> Any:
    n = self.shape[dim]
    out, prev = [], 0
    for i in list(indices) + [n]:
        i = max(0, min(n, i if i >= 0 else i + n))
        start = min(prev, n)
        out.append(self.narrow(dim, start, max(i - start, 0)))
        prev = max(prev, i)
    return out


def tensor_split_tensor(self: Any, tensor_indices_or_sections: Any, dim: int = 0) -> Any:
    t = tensor_indices_or_sections
    if t.dtype is not dtypes.int64:
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                           f"{t.dtype.name}")
    if t.dim() > 1:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                           f"one-dimensional tensor, but got a tensor with {t.dim()} dims")
    if t.dim() == 0:
        return tensor_split_sections(self, int(t.item()), dim)
    return tensor_split_indices(self, [int(v) for v in t.tolist()], dim)


def _nsplit(self: Any, arg: Any, dim: int, name: str, min_dim: int) -> Any:
    if self.dim() < min_dim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, but got a tensor "
                           f"with {self.dim()} dimensions!")
    if isinstance(arg, int):
        if arg == 0 or self.shape[dim] % arg:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the "
                               f"dimension {self.shape[dim]} is not divisible by the split_size {arg}!")
        return tensor_split_sections(self, arg, dim)
    return tensor_split_indices(self, list(arg), dim)


def hsplit_int(self: Any, sections: int) -> Any:
    return _nsplit(self, sections, 1 if self.dim() > 1 else 0, "hsplit", 1)


def hsplit_array(self: Any, indices: Any) -> Any:
    return _nsplit(self, indices, 1 if self.dim() > 1 else 0, "hsplit", 1)


def vsplit_int(self: Any, sections: int) -> Any:
    return _nsplit(self, sections, 0, "vsplit", 2)


def vsplit_array(self: Any, indices: Any) -> Any:
    return _nsplit(self, indices, 0, "vsplit", 2)


def dsplit_int(self: Any, sections: int) -> Any:
    return _nsplit(self, sections, 2, "dsplit", 3)


def dsplit_array(self: Any, indices: Any) -> Any:
    return _nsplit(self, indices, 2, "dsplit", 3)


def unsafe_chunk(self: Any, chunks: int, dim: int = 0) -> Any:
    """chunk's views, as PyTorch's (the views opgen makes are always safe to modify in place)."""
    return self.chunk(chunks, dim)


def unsafe_split(self: Any, split_size: int, dim: int = 0) -> Any:
    """split's views, as PyTorch's (the views opgen makes are always safe to modify in place)."""
    return self.split(split_size, dim)


def cov(self: Any, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Any:
    if self.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{self.dim()} dimensions")
    x = self if self.dim() == 2 else self.reshape(1, -1)
    x = _floating(x)
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights.to(x.dtype)
    if aweights is not None:
        w = aweights.to(x.dtype) if w is None else w * aweights
    if w is None:
        avg = x.mean(1, keepdim=True)
        total = float(n)
        norm = total - correction
        c = (x - avg) @ (x - avg).t()
        out = c / max(norm, 0.0)  # no degrees of freedom left: inf/NaN, as PyTorch
    else:
        total = w.sum()
        avg = (x * w).sum(1, keepdim=True) / total
        if correction == 0:
            norm = total
        elif aweights is None:
            norm = total - correction
        else:
            norm = total - correction * (w * aweights).sum() / total
        xc = x - avg
        out = (xc * w) @ xc.t() / norm
    return out.squeeze() if self.dim() < 2 or x.shape[0] == 1 else out


def corrcoef(self: Any) -> Any:
    G = _G()
    c = cov(self)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    std = d.sqrt()
    out = c / std.reshape(-1, 1) / std.reshape(1, -1)
    return G.clamp(out, -1, 1)


def renorm(self: Any, p: Any, dim: int, maxnorm: Any) -> Any:
    if self.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.dim()} dimensions")
    d = dim % self.dim()
    others = [i for i in range(self.dim()) if i != d]
    norms = self.norm(p, others, keepdim=True) if others else self.abs()
    factor = _G().where(norms > maxnorm, maxnorm / (norms + 1e-7), _G().ones_like(norms))
    return self * factor

