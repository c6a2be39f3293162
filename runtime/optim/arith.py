"""The arithmetic an optimizer's update rule is written in: on tensors, or on the host arrays under them.

Note [One update rule, two kinds of operand]
An update is a dozen element-wise ops per parameter; through the dispatcher each one checks dtypes,
shapes and overlap again, and on the small tensors of a training step those checks cost more than the
arithmetic. So each optimizer writes its rule once, as a function of an `arith` object, and runs it with
one of two:
- `TENSOR_ARITH`: the operands are tensors and every op dispatches, so the rule runs on any device and
  dtype and raises PyTorch's errors;
- `ARRAY_ARITH`: the operands are the NumPy arrays under the tensors. `arith_for` picks it only where
  nothing in the update can fail or alias: every parameter of the group, its gradient and its state
  tensors are plain float32/float64 arrays of one dtype and shape, none a view, and every
  hyper-parameter is a Python number.
Pure arithmetic is written with the operators both kinds of operand have (`-g`, `g * g`, `x / c`,
`x + eps`), plus `add(x, y, alpha)` (x + alpha * y as the one op `Tensor.add` is) and `sqrt`. The
in-place updates (`mul_`, `add_`, and `take_max_`: t = max(t, y)) take the tensor being updated, not its
operand, so the array path bumps its version counter as the in-place op would (a tensor saved for
backward notices the change). Each array op computes what the generated CPU kernel of the same op
computes (`add` with alpha is `x + alpha * y`, with alpha 1 `x + y`), in the same order and dtype, so both
paths give the same bits (tests/optim/test_host_path_same_bits.py holds them to it for every option).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from runtime import opcall
from runtime.tensor import Tensor

_HOST_FLOAT = (np.dtype(np.float32), np.dtype(np.float64))


class TensorArith:
    """Operands are tensors; every op goes through the dispatcher."""

    @staticmethod
    def value(t: Tensor) -> Any:
        return t

    @staticmethod
    def add(x: Any, y: Any, alpha: float) -> Any:
        return x.add(y, alpha=alpha)

    @staticmethod
    def sqrt(x: Any) -> Any:
        return x.sqrt()

    @staticmethod
    def copy(x: Any, like: Tensor) -> Tensor:
        """A new state tensor holding the values of `x`."""
        return x.clone()

    @staticmethod
    def mul_(t: Tensor, s: float) -> None:
        t.mul_(s)

    @staticmethod
    def add_(t: Tensor, y: Any, alpha: float) -> None:
        t.add_(y, alpha=alpha)

    @staticmethod
    def take_max_(t: Tensor, y: Any) -> None:
        opcall.api.maximum(t, y, out=t)


class ArrayArith:
    """Operands are the host arrays under the tensors (Note [One update rule, two kinds of operand])."""

    @staticmethod
    def value(t: Tensor) -> Any:
        return t._data

    @staticmethod
    def add(x: Any, y: Any, alpha: float) -> Any:
        return x + y if alpha == 1 else x + alpha * y

    sqrt = staticmethod(np.sqrt)

    @staticmethod
    def copy(x: Any, like: Tensor) -> Tensor:
        # np.array: a copy, and an array even where arithmetic on 0-d arrays gave a NumPy scalar
        return Tensor._wrap(np.array(x, dtype=like._data.dtype), like._dtype)

    @staticmethod
    def mul_(t: Tensor, s: float) -> None:
        np.multiply(t._data, s, out=t._data)
        t._bump_version()

    @staticmethod
    def add_(t: Tensor, y: Any, alpha: float) -> None:
        np.add(t._data, y if alpha == 1 else alpha * y, out=t._data)
        t._bump_version()

    @staticmethod
    def take_max_(t: Tensor, y: Any) -> None:
        np.maximum(t._data, y, out=t._data)
        t._bump_version()


TENSOR_ARITH = TensorArith()
ARRAY_ARITH = ArrayArith()
UpdateArith = TensorArith | ArrayArith


def arith_for(params: list[Tensor], states: Mapping[Tensor, Mapping[str, Any]], names: Iterable[str],
             hyper: Iterable[Any]) -> UpdateArith:
    """ARRAY_ARITH where the group can take the host path, else TENSOR_ARITH: every parameter and gradient a
    plain float array of one dtype and shape (`host_arrays`), every state tensor in `names` that exists
    one too, every hyper-parameter a Python number (Note [One update rule, two kinds of operand])."""
    if host_arrays(params) is None or not all(isinstance(v, int | float) for v in hyper):
        return TENSOR_ARITH
    names = tuple(names)
    for p in params:
        state = states.get(p)
        if not state:
            continue
        a = p._data
        for name in names:
            t = state.get(name)
            if t is None:
                continue
            b = t._data if isinstance(t, Tensor) else None
            if b.__class__ is not np.ndarray or b.dtype is not a.dtype or b.shape != a.shape or b.base is not None:
                return TENSOR_ARITH
    return ARRAY_ARITH


def host_arrays(params: list[Tensor]) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """(parameter array, gradient array) of each parameter, or None unless all can take the host path."""
    out = []
    for p in params:
        a, g = p._data, p._grad._data
        if (a.__class__ is not np.ndarray or g.__class__ is not np.ndarray or a.dtype not in _HOST_FLOAT
                or g.dtype is not a.dtype or g.shape != a.shape or a.base is not None or g.base is not None
                or g is a):
            return None
        out.append((a, g))
    return out
