"""Results side by side with PyTorch (the oracle) for behaviours opgen once differed on: arange's float bounds
with an integer dtype, integer matmul-family dtypes, bool matrix products, float16 ldexp, atleast_nd of a
sequence and of varargs, scalar_tensor wrapping, histc of integers, unsafe_chunk/unsafe_split views."""

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


# -- matrix products of bool tensors: refused where PyTorch has no kernel, kept where nothing is computed --------
def _bools(m: Any, shape: tuple[int, ...], seed: int) -> Any:
    n = int(np.prod(shape))
    return m.tensor([(i * 7 + seed) % 3 == 1 for i in range(n)], dtype=m.bool).reshape(shape)


BOOL_PRODUCTS: dict[str, Callable[[Any], Any]] = {
    "matmul_2d": lambda m: m.matmul(_bools(m, (2, 3), 1), _bools(m, (3, 2), 2)),
    "matmul_1d_1d": lambda m: m.matmul(_bools(m, (3,), 1), _bools(m, (3,), 2)),
    "matmul_2d_1d": lambda m: m.matmul(_bools(m, (2, 3), 1), _bools(m, (3,), 2)),
    "matmul_1d_2d": lambda m: m.matmul(_bools(m, (3,), 1), _bools(m, (3, 2), 2)),
    "matmul_3d_2d": lambda m: m.matmul(_bools(m, (2, 2, 3), 1), _bools(m, (3, 2), 2)),
    "matmul_batched": lambda m: m.matmul(_bools(m, (2, 2, 3), 1), _bools(m, (1, 3, 2), 2)),
    "matmul_operator": lambda m: _bools(m, (2, 3), 1) @ _bools(m, (3, 2), 2),
    "matmul_method": lambda m: _bools(m, (2, 3), 1).matmul(_bools(m, (3, 2), 2)),
    "matmul_out": lambda m: m.matmul(_bools(m, (2, 3), 1), _bools(m, (3, 2), 2), out=m.empty(2, 2, dtype=m.bool)),
    "mm": lambda m: m.mm(_bools(m, (2, 3), 1), _bools(m, (3, 2), 2)),
    "mm_out": lambda m: m.mm(_bools(m, (2, 3), 1), _bools(m, (3, 2), 2), out=m.empty(2, 2, dtype=m.bool)),
    "bmm": lambda m: m.bmm(_bools(m, (2, 2, 3), 1), _bools(m, (2, 3, 2), 2)),
    "mv": lambda m: m.mv(_bools(m, (2, 3), 1), _bools(m, (3,), 2)),
    "dot": lambda m: m.dot(_bools(m, (3,), 1), _bools(m, (3,), 2)),
    "vdot": lambda m: m.vdot(_bools(m, (3,), 1), _bools(m, (3,), 2)),
    "inner": lambda m: m.inner(_bools(m, (2, 3), 1), _bools(m, (2, 3), 2)),
    "addmm": lambda m: m.addmm(_bools(m, (2, 2), 0), _bools(m, (2, 3), 1), _bools(m, (3, 2), 2)),
    "addmv": lambda m: m.addmv(_bools(m, (2,), 0), _bools(m, (2, 3), 1), _bools(m, (3,), 2)),
    "baddbmm": lambda m: m.baddbmm(_bools(m, (2, 2, 2), 0), _bools(m, (2, 2, 3), 1), _bools(m, (2, 3, 2), 2)),
    "addbmm": lambda m: m.addbmm(_bools(m, (2, 2), 0), _bools(m, (2, 2, 3), 1), _bools(m, (2, 3, 2), 2)),
    "tensordot": lambda m: m.tensordot(_bools(m, (2, 3), 1), _bools(m, (3, 2), 2), dims=1),
    "multi_dot": lambda m: m.linalg.multi_dot([_bools(m, (2, 3), 1), _bools(m, (3, 2), 2)]),
    "matrix_power": lambda m: m.linalg.matrix_power(_bools(m, (2, 2), 1), 2),
    "linear": lambda m: m.nn.functional.linear(_bools(m, (2, 3), 1), _bools(m, (4, 3), 2)),
    "linear_vector_weight": lambda m: m.nn.functional.linear(_bools(m, (2, 3), 1), _bools(m, (3,), 2)),
    "linear_bias": lambda m: m.nn.functional.linear(_bools(m, (2, 3), 1), _bools(m, (4, 3), 2), _bools(m, (4,), 0)),
    # no products to add: PyTorch returns before its kernel runs
    "mm_contract_nothing": lambda m: m.mm(_bools(m, (2, 0), 1), _bools(m, (0, 2), 2)),
    "mm_no_rows": lambda m: m.mm(_bools(m, (0, 3), 1), _bools(m, (3, 2), 2)),
    "bmm_no_batch": lambda m: m.bmm(_bools(m, (0, 2, 3), 1), _bools(m, (0, 3, 2), 2)),
    "matmul_contract_nothing": lambda m: m.matmul(_bools(m, (2, 2, 0), 1), _bools(m, (2, 0, 2), 2)),
    "mv_no_rows": lambda m: m.mv(_bools(m, (0, 3), 1), _bools(m, (3,), 2)),
    "dot_empty": lambda m: m.dot(_bools(m, (0,), 1), _bools(m, (0,), 2)),
    # products that need no bool kernel
    "outer": lambda m: m.outer(_bools(m, (3,), 1), _bools(m, (2,), 2)),
    "kron": lambda m: m.kron(_bools(m, (2,), 1), _bools(m, (2,), 2)),
    "addr": lambda m: m.addr(_bools(m, (3, 2), 0), _bools(m, (3,), 1), _bools(m, (2,), 2)),
}


