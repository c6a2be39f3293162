"""Results side by side with PyTorch (the oracle) for behaviours opgen once differed on: arange's float bounds
with an integer dtype, integer matmul-family dtypes, float16 ldexp, atleast_nd of a sequence, scalar_tensor
wrapping, histc of integers, unsafe_chunk/unsafe_split views."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")

INT_DTYPES = ["int8", "int16", "int32", "uint8", "int64"]


def _outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """The exception type a call raises, or its result's dtype name and values."""
    try:
        r = call()
    except Exception as e:  # the type is what is compared
        return "raises", type(e).__name__
    return str(r.dtype).rpartition(".")[2], r.tolist()


# -- arange: float bounds, integer dtype --------------------------------------------------------------
ARANGE_BOUNDS = [
    (0.5, 5.2, 0.7), (-1.5, 3.0, 0.5), (0.1, 2.9), (0.5, 7.0, 1.5), (-3.7, 4.2, 2.5), (1.9,),
    (5.0, -2.3, -1.5), (250.5, 260.0, 2.0), (3, 10.5, 2), (0.5, 3.2, 0.7), (2.5, -1.0, 0.5), (1.0, 1.0, 0.5),
    (-130.2, 140.9, 37.3),
]


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("bounds", ARANGE_BOUNDS, ids=str)
def test_arange_float_bounds_integer_dtype(bounds: tuple[float, ...], dtype: str) -> None:
    ours = _outcome(lambda: G.arange(*bounds, dtype=getattr(G, dtype)))
    theirs = _outcome(lambda: torch.arange(*bounds, dtype=getattr(torch, dtype)))
    assert ours == theirs


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_arange_float_bounds_integer_dtype_meta_length(dtype: str) -> None:
    t = G.arange(0.5, 5.2, 0.7, dtype=getattr(G, dtype), device="meta") if dtype != "int64" else \
        G.arange(0.5, 7.0, 1.5, dtype=G.int64, device="meta")
    expect = torch.arange(0.5, 5.2, 0.7, dtype=getattr(torch, dtype)) if dtype != "int64" else \
        torch.arange(0.5, 7.0, 1.5, dtype=torch.int64)
    assert tuple(t.shape) == tuple(expect.shape)


# -- integer matmul family keeps the operands' dtype, wrapping ----------------------------------------
def _ints(m: Any, dtype: str, shape: tuple[int, ...], seed: int) -> Any:
    values = [(37 * (i + seed) + 11 * seed) % 97 + 60 for i in range(int(np.prod(shape)))]
    return m.tensor(values, dtype=getattr(m, dtype)).reshape(shape)


PRODUCTS: dict[str, Callable[[Any, str], Any]] = {
    "matmul": lambda m, d: m.matmul(_ints(m, d, (2, 3), 1), _ints(m, d, (3, 4), 2)),
    "matmul_1d_1d": lambda m, d: m.matmul(_ints(m, d, (5,), 1), _ints(m, d, (5,), 2)),
    "matmul_batched_1d": lambda m, d: m.matmul(_ints(m, d, (2, 3, 4), 1), _ints(m, d, (4,), 2)),
    "mm": lambda m, d: m.mm(_ints(m, d, (2, 3), 1), _ints(m, d, (3, 4), 2)),
    "bmm": lambda m, d: m.bmm(_ints(m, d, (2, 2, 3), 1), _ints(m, d, (2, 3, 2), 2)),
    "einsum_contract": lambda m, d: m.einsum("ij,jk->ik", _ints(m, d, (2, 3), 1), _ints(m, d, (3, 4), 2)),
    "einsum_dot_all": lambda m, d: m.einsum("ij,ij->", _ints(m, d, (2, 3), 1), _ints(m, d, (2, 3), 2)),
    "einsum_three": lambda m, d: m.einsum("ij,ij,ij->i", *(_ints(m, d, (2, 3), s) for s in (1, 2, 3))),
    "einsum_lone_label": lambda m, d: m.einsum("ij,k->ik", _ints(m, d, (2, 3), 1), _ints(m, d, (4,), 2)),
    "einsum_one_operand": lambda m, d: m.einsum("ij->", _ints(m, d, (2, 3), 1)),
    "einsum_trace": lambda m, d: m.einsum("ii", _ints(m, d, (3, 3), 1)),
    "einsum_batched": lambda m, d: m.einsum("bij,bjk->bik", _ints(m, d, (2, 2, 3), 1), _ints(m, d, (2, 3, 2), 2)),
    "tensordot": lambda m, d: m.tensordot(_ints(m, d, (2, 3), 1), _ints(m, d, (3, 4), 2), dims=1),
    "tensordot_broadcast_dim": lambda m, d: m.tensordot(_ints(m, d, (2, 1), 1), _ints(m, d, (3, 4), 2),
                                                        dims=([1], [0])),
    "bilinear": lambda m, d: m.nn.functional.bilinear(_ints(m, d, (2, 3), 1), _ints(m, d, (2, 4), 2),
                                                      _ints(m, d, (5, 3, 4), 3)),
    "bilinear_bias": lambda m, d: m.nn.functional.bilinear(_ints(m, d, (2, 3), 1), _ints(m, d, (2, 4), 2),
                                                           _ints(m, d, (5, 3, 4), 3), _ints(m, d, (5,), 4)),
}


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", list(PRODUCTS))
def test_integer_products_keep_dtype(name: str, dtype: str) -> None:
    ours = _outcome(lambda: PRODUCTS[name](G, dtype))
    theirs = _outcome(lambda: PRODUCTS[name](torch, dtype))
    assert ours == theirs
