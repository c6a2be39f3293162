"""G.autograd.Function, detect_anomaly and saved-tensor hooks, against torch where a value is involved."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")


def _functions(T):
    class ScaledExp(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            y = x.exp() * k
            ctx.save_for_backward(y)
            ctx.k = k
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            assert ctx.needs_input_grad == (True, False)
            return g * y, None

    class Split(T.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2, x.sum(), (x > 0)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[2])
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g_double, g_sum, g_mask):
            return g_double * 2 + g_sum

    class Square(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    class AddInPlace(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            x.add_(y)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g, g

    class TwoOut(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1.0, x * 3.0

        @staticmethod
        def backward(ctx, ga, gb):
            out = T.zeros_like(ga if ga is not None else gb)
            if ga is not None:
                out = out + ga
            if gb is not None:
                out = out + 3 * gb
            return out

    class Once(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        @T.autograd.function.once_differentiable
        def backward(ctx, g):
            return g * 4

    return ScaledExp, Split, Square, AddInPlace, TwoOut, Once


def _program(T) -> dict:
    ScaledExp, Split, Square, AddInPlace, TwoOut, Once = _functions(T)
    out = {}
    x = T.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = ScaledExp.apply(x, 3.0)
    a, s, m = Split.apply(x)
    out["node"] = type(y.grad_fn).__name__
    out["mask_requires_grad"] = m.requires_grad
    out["shared_node"] = a.grad_fn is s.grad_fn
    (y.sum() + (a * a).sum() + s).backward()
    out["grad1"] = [round(v, 4) for v in x.grad.tolist()]  # exp differs from torch's in the last ulp
    z = T.tensor([1.0, 2.0], requires_grad=True)
    (g,) = T.autograd.grad(Square.apply(z).sum(), z, create_graph=True)
    g.sum().backward()
    out["double"] = [g.tolist(), z.grad.tolist()]
    w = T.tensor([1.0, 2.0], requires_grad=True)
    base = w * 1.0
    r = AddInPlace.apply(base, T.tensor([10.0, 20.0], requires_grad=True))
    out["dirty_same"] = r is base
    r.sum().backward()
    out["dirty_grad"] = w.grad.tolist()
    v = T.tensor([1.0, 2.0], requires_grad=True)
    p, q = TwoOut.apply(v)
    q.sum().backward()
    out["unmaterialized"] = v.grad.tolist()
    u = T.tensor([1.0], requires_grad=True)
    Once.apply(u).sum().backward()
    out["once"] = u.grad.tolist()
    with T.no_grad():
        out["no_grad_requires"] = Square.apply(z).requires_grad
    return out


def test_custom_functions_agree_with_torch() -> None:
    ours, ref = _program(G), _program(torch)
    assert ours == ref


def test_function_errors() -> None:
    class WrongCount(G.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return (g,)

    class GradForNonTensor(G.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = G.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        WrongCount.apply(x, x).sum().backward()
    with pytest.raises(RuntimeError, match="not a Variable"):
        GradForNonTensor.apply(x, 2.0).sum().backward()
    with pytest.raises(RuntimeError, match="Legacy autograd function"):
        WrongCount()(x, x)

    class DirtyLeaf(G.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g
    with pytest.raises(RuntimeError, match="leaf Variable"):
        DirtyLeaf.apply(x)


def test_saved_tensors_are_version_checked_and_freed() -> None:
    class Keep(G.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x

    a = G.tensor([1.0, 2.0], requires_grad=True)
    b = a * 1.0
    y = Keep.apply(b)
    b.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    y2 = Keep.apply(a * 1.0)
    y2.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y2.sum().backward()


def test_detect_anomaly_names_the_node_and_forward_trace() -> None:
    class NaNGrad(G.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = G.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with G.autograd.detect_anomaly():
            assert G.autograd.is_anomaly_enabled()
            y = NaNGrad.apply(x)
            with pytest.raises(RuntimeError, match="NaNGradBackward.*nan") as info:
                y.sum().backward()
            assert "autograd/test_custom_function.py" in str(info.value)  # the forward call's stack
            u = G.tensor([0.0], requires_grad=True)
            with pytest.raises(RuntimeError, match="SqrtBackward"):
                (u.sqrt() * 0).sum().backward()
    assert not G.autograd.is_anomaly_enabled()
    NaNGrad.apply(x).sum().backward()  # off again: no check
    assert np.isnan(x.grad.tolist()[0])
    G.autograd.set_detect_anomaly(True)
    assert G.autograd.is_anomaly_enabled()
    G.autograd.set_detect_anomaly(False)
    assert not G.autograd.is_anomaly_enabled()


def test_saved_tensors_hooks_pack_and_unpack() -> None:
    packed, unpacked = [], []

    def pack(t):
        packed.append(tuple(t.shape))
        return t.detach().numpy().copy()

    def unpack(a):
        unpacked.append(a.shape)
        return G.from_numpy(a)

    x = G.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with G.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = (x * x).sin().sum()
    assert packed  # mul and sin saved their inputs through the hook
    y.backward()
    assert len(unpacked) >= len(packed) - 1
    expected = (np.cos(np.array([1.0, 4.0, 9.0])) * 2 * np.array([1.0, 2.0, 3.0])).tolist()
    np.testing.assert_allclose(x.grad.tolist(), expected, rtol=1e-6)
    x.grad = None
    with G.autograd.graph.save_on_cpu():
        z = (x.exp() * x).sum()
    z.backward()
    np.testing.assert_allclose(x.grad.tolist(), (np.exp([1.0, 2.0, 3.0]) * (1 + np.array([1.0, 2.0, 3.0]))),
                               rtol=1e-6)
    with G.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        with G.autograd.graph.saved_tensors_hooks(pack, unpack):
            with pytest.raises(RuntimeError, match="no hooks here"):
                x * x


def test_set_multithreading_enabled_is_kept_and_restored() -> None:
    assert G.autograd.set_multithreading_enabled.is_enabled()
    with G.autograd.set_multithreading_enabled(False):
        assert not G.autograd.set_multithreading_enabled.is_enabled()
        x = G.tensor([2.0], requires_grad=True)
        (x * x).sum().backward()
        assert x.grad.tolist() == [4.0]
    assert G.autograd.set_multithreading_enabled.is_enabled()