@pytest.mark.parametrize("name", list(BOOL_PRODUCTS))
def test_bool_matrix_products(name: str) -> None:
    assert _outcome(lambda: BOOL_PRODUCTS[name](G)) == _outcome(lambda: BOOL_PRODUCTS[name](torch))


def test_bool_matmul_error_names_the_op() -> None:
    a = G.ones(2, 2, dtype=G.bool)
    with pytest.raises(RuntimeError, match="mm.*bool"):  # NotImplementedError, as PyTorch's
        a @ a
    assert G.mm(a.to(device="meta"), a.to(device="meta")).dtype == G.bool  # meta computes no product


BOOL_EINSUMS = [
    ("i->", [(3,)]), ("ij->ji", [(2, 3)]), ("i,i->i", [(3,), (3,)]), ("ii->i", [(3, 3)]), ("i,j->ij", [(3,), (3,)]),
    ("i,i->", [(3,), (3,)]), ("i,i->", [(0,), (0,)]), ("i,i->", [(1,), (1,)]), ("i,i->", [(3,), (1,)]),
    ("ij->", [(2, 3)]), ("ii", [(3, 3)]), ("i,i,i->i", [(3,), (3,), (3,)]), ("i,i,i->", [(3,), (3,), (3,)]),
    ("bij,bjk->bik", [(2, 2, 2), (2, 2, 2)]), ("ij,jk", [(2, 0), (0, 2)]), ("ij,jk", [(0, 2), (2, 2)]),
    ("ij,j->i", [(1, 3), (3,)]), ("ij,jk->ik", [(2, 1), (1, 2)]), ("ij,ij->i", [(2, 3), (2, 3)]),
    ("ij,jk->", [(2, 3), (3, 2)]), ("ij,j->ij", [(2, 3), (3,)]), ("ij,kj->", [(2, 0), (2, 0)]),
    ("ij,jk,kl->il", [(2, 2), (2, 2), (2, 2)]),
]


@pytest.mark.parametrize(("equation", "shapes"), BOOL_EINSUMS, ids=str)
def test_bool_einsum(equation: str, shapes: list[tuple[int, ...]]) -> None:
    def case(m: Any) -> Any:
        return m.einsum(equation, *(_bools(m, s, i) for i, s in enumerate(shapes)))
    assert _outcome(lambda: case(G)) == _outcome(lambda: case(torch))


@pytest.mark.parametrize("dtypes", [("int32", "int32"), ("bool", "bool"), ("int64", "int64"), ("float32", "float32"),
                                    ("float16", "float32"), ("float64", "float64")])
def test_linalg_vecdot_dtypes(dtypes: tuple[str, str]) -> None:
    def case(m: Any) -> Any:
        return m.linalg.vecdot(m.ones(2, 3, dtype=getattr(m, dtypes[0])), m.ones(3, dtype=getattr(m, dtypes[1])))
    assert _outcome(lambda: case(G)) == _outcome(lambda: case(torch))


