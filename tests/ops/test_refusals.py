"""What PyTorch refuses, opgen refuses too, with the same exception type (torch-free; the side-by-side
probe against PyTorch is tests/ops/test_refusals_vs_torch.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import generated as G
from runtime import storage
from runtime.cuda import is_available as cuda_is_available
from runtime.memory_overlap import INTERNAL_OVERLAP, PARTIAL_OVERLAP

INTERNAL = "more than one element of the written-to tensor"
PARTIAL = "some elements of the input tensor and the written-to tensor"


# -- masks and conditions ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "int32"])
def test_masked_fill_needs_a_bool_mask(dtype: str) -> None:
    x = G.arange(4.0)
    mask = G.ones(4, dtype=getattr(G, dtype))
    for call in (lambda: x.masked_fill(mask, 0.0), lambda: G.masked_fill(x, mask, G.tensor(0.0)),
                 lambda: x.clone().masked_fill_(mask, 0.0), lambda: G.masked_fill(x, mask, 0.0, out=G.empty(4))):
        with pytest.raises(RuntimeError, match=f"mask to be a boolean tensor.*{dtype}"):
            call()
    assert x.masked_fill(x > 1, -1.0).tolist() == [0.0, 1.0, -1.0, -1.0]


@pytest.mark.parametrize("dtype", ["float32", "int64", "float64"])
def test_where_needs_a_bool_condition(dtype: str) -> None:
    x = G.arange(3.0)
    with pytest.raises(RuntimeError, match=f"where expected condition to be a boolean tensor.*{dtype}"):
        G.where(G.ones(3, dtype=getattr(G, dtype)), x, -x)
    assert G.where(x > 0, x, -x).tolist() == [-0.0, 1.0, 2.0]


def test_where_takes_a_uint8_condition_with_a_warning() -> None:
    x = G.arange(3.0)
    with pytest.warns(UserWarning, match="uint8 condition"):
        assert G.where(G.tensor([1, 0, 1], dtype=G.uint8), x, -x).tolist() == [0.0, -1.0, 2.0]


@pytest.mark.parametrize("shape", [(1,), (4,), (1, 1), (2, 4)])
def test_masked_fill_value_tensor_must_be_0_dimensional(shape: tuple[int, ...]) -> None:
    x = G.arange(4.0)
    mask, value = x > 1, G.full(shape, 9.0)
    for call in (lambda: x.masked_fill(mask, value), lambda: G.masked_fill(x, mask, value),
                 lambda: x.clone().masked_fill_(mask, value), lambda: G.masked_fill(x, mask, value, out=G.empty(4)),
                 lambda: x.index_fill(0, G.tensor([1]), value)):
        with pytest.raises(RuntimeError, match=r"fill_ only supports a 0-dimensional value tensor, but got "
                                               rf"tensor with {len(shape)} dimension\(s\)\."):
            call()
    assert x.masked_fill(mask, G.tensor(9.0)).tolist() == [0.0, 1.0, 9.0, 9.0]
    assert x.index_fill(0, G.tensor([1]), G.tensor(9.0)).tolist() == [0.0, 9.0, 2.0, 3.0]


@pytest.mark.parametrize("other", ["float64", "float16", "int64", "bool"])
def test_lerp_needs_one_dtype(other: str) -> None:
    a, b = G.ones(3), G.ones(3, dtype=getattr(G, other))
    want = {"float64": "double", "float16": "c10::Half", "int64": "long int", "bool": "bool"}[other]
    for call, name in ((lambda: G.lerp(a, b, 0.5), "end"), (lambda: a.lerp(b, G.ones(3)), "end"),
                       (lambda: a.clone().lerp_(b, 0.5), "end"), (lambda: G.lerp(a, b, 0.5, out=G.empty(3)), "end"),
                       (lambda: G.lerp(a, G.ones(()).to(b.dtype), 0.5), "end"),
                       (lambda: G.lerp(a, a, b), "weight"), (lambda: a.clone().lerp_(a, b), "weight")):
        with pytest.raises(RuntimeError, match=f"^expected dtype float for `{name}` but got dtype {want}$"):
            call()
    assert G.lerp(a, a * 3, G.tensor(0.5, dtype=G.float64)).tolist() == [2.0] * 3  # a 0-d weight: a number
    assert G.lerp(a.double(), b.double() * 3, 0.5).dtype is G.float64


@pytest.mark.parametrize("other", ["float64", "float16", "int64"])
def test_linear_bias_and_class_weight_need_the_input_dtype(other: str) -> None:
    from runtime.nn import functional as F

    scalar_type = {"float64": "Double", "float16": "Half", "int64": "Long"}[other]
    x, w, odd = G.ones(2, 3), G.ones(4, 3), G.ones(4, dtype=getattr(G, other))
    for inp in (x, G.ones(3), G.ones(2, 2, 3)):
        with pytest.raises(RuntimeError, match=f"^self and mat2 must have the same dtype, but got {scalar_type} "
                                               "and Float$"):
            F.linear(inp, w, odd)
    logits, target, weight = G.ones(2, 4), G.tensor([0, 3]), G.ones(4, dtype=getattr(G, other))
    for call in (lambda: F.cross_entropy(logits, target, weight=weight), lambda: F.nll_loss(logits, target, weight),
                 lambda: F.cross_entropy(logits, target, weight=weight, label_smoothing=0.1),
                 lambda: F.cross_entropy(logits, target, weight=weight.requires_grad_(other != "int64"))):
        with pytest.raises(RuntimeError, match=f"^expected scalar type Float but found {scalar_type}$"):
            call()
    assert F.linear(x, w, G.ones(4)).tolist() == [[4.0] * 4] * 2
    assert F.cross_entropy(logits, G.full((2, 4), 0.25), weight=G.ones(4, dtype=G.float64)).dtype is G.float64


# -- alpha --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_float_alpha_with_integer_tensors(op: str, dtype: str) -> None:
    a = G.ones(3, dtype=getattr(G, dtype))
    f = getattr(G, op)
    for call in (lambda: f(a, a, alpha=1.5), lambda: f(a, 2, alpha=0.5), lambda: f(a, a, alpha=1.0),
                 lambda: getattr(a.clone(), op + "_")(a, alpha=2.5)):
        with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must not be a floating"):
            call()
    assert f(a, a, alpha=2).dtype == a.dtype  # an int alpha is fine
    assert f(a, G.ones(3), alpha=0.5).tolist() == ([1.5] * 3 if op == "add" else [0.5] * 3)  # float result


def test_bool_alpha_only_for_bool_results() -> None:
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
        G.add(G.ones(2), G.ones(2), alpha=True)
    t = G.ones(2, dtype=G.bool)
    assert G.add(t, t, alpha=True).tolist() == [True, True]


# -- integer division by zero (Note [Integer division by zero] in runtime/kernels/checks.py) ------------
def _int_divisions(x: G.Tensor, zero: object) -> list:
    """Every form of every integer division of `x` by `zero` (a tensor holding a zero, or the scalar 0)."""
    return [lambda: x // zero, lambda: x % zero, lambda: G.floor_divide(x, zero), lambda: G.remainder(x, zero),
            lambda: G.fmod(x, zero), lambda: G.div(x, zero, rounding_mode="trunc"),
            lambda: G.div(x, zero, rounding_mode="floor"), lambda: x.floor_divide(zero), lambda: x.fmod(zero),
            lambda: x.clone().floor_divide_(zero), lambda: x.clone().remainder_(zero), lambda: x.clone().fmod_(zero),
            lambda: G.fmod(x, zero, out=G.empty(x.shape, dtype=x.dtype)),
            lambda: G.remainder(x, zero, out=G.empty(x.shape, dtype=x.dtype)),
            lambda: G.floor_divide(x, zero, out=G.empty(x.shape, dtype=x.dtype))]


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
@pytest.mark.parametrize("divisor", ["scalar", "tensor", "broadcast"])
def test_integer_division_by_zero(dtype: str, divisor: str) -> None:
    x = G.tensor([[7, 5], [3, 1]], dtype=getattr(G, dtype))
    zero = {"scalar": 0, "tensor": G.tensor([[1, 2], [0, 3]], dtype=getattr(G, dtype)),
            "broadcast": G.tensor([2, 0], dtype=getattr(G, dtype))}[divisor]
    for call in _int_divisions(x, zero):
        with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
            call()
    assert x.tolist() == [[7, 5], [3, 1]]  # an in-place form wrote nothing


def test_integer_division_by_zero_reflected() -> None:
    for call in (lambda: 7 // G.tensor([1, 0]), lambda: 7 % G.tensor([0, 1])):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            call()


def test_integer_division_without_a_zero_and_floating_division_by_zero() -> None:
    x = G.tensor([7, -7])
    assert (x // 2).tolist() == [3, -4] and (x % -3).tolist() == [-2, -1] and G.fmod(x, 3).tolist() == [1, -1]
    assert G.div(x, G.tensor([2, 2]), rounding_mode="trunc").tolist() == [3, -3]
    with np.errstate(all="ignore"):
        assert (G.tensor([1.0, -1.0]) // 0).tolist() == [math.inf, -math.inf]
        assert (x // 0.0).tolist() == [math.inf, -math.inf]  # a float divisor makes the division floating
        assert math.isnan(G.fmod(G.tensor([1.0]), 0).item())
        assert G.div(x, 0).tolist() == [math.inf, -math.inf]  # true division is floating


def test_integer_division_by_zero_with_no_elements() -> None:
    e = G.empty(0, dtype=G.int64)
    assert (e // 0).shape == (0,) and (e % G.tensor(0)).shape == (0,)
    assert G.div(e, 0, rounding_mode="floor").shape == (0,)
    assert (G.tensor([1, 2]) // G.zeros(0, 2, dtype=G.int64)).shape == (0, 2)


@pytest.mark.cuda
@pytest.mark.skipif(not cuda_is_available(), reason="needs a CUDA device")
def test_cuda_integer_division_by_zero_is_not_checked() -> None:
    """PyTorch's CUDA kernels do not check (a check would sync the device); opgen's give 0."""
    x = G.tensor([7, -5], device="cuda")
    for r in (x // 0, x % G.tensor([0, 3], device="cuda"), G.fmod(x, 0), G.div(x, 0, rounding_mode="trunc")):
        assert r.device.type == "cuda" and r.tolist()[0] == 0


# -- keyword-only arguments (after `*` in the schema) ------------------------------------------------------
def test_arguments_after_star_are_keyword_only() -> None:
    a, m = G.ones(2), G.ones(2, 2)
    for call, op in ((lambda: G.add(a, a, 2), "add"), (lambda: G.sub(a, 1, 2), "sub"), (lambda: a.add(a, 2), "add"),
                     (lambda: a.clone().add_(a, 2), "add_"), (lambda: a.sub_(a, 2), "sub_"),
                     (lambda: G.add(a, a, 2, out=G.empty(2)), "add"),
                     (lambda: G.addmm(m, m, m, 1, 1), "addmm"),
                     (lambda: G.index_add(a, 0, G.tensor([0]), G.ones(1), 2), "index_add")):
        takes = f"^(Tensor\\.)?{op}\\(\\) takes \\d positional arguments? but \\d .*were given"
        with pytest.raises(TypeError, match=takes):
            call()
    assert G.add(a, a, alpha=2).tolist() == [3.0, 3.0] and G.sub(a, 1, alpha=2).tolist() == [-1.0, -1.0]
    assert a.clone().add_(2, alpha=3).tolist() == [7.0, 7.0]


# -- overlap ------------------------------------------------------------------------------------------
def test_internal_overlap_in_the_written_to_tensor() -> None:
    e = G.zeros(1).expand(3)
    for call in (lambda: e.add_(1), lambda: e.mul_(2), lambda: e.neg_(), lambda: e.copy_(G.ones(3)),
                 lambda: G.add(G.ones(3), 1, out=e), lambda: e.masked_fill_(G.ones(3, dtype=G.bool), 1.0)):
        with pytest.raises(RuntimeError, match=INTERNAL):
            call()
    assert e.tolist() == [0.0, 0.0, 0.0]  # nothing was written
    assert INTERNAL in INTERNAL_OVERLAP and "clone()" in INTERNAL_OVERLAP


def test_partial_overlap_between_input_and_output() -> None:
    x = G.arange(6.0)
    for call in (lambda: x[1:].add_(x[:-1]), lambda: x[1:].copy_(x[:-1]), lambda: x[:-1].mul_(x[1:]),
                 lambda: G.add(x[:-1], 1, out=x[1:]), lambda: G.mul(x[:3], x[1:4], out=x[2:5])):
        with pytest.raises(RuntimeError, match=PARTIAL):
            call()
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]  # nothing was written
    m = G.ones(3, 3)
    with pytest.raises(RuntimeError, match=PARTIAL):
        m.add_(m[0])
    with pytest.raises(RuntimeError, match=PARTIAL):
        m.t().add_(m)
    assert PARTIAL in PARTIAL_OVERLAP


def test_allowed_aliasing() -> None:
    x = G.arange(6.0)
    assert x.add_(x).tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]  # exactly the same tensor
    assert x[:].mul_(x[:]).tolist() == [0.0, 4.0, 16.0, 36.0, 64.0, 100.0]  # the same view, another object
    y = G.arange(6.0)
    assert y[::2].add_(y[1::2]).tolist() == [1.0, 5.0, 9.0]  # interleaved: not dense, let through as PyTorch
    z = G.arange(4.0)
    assert G.add(z, 1, out=z).tolist() == [1.0, 2.0, 3.0, 4.0]
    w = G.arange(6.0)
    assert w[:3].add_(w[3:]).tolist() == [3.0, 5.0, 7.0]  # disjoint parts of one storage
    assert G.zeros(1).expand(3).clone().add_(1).tolist() == [1.0, 1.0, 1.0]


# -- sizes ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda: G.empty(2**62), lambda: G.zeros(2**40, 2**30),
                                  lambda: G.empty(2**61, dtype=G.int64), lambda: G.ones(3, 2**62),
                                  lambda: G.full((2**62,), 1.0), lambda: G.empty_strided((2**40,), (2**30,))])
def test_impossible_sizes_raise_runtime_error(make) -> None:
    with pytest.raises(RuntimeError, match=r"\d+ bytes on device cpu"):
        make()


def test_huge_but_representable_size_names_bytes_and_device(monkeypatch: pytest.MonkeyPatch) -> None:
    class NoMemory:
        """An array module whose allocations all fail, as a device without memory would."""

        @staticmethod
        def empty(shape: tuple[int, ...], dtype: object) -> None:
            raise MemoryError("out of memory")

    with pytest.raises(RuntimeError, match=r"not enough memory: you tried to allocate 4096 bytes on device "
                                           r"cuda:1"):
        storage.empty_array(NoMemory, (32, 32), np.float32, "cuda:1")
    with pytest.raises(RuntimeError, match="DefaultCPUAllocator: not enough memory: you tried to allocate "
                                           f"{2**45 * 4} bytes on device cpu"):
        G.empty(2**45)
    assert storage.checked_nbytes((3, 5), 8, "cpu") == 120
    with pytest.raises(RuntimeError, match="overflowed"):
        storage.checked_nbytes((2**40, 2**40), 4, "cuda:0")


def test_negative_sizes() -> None:
    for make in (lambda: G.empty(-1), lambda: G.zeros(2, -3), lambda: G.ones((4, -1)), lambda: G.full((-2,), 1.0)):
        with pytest.raises(RuntimeError, match="negative dimension"):
            make()


# -- softmax on rows with inf and nan -------------------------------------------------------------------
INF, NAN = math.inf, math.nan
SOFTMAX_ROWS = [
    ([INF, 1.0], [NAN, NAN], [NAN, NAN]),
    ([-INF, 1.0], [0.0, 1.0], [-INF, 0.0]),
    ([-INF, -INF], [NAN, NAN], [NAN, NAN]),
    ([NAN, 1.0], [NAN, NAN], [NAN, NAN]),
    ([INF, INF], [NAN, NAN], [NAN, NAN]),
    ([INF, -INF], [NAN, NAN], [NAN, NAN]),
    ([0.0, 0.0], [0.5, 0.5], [-math.log(2), -math.log(2)]),
]


@pytest.mark.parametrize(("row", "soft", "logsoft"), SOFTMAX_ROWS)
def test_softmax_on_rows_with_inf(row: list[float], soft: list[float], logsoft: list[float]) -> None:
    x = G.tensor([row, [1.0, 2.0]])
    np.testing.assert_allclose(G.softmax(x, 1).numpy()[0], soft, rtol=1e-6)
    np.testing.assert_allclose(G.log_softmax(x, 1).numpy()[0], logsoft, rtol=1e-6)
    np.testing.assert_allclose(G.softmax(x, 1).numpy()[1], [0.26894142, 0.7310586], rtol=1e-6)  # rows independent
    np.testing.assert_allclose(G.softmax(x.t(), 0).numpy()[:, 0], soft, rtol=1e-6)  # along another dim


def test_cuda_kernels_check_conditions_before_launching() -> None:
    """The generated CUDA wrappers refuse a non-bool mask before any device work (no GPU needed)."""
    import generated._cuda_kernels as cuda
    from runtime.cuda.pointwise import PointwiseKernel
    x = G.ones(3)
    with pytest.raises(RuntimeError, match="masked_fill expected mask to be a boolean tensor"):
        cuda.masked_fill_Scalar(x, G.ones(3), 0.0)
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor"):
        cuda.where_self(G.ones(3, dtype=G.int64), x, x)
    assert cuda._add_Tensor.alpha == 0 and cuda._sub_Scalar.alpha == 1  # launch checks alpha from there
    assert cuda._elu.alpha is None  # a floating-only op's alpha is a plain parameter
    assert PointwiseKernel("k", "k.cu", "common", 1, 0, {}).alpha is None


@pytest.mark.parametrize("fill", ["uniform_", "normal_", "random_"])
def test_random_fills_refuse_an_expanded_tensor_and_draw_nothing(fill: str) -> None:
    """Several elements at one address: PyTorch refuses the in-place random fill before drawing, so the
    generator's state is untouched and the base keeps its values."""
    args = {"random_": (0, 5)}.get(fill, ())
    base = G.zeros(1, 3, dtype=G.int64 if fill == "random_" else G.float32)
    gen = G.Generator().manual_seed(0)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        getattr(base.expand(4, 3), fill)(*args, generator=gen)
    assert base.tolist() == [[0, 0, 0]]
    drawn = getattr(base.expand(1, 3), fill)(*args, generator=gen).clone()  # no dimension > 1 at stride 0
    fresh = getattr(G.zeros_like(base), fill)(*args, generator=G.Generator().manual_seed(0))
    assert G.equal(drawn, fresh)  # the refused call drew nothing


