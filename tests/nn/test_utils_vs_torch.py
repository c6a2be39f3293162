"""nn.utils against PyTorch: parametrize (and its weight/spectral norm parametrizations), the older hook-based
weight_norm / spectral_norm, fusion, functional_call, clipping, and nn.init's new initialisers."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(1)


def _linear(lib, n_in: int = 4, n_out: int = 3):
    m = lib.nn.Linear(n_in, n_out)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(RNG.standard_normal((n_out, n_in)).astype("f4")))
        m.bias.copy_(lib.tensor(RNG.standard_normal(n_out).astype("f4")))
    return m


def _pair():
    t = _linear(torch)
    g = G.nn.Linear(4, 3)
    g.load_state_dict({k: G.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, g


def _close(a, b, tol: float = 1e-5) -> None:
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


class Symmetric:
    """A parametrization written as in PyTorch's tutorial, for either library."""

    @staticmethod
    def make(lib):
        class Sym(lib.nn.Module):
            def forward(self, x):
                return x.triu() + x.triu(1).transpose(-1, -2)

            def right_inverse(self, a):
                return a.triu()
        return Sym()


def test_register_parametrization_matches_torch_and_keeps_the_parameter() -> None:
    x = RNG.standard_normal((2, 3)).astype("f4")
    outs = []
    for lib in (torch, G):
        m = lib.nn.Linear(3, 3)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(np.arange(9.0, dtype="f4").reshape(3, 3)))
            m.bias.zero_()
        original = m.weight
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "weight", Symmetric.make(lib))
        assert P.is_parametrized(m) and P.is_parametrized(m, "weight") and not P.is_parametrized(m, "bias")
        assert type(m).__name__ == "ParametrizedLinear" and P.type_before_parametrizations(m) is lib.nn.Linear
        assert m.parametrizations.weight.original is original
        keys = list(m.state_dict())
        w = m.weight
        assert np.allclose(w.detach().numpy(), w.detach().numpy().T)
        y = m(lib.tensor(x))
        y.sum().backward()
        grad = original.grad.clone()
        with P.cached():
            assert m.weight is m.weight
        m.weight = lib.tensor(np.ones((3, 3), dtype="f4") * 2)
        after_assign = m.weight.detach().clone()
        P.remove_parametrizations(m, "weight")
        assert type(m) is lib.nn.Linear and isinstance(m.weight, lib.nn.Parameter)
        outs.append((keys, w, y, grad, after_assign, list(m.state_dict()), m.weight))
    (tk, *t_vals, t_keys_after, tw), (gk, *g_vals, g_keys_after, gw) = outs
    assert gk == tk and g_keys_after == t_keys_after
    for a, b in zip(g_vals, t_vals, strict=True):
        _close(a, b)
    _close(gw, tw)


def test_parametrizations_weight_norm_matches_torch() -> None:
    t, g = _pair()
    torch.nn.utils.parametrizations.weight_norm(t, dim=0)
    G.nn.utils.parametrizations.weight_norm(g, dim=0)
    assert list(g.state_dict()) == list(t.state_dict())
    for k, v in t.state_dict().items():
        _close(g.state_dict()[k], v)
    x = RNG.standard_normal((5, 4)).astype("f4")
    t(torch.tensor(x)).pow(2).sum().backward()
    g(G.tensor(x)).pow(2).sum().backward()
    _close(g.parametrizations.weight.original1.grad, t.parametrizations.weight.original1.grad)
    _close(g.parametrizations.weight.original0.grad, t.parametrizations.weight.original0.grad)


