"""Helper functions that derivatives.yaml formulas may call.

Every public top-level function of this module is callable in a formula (codegen/derivatives.py reads
the names with `ast`; it never imports this file). The helpers are written with tensor methods and the
generated op API only, so a formula that uses them runs on every device through the dispatcher and is
itself differentiable (Note [create_graph runs formulas through the dispatcher], engine.py).

Shapes are tuples of ints; `dim` arguments follow PyTorch: an int, a list of ints, or None for "all".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from runtime import opcall
from runtime.autograd.grad_mode import is_grad_enabled
from runtime.kernels._xp import wrap

Tensor = Any  # the runtime Tensor (runtime/tensor.py)
Shape = tuple[int, ...]


def wrap_dim(dim: int, ndim: int) -> int:
    """A possibly negative dimension as a non-negative index (a 0-d tensor accepts 0 and -1)."""
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-size}, {size - 1}], "
                         f"but got {dim})")
    return dim % size


def wrap_dims(dim: int | Sequence[int] | None, ndim: int) -> list[int]:
    """`dim` as a sorted list of non-negative dimensions; None or [] means every dimension."""
    if dim is None:
        return list(range(ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return list(range(ndim))
    return sorted({wrap_dim(d, ndim) for d in dims})


def numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


def sum_to(grad: Tensor, shape: Sequence[int]) -> Tensor:
    """Reduce a gradient that was broadcast in the forward back to `shape` (sum over broadcast dims)."""
    shape = tuple(shape)
    gshape = tuple(grad.shape)
    if gshape == shape:
        return grad
    lead = len(gshape) - len(shape)
    if lead < 0:
        raise RuntimeError(f"sum_to: gradient of shape {list(gshape)} cannot be reduced to {list(shape)}")
    inner = [lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1]
    if inner:
        grad = grad.sum(inner, keepdim=True)
    if lead:
        grad = grad.sum(list(range(lead)))  # no keepdim: the leading dims go away, no reshape needed
    return grad


def expand_backward(grad: Tensor, shape: Sequence[int]) -> Tensor:
    """Gradient of `expand(self, size)`: sum over the expanded dimensions."""
    return sum_to(grad, shape)


def unsqueeze_multiple(t: Tensor, dims: int | Sequence[int] | None, ndim: int) -> Tensor:
    """Insert size-1 dimensions at `dims` (positions in a tensor of `ndim` dimensions)."""
    for d in wrap_dims(dims, ndim):
        t = t.unsqueeze(d)
    return t


def sum_backward(grad: Tensor, shape: Sequence[int], dim: int | Sequence[int] | None = None,
                 keepdim: bool = False) -> Tensor:
    """Gradient of `sum(self, dim, keepdim)`: put the reduced dims back, then expand to `shape`."""
    shape = tuple(shape)
    if not keepdim and len(shape) > 0:
        grad = unsqueeze_multiple(grad, dim, len(shape))
    return grad.expand(shape)


def mean_backward(grad: Tensor, shape: Sequence[int], dim: int | Sequence[int] | None = None,
                  keepdim: bool = False) -> Tensor:
    """Gradient of `mean(self, dim, keepdim)`."""
    shape = tuple(shape)
    count = numel(shape[d] for d in wrap_dims(dim, len(shape))) if shape else 1
    return sum_backward(grad, shape, dim, keepdim) / max(count, 1)


def maybe_multiply(t: Tensor, s: Any) -> Tensor:
    """`t * s`, skipping the multiplication when `s` is the number 1 (keeps the graph small)."""
    if isinstance(s, int | float) and not isinstance(s, bool) and s == 1:
        return t
    return t * s


def permute_backwards(grad: Tensor, dims: Sequence[int]) -> Tensor:
    """Gradient of `permute(self, dims)`: permute back with the inverse permutation."""
    ndim = len(dims)
    inverse = [0] * ndim
    for i, d in enumerate(dims):
        inverse[wrap_dim(d, ndim)] = i
    return grad.permute(inverse)


def restore_reduced_dims(grad: Tensor, dim: int | Sequence[int] | None, keepdim: bool, ndim: int) -> Tensor:
    """A reduced gradient with the reduced dims put back (size 1), ready to broadcast against the input."""
    if keepdim or ndim == 0:
        return grad
    return unsqueeze_multiple(grad, dim, ndim)


def reduce_like(grad: Tensor, like: Tensor) -> Tensor:
    """`sum_to(grad, like.shape)`: for formulas whose inputs broadcast."""
    return sum_to(grad, tuple(like.shape))


# -- helpers of the operator library (runtime/kernels/*: pointwise, reductions, nn, indexing) ---------

def _ops() -> Any:
    return opcall.api


def zeros_like_grad(grad: Tensor) -> Tensor:
    """A zero gradient shaped like `grad` (for ops that are piecewise constant: floor, sign ...)."""
    return _ops().zeros_like(grad)


def clamp_max_mask(min: Tensor, max: Tensor | None) -> Tensor:
    """Where `min` (not `max`) decides clamp's value: everywhere, or where min <= max."""
    return min == min if max is None else min <= max


