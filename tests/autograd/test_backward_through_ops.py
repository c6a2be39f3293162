"""End-to-end autograd through the generated ops: `loss.backward()`, G.autograd.grad, hooks, grad mode,
in-place ops, views, errors. NumPy gives the expected values."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G  # a broken generated/ fails these tests: it never skips them


def leaf(values, dtype=None) -> G.Tensor:
    return G.tensor(np.asarray(values, dtype=np.float64), dtype=dtype or G.float64, requires_grad=True)


def npy(t) -> np.ndarray:
    return t.detach().numpy()


# -- backward basics ---------------------------------------------------------------------------------
def test_backward_of_a_small_network_matches_numpy():
    rng = np.random.default_rng(0)
    xv, wv, bv = rng.standard_normal((4, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2)
    x, w, b = G.tensor(xv), leaf(wv), leaf(bv)
    loss = (x.mm(w) + b).relu().sum()
    loss.backward()
    h = xv @ wv + bv
    mask = (h > 0).astype(np.float64)
    np.testing.assert_allclose(npy(w.grad), xv.T @ mask)
    np.testing.assert_allclose(npy(b.grad), mask.sum(0))
    assert x.grad is None


def test_grad_fn_names_and_next_functions():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    z = x * y
    assert z.grad_fn.name() == "MulBackward0"
    assert not z.is_leaf and x.is_leaf
    (n0, i0), (n1, i1) = z.grad_fn.next_functions
    assert n0.name() == "AccumulateGrad" and n0.variable is x and i0 == 0
    assert n1.variable is y
    s = z.sum()
    assert s.grad_fn.next_functions == ((z.grad_fn, 0),)


def test_broadcasting_gradients_are_reduced():
    a = leaf(np.ones((2, 3)))
    b = leaf([1.0, 2.0, 3.0])
    c = leaf([[2.0], [3.0]])
    (a * b * c).sum().backward()
    assert b.grad.shape == (3,) and c.grad.shape == (2, 1)
    np.testing.assert_allclose(npy(b.grad), [5.0, 5.0, 5.0])
    np.testing.assert_allclose(npy(c.grad), [[6.0], [6.0]])


def test_tensor_used_many_times():
    x = leaf([1.5, -2.0])
    y = x * x + x * 3.0 + x
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), 2 * npy(x) + 4.0)


def test_diamond_graph():
    x = leaf([0.3, 0.7])
    a = x.exp()
    b, c = a * 2.0, a * a
    (b + c).sum().backward()
    xv = npy(x)
    np.testing.assert_allclose(npy(x.grad), 2 * np.exp(xv) + 2 * np.exp(2 * xv))


def test_grads_accumulate_and_reset():
    x = leaf([1.0, 2.0])
    (x * x).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_allclose(npy(x.grad), 4 * npy(x))
    x.grad = None
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [3.0, 3.0])


def test_backward_with_explicit_gradient_and_scalar_rule():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    y.backward(G.tensor([1.0, 10.0], dtype=G.float64))
    np.testing.assert_allclose(npy(x.grad), [2.0, 20.0])


def test_backward_on_tensor_without_grad():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and does not have a "
                                           "grad_fn"):
        G.tensor([1.0]).sum().backward()


def test_integer_outputs_do_not_require_grad():
    x = leaf([1.0, -1.0])
    assert not (x > 0).requires_grad


# -- retain_graph --------------------------------------------------------------------------------------
def test_second_backward_through_freed_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    xv = npy(x)
    np.testing.assert_allclose(npy(x.grad), 2 * (np.exp(xv) * (1 + xv)))


# -- autograd.grad and higher order ---------------------------------------------------------------------
def test_autograd_grad():
    x, w = leaf([1.0, 2.0]), leaf([3.0, -1.0])
    (gx, gw) = G.autograd.grad((x * w).sum(), [x, w])
    np.testing.assert_allclose(npy(gx), npy(w))
    np.testing.assert_allclose(npy(gw), npy(x))
    assert x.grad is None and w.grad is None


def test_autograd_grad_allow_unused():
    x, z = leaf([1.0]), leaf([1.0])
    y = (x * 2.0).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        G.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = G.autograd.grad(y, [x, z], allow_unused=True)
    assert gz is None


def test_second_derivative():
    x = leaf([0.5, 1.5])
    y = (x * x * x).sum()
    (g,) = G.autograd.grad(y, [x], create_graph=True)
    assert g.requires_grad
    (gg,) = G.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(npy(g), 3 * npy(x) ** 2)
    np.testing.assert_allclose(npy(gg), 6 * npy(x))


def test_gradient_norm_penalty():
    """d/dw of loss + |d loss/dw|^2, the gradient-penalty pattern (double backward through mm and exp)."""
    rng = np.random.default_rng(1)
    xv, wv = rng.standard_normal((3, 2)), rng.standard_normal((2, 2)) * 0.5
    x, w = G.tensor(xv), leaf(wv)
    loss = x.mm(w).exp().sum()
    (gw,) = G.autograd.grad(loss, [w], create_graph=True)
    penalty = (gw * gw).sum()
    (loss + penalty).backward()
    # NumPy: loss = sum(exp(xw)); g = x^T E; penalty = |x^T E|^2; d penalty/dw = x^T ((x (2 g)) * E)
    e = np.exp(xv @ wv)
    g = xv.T @ e
    expected = xv.T @ e + xv.T @ ((xv @ (2 * g)) * e)
    np.testing.assert_allclose(npy(w.grad), expected, rtol=1e-10)


def test_backward_create_graph_gives_differentiable_grad():
    x = leaf([2.0])
    (x * x * x).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (gg,) = G.autograd.grad(x.grad.sum(), [x])
    np.testing.assert_allclose(npy(gg), [12.0])


# -- hooks and retain_grad ------------------------------------------------------------------------------
def test_hooks_change_gradients():
    x = leaf([1.0, 2.0])
    h = x * 3.0
    h.register_hook(lambda g: g * 10.0)
    x.register_hook(lambda g: g + 1.0)
    (h * h).sum().backward()
    np.testing.assert_allclose(npy(x.grad), 10 * 2 * 3 * npy(h) + 1.0)


def test_hook_handle_remove():
    x = leaf([1.0])
    handle = x.register_hook(lambda g: g * 0.0)
    handle.remove()
    (x * 2.0).sum().backward()
    np.testing.assert_allclose(npy(x.grad), [2.0])


def test_retain_grad():
    x = leaf([1.0, 2.0])
    h = x.exp()
    h.retain_grad()
    (h * 2.0).sum().backward()
    np.testing.assert_allclose(npy(h.grad), [2.0, 2.0])


# -- grad mode ----------------------------------------------------------------------------------------
def test_no_grad_inside_enable_grad_and_back():
    x = leaf([1.0])
    with G.enable_grad():
        with G.no_grad():
            y = x * 2.0
            with G.enable_grad():
                z = x * 2.0
        w = x * 2.0
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad and w.requires_grad


def test_set_grad_enabled_and_decorator():
    x = leaf([1.0])

    @G.no_grad()
    def f(t):
        return t * 2.0

    assert not f(x).requires_grad
    with G.set_grad_enabled(False):
        assert not (x * 2.0).requires_grad
    assert (x * 2.0).requires_grad
    assert G.is_grad_enabled()


# -- detach, requires_grad_ ------------------------------------------------------------------------------
def test_detach_and_requires_grad():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    y.detach_()
    assert not y.requires_grad and y.grad_fn is None
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        G.tensor([1, 2]).requires_grad_()


# -- in-place ------------------------------------------------------------------------------------------
def test_inplace_on_leaf_that_requires_grad():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place "
                                           "operation."):
        x.mul_(2.0)
    with G.no_grad():
        x.mul_(2.0)  # an optimizer-style update is allowed
    np.testing.assert_allclose(npy(x), [2.0])


def test_inplace_op_rebases_history():
    x = leaf([1.0, 2.0])
    y = x * 3.0
    first = y.grad_fn
    y.mul_(x)
    assert y.grad_fn.name() == "MulBackward0" and y.grad_fn.next_functions[0] == (first, 0)
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), 2 * 3 * npy(x))


def test_inplace_op_with_aliased_argument():
    x = leaf([1.0, 2.0])
    y = x * 3.0
    y.mul_(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_inplace_relu_and_add():
    x = leaf([-1.0, 2.0])
    y = x * 1.0
    y.add_(G.tensor([0.5, 0.5], dtype=G.float64)).relu_()
    y.sum().backward()
    np.testing.assert_allclose(npy(x.grad), [0.0, 1.0])


def test_modified_saved_tensor_raises_version_error():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    y = x * 1.0
    z = y.exp()  # saves its result
    z.add_(1.0)
    expected = (r"one of the variables needed for gradient computation has been modified by an inplace "
                r"operation: \[opgen.float64 \[2, 2\]\], which is output 0 of ExpBackward0, is at version 1; "
                r"expected version 0 instead")
    with pytest.raises(RuntimeError, match=expected):
        z.sum().backward()


def test_modified_saved_input_raises_version_error():
    x, w = leaf([1.0, 2.0]), G.tensor([3.0, 4.0], dtype=G.float64)
    y = x * w
    w.add_(1.0)
    with pytest.raises(RuntimeError, match=r"\[opgen.float64 \[2\]\] is at version 1; expected version 0"):
        y.sum().backward()


# -- views ------------------------------------------------------------------------------------------------
def test_gradients_through_views():
    x = leaf(np.arange(6.0).reshape(2, 3))
    y = x.t().reshape([6]).unsqueeze(0).expand([2, 6])
    (y * G.tensor(np.arange(6.0), dtype=G.float64)).sum().backward()
    np.testing.assert_allclose(npy(x.grad), 2 * np.arange(6.0).reshape(3, 2).T)


# -- ops without a derivative -------------------------------------------------------------------------------
def test_op_without_derivative_fails_at_backward():
    from runtime.autograd.kernels import not_implemented_autograd
    from runtime.dispatcher import dispatcher
    op = dispatcher.find("exp")
    undo = dispatcher.register("exp", "Autograd", not_implemented_autograd(op))
    try:
        x = leaf([1.0])
        y = G.exp(x)
        assert y.requires_grad
        with pytest.raises(RuntimeError, match="derivative for exp is not implemented"):
            y.sum().backward()
    finally:
        undo()


# -- gradcheck itself ---------------------------------------------------------------------------------------
def test_gradcheck_catches_a_wrong_derivative():
    from runtime.autograd.gradcheck import GradcheckError
    x = leaf([0.5, 1.0])

    def wrong(t):
        with G.no_grad():
            doubled = t * 2.0  # a constant to autograd: the analytical gradient misses it
        return t * doubled

    with pytest.raises(GradcheckError, match=r"gradcheck failed for .*wrong: Jacobian mismatch for output 0 "
                                             r"with respect to input 0 at input element \[\d\]"):
        G.autograd.gradcheck(wrong, (x,))
    assert G.autograd.gradcheck(lambda t: t * t, (x,))
    assert G.autograd.gradgradcheck(lambda t: t * t * t, (x,))


# -- Note [Stealing the first gradient] -------------------------------------------------------------------
def test_first_gradient_is_never_shared_between_leaves():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x + y).sum().backward()  # AddBackward0 passes one gradient tensor to both leaves
    assert x.grad is not y.grad
    x.grad.add_(G.tensor([10.0, 10.0], dtype=G.float64))
    np.testing.assert_allclose(npy(y.grad), [1.0, 1.0])


def test_first_gradient_is_not_the_callers_tensor():
    x = leaf([1.0, 2.0])
    g = G.tensor([5.0, 6.0], dtype=G.float64)
    x.clone().backward(g)  # CloneBackward0 returns the incoming gradient itself
    assert x.grad is not g
    g.add_(G.tensor([1.0, 1.0], dtype=G.float64))
    np.testing.assert_allclose(npy(x.grad), [5.0, 6.0])


def test_first_gradient_kept_by_a_hook_is_copied():
    x = leaf([1.0, 2.0])
    kept = []
    h = x * 2.0
    h.register_hook(lambda g: kept.append(g))
    h.sum().backward()
    x2 = leaf([1.0, 2.0])
    x2.register_hook(lambda g: kept.append(g))
    (x2 * 3.0).sum().backward()
    assert all(x2.grad is not k for k in kept)
    np.testing.assert_allclose(npy(x2.grad), [3.0, 3.0])


def test_fresh_gradient_is_stored_without_a_copy():
    x = leaf(np.ones((3, 2)))
    w = G.tensor(np.ones((2, 4)), dtype=G.float64)
    x.mm(w).sum().backward()
    assert x.grad._base is None and x.grad.is_contiguous()
    np.testing.assert_allclose(npy(x.grad), np.full((3, 2), 4.0))


def test_relu_propagates_nan_and_its_backward_masks_any_gradient():
    # PyTorch: relu(nan) is nan; relu's backward is threshold_backward, 0 where the input is <= 0 even for
    # an inf or nan incoming gradient (a product grad * mask would give nan there).
    x = leaf([-1.0, 0.0, 2.0, np.nan])
    y = G.relu(x)
    assert np.isnan(npy(y)[3]) and npy(y)[:3].tolist() == [0.0, 0.0, 2.0]
    y.backward(G.tensor([np.inf, np.nan, 5.0, 1.0], dtype=G.float64))
    assert npy(x.grad)[:3].tolist() == [0.0, 0.0, 5.0]


# -- outputs marked non-differentiable -----------------------------------------------------------------
def test_non_differentiable_outputs_get_no_zero_filled_gradient():
    # native_layer_norm returns (out, mean, rstd); mean and rstd are floating but not differentiable, so
    # backward through `out` must hand the node None for them, not zeros made from recorded metadata.
    x = leaf(np.random.default_rng(0).standard_normal((3, 4)))
    out, mean, rstd = G.native_layer_norm(x, [4], None, None, 1e-5)
    assert not mean.requires_grad and not rstd.requires_grad
    assert out.grad_fn.output_meta[1] is None and out.grad_fn.output_meta[2] is None
    seen: list = []
    out.grad_fn.register_hook(lambda grads_in, grads_out: seen.append(grads_out))
    out.sum().backward()
    assert len(seen) == 1 and seen[0][0] is not None
    assert seen[0][1] is None and seen[0][2] is None
    assert x.grad is not None and np.isfinite(npy(x.grad)).all()
