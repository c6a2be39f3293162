"""In-place forms (`t.op_(...)`) of ops declared without one: the functional op's result is written back
into `self` with `copy_`, so autograd records the op's own nodes and a CopyBackwards, and a result whose
dtype `self` cannot hold is refused as PyTorch refuses it (`int_tensor.logit_()`).

Methods whose argument order differs from the function's (`t.polygamma(n)` is `polygamma(n, t)`,
`t.where(c, y)` is `where(c, t, y)`) are set here too. runtime/api.py installs them onto Tensor (Note
[Tensor methods from upper layers] in runtime/tensor.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runtime import opcall
from runtime.tensor import install_methods

# in-place method -> the functional op it writes back
INPLACE = {
    "addmv_": "addmv", "addbmm_": "addbmm", "baddbmm_": "baddbmm", "addr_": "addr", "addmm_": "addmm",
    "cumsum_": "cumsum", "cumprod_": "cumprod", "true_divide_": "true_divide", "eq_": "eq", "ne_": "ne",
    "lt_": "lt", "le_": "le", "gt_": "gt", "ge_": "ge", "logical_not_": "logical_not",
    "logical_and_": "logical_and", "logical_or_": "logical_or", "logical_xor_": "logical_xor", "i0_": "i0",
    "ldexp_": "ldexp", "igamma_": "igamma", "igammac_": "igammac", "mvlgamma_": "mvlgamma",
    "float_power_": "float_power", "sgn_": "sgn", "nan_to_num_": "nan_to_num", "renorm_": "renorm",
    "tril_": "tril", "triu_": "triu", "digamma_": "digamma", "erfinv_": "erfinv", "logit_": "logit",
    "index_copy_": "index_copy", "index_reduce_": "index_reduce", "conj_physical_": "conj_physical",
    "masked_scatter_": "masked_scatter", "put_": "put",
}  # (pointwise ops of native_functions.yaml get their in-place method generated: none of them is listed here)

# in-place forms that PyTorch writes through their out= form, so a `self` of another shape (which broadcasts to
# the result: the functional op checked that) is resized to the result's, as an out= tensor is
RESIZED = frozenset({"addbmm_"})


def _inplace(op: str, name: str) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = getattr(opcall.api, op)(opcall.inplace_source(self), *args, **kwargs)
        return opcall.write_back(name, self, result, resize=name in RESIZED)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"Tensor.{name}(*args, **kwargs) -> Tensor: {op}(self, *args, **kwargs) written back into this "
                      f"tensor (its dtype must hold the result's); returns self.")
    return method


def _polygamma(self: Any, n: int) -> Any:
    """`t.polygamma(n)`: the n-th derivative of the digamma function at each element (`polygamma(n, t)`)."""
    return opcall.api.polygamma(n, self)


def _polygamma_(self: Any, n: int) -> Any:
    """`t.polygamma_(n)`: `polygamma(n, t)` written back into t; returns t."""
    return self.copy_(opcall.api.polygamma(n, opcall.inplace_source(self)))


def _where(self: Any, condition: Any, other: Any) -> Any:
    """`t.where(condition, y)`: t where condition holds, else y (the tensor is where's `self`, not `condition`)."""
    return opcall.api.where(condition, self, other)


def install() -> None:
    """Set the methods that the generated ones do not already provide."""
    from runtime.tensor import Tensor
    install_methods(**{name: _inplace(op, name) for name, op in INPLACE.items() if not hasattr(Tensor, name)})
    install_methods(polygamma=_polygamma, polygamma_=_polygamma_, where=_where)