def clamp_backward(grad: Tensor, self: Tensor, min: Any, max: Any) -> Tensor:
    """Gradient of clamp for `self`: passes where min <= self <= max."""
    G = _ops()
    mask = None
    if min is not None:
        mask = self >= min
    if max is not None:
        upper = self <= max
        mask = upper if mask is None else G.logical_and(mask, upper)
    return grad if mask is None else G.where(mask, grad, 0)


def mish_backward(grad: Tensor, self: Tensor) -> Tensor:
    """d/dx x*tanh(softplus(x)) = tanh(sp) + x*sigmoid(x)*(1 - tanh(sp)^2)."""
    G = _ops()
    t = G.tanh(G.softplus(self))
    return grad * (t + self * G.sigmoid(self) * (1 - t * t))


def prod_backward(grad: Tensor, self: Tensor, result: Tensor, dim: int | None = None,
                  keepdim: bool = False) -> Tensor:
    """Gradient of prod: result / x where x != 0; with one zero in a slice, the product of the others."""
    G = _ops()
    if dim is None:
        flat = self.reshape([-1])
        return prod_backward(grad, flat, result, 0, False).reshape(self.shape)
    if self.dim() == 0:
        return grad
    g = restore_reduced_dims(grad, dim, keepdim, self.dim())
    r = restore_reduced_dims(result, dim, keepdim, self.dim())
    zero = self == 0
    zeros = G.sum(zero, [dim], keepdim=True)
    others = G.prod(G.where(zero, 1, self), dim, keepdim=True)
    safe = G.where(zero, 1, self)
    at_zero = G.where(zeros == 1, g * others, 0)
    elsewhere = G.where(zeros == 0, g * r / safe, 0)
    return G.where(zero, at_zero, elsewhere)


def evenly_distribute_backward(grad: Tensor, self: Tensor, result: Tensor, dim: Any = None,
                               keepdim: bool = False) -> Tensor:
    """Gradient of max/min/amax/amin: shared evenly among the positions that hold the extreme value."""
    G = _ops()
    dims = wrap_dims(dim, self.dim())
    g = restore_reduced_dims(grad, dims, keepdim, self.dim())
    r = restore_reduced_dims(result, dims, keepdim, self.dim())
    mask = self == r
    if self.dim() == 0:
        return G.where(mask, g, 0)
    count = G.sum(mask, dims, keepdim=True)
    return G.where(mask, g / count, 0)


def value_selecting_reduction_backward(grad: Tensor, dim: int, indices: Tensor, shape: Sequence[int],
                                       keepdim: bool) -> Tensor:
    """Gradient of max.dim/min.dim/sort/topk: `grad` scattered back to the selected `indices` along `dim`."""
    G = _ops()
    shape = tuple(shape)
    if len(shape) == 0:
        return grad.reshape(shape)
    if not keepdim:
        grad = grad.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    return G.zeros(shape, dtype=grad.dtype, device=grad.device).scatter(dim, indices, grad)


def var_backward(grad: Tensor, self: Tensor, dim: Any = None, correction: Any = None, keepdim: bool = False) -> Tensor:
    """Gradient of var: 2 (x - mean) / (N - correction)."""
    dims = wrap_dims(dim, self.dim())
    n = numel([self.shape[d] for d in dims]) if self.dim() else 1
    c = 1 if correction is None else correction
    g = restore_reduced_dims(grad, dims, keepdim, self.dim())
    centered = self - _ops().mean(self, dims, keepdim=True) if self.dim() else self - self
    return g * centered * (2.0 / max(n - c, 0)) if n - c > 0 else g * centered * math.inf


