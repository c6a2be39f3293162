"""The layout (strides) of opgen's CPU results beside PyTorch's CPU results for the same inputs: transposed,
expanded (a stride-0 dim) and mixed layouts. Users see a layout through `.stride()`, `.is_contiguous()` and
whether `.view()` succeeds (Note [Pointwise output strides] in runtime/kernels/dense_copy.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import generated as G

torch = pytest.importorskip("torch")


def _t(m: Any, dt: str = "float32") -> Any:
    """A transposed (3, 4) tensor."""
    return (m.arange(12, dtype=m.float64).reshape(4, 3) - 5).to(getattr(m, dt)).t()


def _c(m: Any, dt: str = "float32") -> Any:
    """A row-major (3, 4) tensor."""
    return (m.arange(12, dtype=m.float64).reshape(3, 4) - 3).to(getattr(m, dt))


def _e(m: Any, dt: str = "float32") -> Any:
    """A (3, 4) tensor expanded from a row: strides (0, 1)."""
    return (m.arange(4, dtype=m.float64) - 1).to(getattr(m, dt)).reshape(1, 4).expand(3, 4)


def _e1(m: Any, dt: str = "float32") -> Any:
    """A (3, 4) tensor expanded from a column: strides (1, 0)."""
    return (m.arange(3, dtype=m.float64) - 1).to(getattr(m, dt)).reshape(3, 1).expand(3, 4)


def _t3(m: Any) -> Any:
    return m.arange(24.0).reshape(2, 4, 3).transpose(1, 2)


LAYOUTS = {"t": _t, "c": _c, "e": _e, "e1": _e1}

UNARY: dict[str, Callable[[Any, Any], Any]] = {
    "sigmoid": lambda m, x: m.sigmoid(x),
    "silu": lambda m, x: m.nn.functional.silu(x),
    "exp": lambda m, x: m.exp(x),
    "neg": lambda m, x: -x,
    "nan_to_num": lambda m, x: m.nan_to_num(x),
    "clamp": lambda m, x: m.clamp(x, -1, 1),
    "round_decimals": lambda m, x: m.round(x, decimals=1),
    "threshold": lambda m, x: m.threshold(x, 0.5, -1.0),
    "logsigmoid": lambda m, x: m.nn.functional.logsigmoid(x),
    "rrelu_eval": lambda m, x: m.nn.functional.rrelu(x, training=False),
    "glu": lambda m, x: m.nn.functional.glu(x, 1),
    "softmax": lambda m, x: m.softmax(x, 1),
    "softmax_dim0": lambda m, x: m.softmax(x, 0),
    "log_softmax": lambda m, x: m.log_softmax(x, 1),
    "kron": lambda m, x: m.kron(x, x),
    "addr": lambda m, x: m.addr(x, m.ones(3), m.ones(4)),
    "igamma": lambda m, x: m.igamma(x.abs() + 1, m.ones(3, 4)),
    "digamma": lambda m, x: m.digamma(x.abs() + 1),
    "masked_fill": lambda m, x: x.masked_fill(m.ones(3, 4, dtype=m.bool), 1.0),
    "masked_scatter": lambda m, x: x.masked_scatter(x > 0, m.ones(12)),
    "ldexp": lambda m, x: m.ldexp(x, m.ones(3, 4, dtype=m.int64)),
    "mul_row_major": lambda m, x: x * _c(m),
    "row_major_mul": lambda m, x: _c(m) * x,
    "add_alpha": lambda m, x: m.add(x, _c(m), alpha=2),
    "where": lambda m, x: m.where(x > 0, x, _c(m)),
    "lerp": lambda m, x: m.lerp(x, _c(m), 0.3),
    "addcmul": lambda m, x: m.addcmul(x, _c(m), _c(m)),
    "atan2": lambda m, x: m.atan2(x, _c(m)),
    "maximum": lambda m, x: m.maximum(x, _c(m)),
    "eq": lambda m, x: m.eq(x, _c(m)),
    "mse_none": lambda m, x: m.nn.functional.mse_loss(x, _c(m), reduction="none"),
    "bce_none": lambda m, x: m.nn.functional.binary_cross_entropy(x.sigmoid(), _c(m).sigmoid(), reduction="none"),
}

INTEGER: dict[str, Callable[[Any, Any], Any]] = {
    "round": lambda m, x: m.round(x),
    "clamp": lambda m, x: m.clamp(x, -1, 3),
    "clamp_min": lambda m, x: m.clamp_min(x, 0),
    "div_floor": lambda m, x: m.div(x, 2, rounding_mode="floor"),
    "div_trunc": lambda m, x: m.div(x, 2, rounding_mode="trunc"),
    "left_shift": lambda m, x: m.bitwise_left_shift(x, 1),
    "sigmoid": lambda m, x: m.sigmoid(x),
    "nan_to_num": lambda m, x: m.nan_to_num(x),
    "one_hot": lambda m, x: m.nn.functional.one_hot(x.abs() % 5, 5),
    "gcd": lambda m, x: m.gcd(x, _c(m, "int64")),
}


def _strides(m: Any, fn: Callable[[Any, Any], Any], make: Callable[..., Any], dt: str) -> tuple[int, ...] | str:
    try:
        return tuple(fn(m, make(m, dt)).stride())
    except Exception as e:  # the type is what is compared
        return type(e).__name__


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("name", list(UNARY))
def test_float_result_layout(name: str, layout: str) -> None:
    make = LAYOUTS[layout]
    assert _strides(G, UNARY[name], make, "float32") == _strides(torch, UNARY[name], make, "float32")


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("name", list(INTEGER))
def test_integer_result_layout(name: str, layout: str) -> None:
    make = LAYOUTS[layout]
    assert _strides(G, INTEGER[name], make, "int64") == _strides(torch, INTEGER[name], make, "int64")


THREE_D: dict[str, Callable[[Any, Any], Any]] = {
    "softmax_last": lambda m, x: m.softmax(x, -1),
    "layer_norm": lambda m, x: m.nn.functional.layer_norm(x, (4,)),
    "layer_norm_two_dims": lambda m, x: m.nn.functional.layer_norm(x, (3, 4)),
    "gelu": lambda m, x: m.nn.functional.gelu(x),
    "add_row_major": lambda m, x: x + m.ones(2, 3, 4),
}


@pytest.mark.parametrize("name", list(THREE_D))
def test_transposed_3d_result_layout(name: str) -> None:
    assert tuple(THREE_D[name](G, _t3(G)).stride()) == tuple(THREE_D[name](torch, _t3(torch)).stride())


def test_view_of_a_result_succeeds_or_fails_as_in_pytorch() -> None:
    for m in (G, torch):
        x = _t(m)
        with pytest.raises(RuntimeError):  # a transposed result cannot be flattened by a view
            (x + _c(m)).view(-1)
        assert m.softmax(x, 1).view(-1).shape == (12,)
        assert (_e(m).sigmoid()).is_contiguous()


META_CASES: dict[str, Callable[[Any, Any], Any]] = {
    "mul": lambda x, c: x * c,
    "row_major_mul": lambda x, c: c * x,
    "masked_fill": lambda x, c: x.masked_fill(c > 0, 1.0),
    "where": lambda x, c: G.where(x > 0, x, c),
    "log_sigmoid": lambda x, c: G.nn.functional.logsigmoid(x),
}


@pytest.mark.parametrize("name", list(META_CASES))
def test_meta_results_take_the_cpu_layout(name: str) -> None:
    cpu = META_CASES[name](_t(G), _c(G))
    meta = META_CASES[name](_t(G).to("meta"), _c(G).to("meta"))
    assert tuple(meta.stride()) == tuple(cpu.stride())


# -- clone keeps the layout (preserve_format), contiguous() and reshape make row-major copies -------------------
def _x3(m: Any) -> Any:
    return m.arange(24.0).reshape(2, 3, 4)


CLONES: dict[str, Callable[[Any], Any]] = {
    "clone_transposed": lambda m: _x3(m).transpose(1, 2).clone(),
    "clone_permuted": lambda m: _x3(m).permute(2, 0, 1).clone(),
    "clone_sliced": lambda m: _x3(m)[:, :, ::2].clone(),
    "clone_expanded": lambda m: _x3(m)[:, :1].expand(2, 3, 4).clone(),
    "clone_negative_step": lambda m: m.flip(_x3(m), [1]).transpose(0, 2).clone(),
    "clone_preserve_format": lambda m: _x3(m).transpose(0, 1).clone(memory_format=m.preserve_format),
    "clone_contiguous_format": lambda m: _x3(m).transpose(1, 2).clone(memory_format=m.contiguous_format),
    "clone_channels_last": lambda m: m.arange(48.0).reshape(2, 3, 2, 4).clone(memory_format=m.channels_last),
    "clone_channels_last_3d": lambda m: m.ones(2, 3, 2, 1, 4).clone(memory_format=m.channels_last_3d),
    "clone_channels_last_wrong_rank": lambda m: _x3(m).clone(memory_format=m.channels_last),
    "contiguous": lambda m: _x3(m).transpose(1, 2).contiguous(),
    "contiguous_channels_last": lambda m: m.arange(48.0).reshape(2, 3, 2, 4).contiguous(memory_format=m.channels_last),
    "reshape_of_transposed": lambda m: _x3(m).transpose(1, 2).reshape(2, 12),
    "t_copy": lambda m: m.t_copy(_x3(m)[0]),
    "transpose_copy": lambda m: m.transpose_copy(_x3(m), 1, 2),
    "alias_copy": lambda m: m.alias_copy(_x3(m).transpose(1, 2)),
    "expand_copy": lambda m: m.expand_copy(_x3(m)[:, :1], (2, 3, 4)),
}


def _layout_of(call: Callable[[], Any]) -> Any:
    try:
        r = call()
    except Exception as e:  # the type is what is compared
        return type(e).__name__
    return tuple(r.shape), tuple(r.stride()), r.is_contiguous(), r.tolist()


@pytest.mark.parametrize("name", list(CLONES))
def test_clone_layouts(name: str) -> None:
    assert _layout_of(lambda: CLONES[name](G)) == _layout_of(lambda: CLONES[name](torch))


def test_clone_of_a_transposed_tensor_is_not_viewable_flat_as_in_pytorch() -> None:
    for m in (G, torch):
        c = _x3(m).transpose(1, 2).clone()
        assert not c.is_contiguous()
        with pytest.raises(RuntimeError):
            c.view(-1)
        assert c.contiguous().view(-1).tolist() == _x3(m).transpose(1, 2).reshape(-1).tolist()


def test_clone_keeps_gradients_and_meta_layout() -> None:
    x = G.arange(6.0).reshape(2, 3).requires_grad_()
    y = x.t().clone()
    (y * G.arange(6.0).reshape(3, 2)).sum().backward()
    assert x.grad.tolist() == G.arange(6.0).reshape(3, 2).t().tolist()
    meta = _x3(G).to("meta").transpose(1, 2)
    assert meta.clone().stride() == _x3(G).transpose(1, 2).clone().stride()
    assert meta.contiguous().stride() == (12, 3, 1)
    with pytest.raises(TypeError):
        _x3(G).clone(memory_format="channels_first")


@pytest.mark.parametrize("fmt", ["contiguous_format", "channels_last"])
def test_is_contiguous_in_a_memory_format(fmt: str) -> None:
    def case(m: Any) -> list[bool]:
        y = m.arange(48.0).reshape(2, 3, 2, 4)
        f = getattr(m, fmt)
        return [y.is_contiguous(memory_format=f), y.contiguous(memory_format=m.channels_last).is_contiguous(
            memory_format=f), y.permute(0, 2, 3, 1).is_contiguous(memory_format=f)]
    assert case(G) == case(torch)


# -- the *_like factories take their input's layout (preserve_format) ---------------------------------------
LIKES: dict[str, Callable[[Any, Any], Any]] = {
    "empty_like": lambda m, x: m.empty_like(x),
    "zeros_like": lambda m, x: m.zeros_like(x),
    "ones_like": lambda m, x: m.ones_like(x),
    "full_like": lambda m, x: m.full_like(x, 2.5),
    "rand_like": lambda m, x: m.rand_like(x),
    "randn_like": lambda m, x: m.randn_like(x),
    "randint_like": lambda m, x: m.randint_like(x, 5),
    "zeros_like_dtype": lambda m, x: m.zeros_like(x, dtype=m.int64),
    "ones_like_contiguous_format": lambda m, x: m.ones_like(x, memory_format=m.contiguous_format),
    "zeros_like_preserve_format": lambda m, x: m.zeros_like(x, memory_format=m.preserve_format),
}
LIKE_INPUTS: dict[str, Callable[[Any], Any]] = {
    "transposed": lambda m: _x3(m).transpose(1, 2),
    "permuted": lambda m: _x3(m).permute(2, 0, 1),
    "sliced": lambda m: _x3(m)[:, :, ::2],
    "expanded": lambda m: _x3(m)[:, :1].expand(2, 3, 4),
    "contiguous": _x3,
}


@pytest.mark.parametrize("source", list(LIKE_INPUTS))
@pytest.mark.parametrize("name", list(LIKES))
def test_like_factories_take_the_input_layout(name: str, source: str) -> None:
    ours = LIKES[name](G, LIKE_INPUTS[source](G))
    theirs = LIKES[name](torch, LIKE_INPUTS[source](torch))
    assert (tuple(ours.shape), tuple(ours.stride()), str(ours.dtype).rpartition(".")[2]) == \
        (tuple(theirs.shape), tuple(theirs.stride()), str(theirs.dtype).rpartition(".")[2])
    if name in ("zeros_like", "ones_like", "full_like", "zeros_like_dtype"):
        assert ours.tolist() == theirs.tolist()


def test_like_factories_keep_requires_grad_and_meta_layout() -> None:
    x = _x3(G).transpose(1, 2)
    r = G.ones_like(x, requires_grad=True)
    assert r.requires_grad and r.is_leaf and r.stride() == (12, 1, 4)
    assert G.zeros_like(x.to("meta")).stride() == (12, 1, 4)
    assert G.empty_like(_x3(G).reshape(2, 3, 2, 2), memory_format=G.channels_last).stride() == (12, 1, 6, 3)