# -- ldexp: the promoted floating dtype, float16 included ------------------------------------------------
LDEXP_CASES = [
    ("float16", [2.0 ** -10, 1.5, -3.0], "int64", [20, 3, -24]),
    ("float16", [60000.0], "int64", [-30]),
    ("float16", [1.5, 2.0], "int8", [[3], [40]]),
    ("float16", [1.5], "float16", [3.0]),
    ("float16", [1.5], "float32", [3.0]),
    ("float16", [1.5], "float64", [3.0]),
    ("float32", [1.5], "float16", [3.0]),
    ("float32", [1.5], "int8", [3]),
    ("float64", [1.5], "int64", [3]),
    ("uint8", [1], "int8", [3]),
    ("int32", [1], "int32", [3]),
]


@pytest.mark.parametrize(("a", "av", "b", "bv"), LDEXP_CASES, ids=str)
def test_ldexp_dtype(a: str, av: list[Any], b: str, bv: list[Any]) -> None:
    def case(m: Any) -> Any:
        return m.ldexp(m.tensor(av, dtype=getattr(m, a)), m.tensor(bv, dtype=getattr(m, b)))
    assert _outcome(lambda: case(G)) == _outcome(lambda: case(torch))


def test_ldexp_float16_in_place_and_method() -> None:
    x = G.tensor([1.5, -0.25], dtype=G.float16)
    assert x.ldexp(G.tensor([3, 2])).dtype == G.float16
    x.ldexp_(G.tensor([3, 2]))
    assert x.tolist() == [12.0, -1.0]


# -- scalar_tensor takes an integral dtype's value as a fill does ------------------------------------------
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "bool", "float16", "float32"])
@pytest.mark.parametrize("value", [-5, -1, -128, -129, -255, -256, 255, 300, 2.7, -2.7, -0.5, 256.9, True, 2 ** 40])
def test_scalar_tensor_wraps_like_torch(value: Any, dtype: str) -> None:
    ours = _outcome(lambda: G.scalar_tensor(value, dtype=getattr(G, dtype)))
    theirs = _outcome(lambda: torch.scalar_tensor(value, dtype=getattr(torch, dtype)))
    assert ours == theirs


def test_scalar_tensor_is_zero_dim_and_tracks_grad() -> None:
    t = G.scalar_tensor(-5, dtype=G.uint8)
    assert t.shape == () and t.item() == 251
    g = G.scalar_tensor(2.0, requires_grad=True)
    assert g.requires_grad and g.dtype == G.float32


# -- histc refuses integer and bool CPU tensors --------------------------------------------------------
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "bool", "float16", "float64"])
def test_histc_dtypes(dtype: str) -> None:
    ours = _outcome(lambda: G.histc(G.tensor([1, 2, 3, 3]).to(getattr(G, dtype)), bins=4))
    theirs = _outcome(lambda: torch.histc(torch.tensor([1, 2, 3, 3]).to(getattr(torch, dtype)), bins=4))
    assert ours == theirs


def test_histc_integer_error_names_the_dtype() -> None:
    with pytest.raises(RuntimeError, match="int32"):  # NotImplementedError, as PyTorch's, is a RuntimeError
        G.histc(G.tensor([1, 2, 3], dtype=G.int32))


# -- unsafe_chunk / unsafe_split give views --------------------------------------------------------------
UNSAFE: dict[str, Callable[[Any, Any], Any]] = {
    "unsafe_chunk": lambda m, x: m.unsafe_chunk(x, 3, 1),
    "unsafe_split": lambda m, x: m.unsafe_split(x, 2, 1),
    "method_unsafe_chunk": lambda m, x: x.unsafe_chunk(2),
    "method_unsafe_split": lambda m, x: x.unsafe_split(1),
    "unsafe_split_with_sizes": lambda m, x: m.unsafe_split_with_sizes(x, [1, 4], 1),
}


@pytest.mark.parametrize("name", list(UNSAFE))
def test_unsafe_splits_are_views(name: str) -> None:
    def case(m: Any) -> tuple[list[Any], list[Any]]:
        x = m.arange(10.0).reshape(2, 5)
        parts = UNSAFE[name](m, x)
        values = [p.tolist() for p in parts]
        for i, p in enumerate(parts):
            p.fill_(-1.0 - i)  # writes through to x when p is a view
        return values, x.tolist()
    assert case(G) == case(torch)