def std_backward(result: Tensor, grad: Tensor, self: Tensor, dim: Any = None, correction: Any = None,
                 keepdim: bool = False) -> Tensor:
    """Gradient of std = sqrt(var): var's gradient scaled by 1 / (2 std), zero where std is 0."""
    G = _ops()
    g = G.where(result == 0, 0, grad / (2 * result))
    return var_backward(g, self, dim, correction, keepdim)


def logsumexp_backward(grad: Tensor, self: Tensor, result: Tensor, dim: Any, keepdim: bool) -> Tensor:
    g = restore_reduced_dims(grad, dim, keepdim, self.dim())
    r = restore_reduced_dims(result, dim, keepdim, self.dim())
    return g * (self - r).exp()


def norm_backward(grad: Tensor, self: Tensor, ord: Any, result: Tensor, dim: Any = None,
                  keepdim: bool = False) -> Tensor:
    """Gradient of linalg_vector_norm for any order (0 where the norm is 0, as PyTorch)."""
    G = _ops()
    ord = float(ord)
    dims = wrap_dims(dim, self.dim())
    g = restore_reduced_dims(grad, dims, keepdim, self.dim())
    r = restore_reduced_dims(result, dims, keepdim, self.dim())
    if ord == 0:
        return G.zeros_like(self)
    if ord == 1:
        return self.sign() * g
    if math.isinf(ord):
        mask = self.abs() == r
        count = G.sum(mask, dims, keepdim=True) if self.dim() else 1
        return G.where(mask, self.sign() * g / count, 0)
    if ord == 2:
        return G.where(r == 0, 0, self * (g / r))
    if ord < 1:  # |x|^(ord-1) is infinite at 0: those entries get 0 (as PyTorch)
        scale = self.sign() * G.where(self == 0, 0, self.abs() ** (ord - 1))
        return scale * g * r ** (1 - ord)
    # sign(x) |x|^(ord-1) (finite at x = 0 for ord > 1) over the norm^(ord-1), divided by 1 where the norm is
    # 0, so that the second derivatives are finite there
    scale = self.sign() * self.abs() ** (ord - 1)
    zero = r == 0
    return G.where(zero, 0, scale * g / G.where(zero, 1, r) ** (ord - 1))


def cumsum_backward(grad: Tensor, dim: int) -> Tensor:
    """Gradient of cumsum: the reversed cumulative sum of the gradient."""
    if grad.dim() == 0:
        return grad
    return grad.flip([dim]).cumsum(dim).flip([dim])


def cat_backward(grad: Tensor, tensors: Sequence[Tensor], dim: int) -> list[Tensor]:
    """Gradient of cat: the slices of `grad` that each input became (1-D empty inputs get empty grads)."""
    G = _ops()
    out = []
    offset = 0
    for t in tensors:
        if t.dim() == 1 and t.shape[0] == 0:
            out.append(G.zeros_like(t))
            continue
        d = wrap_dim(dim, t.dim())
        size = t.shape[d]
        out.append(G.narrow(grad, d, offset, size))
        offset += size
    return out


def repeat_backward(grad: Tensor, repeats: Sequence[int], shape: Sequence[int]) -> Tensor:
    """Gradient of repeat: fold each repeated dim into (repeat, size) and sum the repeats away."""
    shape = tuple(shape)
    lead = len(repeats) - len(shape)
    full = (1,) * lead + shape
    split: list[int] = []
    for r, s in zip(repeats, full, strict=True):
        split += [int(r), s]
    if numel(split) == 0:
        return _ops().zeros(shape, dtype=grad.dtype, device=grad.device)
    g = grad.reshape(split).sum(list(range(0, 2 * len(full), 2)))
    return g.reshape(shape)


def roll_backward(grad: Tensor, shifts: Sequence[int] | int, dims: Sequence[int] | int) -> Tensor:
    shifts = [shifts] if isinstance(shifts, int) else list(shifts)
    return grad.roll([-s for s in shifts], dims)


def softmax_backward(grad: Tensor, result: Tensor, dim: int, self: Tensor) -> Tensor:
    """Gradient of softmax: y * (g - sum(g * y, dim)); in the input's dtype."""
    if result.dim() == 0:
        return (grad * 0).to(self.dtype)
    g = result * (grad - (grad * result).sum([dim], keepdim=True))
    return g if g.dtype is self.dtype else g.to(self.dtype)


