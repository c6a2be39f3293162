"""VonMises, LKJCholesky, Wishart and CorrCholeskyTransform against PyTorch: densities, entropies, moments,
the transform and its inverse and log-det, argument validation, and samples (their own streams, so checked
by their moments and supports)."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")
D, TD = G.distributions, torch.distributions
RNG = np.random.default_rng(5)


def _pair(a):
    return G.tensor(np.asarray(a, dtype="f8")), torch.tensor(np.asarray(a, dtype="f8"))


def _close(a, b, tol: float = 1e-7) -> None:
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def test_von_mises_density_and_moments() -> None:
    loc, t_loc = _pair([0.3, -2.0, 1.0])
    conc, t_conc = _pair([[0.2], [3.0], [12.0]])
    d, td = D.VonMises(loc, conc), TD.VonMises(t_loc, t_conc)
    x, tx = _pair(np.linspace(-3, 3, 3))
    _close(d.log_prob(x), td.log_prob(tx))
    _close(d.variance, td.variance)
    _close(d.mean, td.mean)
    assert d.batch_shape == td.batch_shape and d.event_shape == td.event_shape
    g_conc = G.tensor([2.0], dtype=G.float64, requires_grad=True)
    t_conc2 = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
    D.VonMises(G.tensor(0.0, dtype=G.float64), g_conc).log_prob(G.tensor(0.5, dtype=G.float64)).sum().backward()
    TD.VonMises(torch.tensor(0.0, dtype=torch.float64), t_conc2).log_prob(torch.tensor(0.5,
                                                                                     dtype=torch.float64)).sum().backward()
    _close(g_conc.grad, t_conc2.grad, 1e-6)


def test_von_mises_samples_and_validation() -> None:
    G.manual_seed(0)
    d = D.VonMises(G.tensor(2.5, dtype=G.float64), G.tensor(4.0, dtype=G.float64))
    s = d.sample((20000,))
    assert tuple(s.shape) == (20000,) and float(s.min()) >= -np.pi and float(s.max()) < np.pi
    mean_angle = float(np.angle(np.exp(1j * s.numpy()).mean()))
    assert abs(mean_angle - 2.5) < 0.03
    r = float(np.abs(np.exp(1j * s.numpy()).mean()))
    assert abs((1 - r) - float(d.variance)) < 0.01  # circular variance
    assert not d.has_rsample
    with pytest.raises(ValueError):
        D.VonMises(G.tensor(0.0), G.tensor(-1.0), validate_args=True)


def test_corr_cholesky_transform() -> None:
    v = RNG.standard_normal((3, 10))
    t, tt = D.transforms.CorrCholeskyTransform(), TD.transforms.CorrCholeskyTransform()
    (x, tx) = _pair(v)
    y, ty = t(x), tt(tx)
    _close(y, ty)
    _close(t.inv(y), x, 1e-6)
    _close(t.log_abs_det_jacobian(x, y), tt.log_abs_det_jacobian(tx, ty))
    assert bool(D.constraints.corr_cholesky.check(y).all())
    assert t.forward_shape((3, 10)) == tt.forward_shape((3, 10)) == (3, 5, 5)
    assert t.inverse_shape((5, 5)) == (10,)
    with pytest.raises(ValueError):
        t.forward_shape((7,))
    assert isinstance(D.biject_to(D.constraints.corr_cholesky), D.CorrCholeskyTransform)


def test_lkj_cholesky_density_and_samples() -> None:
    conc, t_conc = _pair([0.5, 1.0, 3.0])
    d, td = D.LKJCholesky(4, conc), TD.LKJCholesky(4, t_conc)
    y, ty = _pair(TD.transforms.CorrCholeskyTransform()(torch.tensor(RNG.standard_normal((3, 6)))).numpy())
    _close(d.log_prob(y), td.log_prob(ty))
    assert d.batch_shape == td.batch_shape and d.event_shape == td.event_shape
    G.manual_seed(1)
    s = D.LKJCholesky(3, G.tensor(2.0, dtype=G.float64)).sample((4000,))
    assert bool(D.constraints.corr_cholesky.check(s).all())
    corr = (s @ s.transpose(-2, -1)).numpy()
    # LKJ(eta) on 3x3: each off-diagonal correlation is Beta(eta + 1/2, eta + 1/2) on [-1, 1], variance 1/(2 eta + 2)
    assert abs(corr[:, 1, 0].mean()) < 0.03 and abs(corr[:, 1, 0].var() - 1 / 6) < 0.02
    with pytest.raises(ValueError):
        D.LKJCholesky(1)


@pytest.mark.parametrize("which", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_density_entropy_moments(which: str) -> None:
    a = RNG.standard_normal((2, 3, 3))
    cov = a @ a.transpose(0, 2, 1) + 3 * np.eye(3)
    param = {"covariance_matrix": cov, "precision_matrix": np.linalg.inv(cov),
             "scale_tril": np.linalg.cholesky(cov)}[which]
    df, t_df = _pair([4.5, 7.0])
    p, tp = _pair(param)
    d, td = D.Wishart(df, **{which: p}), TD.Wishart(t_df, **{which: tp})
    b = RNG.standard_normal((2, 3, 3))
    x, tx = _pair(b @ b.transpose(0, 2, 1) + np.eye(3))
    _close(d.log_prob(x), td.log_prob(tx), 1e-6)
    _close(d.entropy(), td.entropy(), 1e-6)
    for name in ("mean", "mode", "variance", "covariance_matrix", "precision_matrix", "scale_tril"):
        _close(getattr(d, name), getattr(td, name), 1e-6)


def test_wishart_rsample() -> None:
    G.manual_seed(2)
    low = G.tensor([[1.5, 0.0], [0.4, 0.8]], dtype=G.float64, requires_grad=True)
    d = D.Wishart(G.tensor(6.0, dtype=G.float64), scale_tril=low)
    s = d.rsample((6000,))
    assert tuple(s.shape) == (6000, 2, 2)
    np.testing.assert_allclose(s.mean(0).detach().numpy(), d.mean.detach().numpy(), rtol=0.06)
    assert bool(D.constraints.positive_definite.check(s.detach()).all())
    s.mean(0).sum().backward()  # d E[X] / dL with E[X] = df L L^T: the gradient reaches the scale
    assert low.grad is not None and float(low.grad.abs().sum()) > 0
    with pytest.raises(ValueError):
        D.Wishart(G.tensor(1.0), covariance_matrix=G.eye(3))  # df must exceed p - 1
    with pytest.raises(ValueError):
        D.Wishart(G.tensor(5.0), covariance_matrix=G.eye(2), scale_tril=G.eye(2))