# -- bad calls of the factories, grad assignment, indexing, interop, pooling -------------------------------
@pytest.mark.parametrize("call", [lambda: G.ones("3"), lambda: G.zeros(["3"]), lambda: G.empty(2.0),
                                  lambda: G.ones((2.0, 3)), lambda: G.full("ab", 1.0)])
def test_sizes_must_be_ints(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match="size must be a tuple of ints"):
        call()


def test_sizes_that_are_ints_in_disguise_still_work() -> None:
    assert G.ones(np.int64(2), 3).shape == (2, 3) and G.zeros(G.Size([4])).shape == (4,)
    assert G.empty([]).shape == () and G.ones(()).shape == ()


def test_too_many_dimensions_are_named() -> None:
    most = storage.MAX_DIMS
    assert G.ones([1] * most).dim() == most
    for call in (lambda: G.ones([1] * (most + 1)), lambda: G.zeros(*([1] * (most + 6))),
                 lambda: G.empty([1] * (most + 1))):
        with pytest.raises(RuntimeError, match=rf"({most + 1}|{most + 6}) dimensions") as info:
            call()
        assert f"at most {most}" in str(info.value) and "memory" not in str(info.value)


@pytest.mark.parametrize("value, dtype, ctype", [
    (1e40, G.float32, "float"), (-1e39, G.float32, "float"), (65520.0, G.float16, "c10::Half"),
    (300, G.int8, "int8_t"), (-129, G.int8, "int8_t"), (2**31, G.int32, "int"), (70000.0, G.int16, "int16_t"),
    (-256, G.uint8, "uint8_t"), (-1.5, G.uint8, "uint8_t"), (2**63, G.int64, "int64_t"),
])
def test_fill_values_that_overflow_are_refused(value, dtype, ctype) -> None:  # type: ignore[no-untyped-def]
    message = f"value cannot be converted to type {ctype} without overflow"
    with pytest.raises(RuntimeError, match=message):
        G.full((2,), value, dtype=dtype)
    with pytest.raises(RuntimeError, match=message):
        G.zeros(2, dtype=dtype).fill_(value)
    with pytest.raises(RuntimeError, match=message):
        G.zeros(1).new_full((2,), value, dtype=dtype)


