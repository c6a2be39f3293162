"""Tensor methods and properties of PyTorch's (aliases, in-place view ops,
in-place samplers, properties and helpers), each checked against torch itself: values, dtypes, geometry,
autograd (version counter, grad_fn, gradients) and the error type where both refuse."""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(22)
BASE = RNG.uniform(-0.9, 0.9, (3, 4))


def pair(array: Any = BASE, **kw: Any) -> tuple[Any, Any]:
    """The same values as a torch tensor and an opgen tensor."""
    array = np.asarray(array)
    return torch.tensor(array, **{k: getattr(torch, v) for k, v in kw.items()}), \
        G.tensor(array, **{k: getattr(G, v) for k, v in kw.items()})


def same(expected: Any, actual: Any, tol: float = 1e-6) -> None:
    if isinstance(expected, tuple | list):
        assert len(expected) == len(actual)
        for e, a in zip(expected, actual, strict=True):
            same(e, a, tol)
        return
    assert tuple(actual.shape) == tuple(expected.shape)
    assert str(actual.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(actual.detach().tolist(), dtype=float),
                               np.asarray(expected.detach().tolist(), dtype=float), rtol=tol, atol=tol)


def refused_alike(call: Callable[[Any], Any]) -> type[BaseException]:
    """`call(torch)` and `call(G)` both raise; the types agree. Returns opgen's exception type."""
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(Exception) as ours:
        call(G)
    assert isinstance(ours.value, type(theirs.value)) or type(theirs.value) in type(ours.value).__mro__, \
        (theirs.value, ours.value)
    return type(ours.value)


# -- aliases ------------------------------------------------------------------------------------------------
UNARY = ["absolute", "arccos", "arcsin", "arctan", "arcsinh", "negative", "fix", "adjoint"]
BINARY = ["arctan2", "divide", "multiply", "subtract", "greater", "greater_equal", "less", "less_equal",
          "not_equal"]


@pytest.mark.parametrize("name", UNARY + ["arccosh", "arctanh"])
def test_unary_aliases_function_method_and_in_place(name: str) -> None:
    values = BASE + 2.0 if name == "arccosh" else BASE
    t, g = pair(values)
    same(getattr(t, name)(), getattr(g, name)())
    if hasattr(torch, name):
        same(getattr(torch, name)(t), getattr(G, name)(g))
    if name != "adjoint":
        t2, g2 = t.clone(), g.clone()
        assert getattr(g2, name + "_")() is g2
        getattr(t2, name + "_")()
        same(t2, g2)


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("other", ["tensor", "scalar"])
def test_binary_aliases_against_torch(name: str, other: str) -> None:
    t, g = pair()
    to, go = pair(RNG.uniform(0.5, 1.5, (4,))) if other == "tensor" else (0.25, 0.25)
    if name == "arctan2" and other == "scalar":
        return  # atan2 has no Scalar overload, in PyTorch either
    same(getattr(t, name)(to), getattr(g, name)(go))
    same(getattr(torch, name)(t, to), getattr(G, name)(g, go))
    t2, g2 = t.clone(), g.clone()
    getattr(t2, name + "_")(to)
    assert getattr(g2, name + "_")(go) is g2
    same(t2, g2)


@pytest.mark.parametrize("mode", ["floor", "trunc", None])
def test_divide_rounding_modes_and_subtract_alpha(mode: str | None) -> None:
    t, g = pair()
    same(t.divide(0.3, rounding_mode=mode), g.divide(0.3, rounding_mode=mode))
    same(torch.divide(t, t + 2, rounding_mode=mode), G.divide(g, g + 2, rounding_mode=mode))
    ti, gi = pair(np.arange(-4, 8).reshape(3, 4), dtype="int64")
    if mode is not None:
        same(ti.clone().divide_(3, rounding_mode=mode), gi.clone().divide_(3, rounding_mode=mode))
    else:
        refused_alike(lambda lib: (ti if lib is torch else gi).clone().divide_(3))  # a float result into int64
    same(t.subtract(t * 2, alpha=3), g.subtract(g * 2, alpha=3))
    same(t.clone().subtract_(1.5, alpha=2), g.clone().subtract_(1.5, alpha=2))