def log_softmax_backward(grad: Tensor, result: Tensor, dim: int, self: Tensor) -> Tensor:
    """Gradient of log_softmax: g - exp(y) * sum(g, dim); in the input's dtype."""
    if result.dim() == 0:
        return (grad * 0).to(self.dtype)
    g = grad - result.exp() * grad.sum([dim], keepdim=True)
    return g if g.dtype is self.dtype else g.to(self.dtype)


def linear_input_backward(grad: Tensor, weight: Tensor) -> Tensor:
    """d linear / d input: grad @ weight (grad * weight along a new last dim for a 1-D weight)."""
    if weight.dim() == 1:
        return grad.unsqueeze(-1) * weight
    return grad.matmul(weight)


def linear_weight_backward(grad: Tensor, input: Tensor, weight: Tensor) -> Tensor:
    """d linear / d weight: grad.t() @ input over the leading dims folded into rows, a contiguous
    (out, in) result (Note [Linear as one node] in runtime/kernels/linalg.py)."""
    if input.dim() == 2 and weight.dim() == 2:
        return grad.t().mm(input)
    n_in = input.shape[-1]
    x = input.reshape(-1, n_in)
    if weight.dim() == 1:
        return grad.reshape(1, -1).mm(x).reshape(n_in)
    return grad.reshape(-1, weight.shape[0]).t().mm(x)


def cross_entropy_indices_backward(grad: Tensor, self: Tensor, target: Tensor, weight: Tensor | None,
                                   reduction: Any, ignore_index: int) -> Tensor:
    """Gradient of _cross_entropy_indices: coef * w[t] * (softmax(self) - onehot(t)) over the class dim
    (Note [Cross entropy as one node] in runtime/kernels/nn_ops.py)."""
    from runtime.kernels import nn_ops
    if not is_grad_enabled() and not self.is_meta:  # a plain backward: on the arrays (CPU or CUDA)
        return nn_ops.cross_entropy_indices_backward(grad, self, target, weight, reduction, ignore_index)
    G = _ops()  # create_graph or meta tensors (no arrays): the same formula with ops, differentiable again
    cdim = 0 if self.dim() == 1 else 1
    valid = target != ignore_index
    safe = G.where(valid, target, 0)
    onehot = G.one_hot(safe, self.shape[cdim]).to(self.dtype)
    if cdim == 1:
        onehot = G.movedim(onehot, [-1], [1])
    if weight is None:
        w = valid.to(self.dtype)
    else:
        w = G.where(valid, G.reshape(G.index_select(weight, 0, G.reshape(safe, (-1,))), safe.shape), 0)
    r = nn_ops.reduction_name(reduction)
    coef = grad / G.sum(w) if r == "mean" else grad
    coef = G.where(valid, coef * w, 0)  # an ignored target adds nothing, even when the mean divides by 0
    return (G.softmax(self, cdim) - onehot) * G.unsqueeze(coef, cdim)


def index_select_backward(grad: Tensor, shape: Sequence[int], dim: int, index: Tensor) -> Tensor:
    """Gradient of index_select: the gradient rows added back at `index` (repeats accumulate)."""
    G = _ops()
    zeros = G.zeros(tuple(shape), dtype=grad.dtype, device=grad.device)
    if len(tuple(shape)) == 0:
        return G.sum(grad)
    return zeros.index_add(dim, index.reshape([-1]), grad)


def index_add_source_backward(grad: Tensor, dim: int, index: Tensor, source: Tensor, alpha: Any) -> Tensor:
    if grad.dim() == 0:
        return maybe_multiply(grad.reshape(source.shape), alpha)
    g = grad.index_select(dim, index.reshape([-1]))
    return maybe_multiply(g.reshape(source.shape), alpha)


def gather_backward(grad: Tensor, shape: Sequence[int], dim: int, index: Tensor) -> Tensor:
    """Gradient of gather: the gradient scattered (and summed) back to the gathered positions."""
    G = _ops()
    return G.zeros(tuple(shape), dtype=grad.dtype, device=grad.device).scatter_add(dim, index, grad)