@pytest.mark.parametrize("value", ["a", None, [1.0], object()])
def test_fill_values_must_be_numbers(value) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match="fill value must be a number"):
        G.ones(2).fill_(value)


def test_fill_values_that_fit_or_wrap() -> None:
    assert G.full((2,), -1, dtype=G.uint8).tolist() == [255, 255]  # unsigned wraps from -max, as PyTorch
    assert G.full((1,), -255, dtype=G.uint8).tolist() == [1]
    assert G.full((1,), float("inf")).tolist() == [math.inf] and math.isnan(G.full((1,), math.nan).item())
    assert G.full((1,), 1e40, dtype=G.bool).tolist() == [True]
    assert G.full((1,), 1e300, dtype=G.float64).item() == 1e300
    assert G.full((1,), 127, dtype=G.int8).item() == 127 and G.full((1,), -(2**63)).item() == -(2**63)


def test_assigned_grad_must_match_the_tensor() -> None:
    leaf = G.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different type"):
        leaf.grad = G.tensor([1, 2])
    with pytest.raises(RuntimeError, match="assigned grad has data of a different type"):
        leaf.grad = G.ones(2, dtype=G.float64)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None"):
        leaf.grad = [1.0, 2.0]
    assert leaf.grad is None
    leaf.grad = G.full((2,), 3.0)
    (leaf * 2).sum().backward()  # accumulates into the assigned grad
    assert leaf.grad.tolist() == [5.0, 5.0]


