"""Kernels of the special functions that NumPy lacks (gamma family, error-function inverses, Bessel and
Airy functions, orthogonal polynomials), computed by SciPy's `scipy.special` on the host.

Every kernel is CompositeExplicitAutograd: a CPU tensor is computed in place of its array; a CUDA
tensor's array is brought to the host and the result sent back (a correct answer on every backend rather
than none; these functions have no generated CUDA kernel yet). Integer and bool inputs compute in the
default float dtype, float16 in float32 then rounded, as PyTorch's CPU kernels do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from runtime import dtypes
from runtime.kernels._xp import wrap
from runtime.kernels.cpu_pointwise import cast_array
from runtime.kernels.dense_copy import laid_out
from runtime.tensor import Tensor


def _sc() -> Any:
    import scipy.special
    return scipy.special


def _host(a: Any) -> np.ndarray:
    if isinstance(a, np.ndarray):
        return np.asarray(a)
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _result_dtype(*ts: Any) -> dtypes.DType:
    dt = dtypes.result_type(*ts)
    return dt if dt.is_floating_point else dtypes.get_default_dtype()


def _computed_in(a: np.ndarray, compute: Any) -> np.ndarray:
    return a if a.dtype == compute else cast_array(a, compute)  # a broadcast input stays broadcast


def _apply(fn: Callable[..., Any], dt: dtypes.DType, *ts: Any) -> Tensor:
    """`fn` over the tensors' values (numbers pass through), computed in `dt` (float16: float32)."""
    like = next(t._data for t in ts if isinstance(t, Tensor))
    compute = np.float32 if dt is dtypes.float16 else dt.np
    args = [_computed_in(_host(t._data), compute) if isinstance(t, Tensor) else t for t in ts]
    with np.errstate(all="ignore"):
        r = np.asarray(fn(*args), dtype=dt.np)
    r = laid_out(r, [t._data for t in ts if isinstance(t, Tensor)])  # Note [Pointwise output strides]
    if not isinstance(like, np.ndarray) or like.__class__ is not np.ndarray:
        from runtime.kernels._xp import xp_of
        r = xp_of(like).asarray(r)
    return wrap(r, like, dt)


def _unary(fn: Callable[[Any], Any], self: Tensor) -> Tensor:
    return _apply(fn, _result_dtype(self), self)


def _binary(fn: Callable[[Any, Any], Any], a: Tensor, b: Tensor) -> Tensor:
    return _apply(fn, _result_dtype(a, b), a, b)


# ---- the gamma family --------------------------------------------------------------------------------

def digamma(self: Tensor) -> Tensor:
    # PyTorch: digamma(0) is -inf (SciPy: NaN for the pole at 0, sign of the zero aside)
    return _unary(lambda x: np.where(x == 0, -np.inf, _sc().psi(x)), self)


def polygamma(n: int, self: Tensor) -> Tensor:
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        return digamma(self)
    return _unary(lambda x: _sc().polygamma(n, x), self)


def igamma(self: Tensor, other: Tensor) -> Tensor:
    return _binary(lambda a, x: _sc().gammainc(a, x), self, other)


def igammac(self: Tensor, other: Tensor) -> Tensor:
    return _binary(lambda a, x: _sc().gammaincc(a, x), self, other)


def special_zeta(self: Tensor, other: Tensor) -> Tensor:
    return _binary(lambda x, q: _sc().zeta(x, q), self, other)


# ---- error functions and the normal distribution -----------------------------------------------------

def erfinv(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().erfinv(x), self)


def special_erfcx(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().erfcx(x), self)


def special_ndtri(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().ndtri(x), self)


def special_log_ndtr(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().log_ndtr(x), self)


def special_entr(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().entr(x), self)


# ---- Bessel and Airy functions -----------------------------------------------------------------------

def i0(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().i0(x), self)


def special_i0e(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().i0e(x), self)


def special_i1(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().i1(x), self)


def special_i1e(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().i1e(x), self)


def special_bessel_j0(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().j0(x), self)


def special_bessel_j1(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().j1(x), self)


def special_bessel_y0(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().y0(x), self)


def special_bessel_y1(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().y1(x), self)


def special_modified_bessel_k0(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().k0(x), self)


def special_modified_bessel_k1(self: Tensor) -> Tensor:
    return _unary(lambda x: _sc().k1(x), self)