def test_other_aliases_values() -> None:
    t, g = pair()
    same(t.clone().clip_(-0.2, 0.3), g.clone().clip_(-0.2, 0.3))
    same(torch.clip_(t.clone(), min=0.0), G.clip_(g.clone(), min=0.0))
    lo, glo = pair(np.full((4,), -0.1))
    same(t.clone().clip_(lo), g.clone().clip_(glo))
    v, gv = pair(np.arange(3.0))
    w, gw = pair(np.arange(4.0) - 1)
    same(v.ger(w), gv.ger(gw))
    same(torch.ger(v, w), G.ger(gv, gw))
    for lambd in (0.5, 0.2):
        same(t.hardshrink(lambd), g.hardshrink(lambd))
    a = RNG.normal(size=(3, 3)) + 3 * np.eye(3)
    ta, ga = pair(a)
    for n in (0, 1, 3, -2):
        same(ta.matrix_power(n), ga.matrix_power(n), 1e-5)
    sign, logabs = ta.slogdet()
    ours = ga.slogdet()
    same((sign, logabs), (ours.sign, ours.logabsdet), 1e-5)
    same(torch.slogdet(ta), G.slogdet(ga), 1e-5)
    refused_alike(lambda lib: lib.ones(3).adjoint())


def test_aliases_differentiate_as_their_ops() -> None:
    t, g = pair()
    t.requires_grad_()
    g.requires_grad_()
    (t.arcsin() * t.multiply(2).arctan2(t + 3) + t.negative().fix() + t.subtract(1, alpha=2)).sum().backward()
    (g.arcsin() * g.multiply(2).arctan2(g + 3) + g.negative().fix() + g.subtract(1, alpha=2)).sum().backward()
    same(t.grad, g.grad)
    a = torch.tensor(RNG.normal(size=(3, 3)) + 3 * np.eye(3), requires_grad=True)
    ga = G.tensor(a.detach().numpy(), requires_grad=True)
    (a.matrix_power(3).sum() + a.slogdet()[1] + a.adjoint()[0, 1]).backward()
    (ga.matrix_power(3).sum() + ga.slogdet()[1] + ga.adjoint()[0, 1]).backward()
    same(a.grad, ga.grad, 1e-6)


# -- in-place view ops ----------------------------------------------------------------------------------------
VIEW_CASES: list[tuple[str, tuple[int, ...], Callable[[Any], Any]]] = [
    ("t_", (3, 4), lambda x: x.t_()),
    ("t_ 1-D", (4,), lambda x: x.t_()),
    ("transpose_", (2, 3, 4), lambda x: x.transpose_(0, 2)),
    ("transpose_ negative", (2, 3, 4), lambda x: x.transpose_(-1, 1)),
    ("swapaxes_", (2, 3, 4), lambda x: x.swapaxes_(0, 1)),
    ("swapdims_", (2, 3, 4), lambda x: x.swapdims_(2, 0)),
    ("squeeze_", (3, 1, 2, 1), lambda x: x.squeeze_()),
    ("squeeze_ dim", (3, 1, 2), lambda x: x.squeeze_(1)),
    ("squeeze_ dim not 1", (3, 1, 2), lambda x: x.squeeze_(0)),
    ("squeeze_ dims", (3, 1, 2, 1), lambda x: x.squeeze_((1, 3))),
    ("unsqueeze_", (3, 2), lambda x: x.unsqueeze_(1)),
    ("unsqueeze_ last", (3, 2), lambda x: x.unsqueeze_(-1)),
    ("as_strided_", (3, 4), lambda x: x.as_strided_((2, 2), (1, 3))),
    ("as_strided_ offset", (3, 4), lambda x: x.as_strided_((2, 3), (4, 1), 5)),
]