def embedding_backward(grad: Tensor, indices: Tensor, num_weights: int, padding_idx: int,
                       scale_grad_by_freq: bool) -> Tensor:
    """Gradient of embedding: rows of `grad` summed into the rows they were read from (padding row: 0)."""
    G = _ops()
    dim = grad.shape[-1]
    flat = indices.reshape([-1])
    g = grad.reshape([-1, dim])
    if padding_idx >= 0:
        g = G.where((flat == padding_idx).unsqueeze(1), 0, g)
    if scale_grad_by_freq:
        ones = G.ones((flat.shape[0],), dtype=grad.dtype, device=grad.device)
        counts = G.zeros((num_weights,), dtype=grad.dtype, device=grad.device).index_add(0, flat, ones)
        g = g / counts.index_select(0, flat).unsqueeze(1)
    return G.zeros((num_weights, dim), dtype=grad.dtype, device=grad.device).index_add(0, flat, g)


def dropout_scale(p: float, train: bool | None) -> float:
    if train is False:
        return 1.0
    return 0.0 if p == 1 else 1.0 / (1.0 - p)


def max_pool2d_double_backward(grad: Tensor, indices: Tensor) -> Tensor:
    """Gradient of max_pool2d_with_indices_backward in its grad_output: `grad` (input-shaped) read back at
    each output's argmax."""
    lead = len(indices.shape) - 2
    flat = grad.reshape([*grad.shape[:lead], -1])
    return _ops().gather(flat, lead, indices.reshape([*indices.shape[:lead], -1])).reshape(indices.shape)


# Note [Linear algebra gradients]
# The gradients of torch.linalg's decompositions (runtime/kernels/linalg_lapack.py), as PyTorch derives them
# for real inputs: with mT the transpose of the last two dims, inv: -X^T g X^T; det: g det A^-T; solve: the
# gradient of B solves A^T gB = g and A's is -gB X^T; cholesky: Phi(L^T gL) (lower triangle, halved
# diagonal) carried through L^-T . L^-1 and symmetrised; qr (m >= n): (gQ + Q copyltu(M)) R^-T with
# M = R gR^T - gQ^T Q; svd: Townsend's formula on the reduced factors, F_ij = 1 / (s_j^2 - s_i^2). They are
# gauge-invariant only for losses that are (as in PyTorch); batch dims broadcast as in the forward.
def _mT(t: Tensor) -> Tensor:
    return t.transpose(-2, -1)


def linalg_det_backward(grad: Tensor, A: Tensor, result: Tensor) -> Tensor:
    g = (grad * result).unsqueeze(-1).unsqueeze(-1)
    return g * _mT(_ops().linalg_inv(A))


def linalg_solve_backward(grad: Tensor, A: Tensor, B: Tensor, result: Tensor, left: bool) -> tuple[Tensor, Tensor]:
    """(gA, gB) of X = solve(A, B) (left: A X = B; else X A = B); B may be a (batch of) vector(s)."""
    G = _ops()
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    gB = G.linalg_solve(_mT(A), grad, left=left)
    if vector:
        gA = -(gB.unsqueeze(-1) * result.unsqueeze(-2)) if left else -(result.unsqueeze(-1) * gB.unsqueeze(-2))
    else:
        gA = -gB.matmul(_mT(result)) if left else -_mT(result).matmul(gB)
    return sum_to(gA, A.shape), sum_to(gB, B.shape)


def linalg_cholesky_backward(grad: Tensor, L: Tensor, upper: bool) -> Tensor:
    G = _ops()
    if upper:
        L, grad = _mT(L), _mT(grad)
    M = _mT(L).matmul(grad.tril())
    P = M.tril() - 0.5 * M.tril().triu()
    Linv = G.linalg_inv(L)
    S = _mT(Linv).matmul(P).matmul(Linv)
    return 0.5 * (S + _mT(S))


def linalg_qr_backward(gQ: Tensor, gR: Tensor, Q: Tensor, R: Tensor, mode: str) -> Tensor:
    G = _ops()
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                           "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                           "linalg.qr.")
    if mode == "complete" and m > n:
        raise NotImplementedError("The QR decomposition is not differentiable when mode='complete' and "
                                  "nrows > ncols.")
    if m < n:  # A = [X | Y] with X square: X = Q R[:, :m] is a square QR, and Y = Q R[:, m:]
        U, V = R.narrow(-1, 0, m), R.narrow(-1, m, n - m)
        gU, gV = gR.narrow(-1, 0, m), gR.narrow(-1, m, n - m)
        gX = linalg_qr_backward(gQ + Q.matmul(V).matmul(_mT(gV)), gU, Q, U, "reduced")
        return G.cat([gX, Q.matmul(gV)], -1)
    M = R.matmul(_mT(gR)) - _mT(gQ).matmul(Q)
    low = M.tril(-1)
    copyltu = low + _mT(low) + (M - M.tril(-1) - M.triu(1))
    C = gQ + Q.matmul(copyltu)
    return _mT(G.linalg_solve(R, _mT(C)))


