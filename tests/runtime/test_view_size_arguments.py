"""Size arguments of the view ops and the in-place operator dunders, against PyTorch where installed; the
view/reshape/flatten/expand paths that skip frames (Note [Direct method calls], the generated `Tensor._view`)
keep PyTorch's geometry, aliasing, version counters and autograd."""

from __future__ import annotations

import operator

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")

_CALLS = [
    ("view", lambda lib, x: x.view(2.0, 8)),
    ("view", lambda lib, x: x.view((2, 8.0))),
    ("view", lambda lib, x: x.view([2.5, 8])),
    ("view", lambda lib, x: x.view(True, 16)),
    ("view", lambda lib, x: x.view(2, None)),
    ("view", lambda lib, x: x.view(2.0)),
    ("view", lambda lib, x: x.t().view(2.0, 8)),  # not contiguous: the general path
    ("reshape", lambda lib, x: lib.reshape(x, (2.0, 8))),
    ("reshape", lambda lib, x: x.reshape((2, 8.0))),
    ("reshape", lambda lib, x: x.t().reshape((2.0, 8))),
    ("expand", lambda lib, x: x[:1].expand((4.0, 4))),
    ("expand", lambda lib, x: x[:1].expand((2, 4, 4.0))),
    ("permute", lambda lib, x: x.permute((1.0, 0))),
    ("permute", lambda lib, x: lib.permute(x, (1, 0.0))),
    ("repeat", lambda lib, x: x.repeat((2.0, 1))),
    ("repeat", lambda lib, x: x.repeat([2, 1.5])),
]


@pytest.mark.parametrize(("op", "call"), _CALLS)
def test_non_integer_sizes_are_a_type_error(op: str, call: object) -> None:
    with pytest.raises(TypeError):
        call(torch, torch.ones(4, 4))  # type: ignore[operator]
    with pytest.raises(TypeError, match=rf"^{op}\(\): argument '\w+' must be tuple of ints, (but found element of "
                                         r"type (float|bool|NoneType) at pos \d|not float)"):
        call(G, G.ones(4, 4))  # type: ignore[operator]


def test_integer_like_sizes_still_work() -> None:
    x = G.arange(16.0)
    assert x.view(np.int64(2), 8).shape == (2, 8)
    assert x.view(G.tensor(4), -1).shape == (4, 4)
    assert x.reshape([np.int32(8), 2]).shape == (8, 2)
    assert x.view(4, 4).permute(np.int64(1), 0).stride() == (1, 4)
    assert x.view(1, 16).expand(np.int64(3), 16).stride() == (0, 1)
    assert x.view(4, 4).repeat(np.int64(2), 1).shape == (8, 4)