def test_unsafe_split_backward() -> None:
    def case(m: Any) -> Any:
        x = m.arange(6.0).reshape(2, 3).requires_grad_()
        a, b = m.unsafe_split(x, 2, 1)
        (a.sum() * 2 + b.sum() * 3).backward()
        return x.grad.tolist()
    assert case(G) == case(torch)


# -- atleast_nd of a list or tuple of tensors ------------------------------------------------------------
@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("wrap", [list, tuple])
def test_atleast_nd_of_a_sequence(name: str, wrap: Any) -> None:
    def case(m: Any) -> tuple[str, list[tuple[int, ...]], list[Any]]:
        ts = wrap([m.tensor(1.0), m.tensor([1.0, 2.0]), m.ones(2, 3), m.zeros(1, 2, 3, 1)])
        r = getattr(m, name)(ts)
        return type(r).__name__, [tuple(t.shape) for t in r], [t.tolist() for t in r]
    assert case(G) == case(torch)


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
def test_atleast_nd_of_one_tensor_and_keyword(name: str) -> None:
    for shape in [(), (3,), (2, 3), (1, 2, 3)]:
        ours, theirs = getattr(G, name)(G.zeros(shape)), getattr(torch, name)(torch.zeros(shape))
        assert tuple(ours.shape) == tuple(theirs.shape)
    with pytest.raises(TypeError):  # PyTorch's atleast_nd(*tensors) takes no keyword either
        getattr(G, name)(input=G.zeros(()))


ATLEAST_FORMS: dict[str, Callable[[Any, Callable[..., Any]], Any]] = {
    "one_tensor": lambda m, f: f(m.zeros(2)),
    "varargs_two": lambda m, f: f(m.tensor(1.0), m.ones(2, 3)),
    "varargs_three": lambda m, f: f(m.tensor(1.0), m.ones(2), m.zeros(1, 2, 3, 1)),
    "varargs_none": lambda m, f: f(),
    "empty_list": lambda m, f: f([]),
    "empty_tuple": lambda m, f: f(()),
    "list_of_one": lambda m, f: f([m.ones(3)]),
    "tuple_of_one": lambda m, f: f((m.tensor(2.0),)),
    "list_of_two": lambda m, f: f([m.ones(3), m.tensor(2.0)]),
    "tuple_of_two": lambda m, f: f((m.ones(3), m.ones(1, 2))),
}


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("form", list(ATLEAST_FORMS))
def test_atleast_nd_forms(name: str, form: str) -> None:
    def case(m: Any) -> Any:
        r = ATLEAST_FORMS[form](m, getattr(m, name))
        if isinstance(r, tuple):
            return "tuple", [(tuple(t.shape), t.tolist()) for t in r]
        return "tensor", tuple(r.shape), r.tolist()
    assert case(G) == case(torch)


@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
def test_atleast_nd_varargs_backward_and_refusals(name: str) -> None:
    x, y = G.tensor(2.0, requires_grad=True), G.ones(2, requires_grad=True)
    a, b = getattr(G, name)(x, y)
    (a.sum() * 3 + b.sum() * 5).backward()
    assert x.grad.item() == 3.0 and y.grad.tolist() == [5.0, 5.0]
    with pytest.raises(NotImplementedError, match=name):  # a number: no tensor to dispatch on
        getattr(G, name)(1)


def test_atleast_nd_sequence_backward_and_refusal() -> None:
    x = G.tensor(2.0, requires_grad=True)
    (y,) = G.atleast_2d([x])
    (y * 3).sum().backward()
    assert x.grad.item() == 3.0
    with pytest.raises(NotImplementedError, match="atleast_1d"):  # no tensor to dispatch on: a DispatchError
        G.atleast_1d([1, 2])