@pytest.mark.parametrize("case", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_in_place_view_ops_change_the_geometry_only(case: Any) -> None:
    _, shape, op = case
    values = RNG.normal(size=shape)
    t, g = pair(values)  # float64: 8 bytes an element
    ptr, version = g.data_ptr(), g._version
    storage = g.untyped_storage()
    assert op(g) is g
    op(t)
    assert tuple(g.shape) == tuple(t.shape)
    assert g.stride() == t.stride()
    assert g.storage_offset() == t.storage_offset()
    assert g.untyped_storage() is storage
    assert g.data_ptr() - ptr == t.storage_offset() * 8  # same memory, the view's first element
    assert g._version == version + 1 == t._version
    same(t, g)


@pytest.mark.parametrize("case", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_in_place_view_ops_record_the_view_op_for_autograd(case: Any) -> None:
    _, shape, op = case
    values = RNG.normal(size=shape)
    leaf_t = torch.tensor(values, requires_grad=True)
    leaf_g = G.tensor(values, requires_grad=True)
    refused_alike(lambda lib: op(leaf_t if lib is torch else leaf_g))  # a leaf that requires grad
    t, g = leaf_t * 1.5, leaf_g * 1.5
    op(t)
    op(g)
    assert type(g.grad_fn).__name__.rstrip("0123456789") == type(t.grad_fn).__name__.rstrip("0123456789")
    weight = RNG.normal(size=tuple(t.shape))
    (t * torch.tensor(weight)).sum().backward()
    (g * G.tensor(weight)).sum().backward()
    same(leaf_t.grad, leaf_g.grad)


def test_in_place_view_ops_on_a_leaf_under_no_grad_and_on_views() -> None:
    leaf_t = torch.randn(2, 3, requires_grad=True)
    leaf_g = G.tensor(leaf_t.detach().numpy(), requires_grad=True)
    with torch.no_grad():
        leaf_t.t_()
    with G.no_grad():
        leaf_g.t_()
    assert tuple(leaf_g.shape) == tuple(leaf_t.shape) and leaf_g.is_leaf and leaf_g.grad_fn is None
    # a view of a non-leaf changes its geometry, then an in-place op on it goes back to the base
    a_t = torch.randn(2, 3, requires_grad=True)
    a_g = G.tensor(a_t.detach().numpy(), requires_grad=True)
    outs = []
    for a in (a_t, a_g):
        base = a * 1
        row = base[1]
        row.unsqueeze_(0)
        row.mul_(3)
        (base * base).sum().backward()
        outs.append(a.grad)
    same(*outs)


def test_in_place_view_op_errors_match_torch() -> None:
    refused_alike(lambda lib: lib.zeros(2, 3, 4).t_())
    assert refused_alike(lambda lib: lib.zeros(2, 3).transpose_(0, 5)) is IndexError
    refused_alike(lambda lib: lib.zeros(2, 3).unsqueeze_(4))
    refused_alike(lambda lib: lib.zeros(2, 3).as_strided_((4, 4), (4, 1)))


# -- in-place samplers ----------------------------------------------------------------------------------------
N = 20000


def test_sampler_distributions() -> None:
    G.manual_seed(0)
    x = G.empty(N, dtype=G.float64)
    x.cauchy_(1.0, 2.0)
    q1, med, q3 = np.quantile(x.numpy(), [0.25, 0.5, 0.75])
    assert med == pytest.approx(1.0, abs=0.1) and (q3 - q1) / 2 == pytest.approx(2.0, rel=0.1)
    x.exponential_(4.0)
    assert float(x.mean()) == pytest.approx(0.25, rel=0.05) and float(x.min()) >= 0
    x.geometric_(0.2)
    assert float(x.mean()) == pytest.approx(5.0, rel=0.05) and float(x.min()) == 1.0
    assert np.all(x.numpy() == np.round(x.numpy()))
    x.log_normal_(0.5, 0.25)
    logs = np.log(x.numpy())
    assert logs.mean() == pytest.approx(0.5, abs=0.02) and logs.std() == pytest.approx(0.25, rel=0.05)
    x.bernoulli_(0.3)
    assert set(np.unique(x.numpy())) <= {0.0, 1.0} and float(x.mean()) == pytest.approx(0.3, abs=0.02)
    p = G.tensor([0.0, 1.0, 0.5]).expand(N, 3)
    y = G.empty(N, 3).bernoulli_(p)
    assert y[:, 0].sum().item() == 0 and y[:, 1].sum().item() == N
    assert float(y[:, 2].mean()) == pytest.approx(0.5, abs=0.02)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "int32", "bool"])