@pytest.mark.parametrize("name", ["ifloordiv", "imod"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("other", [2, -3, 2.5, "tensor"])
def test_inplace_floordiv_and_mod_keep_identity(name: str, dtype: str, other: object) -> None:
    values = [[7, -5, 3], [-8, 9, 0]]
    ours = G.tensor(values, dtype=getattr(G, dtype))
    theirs = torch.tensor(values, dtype=getattr(torch, dtype))
    if other == "tensor":
        other_g, other_t = G.tensor([2, -3, 4], dtype=ours.dtype), torch.tensor([2, -3, 4], dtype=theirs.dtype)
    else:
        other_g = other_t = other
    fn = getattr(operator, name)
    try:
        expected = fn(theirs, other_t)
    except RuntimeError:  # an integer tensor cannot take a float result in place
        with pytest.raises(RuntimeError):
            fn(ours, other_g)
        return
    view = ours[0]
    before = ours._version
    result = fn(ours, other_g)
    assert result is ours and ours._version == before + 1
    np.testing.assert_array_equal(ours.numpy(), expected.numpy())
    np.testing.assert_array_equal(view.numpy(), expected[0].numpy())  # written through: views see it


def test_inplace_operators_follow_autograd_rules() -> None:
    leaf = G.tensor([5.0, 7.0], requires_grad=True)
    for fn in (operator.ifloordiv, operator.imod):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            fn(leaf, 2)
    # on a non-leaf, the in-place op is recorded: x % 3 has gradient 1 (floor_divide has none, as PyTorch)
    a = G.tensor([5.0, 7.0, -4.0], requires_grad=True)
    b = a * 1
    b %= 3
    b.sum().backward()
    ta = torch.tensor([5.0, 7.0, -4.0], requires_grad=True)
    tb = ta * 1
    tb %= 3
    tb.sum().backward()
    np.testing.assert_allclose(b.detach().numpy(), tb.detach().numpy())
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())


def test_inplace_bitwise_operators_keep_identity() -> None:
    x = G.tensor([0b1100, 0b1010])
    ident = id(x)
    x &= 0b0110
    x |= G.tensor([1, 0])
    x ^= 3
    t = torch.tensor([0b1100, 0b1010])
    t &= 0b0110
    t |= torch.tensor([1, 0])
    t ^= 3
    assert id(x) == ident and x.tolist() == t.tolist()


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 4), (0, 4), (1,), ()])
@pytest.mark.parametrize("transposed", [False, True])
def test_reshape_and_flatten_view_when_possible_else_copy(shape: tuple[int, ...], transposed: bool) -> None:
    n = int(np.prod(shape))
    base_np = np.arange(n, dtype=np.float32).reshape(shape)
    g, t = G.tensor(base_np), torch.tensor(base_np)
    if transposed and len(shape) >= 2:
        g, t = g.transpose(0, -1), t.transpose(0, -1)
    for f in (lambda a: a.reshape(-1), lambda a: a.flatten(), lambda a: a.reshape(a.shape),
              lambda a: a.flatten(0, -1), lambda a: a.reshape(-1, 1)):
        ours, theirs = f(g), f(t)
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        # a view exactly where PyTorch's is one (same memory as the input), else a fresh copy
        same = theirs.data_ptr() == t.data_ptr() and theirs.numel() > 0
        assert (ours.numel() > 0 and np.shares_memory(ours.numpy(), g.numpy())) == same
        if same and ours.dim():
            assert ours.stride() == theirs.stride()


def test_reshape_errors_name_the_shape() -> None:
    for x in (G.ones(4, 4), G.ones(4, 4).t()):
        with pytest.raises(RuntimeError, match=r"shape '\[3, 7\]' is invalid for input of size 16"):
            x.reshape(3, 7)
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        G.ones(4, 4).t().view(16)


def test_views_through_the_fast_paths_keep_autograd_and_versions() -> None:
    a = G.arange(16.0).requires_grad_()
    ta = torch.arange(16.0).requires_grad_()
    outs = []
    for x in (a, ta):
        y = x * 1
        v = y.view(4, 4)
        r = y.reshape(2, 8)
        f = v.flatten()
        e = v[:1].expand(3, 4)
        u = v[None]
        assert v._base is y and r._base is y and f._base is y and e._base is y and u._base is y
        v.mul_(2)  # in place through a view: the base's history is rewritten (CopySlices)
        assert y._version == r._version == v._version
        (r.sum() + f.sum() + e.sum() + u.sum() + y.sum()).backward()
        outs.append(x.grad.numpy().copy())
    np.testing.assert_allclose(outs[0], outs[1])


def test_view_keeps_the_storage_of_a_tensor_that_has_one() -> None:
    x = G.ones(4, 4)
    x.add_(1)  # makes x's Storage (the version counter)
    v = x.view(16)
    w = v.view(2, 8)
    assert v.storage is x.storage and w.storage is x.storage and w._base is x
    w.zero_()
    assert x._version == v._version == w._version and float(x.sum()) == 0.0


def test_generated_view_is_the_tensor_view_with_fresh_tensor_inlined() -> None:
    from pathlib import Path

    from codegen.inline import inline
    from runtime.tensor import Tensor

    root = Path(__file__).resolve().parents[2]
    body = inline(root, "runtime/tensor.py", "Tensor._view", "self", "array", expand=("fresh_tensor",))
    assert "fresh_tensor" not in "\n".join(body) and body[0] == "t = _new(Tensor)"
    text = (root / "generated" / "_methods.py").read_text()
    assert "\n".join("    " + line.replace("\n", "\n    ") for line in body) + "\n" in text
    assert Tensor._view.__module__ == "generated._methods"
    x = G.ones(2, 3, dtype=G.float64)
    v = x._view(x._data.T)
    assert v._base is x and v.dtype is G.float64 and not v.requires_grad and v.grad_fn is None
