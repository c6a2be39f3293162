"""Meta kernels of the hand-written elementwise ops: the special functions of runtime/kernels/special.py
(integer and bool inputs give the default float dtype, as there), division with a rounding mode, clamp,
nan_to_num and frexp (Note [Meta tensors] in runtime/meta_array.py). Shapes broadcast and outputs are laid
out as the generated pointwise Meta kernels lay theirs out.
"""

from __future__ import annotations

from typing import Any

from runtime import dtypes, return_types
from runtime.kernels._xp import result_type
from runtime.kernels.meta_pointwise import new
from runtime.kernels.pointwise_ops import _MODES
from runtime.kernels.special import _result_dtype
from runtime.tensor import Tensor


def _unary(self: Tensor) -> Tensor:
    return new("special", _result_dtype(self), (self,))


def _binary(self: Tensor, other: Tensor) -> Tensor:
    return new("special", _result_dtype(self, other), (self, other))


def digamma(self: Tensor) -> Tensor:
    return _unary(self)


def erfinv(self: Tensor) -> Tensor:
    return _unary(self)


def i0(self: Tensor) -> Tensor:
    return _unary(self)


def special_erfcx(self: Tensor) -> Tensor:
    return _unary(self)


def special_ndtri(self: Tensor) -> Tensor:
    return _unary(self)


def special_log_ndtr(self: Tensor) -> Tensor:
    return _unary(self)


def special_entr(self: Tensor) -> Tensor:
    return _unary(self)


def special_i0e(self: Tensor) -> Tensor:
    return _unary(self)


def special_i1(self: Tensor) -> Tensor:
    return _unary(self)


def special_i1e(self: Tensor) -> Tensor:
    return _unary(self)


def special_bessel_j0(self: Tensor) -> Tensor:
    return _unary(self)


def special_bessel_j1(self: Tensor) -> Tensor:
    return _unary(self)


def special_bessel_y0(self: Tensor) -> Tensor:
    return _unary(self)


def special_bessel_y1(self: Tensor) -> Tensor:
    return _unary(self)


def special_modified_bessel_k0(self: Tensor) -> Tensor:
    return _unary(self)


def special_modified_bessel_k1(self: Tensor) -> Tensor:
    return _unary(self)


def special_scaled_modified_bessel_k0(x: Tensor) -> Tensor:
    return _unary(x)


def special_scaled_modified_bessel_k1(x: Tensor) -> Tensor:
    return _unary(x)


def special_spherical_bessel_j0(x: Tensor) -> Tensor:
    return _unary(x)


def special_airy_ai(x: Tensor) -> Tensor:
    return _unary(x)


def igamma(self: Tensor, other: Tensor) -> Tensor:
    return _binary(self, other)


def igammac(self: Tensor, other: Tensor) -> Tensor:
    return _binary(self, other)


def special_zeta(self: Tensor, other: Tensor) -> Tensor:
    return _binary(self, other)


def special_chebyshev_polynomial_t(x: Tensor, n: Tensor) -> Tensor:
    return _binary(x, n)


def special_chebyshev_polynomial_u(x: Tensor, n: Tensor) -> Tensor:
    return _binary(x, n)


def special_chebyshev_polynomial_v(x: Tensor, n: Tensor) -> Tensor:
    return _binary(x, n)


def special_chebyshev_polynomial_w(x: Tensor, n: Tensor) -> Tensor:
    return _binary(x, n)


def special_shifted_chebyshev_polynomial_t(x: Tensor, n: Tensor) -> Tensor:
    return _binary(x, n)


def special_shifted_chebyshev_polynomial_u(x: Tensor, n: Tensor) -> Tensor:
    return _binary(x, n)


def special_shifted_chebyshev_polynomial_v(x: Tensor, n: Tensor) -> Tensor:
    return _binary(x, n)


def special_shifted_chebyshev_polynomial_w(x: Tensor, n: Tensor) -> Tensor:
    return _binary(x, n)


def special_hermite_polynomial_h(x: Tensor, n: Tensor) -> Tensor:
    return _binary(x, n)


def special_hermite_polynomial_he(x: Tensor, n: Tensor) -> Tensor:
    return _binary(x, n)


def special_laguerre_polynomial_l(x: Tensor, n: Tensor) -> Tensor:
    return _binary(x, n)


def special_legendre_polynomial_p(x: Tensor, n: Tensor) -> Tensor:
    return _binary(x, n)


def polygamma(n: int, self: Tensor) -> Tensor:
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _unary(self)


def div_mode(self: Tensor, other: Any, rounding_mode: str | None = None) -> Tensor:
    if rounding_mode not in _MODES:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    dt = result_type(self, other)
    if rounding_mode is None and not dt.is_floating_point:
        dt = dtypes.get_default_dtype()
    if dt is dtypes.bool_ and rounding_mode is not None:
        raise NotImplementedError(f"\"div_{rounding_mode}\" not implemented for 'Bool'")
    return new("div", dt, (self, other) if isinstance(other, Tensor) else (self,))


def div_scalar_mode(self: Tensor, other: Any, rounding_mode: str | None = None) -> Tensor:
    return div_mode(self, other, rounding_mode)


def clamp(self: Tensor, min: Any = None, max: Any = None) -> Tensor:
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if self._dtype is dtypes.bool_:
        raise NotImplementedError("\"clamp\" not implemented for 'Bool'")
    return new("clamp", result_type(self, *(v for v in (min, max) if v is not None)), (self,))


def nan_to_num(self: Tensor, nan: float | None = None, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    return new("nan_to_num", self._dtype, (self,))


def frexp(self: Tensor) -> tuple[Tensor, Tensor]:
    if not self._dtype.is_floating_point:
        raise RuntimeError(f"torch.frexp() only supports floating-point dtypes, got {self.dtype}")
    cls = return_types.make("frexp", ("mantissa", "exponent"))
    return cls(new("frexp", self._dtype, (self,)), new("frexp", dtypes.int32, (self,)))