def linalg_svd_backward(gU: Tensor, gS: Tensor, gVh: Tensor, U: Tensor, S: Tensor, Vh: Tensor,
                        full_matrices: bool) -> Tensor:
    G = _ops()
    m, n, k = U.shape[-2], Vh.shape[-1], S.shape[-1]
    if full_matrices and m != n:  # the extra singular vectors are arbitrary: their gradients are dropped
        U, gU = U.narrow(-1, 0, k), gU.narrow(-1, 0, k)
        Vh, gVh = Vh.narrow(-2, 0, k), gVh.narrow(-2, 0, k)
    V, gV = _mT(Vh), _mT(gVh)
    s2 = S * S
    diff = s2.unsqueeze(-2) - s2.unsqueeze(-1)  # [i, j] = s_j^2 - s_i^2
    eye = G.eye(k, dtype=S.dtype, device=S.device)
    F = G.where(eye.bool(), 0, 1 / G.where(eye.bool(), 1, diff))
    Ut_gU, Vt_gV = _mT(U).matmul(gU), _mT(V).matmul(gV)
    J = F * (Ut_gU - _mT(Ut_gU))
    K = F * (Vt_gV - _mT(Vt_gV))
    Sd = S.unsqueeze(-2)  # scales columns: X * Sd is X @ diag(S)
    inner = J * Sd + eye * gS.unsqueeze(-2) + S.unsqueeze(-1) * K
    gA = U.matmul(inner).matmul(Vh)
    if m > k:
        gA = gA + ((gU - U.matmul(Ut_gU)) / Sd).matmul(Vh)
    if n > k:
        gA = gA + (U / Sd).matmul(_mT(gV - V.matmul(Vt_gV)))
    return gA


def _layer_norm_stats(input: Tensor, mean: Tensor, rstd: Tensor, dims: list[int], eps: float) -> tuple[Tensor, Tensor]:
    """The saved statistics, or, while recording a double backward (create_graph), the same statistics
    recomputed with ops so that their dependence on `input` is part of the graph."""
    if is_grad_enabled() and input.requires_grad:
        G = _ops()
        return G.mean(input, dims, keepdim=True), G.rsqrt(G.var(input, dims, correction=0, keepdim=True) + eps)
    return mean, rstd


def layer_norm_backward_input(grad: Tensor, input: Tensor, mean: Tensor, rstd: Tensor, weight: Tensor | None,
                              normalized_shape: Sequence[int], eps: float) -> Tensor:
    """d layer_norm / d input: rstd * (g - mean(g) - xhat * mean(g * xhat)) over the normalized dims, with
    g = grad * weight and xhat = (input - mean) * rstd (written with ops, so it is differentiable again)."""
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    if not is_grad_enabled() and not input.is_meta:  # a plain backward: one pass over the arrays (CPU, CUDA)
        a, g_ = input._data, grad._data
        xh = (a - mean._data) * rstd._data
        if weight is not None:
            g_ = g_ * weight._data
        axes = tuple(dims)
        dx = rstd._data * (g_ - g_.mean(axis=axes, keepdims=True) - xh * (g_ * xh).mean(axis=axes, keepdims=True))
        return wrap(dx, a, input._dtype)
    mean, rstd = _layer_norm_stats(input, mean, rstd, dims, eps)
    xhat = (input - mean) * rstd
    g = grad if weight is None else grad * weight
    return rstd * (g - g.mean(dims, keepdim=True) - xhat * (g * xhat).mean(dims, keepdim=True))


def layer_norm_backward_weight(grad: Tensor, input: Tensor, mean: Tensor, rstd: Tensor,
                               shape: Sequence[int], eps: float) -> Tensor:
    """d layer_norm / d weight: grad * xhat summed over the leading (batch) dims."""
    dims = list(range(input.dim() - len(shape), input.dim()))
    mean, rstd = _layer_norm_stats(input, mean, rstd, dims, eps)
    return sum_to(grad * ((input - mean) * rstd), shape)


# --- issue 21: linalg gradients (eigh, svdvals, slogdet, lu) ------------------------------------------------