@pytest.mark.parametrize("call", ["cauchy_()", "exponential_()", "geometric_(0.5)", "log_normal_()",
                                  "bernoulli_(0.5)"])
def test_sampler_dtypes_as_torch(dtype: str, call: str) -> None:
    def run(lib: Any) -> Any:
        return eval(f"x.{call}", {"x": lib.zeros(64, dtype=getattr(lib, dtype))})
    try:
        expected = run(torch)
    except (RuntimeError, NotImplementedError):
        refused_alike(run)
        return
    got = run(G)
    assert str(got.dtype).split(".")[-1] == str(expected.dtype).split(".")[-1]
    assert tuple(got.shape) == (64,)


@pytest.mark.parametrize("call", ["exponential_(0)", "exponential_(-1.0)", "geometric_(0)", "geometric_(1)",
                                  "log_normal_(1, 0)", "cauchy_(0, 0)", "cauchy_(0, -1)", "bernoulli_(1.5)",
                                  "bernoulli_(-0.1)"])
def test_sampler_argument_errors_as_torch(call: str) -> None:
    refused_alike(lambda lib: eval(f"x.{call}", {"x": lib.zeros(4)}))


def test_samplers_follow_the_generator_and_have_zero_gradient() -> None:
    draws = []
    for _ in range(2):
        gen = G.Generator().manual_seed(7)
        draws.append(G.empty(5).exponential_(generator=gen).tolist())
    assert draws[0] == draws[1]
    G.manual_seed(3)
    first = G.empty(5).cauchy_().tolist()
    G.manual_seed(3)
    assert G.empty(5).cauchy_().tolist() == first
    for call in ("cauchy_()", "exponential_()", "geometric_(0.3)", "log_normal_()", "bernoulli_(0.4)"):
        leaf = G.randn(4, requires_grad=True)
        with pytest.raises(RuntimeError):
            eval(f"x.{call}", {"x": leaf})
        y = leaf * 2
        eval(f"y.{call}", {"y": y})
        (y * 3).sum().backward()
        assert leaf.grad.tolist() == [0.0] * 4