def test_from_numpy_refuses_negative_strides() -> None:
    for array in (np.arange(4)[::-1], np.ones((3, 4))[:, ::-2], np.ones((2, 2))[::-1, :]):
        with pytest.raises(ValueError, match="negative"):
            G.from_numpy(array)
    assert G.from_numpy(np.arange(6)[::2]).tolist() == [0, 2, 4]  # positive strides still share memory
    assert G.from_numpy(np.arange(4)[::-1].copy()).tolist() == [3, 2, 1, 0]


@pytest.mark.parametrize("value", ["a", b"a", None, object(), ["a"], {"a": 1}, 1 + 2j])
def test_setitem_refuses_values_that_are_not_numbers(value) -> None:  # type: ignore[no-untyped-def]
    x = G.zeros(3)
    with pytest.raises(TypeError, match=f"can't assign a {type(value).__name__} to a torch.FloatTensor"):
        x[0] = value
    with pytest.raises(TypeError):
        x[G.tensor([0, 1])] = value
    assert x.tolist() == [0.0, 0.0, 0.0]
    x[0], x[1:] = np.float32(2.0), [3, np.uint64(4)]
    assert x.tolist() == [2.0, 3.0, 4.0]


@pytest.mark.parametrize("factory", ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"])
def test_like_factories_need_a_tensor(factory: str) -> None:
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        getattr(G, factory)([1.0, 2.0])
    with pytest.raises(TypeError, match="must be Tensor, not list"):
        G.full_like([1.0], 2.0)


@pytest.mark.parametrize("args, kwargs, message", [
    ((0,), {}, "stride should not be zero"), ((2, 0), {}, "stride should not be zero"),
    ((-1,), {}, "kernel size should be greater than zero"), ((0, 1), {}, "kernel size should be greater than zero"),
    ((2,), {"dilation": 0}, "dilation should be greater than zero"),
    ((2,), {"padding": -1}, "pad must be non-negative"),
])
def test_pooling_geometry_is_checked(args, kwargs, message) -> None:  # type: ignore[no-untyped-def]
    F = G.nn.functional
    x = G.ones(1, 1, 4, 4)
    with pytest.raises(RuntimeError, match=message):
        F.max_pool2d(x, *args, **kwargs)
    if "dilation" not in kwargs:
        with pytest.raises(RuntimeError, match=message):
            F.avg_pool2d(x, *args, **kwargs)


def test_index_fill_names_itself_and_wraps_negative_indices() -> None:
    for index in ([5], [3], [-4], [0, 7]):
        with pytest.raises(IndexError, match=r"index -?\d+ is out of bounds for dimension 0 with size 3") as info:
            G.zeros(3).index_fill_(0, G.tensor(index), 1.0)
        assert "index_add" not in str(info.value)
    with pytest.raises(IndexError, match="dimension 1 with size 2"):
        G.zeros(3, 2).index_fill(1, G.tensor([2]), 1.0)
    with pytest.raises(IndexError, match="index_fill_.*int64"):
        G.zeros(3).index_fill_(0, G.tensor([1.0]), 1.0)
    assert G.zeros(3).index_fill_(0, G.tensor([-1, 0]), 1.0).tolist() == [1.0, 0.0, 1.0]
    assert G.zeros(()).index_fill_(0, G.tensor([0]), 2.0).item() == 2.0