def linalg_eigh_backward(gL: Tensor, gV: Tensor, L: Tensor, V: Tensor) -> Tensor:
    """V (skew(V^T gV) / (L_j - L_i) off the diagonal, gL on it) V^T. A zero off-diagonal entry (no gradient
    for those eigenvectors) stays zero even where eigenvalues repeat."""
    G = _ops()
    VtgV = _mT(V).matmul(gV)
    skew = (VtgV - _mT(VtgV)) * 0.5
    gaps = L.unsqueeze(-2) - L.unsqueeze(-1)  # [i, j] = L_j - L_i
    eye = G.eye(L.shape[-1], dtype=L.dtype, device=L.device)
    off = eye == 0
    inner = G.where(off & (skew != 0), skew / G.where(off & (gaps != 0), gaps, 1), 0) + eye * gL.unsqueeze(-2)
    return V.matmul(inner).matmul(_mT(V))


def linalg_svdvals_backward(grad: Tensor, A: Tensor) -> Tensor:
    """U diag(grad) Vh, from a thin SVD of A: the singular values' gradient needs no division by their gaps
    (so a zero or repeated singular value gives no NaN)."""
    G = _ops()
    U, _, Vh = G.linalg_svd(A, False)
    return (U * grad.unsqueeze(-2)).matmul(Vh)


def linalg_pinv_backward(grad: Tensor, P: Tensor, A: Tensor) -> Tensor:
    """The pseudo-inverse P of A (m x n) moves, at constant rank, by dP = -P dA P + P P^T dA^T (I - A P)
    + (I - P A) dA^T P^T P; its transpose applied to the gradient g of P is
    gA = -P^T g P^T + (I - A P) g^T P P^T + P^T P g^T (I - P A), written with products only (the
    projections as X - A (P X) and X - (X P) A), so that it is differentiable again."""
    Pt, gt = _mT(P), _mT(grad)
    first = -(Pt.matmul(grad).matmul(Pt))
    x = gt.matmul(P).matmul(Pt)
    second = x - A.matmul(P.matmul(x))
    y = Pt.matmul(P).matmul(gt)
    third = y - y.matmul(P).matmul(A)
    return first + second + third


def linalg_slogdet_backward(grad: Tensor, A: Tensor) -> Tensor:
    """d log|det A| = A^{-T}, scaled by each matrix's grad."""
    G = _ops()
    return _mT(G.linalg_inv(A)) * grad.unsqueeze(-1).unsqueeze(-1)


def linalg_lu_backward(gL: Tensor, gU: Tensor, P: Tensor, L: Tensor, U: Tensor) -> Tensor:
    """A = P L U. Square: gA = P L^{-T} (tril(L^T gL, -1) + triu(gU U^T)) U^{-T}. Wide (m < n): the square
    block's formula with L's extra gradient -L^{-T} gU2 U2^T (U2 = L^{-1} A2), and gA2 = L^{-T} gU2. Tall
    (m > n): with U's extra gradient -L2^T gL2 U^{-T} (L2 = A2 U^{-1}), and gA2 = gL2 U^{-T}."""
    G = _ops()
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)

    def square(gl: Tensor, gu: Tensor, lower: Tensor, upper: Tensor) -> Tensor:
        inner = _mT(lower).matmul(gl).tril(-1) + gu.matmul(_mT(upper)).triu()
        left = G.linalg_solve(_mT(lower), inner)
        return _mT(G.linalg_solve(upper, _mT(left)))

    if m == n:
        return P.matmul(square(gL, gU, L, U))
    if m < n:
        U1, U2 = U.narrow(-1, 0, k), U.narrow(-1, k, n - k)
        gU1, gU2 = gU.narrow(-1, 0, k), gU.narrow(-1, k, n - k)
        g2 = G.linalg_solve(_mT(L), gU2)  # L^{-T} gU2
        gA1 = square(gL - g2.matmul(_mT(U2)), gU1, L, U1)
        return P.matmul(G.cat([gA1, g2], -1))
    L1, L2 = L.narrow(-2, 0, k), L.narrow(-2, k, m - k)
    gL1, gL2 = gL.narrow(-2, 0, k), gL.narrow(-2, k, m - k)
    g2 = _mT(G.linalg_solve(U, _mT(gL2)))  # gL2 U^{-T}
    gA1 = square(gL1, gU - _mT(L2).matmul(g2), L1, U)
    return P.matmul(G.cat([gA1, g2], -2))
