"""PyTorch's other names for ops opgen declares once (CompositeImplicitAutograd): `arccos` is `acos`,
`divide` is `div`, `greater` is `gt`, `fix` is `trunc`, `ger` is `outer` ... Each alias calls its op, so it
has that op's kernels on every device, its gradient and its errors; no formula or kernel is repeated.
The in-place aliases call the op's in-place method, which makes the leaf and overlap checks."""

from __future__ import annotations

import warnings
from typing import Any

from runtime import dtypes, opcall


def _G() -> Any:
    return opcall.api


# native_functions.yaml's dispatch paths name plain top-level `def`s (codegen/kernel_targets.py).
def absolute(self: Any) -> Any:
    return _G().abs(self)


def absolute_(self: Any) -> Any:
    return self.abs_()


def arccos(self: Any) -> Any:
    return _G().acos(self)


def arccos_(self: Any) -> Any:
    return self.acos_()


def arcsin(self: Any) -> Any:
    return _G().asin(self)


def arcsin_(self: Any) -> Any:
    return self.asin_()


def arctan(self: Any) -> Any:
    return _G().atan(self)


def arctan_(self: Any) -> Any:
    return self.atan_()


def arccosh(self: Any) -> Any:
    return _G().acosh(self)


def arccosh_(self: Any) -> Any:
    return self.acosh_()


def arcsinh(self: Any) -> Any:
    return _G().asinh(self)


def arcsinh_(self: Any) -> Any:
    return self.asinh_()


def arctanh(self: Any) -> Any:
    return _G().atanh(self)


def arctanh_(self: Any) -> Any:
    return self.atanh_()


def arctan2(self: Any, other: Any) -> Any:
    return _G().atan2(self, other)


def arctan2_(self: Any, other: Any) -> Any:
    return self.atan2_(other)


def negative(self: Any) -> Any:
    return _G().neg(self)


def negative_(self: Any) -> Any:
    return self.neg_()


def fix(self: Any) -> Any:
    return _G().trunc(self)


def fix_(self: Any) -> Any:
    return self.trunc_()


def divide(self: Any, other: Any, rounding_mode: str | None = None) -> Any:
    if rounding_mode is None:
        return _G().div(self, other)
    return _G().div(self, other, rounding_mode=rounding_mode)


def divide_(self: Any, other: Any, rounding_mode: str | None = None) -> Any:
    if rounding_mode is None:
        return self.div_(other)
    # div has no in-place form with rounding_mode: the result is written back as inplace_variants does
    result = _G().div(self, other, rounding_mode=rounding_mode)
    if not dtypes.can_cast(result.dtype, self.dtype):
        raise RuntimeError(f"result type {result.dtype.name} can't be cast to the desired output type "
                           f"{self.dtype.name}")
    if tuple(result.shape) != tuple(self.shape):
        raise RuntimeError(f"divide_: output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(result.shape)}")
    return self.copy_(result)


def multiply(self: Any, other: Any) -> Any:
    return _G().mul(self, other)


def multiply_(self: Any, other: Any) -> Any:
    return self.mul_(other)


def subtract(self: Any, other: Any, alpha: Any = 1) -> Any:
    return _G().sub(self, other, alpha=alpha)


def subtract_(self: Any, other: Any, alpha: Any = 1) -> Any:
    return self.sub_(other, alpha=alpha)


def greater(self: Any, other: Any) -> Any:
    return _G().gt(self, other)


def greater_(self: Any, other: Any) -> Any:
    return self.gt_(other)


def greater_equal(self: Any, other: Any) -> Any:
    return _G().ge(self, other)


def greater_equal_(self: Any, other: Any) -> Any:
    return self.ge_(other)


def less(self: Any, other: Any) -> Any:
    return _G().lt(self, other)


def less_(self: Any, other: Any) -> Any:
    return self.lt_(other)


def less_equal(self: Any, other: Any) -> Any:
    return _G().le(self, other)


def less_equal_(self: Any, other: Any) -> Any:
    return self.le_(other)


def not_equal(self: Any, other: Any) -> Any:
    return _G().ne(self, other)


def not_equal_(self: Any, other: Any) -> Any:
    return self.ne_(other)


def clip_(self: Any, min: Any = None, max: Any = None) -> Any:
    return _G().clamp_(self, min, max)


def ger(self: Any, vec2: Any) -> Any:
    return _G().outer(self, vec2)


def adjoint(self: Any) -> Any:
    if self.dim() == 0:
        warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().", UserWarning,
                      stacklevel=2)
        return self.view_as(self)
    if self.dim() < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of matrices. Got "
                           f"{self.dim()}-D tensor.")
    return _G().transpose(self, -2, -1)  # the conjugate transpose: the transpose for opgen's real dtypes


def hardshrink(self: Any, lambd: Any = 0.5) -> Any:
    return _G().nn.functional.hardshrink(self, lambd)


def matrix_power(self: Any, n: int) -> Any:
    return _G().linalg.matrix_power(self, n)


def slogdet(self: Any) -> Any:
    sign, logabsdet = _G().linalg_slogdet(self)
    return sign, logabsdet