def test_parametrizations_spectral_norm_matches_torch_given_the_same_vectors() -> None:
    t, g = _pair()
    torch.nn.utils.parametrizations.spectral_norm(t)
    G.nn.utils.parametrizations.spectral_norm(g)
    assert list(g.state_dict()) == list(t.state_dict())
    g.load_state_dict({k: G.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    for _ in range(3):  # training mode: one power iteration per access
        _close(g.weight, t.weight)
    _close(g.parametrizations.weight[0]._u, t.parametrizations.weight[0]._u)
    sigma = np.linalg.svd(t.parametrizations.weight.original.detach().numpy(), compute_uv=False)[0]
    assert abs(float(np.linalg.svd(g.weight.detach().numpy(), compute_uv=False)[0]) - 1.0) < 1e-3
    assert sigma > 1.0


def test_hook_weight_norm_and_spectral_norm_match_torch() -> None:
    t, g = _pair()
    torch.nn.utils.weight_norm(t, dim=1)
    G.nn.utils.weight_norm(g, dim=1)
    assert list(g.state_dict()) == list(t.state_dict())
    x = RNG.standard_normal((5, 4)).astype("f4")
    _close(g(G.tensor(x)), t(torch.tensor(x)))
    torch.nn.utils.remove_weight_norm(t)
    G.nn.utils.remove_weight_norm(g)
    assert list(g.state_dict()) == list(t.state_dict())
    _close(g.weight, t.weight)

    t, g = _pair()
    torch.nn.utils.spectral_norm(t)
    G.nn.utils.spectral_norm(g)
    assert list(g.state_dict()) == list(t.state_dict())
    g.load_state_dict({k: G.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    for mode in (True, True, False):
        t.train(mode)
        g.train(mode)
        _close(g(G.tensor(x)), t(torch.tensor(x)))
    torch.nn.utils.remove_spectral_norm(t)
    G.nn.utils.remove_spectral_norm(g)
    _close(g.weight, t.weight)
    with pytest.raises(ValueError):
        G.nn.utils.remove_spectral_norm(g)


def test_fuse_linear_and_conv_with_batchnorm() -> None:
    lin, bn = G.nn.Linear(4, 3), G.nn.BatchNorm1d(3)
    with G.no_grad():
        bn.running_mean.copy_(G.tensor([0.5, -1.0, 2.0]))
        bn.running_var.copy_(G.tensor([1.5, 0.5, 2.0]))
        bn.weight.copy_(G.tensor([2.0, -1.0, 0.5]))
    lin.eval()
    bn.eval()
    x = G.tensor(RNG.standard_normal((6, 4)).astype("f4"))
    _close(G.nn.utils.fuse_linear_bn_eval(lin, bn)(x), bn(lin(x)))
    conv, bn2 = G.nn.Conv2d(2, 3, 3).eval(), G.nn.BatchNorm2d(3).eval()
    with G.no_grad():
        bn2.running_var.copy_(G.tensor([1.5, 0.5, 2.0]))
        bn2.bias.copy_(G.tensor([0.1, 0.2, 0.3]))
    img = G.tensor(RNG.standard_normal((1, 2, 5, 5)).astype("f4"))
    _close(G.nn.utils.fuse_conv_bn_eval(conv, bn2)(img), bn2(conv(img)))
    with pytest.raises(RuntimeError):
        G.nn.utils.fuse_linear_bn_eval(lin.train(), bn)


def test_functional_call_swaps_for_one_call() -> None:
    m = G.nn.Linear(2, 1)
    w = G.ones(1, 2)
    out = G.nn.utils.stateless.functional_call(m, {"weight": w, "bias": G.zeros(1)}, (G.tensor([[1.0, 2.0]]),))
    assert float(out) == 3.0 and m.weight is not w


def test_clip_grad_norm_and_total_norm_match_torch() -> None:
    t, g = _pair()
    for lib, m in ((torch, t), (G, g)):
        m(lib.ones(2, 4)).pow(3).sum().backward()
    t_norm = torch.nn.utils.clip_grad_norm_(t.parameters(), 0.5, norm_type=3.0)
    g_norm = G.nn.utils.clip_grad_norm_(g.parameters(), 0.5, norm_type=3.0)
    _close(g_norm, t_norm)
    _close(g.weight.grad, t.weight.grad)
    _close(G.nn.utils.get_total_norm([g.weight.grad, g.bias.grad]),
           torch.nn.utils.get_total_norm([t.weight.grad, t.bias.grad]))


def test_new_initialisers() -> None:
    w = G.empty(5, 8)
    G.nn.init.orthogonal_(w, gain=2.0)
    np.testing.assert_allclose((w @ w.t()).numpy(), 4 * np.eye(5), atol=1e-5)
    w = G.empty(3, 3, 3)
    G.nn.init.dirac_(w)
    _close(w, torch.nn.init.dirac_(torch.empty(3, 3, 3)))
    w = G.empty(2000)
    G.nn.init.trunc_normal_(w, mean=0.1, std=1.0, a=-0.5, b=0.5)
    assert -0.5 <= float(w.min()) and float(w.max()) <= 0.5 and abs(float(w.mean()) - 0.017) < 0.05
    w = G.empty(10, 4)
    G.nn.init.sparse_(w, sparsity=0.25)
    assert (w == 0).sum(0).tolist() == [3, 3, 3, 3]
    _close(G.nn.init.eye_(G.empty(2, 3)), torch.nn.init.eye_(torch.empty(2, 3)))
    assert G.nn.init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain("leaky_relu", 0.2)
    with pytest.raises(ValueError):
        G.nn.init.eye_(G.empty(2, 2, 2))
    with pytest.warns(FutureWarning):
        G.nn.init.xavier_uniform(G.empty(2, 2))


@pytest.mark.parametrize("orthogonal_map", [None, "cayley", "householder"])
def test_orthogonal_parametrization_matches_torch(orthogonal_map: str | None) -> None:
    w = RNG.standard_normal((4, 4)).astype("f4")
    x = np.arange(8, dtype="f4").reshape(2, 4) / 5
    weights = []
    for lib in (torch, G):
        m = lib.nn.Linear(4, 4)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
            m.bias.zero_()
        lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map)
        first = m.weight.detach().clone()
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            m(lib.tensor(x)).pow(3).sum().backward()
            opt.step()
        weights.append((first, m.weight.detach(), list(m.state_dict())))
    (t_first, t_w, t_keys), (g_first, g_w, g_keys) = weights
    assert g_keys == t_keys
    _close(g_first, t_first)
    _close(g_w, t_w, 1e-4)
    np.testing.assert_allclose(g_w.numpy().T @ g_w.numpy(), np.eye(4), atol=1e-5)


def test_orthogonal_wide_and_tall_matrices_and_assignment() -> None:
    for shape in ((6, 3), (3, 6)):
        m = G.nn.Linear(shape[1], shape[0])
        G.nn.utils.parametrizations.orthogonal(m)
        q = m.weight.detach().numpy()
        gram = q.T @ q if shape[0] > shape[1] else q @ q.T
        np.testing.assert_allclose(gram, np.eye(3), atol=1e-5)
    m = G.nn.Linear(3, 3)
    G.nn.utils.parametrizations.orthogonal(m, orthogonal_map="cayley")
    target = np.linalg.qr(RNG.standard_normal((3, 3)))[0].astype("f4")
    m.weight = G.tensor(target)
    np.testing.assert_allclose(m.weight.detach().numpy(), target, atol=1e-5)
    with pytest.raises(ValueError):
        G.nn.utils.parametrizations.orthogonal(G.nn.Linear(2, 2), orthogonal_map="exp")