# -- repeat_interleave: the one-argument form beside the positional ones ---------------------------------
REPEATS: dict[str, Callable[[Any], Any]] = {
    "counts": lambda m: m.repeat_interleave(m.tensor([1, 2, 0, 3])),
    "counts_int32": lambda m: m.repeat_interleave(m.tensor([2, 1], dtype=m.int32)),
    "counts_empty": lambda m: m.repeat_interleave(m.tensor([], dtype=m.int64)),
    "counts_output_size": lambda m: m.repeat_interleave(m.tensor([1, 2, 0, 3]), output_size=6),
    "counts_wrong_output_size": lambda m: m.repeat_interleave(m.tensor([1, 2, 3]), output_size=5),
    "counts_0d": lambda m: m.repeat_interleave(m.tensor(3)),
    "counts_2d": lambda m: m.repeat_interleave(m.tensor([[1, 2]])),
    "counts_float": lambda m: m.repeat_interleave(m.tensor([1.0, 2.0])),
    "counts_negative": lambda m: m.repeat_interleave(m.tensor([-1, 2])),
    "int_positional": lambda m: m.repeat_interleave(m.tensor([[1, 2], [3, 4]]), 2),
    "int_positional_dim": lambda m: m.repeat_interleave(m.tensor([[1, 2], [3, 4]]), 2, 0),
    "int_keyword_dim": lambda m: m.repeat_interleave(m.tensor([[1, 2], [3, 4]]), 3, dim=1),
    "int_keyword_repeats": lambda m: m.repeat_interleave(m.tensor([[1, 2], [3, 4]]), repeats=2),
    "tensor_positional_dim": lambda m: m.repeat_interleave(m.tensor([[1, 2], [3, 4]]), m.tensor([1, 2]), 0),
    "method_int": lambda m: m.tensor([[1, 2], [3, 4]]).repeat_interleave(2),
    "method_tensor": lambda m: m.tensor([[1, 2], [3, 4]]).repeat_interleave(m.tensor([0, 3]), dim=1),
    # PyTorch's binding refuses out= for every overload, out=None included
    "counts_out": lambda m: m.repeat_interleave(m.tensor([1, 2, 0]), out=m.empty(3, dtype=m.int64)),
    "counts_output_size_out": lambda m: m.repeat_interleave(m.tensor([1, 2]), output_size=3,
                                                            out=m.empty(3, dtype=m.int64)),
    "tensor_out": lambda m: m.repeat_interleave(m.tensor([[1, 2], [3, 4]]), m.tensor([1, 2]), 0,
                                                out=m.empty(3, 2, dtype=m.int64)),
    "tensor_keyword_out": lambda m: m.repeat_interleave(m.tensor([1, 2]), repeats=m.tensor([1, 2]),
                                                        out=m.empty(3, dtype=m.int64)),
    "int_out": lambda m: m.repeat_interleave(m.tensor([[1, 2], [3, 4]]), 2, out=m.empty(8, dtype=m.int64)),
    "int_dim_out": lambda m: m.repeat_interleave(m.tensor([[1, 2], [3, 4]]), 2, dim=0,
                                                 out=m.empty(4, 2, dtype=m.int64)),
    "int_out_none": lambda m: m.repeat_interleave(m.tensor([1, 2]), 2, out=None),
    "counts_out_none": lambda m: m.repeat_interleave(m.tensor([1, 2]), out=None),
}


@pytest.mark.parametrize("name", list(REPEATS))
def test_repeat_interleave_forms(name: str) -> None:
    assert _outcome(lambda: REPEATS[name](G)) == _outcome(lambda: REPEATS[name](torch))


# -- out= where PyTorch's binding has none --------------------------------------------------------------------
OUT_REFUSALS: dict[str, Callable[[Any, Any], Any]] = {
    "relu": lambda m, x: m.relu(x, out=m.empty(0)),
    "roll": lambda m, x: m.roll(x, 1, out=m.empty(0)),
    "isnan": lambda m, x: m.isnan(x, out=m.empty(0, dtype=m.bool)),
    "clone": lambda m, x: m.clone(x, out=m.empty(0)),
    "trace": lambda m, x: m.trace(x, out=m.empty(0)),
    "atleast_2d": lambda m, x: m.atleast_2d(x, out=m.empty(0)),
    "isclose": lambda m, x: m.isclose(x, x, out=m.empty(0, dtype=m.bool)),
    "flipud": lambda m, x: m.flipud(x, out=m.empty(0)),
    # and where it has one, opgen keeps it
    "abs": lambda m, x: m.abs(x, out=m.empty(0)),
    "sum_dim": lambda m, x: m.sum(x, 0, out=m.empty(0)),
    "tril": lambda m, x: m.tril(x, out=m.empty(0)),
}


@pytest.mark.parametrize("name", list(OUT_REFUSALS))
def test_out_only_where_pytorch_takes_it(name: str) -> None:
    def case(m: Any) -> Any:
        return OUT_REFUSALS[name](m, m.arange(9.0).reshape(3, 3))
    assert _outcome(lambda: case(G)) == _outcome(lambda: case(torch))