# -- properties and helpers ---------------------------------------------------------------------------------
LAYOUTS: list[Callable[[Any], Any]] = [
    lambda lib: lib.zeros(2, 3),
    lambda lib: lib.zeros(2, 3).t(),
    lambda lib: lib.zeros(2, 3, 4, 5).permute(0, 2, 3, 1),
    lambda lib: lib.zeros(2, 1, 3),
    lambda lib: lib.zeros(2, 1, 3).permute(1, 0, 2),
    lambda lib: lib.zeros(3, 3).expand(2, 3, 3),
    lambda lib: lib.zeros(4, 6)[::2, 1:],
    lambda lib: lib.zeros(()),
    lambda lib: lib.zeros(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
    lambda lib: lib.zeros(2, 1, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
    lambda lib: lib.zeros(4, 1, 3).permute(2, 0, 1),
    lambda lib: lib.zeros(3, 3)[:, :1].expand(3, 4),
    lambda lib: lib.zeros(2, 3, 4).transpose(0, 2),
    lambda lib: lib.zeros(5, 2).as_strided((2, 2, 2), (2, 2, 1)),
]


@pytest.mark.parametrize("make", LAYOUTS)
def test_sizes_and_dim_order_as_torch(make: Callable[[Any], Any]) -> None:
    t, g = make(torch), make(G)
    assert g.nbytes == t.nbytes and g.itemsize == t.itemsize
    assert g.dim_order() == t.dim_order()
    try:
        expected = t.dim_order(ambiguity_check=True)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            g.dim_order(ambiguity_check=True)
    else:
        assert g.dim_order(ambiguity_check=True) == expected
    assert g.dense_dim() == t.dense_dim() and g.sparse_dim() == t.sparse_dim() == 0
    assert g.to_dense() is g
    assert g.const_data_ptr() == g.data_ptr()


def test_flags_and_properties_as_torch() -> None:
    t, g = pair()
    assert g.layout is G.strided and repr(G.strided) == "opgen.strided"
    assert pickle.loads(pickle.dumps(G.strided)) is G.strided
    for name in ("is_inference", "is_distributed", "is_shared"):
        assert getattr(g, name)() == getattr(t, name)()
    if not G.cuda.is_available():
        assert g.is_pinned() is False
        refused_alike(lambda lib: (t if lib is torch else g).pin_memory())
    assert g.real is g and t.real is t
    refused_alike(lambda lib: (t if lib is torch else g).imag)
    assert g.grad_dtype is g.dtype and repr(g.grad_dtype).split(".")[-1] == str(t.grad_dtype).split(".")[-1]
    for x in (t, g):
        y = x.clone().requires_grad_() * 2
        assert y.retains_grad is False
        y.retain_grad()
        assert y.retains_grad is True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert g.volatile is False
    one_t, one_g = pair([2.5])
    assert one_g.is_nonzero() is one_t.is_nonzero() is True
    refused_alike(lambda lib: lib.zeros(2).is_nonzero())
    refused_alike(lambda lib: lib.zeros(0).is_nonzero())
    with pytest.raises(TypeError, match="complex"):
        g.cdouble()
    with pytest.raises(TypeError):  # opgen's CPU backend has no bfloat16: a clear refusal (CUDA has it)
        g.bfloat16()


def test_angle_isreal_real() -> None:
    t, g = pair([-2.0, -0.0, 0.0, 3.0, float("nan"), float("-inf")])
    same(t.angle(), g.angle())
    same(torch.angle(t), G.angle(g))
    ti, gi = pair([-3, 0, 4], dtype="int64")
    same(ti.angle(), gi.angle())
    same(t.isreal(), g.isreal())
    same(torch.real(t), G.real(g))
    leaf_t = torch.tensor([-1.0, 2.0], requires_grad=True)
    leaf_g = G.tensor([-1.0, 2.0], requires_grad=True)
    leaf_t.angle().sum().backward()
    leaf_g.angle().sum().backward()
    same(leaf_t.grad, leaf_g.grad)


def test_new_and_new_empty_strided() -> None:
    t, g = pair(dtype="float64")
    for args in [(2, 3), ((2, 2),), ([1.0, 2.0],), ()]:
        expected, got = t.new(*args), g.new(*args)
        assert tuple(got.shape) == tuple(expected.shape) and got.dtype == G.float64
        if args and isinstance(args[0], list | tuple):  # a tuple is data, as a list
            same(expected, got)
    assert tuple(g.new(g.shape).shape) == tuple(t.new(t.shape).shape) == (3, 4)
    assert g.new(g) is not g and g.new(g).data_ptr() == g.data_ptr()
    e = g.new_empty_strided((2, 3), (1, 2))
    assert e.stride() == t.new_empty_strided((2, 3), (1, 2)).stride() and e.dtype == G.float64
    assert g.new_empty_strided((2,), (1,), dtype=G.int32).dtype == G.int32


def test_resize_and_set_as_torch() -> None:
    for lib in (torch, G):
        x = lib.arange(6.0)
        view = x[2:]
        x.resize_(2)
        assert x.tolist() == [0.0, 1.0] and view.tolist() == [2.0, 3.0, 4.0, 5.0]
        x.resize_(2, 2)
        assert x.tolist() == [[0.0, 1.0], [2.0, 3.0]]
        y = lib.arange(4.0)
        y.resize_(3, 3)
        assert tuple(y.shape) == (3, 3) and y.reshape(-1)[:4].tolist() == [0.0, 1.0, 2.0, 3.0]
        y.resize_as_(lib.zeros(2, 2))
        assert tuple(y.shape) == (2, 2) and y.is_contiguous()
        a = lib.zeros(2, 3)
        src = lib.arange(5.0)
        assert a.set_(src) is a
        assert tuple(a.shape) == (5,) and a.data_ptr() == src.data_ptr()
        src.add_(1)
        assert a.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
        b = lib.zeros(1).set_(lib.arange(6.0).untyped_storage(), 1, (2, 2), (1, 2))
        assert b.tolist() == [[1.0, 3.0], [2.0, 4.0]]
        assert tuple(lib.zeros(3).set_().shape) == (0,)
    refused_alike(lambda lib: lib.zeros(2, requires_grad=True).resize_(3))
    refused_alike(lambda lib: lib.zeros(2).set_(lib.zeros(2, dtype=lib.int64)))
    with pytest.raises(RuntimeError, match="out of bounds"):  # PyTorch grows a resizable storage here; opgen
        G.zeros(1).set_(G.arange(6.0).untyped_storage(), 4, (2, 2), (1, 2))  # refuses (Note [resize_ and set_])


def test_deprecated_resize_and_module_load_as_torch() -> None:
    t, g = pair(np.arange(6.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(t.resize(3, 2), g.resize(3, 2))
        same(t.resize_as(torch.zeros(1, 6)), g.resize_as(G.zeros(1, 6)))
        refused_alike(lambda lib: (t if lib is torch else g).resize(4))
        leaf_t = torch.arange(6.0, requires_grad=True)
        leaf_g = G.arange(6.0, requires_grad=True)
        (leaf_t.resize(2, 3) * torch.arange(6.0).reshape(2, 3)).sum().backward()
        (leaf_g.resize(2, 3) * G.arange(6.0).reshape(2, 3)).sum().backward()
        same(leaf_t.grad, leaf_g.grad)
    for lib, x in ((torch, t), (G, g)):
        other = lib.ones(6)
        swapped = x.clone().module_load(other, assign=True)
        assert swapped is not other and swapped.data_ptr() == other.data_ptr()
        target = x.clone()
        loaded = target.module_load(other)
        assert loaded is not target and loaded.data_ptr() == target.data_ptr() and target.tolist() == [1.0] * 6


def test_python_function_maps() -> None:
    for lib in (torch, G):
        assert lib.arange(4.0).apply_(lambda v: v * v).tolist() == [0.0, 1.0, 4.0, 9.0]
        assert lib.arange(4.0).map_(lib.ones(4), lambda a, b: a + b).tolist() == [1.0, 2.0, 3.0, 4.0]
        got = lib.arange(3.0).map2_(lib.ones(3), lib.ones(1) * 2, lambda a, b, c: a + b * c).tolist()
        assert got == [2.0, 3.0, 4.0]
    refused_alike(lambda lib: lib.zeros(2, requires_grad=True).apply_(lambda v: v))


@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((5, 3), True), ((5, 3), False), ((7, 2), True),
                                        ((3, 5), True), ((3, 3, 3), False)])
def test_fill_diagonal_(shape: tuple[int, ...], wrap: bool) -> None:
    t, g = pair(np.zeros(shape))
    assert g.fill_diagonal_(2.5, wrap=wrap) is g
    t.fill_diagonal_(2.5, wrap=wrap)
    same(t, g)


def test_fill_diagonal_errors_and_gradient() -> None:
    refused_alike(lambda lib: lib.zeros(2, 3, 2).fill_diagonal_(1))
    refused_alike(lambda lib: lib.zeros(3).fill_diagonal_(1))
    refused_alike(lambda lib: lib.zeros(3, 3, requires_grad=True).fill_diagonal_(1))
    grads = []
    for lib in (torch, G):
        leaf = lib.ones(3, 3, requires_grad=True)
        y = leaf * 2
        y.fill_diagonal_(0)
        y.sum().backward()
        grads.append(leaf.grad)
    same(*grads)


@pytest.mark.parametrize("size,fill", [(3, -1), (1, -1), (5, 7), (0, -1)])
def test_nonzero_static(size: int, fill: int) -> None:
    t, g = pair([[0, 1, 0], [2, 0, 3]], dtype="int64")
    same(t.nonzero_static(size=size, fill_value=fill), g.nonzero_static(size=size, fill_value=fill))
    same(torch.nonzero_static(t, size=size), G.nonzero_static(g, size=size))


def test_unsafe_split_with_sizes() -> None:
    t, g = pair()
    same(tuple(t.unsafe_split_with_sizes([1, 2])), tuple(g.unsafe_split_with_sizes([1, 2])))
    same(tuple(t.unsafe_split_with_sizes([3, 1], 1)), tuple(g.unsafe_split_with_sizes([3, 1], 1)))


def test_as_subclass_keeps_the_graph() -> None:
    class Marked(G.Tensor):
        pass

    x = G.tensor([1.0, 2.0], requires_grad=True)
    m = x.as_subclass(Marked)
    assert type(m) is Marked and m.data_ptr() == x.data_ptr()
    (m * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    with pytest.raises(TypeError):
        x.as_subclass(int)


SPARSE_ONLY = ["is_coalesced", "coalesce", "indices", "values", "crow_indices", "col_indices", "ccol_indices",
               "row_indices"]
QUANTIZED_ONLY = ["int_repr", "q_scale", "q_zero_point", "q_per_channel_scales", "q_per_channel_zero_points",
                  "q_per_channel_axis", "qscheme"]


@pytest.mark.parametrize("name", SPARSE_ONLY + QUANTIZED_ONLY)
def test_sparse_and_quantized_queries_refuse_a_strided_tensor_as_torch(name: str) -> None:
    refused_alike(lambda lib: getattr(lib.zeros(2, 2), name)())


@pytest.mark.parametrize("call", ["eig()", "symeig()", "lstsq(x)", "solve(x)", "reinforce(1)"])
def test_removed_functions_raise_as_torch(call: str) -> None:
    assert refused_alike(lambda lib: eval(f"x.{call}", {"x": lib.eye(2)})) is RuntimeError


def test_devices_opgen_lacks_refuse() -> None:
    for name in ("xpu", "mtia", "ipu"):
        with pytest.raises((RuntimeError, AssertionError)):
            getattr(G.zeros(1), name)()


# -- the same on CUDA (a GPU, or the emulated device with OPGEN_EMULATE_CUDA=1) ---------------------------------
@pytest.mark.cuda
def test_in_place_view_ops_and_aliases_on_cuda() -> None:
    x = G.zeros(3, 1, 2, device="cuda")
    storage = x.untyped_storage()
    assert tuple(x.squeeze_(1).t_().unsqueeze_(0).shape) == (1, 2, 3) and x.untyped_storage() is storage
    assert x.device.type == "cuda"
    values = RNG.normal(size=(2, 3))
    a = G.tensor(values, device="cuda", requires_grad=True)
    b = a * 1
    b.transpose_(0, 1)
    (b * G.tensor(np.arange(6.0).reshape(3, 2), device="cuda")).sum().backward()
    assert a.grad.cpu().tolist() == np.arange(6.0).reshape(3, 2).T.tolist()
    t, g = pair()
    same(t.arccos().divide(t.greater(0).float() + 1), G.arccos(g.cuda()).divide(g.cuda().greater(0).float() + 1))
    same(t.angle(), g.cuda().angle())
    same(torch.zeros(5, 3).fill_diagonal_(1, wrap=True), G.zeros(5, 3, device="cuda").fill_diagonal_(1, wrap=True))


@pytest.mark.cuda
def test_samplers_on_cuda() -> None:
    G.cuda.manual_seed_all(0)
    x = G.empty(N, device="cuda")
    x.exponential_(4.0)
    assert float(x.mean()) == pytest.approx(0.25, rel=0.05)
    x.geometric_(0.2)
    assert float(x.mean()) == pytest.approx(5.0, rel=0.05) and float(x.min()) == 1.0
    x.log_normal_(0.5, 0.25)
    assert float(x.log().mean()) == pytest.approx(0.5, abs=0.02)
    x.cauchy_(1.0, 2.0)
    assert float(x.median()) == pytest.approx(1.0, abs=0.1)
    x.bernoulli_(0.3)
    assert float(x.mean()) == pytest.approx(0.3, abs=0.02)
    draws = [G.empty(4, device="cuda").cauchy_(generator=G.Generator("cuda").manual_seed(5)).cpu().tolist()
             for _ in range(2)]
    assert draws[0] == draws[1]
    with pytest.raises(RuntimeError):
        G.empty(4, device="cuda").exponential_(generator=G.Generator("cpu"))