def special_scaled_modified_bessel_k0(x: Tensor) -> Tensor:
    return _unary(lambda v: _sc().k0e(v), x)


def special_scaled_modified_bessel_k1(x: Tensor) -> Tensor:
    return _unary(lambda v: _sc().k1e(v), x)


def special_spherical_bessel_j0(x: Tensor) -> Tensor:
    return _unary(lambda v: _sc().spherical_jn(0, v), x)


def special_airy_ai(x: Tensor) -> Tensor:
    return _unary(lambda v: _sc().airy(v)[0], x)


# ---- orthogonal polynomials (n is truncated to an integer; a negative n gives 0, as PyTorch) ---------

def _polynomial(kind: str, x: Tensor, n: Tensor, shifted: bool = False) -> Tensor:
    def f(xv: Any, nv: Any) -> Any:
        sc = _sc()
        if shifted:  # the shifted polynomials: P*(x) = P(2x - 1)
            xv = 2 * xv - 1
        k = np.trunc(nv)
        kk = np.where(k < 0, 0, k).astype(np.int64)
        if kind == "t":
            r = sc.eval_chebyt(kk, xv)
        elif kind == "u":
            r = sc.eval_chebyu(kk, xv)
        elif kind == "v":  # the third and fourth kinds by their recurrence
            r = _recurrence(xv, kk, lambda z: 2 * z - 1, lambda z: 2 * z)
        elif kind == "w":
            r = _recurrence(xv, kk, lambda z: 2 * z + 1, lambda z: 2 * z)
        elif kind == "h":
            r = sc.eval_hermite(kk, xv)
        elif kind == "he":
            r = sc.eval_hermitenorm(kk, xv)
        elif kind == "l":
            r = sc.eval_laguerre(kk, xv)
        else:  # "p"
            r = sc.eval_legendre(kk, xv)
        return np.where(k < 0, 0, r)
    return _apply(f, _result_dtype(x, n), x, n)


def _recurrence(x: Any, n: Any, first: Callable[[Any], Any], step: Callable[[Any], Any]) -> Any:
    """P_0 = 1, P_1 = first(x), P_{k+1} = step(x) P_k - P_{k-1} (the Chebyshev V and W polynomials)."""
    x, n = np.broadcast_arrays(np.asarray(x), np.asarray(n))
    p0 = np.ones_like(x, dtype=np.result_type(x, np.float32))
    p1 = first(x).astype(p0.dtype)
    out = np.where(n == 0, p0, p1)
    top = int(n.max()) if n.size else 0
    for k in range(2, top + 1):
        p0, p1 = p1, step(x) * p1 - p0
        out = np.where(n == k, p1, out)
    return out


def _shifted(kind: str, x: Tensor, n: Tensor) -> Tensor:
    return _polynomial(kind, x, n, shifted=True)


def special_chebyshev_polynomial_t(x: Tensor, n: Tensor) -> Tensor:
    return _polynomial("t", x, n)


def special_chebyshev_polynomial_u(x: Tensor, n: Tensor) -> Tensor:
    return _polynomial("u", x, n)


def special_chebyshev_polynomial_v(x: Tensor, n: Tensor) -> Tensor:
    return _polynomial("v", x, n)


def special_chebyshev_polynomial_w(x: Tensor, n: Tensor) -> Tensor:
    return _polynomial("w", x, n)


def special_shifted_chebyshev_polynomial_t(x: Tensor, n: Tensor) -> Tensor:
    return _shifted("t", x, n)


def special_shifted_chebyshev_polynomial_u(x: Tensor, n: Tensor) -> Tensor:
    return _shifted("u", x, n)


def special_shifted_chebyshev_polynomial_v(x: Tensor, n: Tensor) -> Tensor:
    return _shifted("v", x, n)


def special_shifted_chebyshev_polynomial_w(x: Tensor, n: Tensor) -> Tensor:
    return _shifted("w", x, n)


def special_hermite_polynomial_h(x: Tensor, n: Tensor) -> Tensor:
    return _polynomial("h", x, n)


def special_hermite_polynomial_he(x: Tensor, n: Tensor) -> Tensor:
    return _polynomial("he", x, n)


def special_laguerre_polynomial_l(x: Tensor, n: Tensor) -> Tensor:
    return _polynomial("l", x, n)


def special_legendre_polynomial_p(x: Tensor, n: Tensor) -> Tensor:
    return _polynomial("p", x, n)
