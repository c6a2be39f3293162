"""G.distributions against torch.distributions: densities, entropies, moments, CDFs, KL values and their
gradients from one table; sample moments statistically; argument validation; rsample gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest

import generated as G

torch = pytest.importorskip("torch")
D = G.distributions

# name -> (constructor kwargs as float64 arrays/ints, values to score); one row per distribution and form
CASES = {
    "Normal": ({"loc": [0.3, -1.0, 2.0], "scale": [1.0, 0.5, 3.0]}, [0.1, -0.7, 5.0]),
    "Uniform": ({"low": [0.0, -2.0], "high": [1.0, 3.0]}, [0.25, 2.5]),
    "Exponential": ({"rate": [0.5, 2.0, 4.0]}, [0.3, 1.0, 2.0]),
    "Laplace": ({"loc": [0.0, 1.0], "scale": [1.0, 0.3]}, [0.5, -1.0]),
    "Gamma": ({"concentration": [0.7, 2.0, 5.5], "rate": [1.0, 0.5, 3.0]}, [0.4, 2.0, 1.5]),
    "Beta": ({"concentration1": [0.5, 2.0, 3.0], "concentration0": [0.5, 1.5, 7.0]}, [0.2, 0.6, 0.3]),
    "Dirichlet": ({"concentration": [[1.0, 2.0, 3.0], [0.5, 0.5, 4.0]]}, [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]),
    "Bernoulli": ({"probs": [0.1, 0.5, 0.9]}, [1.0, 0.0, 1.0]),
    "Bernoulli_logits": ({"logits": [-2.0, 0.3, 4.0]}, [0.0, 1.0, 1.0]),
    "Categorical": ({"probs": [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]}, [2, 0]),
    "Categorical_logits": ({"logits": [[1.0, -1.0, 0.5, 2.0]]}, [3]),
    "OneHotCategorical": ({"probs": [[0.2, 0.3, 0.5]]}, [[0.0, 1.0, 0.0]]),
    "Poisson": ({"rate": [0.5, 3.0, 10.0]}, [0.0, 2.0, 12.0]),
    "Binomial": ({"total_count": [10.0, 10.0], "probs": [0.3, 0.8]}, [3.0, 10.0]),
    "Binomial_logits": ({"total_count": [5.0], "logits": [0.7]}, [2.0]),
    "Multinomial": ({"total_count": 6, "probs": [0.2, 0.3, 0.5]}, [1.0, 2.0, 3.0]),
    "LogNormal": ({"loc": [0.0, 1.0], "scale": [0.5, 1.5]}, [0.8, 3.0]),
    "MultivariateNormal": ({"loc": [0.5, -1.0], "scale_tril": [[1.5, 0.0], [0.3, 0.7]]}, [1.0, 0.0]),
    "MultivariateNormal_cov": ({"loc": [0.0, 1.0, 2.0],
                                "covariance_matrix": [[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 1.5]]},
                               [0.5, 0.5, 0.5]),
    "MultivariateNormal_prec": ({"loc": [0.0, 1.0], "precision_matrix": [[2.0, 0.5], [0.5, 1.0]]}, [1.0, -1.0]),
    "Cauchy": ({"loc": [0.0, 1.0], "scale": [1.0, 2.5]}, [0.3, -4.0]),
    "HalfNormal": ({"scale": [1.0, 2.5]}, [0.3, 4.0]),
    "HalfCauchy": ({"scale": [1.0, 2.5]}, [0.3, 4.0]),
    "Chi2": ({"df": [1.5, 4.0]}, [0.7, 3.0]),
    "StudentT": ({"df": [1.5, 4.0, 30.0], "loc": [0.0, 1.0, -1.0], "scale": [1.0, 2.0, 0.5]}, [0.3, -2.0, 1.0]),
    "InverseGamma": ({"concentration": [1.5, 4.0], "rate": [1.0, 2.0]}, [0.7, 3.0]),
    "FisherSnedecor": ({"df1": [3.0, 6.0], "df2": [5.0, 12.0]}, [0.7, 2.0]),
    "Geometric": ({"probs": [0.2, 0.7]}, [3.0, 0.0]),
    "NegativeBinomial": ({"total_count": [3.0, 5.5], "probs": [0.3, 0.6]}, [2.0, 7.0]),
    "Gumbel": ({"loc": [0.0, 1.0], "scale": [1.0, 0.5]}, [0.3, 2.0]),
    "Weibull": ({"scale": [1.0, 2.0], "concentration": [0.8, 3.0]}, [0.3, 2.0]),
    "Pareto": ({"scale": [1.0, 2.0], "alpha": [3.0, 1.5]}, [1.3, 5.0]),
    "Kumaraswamy": ({"concentration1": [2.0, 0.7], "concentration0": [3.0, 1.5]}, [0.3, 0.8]),
    "LogisticNormal": ({"loc": [[0.2, -0.5]], "scale": [[1.0, 0.7]]}, [[0.2, 0.3, 0.5]]),
    "RelaxedBernoulli": ({"temperature": [0.5], "probs": [0.3, 0.8]}, [0.2, 0.9]),
    "RelaxedOneHotCategorical": ({"temperature": [0.7], "probs": [[0.2, 0.3, 0.5]]}, [[0.1, 0.2, 0.7]]),
    "ContinuousBernoulli": ({"probs": [0.2, 0.5, 0.9]}, [0.3, 0.6, 0.95]),
    "ContinuousBernoulli_logits": ({"logits": [-1.0, 0.002, 3.0]}, [0.3, 0.6, 0.95]),
    "LowRankMultivariateNormal": ({"loc": [0.0, 1.0, 2.0], "cov_factor": [[1.0], [0.5], [-0.3]],
                                   "cov_diag": [0.5, 1.0, 2.0]}, [0.5, 0.0, 1.0]),
}
PROPERTIES = ("mean", "variance", "stddev", "mode")
NO_MODE = {"Multinomial", "Uniform", "Kumaraswamy"}  # torch: not implemented / NaN / NaN where c0 > 1 (its bug)
HAS_CDF = {"Normal", "Uniform", "Exponential", "Laplace", "LogNormal", "Cauchy", "HalfNormal", "HalfCauchy",
           "ContinuousBernoulli"}


def _reference(fn):
    """torch's value, or None where torch does not implement it (then there is nothing to compare)."""
    try:
        return fn()
    except NotImplementedError:
        return None
DISCRETE_VALUES = {"Categorical", "Categorical_logits"}


def _family(name: str) -> str:
    return name.split("_")[0]


def _build(lib, name: str, grad: bool = False):
    kwargs, _ = CASES[name]
    args = {}
    for k, v in kwargs.items():
        if isinstance(v, int):
            args[k] = v
            continue
        t = lib.tensor(np.array(v, dtype=np.float64))
        if grad and k != "total_count":
            t.requires_grad_(True)
        args[k] = t
    return getattr(lib.distributions, _family(name))(**args), args


def _value(lib, name: str):
    v = np.array(CASES[name][1], dtype=np.int64 if name in DISCRETE_VALUES else np.float64)
    return lib.tensor(v)


def _close(a, b, tol: float = 1e-7) -> None:
    np.testing.assert_allclose(np.asarray(a.detach().tolist(), dtype=float),
                               b.detach().double().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_prob_entropy_and_moments_agree_with_torch(name: str) -> None:
    ours, _ = _build(G, name)
    ref, _ = _build(torch, name)
    assert tuple(ours.batch_shape) == tuple(ref.batch_shape)
    assert tuple(ours.event_shape) == tuple(ref.event_shape)
    _close(ours.log_prob(_value(G, name)), ref.log_prob(_value(torch, name)), 1e-6)
    want = _reference(ref.entropy)
    if want is not None:
        _close(ours.entropy(), want, 1e-6)
    for prop in PROPERTIES:
        if prop == "mode" and _family(name) in NO_MODE:
            continue
        want = _reference(lambda p=prop: getattr(ref, p))
        if want is not None:
            _close(getattr(ours, prop), want, 1e-6)


@pytest.mark.parametrize("name", sorted(n for n in CASES if n in HAS_CDF))
def test_cdf_and_icdf_agree_with_torch(name: str) -> None:
    ours, _ = _build(G, name)
    ref, _ = _build(torch, name)
    _close(ours.cdf(_value(G, name)), ref.cdf(_value(torch, name)), 1e-6)
    q = np.linspace(0.1, 0.9, len(CASES[name][1]))
    _close(ours.icdf(G.tensor(q)), ref.icdf(torch.tensor(q)), 1e-6)


@pytest.mark.parametrize("name", sorted(n for n in CASES if n not in {"Uniform"}))
def test_log_prob_gradients_agree_with_torch(name: str) -> None:
    ours, oargs = _build(G, name, grad=True)
    ref, rargs = _build(torch, name, grad=True)
    total_o = ours.log_prob(_value(G, name)).sum()
    total_r = ref.log_prob(_value(torch, name)).sum()
    entropy = _reference(ref.entropy)
    if entropy is not None:
        total_o = total_o + ours.entropy().sum()
        total_r = total_r + entropy.sum()
    total_o.backward()
    total_r.backward()
    for k, t in oargs.items():
        if isinstance(t, int) or k == "total_count" or rargs[k].grad is None:
            continue
        _close(t.grad, rargs[k].grad, 1e-5)


KL_PAIRS = [("Normal", {"loc": [1.0, 0.0, -2.0], "scale": [2.0, 0.3, 1.0]}),
            ("Exponential", {"rate": [1.5, 0.2, 3.0]}),
            ("Laplace", {"loc": [1.0, 2.0], "scale": [2.0, 0.5]}),
            ("Gamma", {"concentration": [1.0, 4.0, 2.5], "rate": [2.0, 1.0, 0.5]}),
            ("Beta", {"concentration1": [1.0, 4.0, 2.5], "concentration0": [2.0, 1.0, 0.5]}),
            ("Dirichlet", {"concentration": [[2.0, 1.0, 1.0], [0.5, 3.0, 2.0]]}),
            ("Bernoulli", {"probs": [0.3, 0.7, 0.5]}),
            ("Categorical", {"probs": [[0.5, 0.25, 0.25], [0.1, 0.2, 0.7]]}),
            ("OneHotCategorical", {"probs": [[0.5, 0.25, 0.25], [0.1, 0.2, 0.7]]}),
            ("Poisson", {"rate": [1.0, 5.0, 0.5]}),
            ("Uniform", {"low": [-1.0, -3.0], "high": [2.0, 3.0]}),
            ("LogNormal", {"loc": [1.0, -2.0], "scale": [2.0, 1.0]}),
            ("MultivariateNormal", {"loc": [1.0, 0.0], "scale_tril": [[1.0, 0.0], [0.5, 2.0]]})]


@pytest.mark.parametrize("name,q_kwargs", KL_PAIRS, ids=[p[0] for p in KL_PAIRS])
def test_kl_divergence_agrees_with_torch(name: str, q_kwargs: dict) -> None:
    base = "Uniform" if name == "Uniform" else None
    p_name = base or next(k for k in CASES if _family(k) == name)
    values = {}
    for lib in (G, torch):
        p, _ = _build(lib, p_name)
        q = getattr(lib.distributions, name)(**{k: lib.tensor(np.array(v)) for k, v in q_kwargs.items()})
        values[lib] = lib.distributions.kl_divergence(p, q)
    _close(values[G], values[torch], 1e-6)


def test_kl_of_independent_normals_and_registry_dispatch() -> None:
    p = D.Independent(D.Normal(G.zeros(2, 3), G.ones(2, 3)), 1)
    q = D.Independent(D.Normal(G.ones(2, 3), 2 * G.ones(2, 3)), 1)
    kl = D.kl_divergence(p, q)
    assert tuple(kl.shape) == (2,)
    tp = torch.distributions.Independent(torch.distributions.Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1)
    tq = torch.distributions.Independent(torch.distributions.Normal(torch.ones(2, 3), 2 * torch.ones(2, 3)), 1)
    _close(kl, torch.distributions.kl_divergence(tp, tq), 1e-6)

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return G.zeros(p.batch_shape)

    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 2.0))) == 0.0
    assert float(D.kl_divergence(D.Normal(0.0, 1.0), MyNormal(1.0, 2.0))) > 0  # the Normal-Normal rule
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Exponential(1.0))


# (family, kwargs, mean, variance) for sample-moment checks
MOMENTS = [("Normal", {"loc": 1.5, "scale": 2.0}), ("Uniform", {"low": -1.0, "high": 3.0}),
           ("Exponential", {"rate": 2.0}), ("Laplace", {"loc": -0.5, "scale": 0.7}),
           ("Gamma", {"concentration": 3.0, "rate": 2.0}), ("Beta", {"concentration1": 2.0, "concentration0": 5.0}),
           ("Bernoulli", {"probs": 0.3}), ("Poisson", {"rate": 4.0}), ("Binomial", {"total_count": 8.0, "probs": 0.25}),
           ("LogNormal", {"loc": 0.0, "scale": 0.5}), ("HalfNormal", {"scale": 1.5}), ("Chi2", {"df": 3.0}),
           ("StudentT", {"df": 6.0, "loc": 1.0, "scale": 2.0}), ("Gumbel", {"loc": 1.0, "scale": 2.0}),
           ("Weibull", {"scale": 2.0, "concentration": 1.5}), ("Pareto", {"scale": 1.0, "alpha": 6.0}),
           ("Kumaraswamy", {"concentration1": 2.0, "concentration0": 3.0}), ("Geometric", {"probs": 0.3}),
           ("NegativeBinomial", {"total_count": 4.0, "probs": 0.4}),
           ("InverseGamma", {"concentration": 6.0, "rate": 2.0}), ("FisherSnedecor", {"df1": 6.0, "df2": 12.0})]


@pytest.mark.parametrize("family,kwargs", MOMENTS, ids=[m[0] for m in MOMENTS])
def test_sample_moments_match_the_distribution(family: str, kwargs: dict) -> None:
    G.manual_seed(0)
    d = getattr(D, family)(**{k: G.tensor(v) for k, v in kwargs.items()})
    n = 40000
    x = np.asarray(d.sample((n,)).tolist(), dtype=np.float64)
    assert x.shape == (n,)
    mean, var = float(d.mean), float(d.variance)
    # 5 standard errors of the mean; the variance within 8%
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / n)
    assert abs(x.var() - var) < 0.12 * var
    assert bool(d.support.check(G.tensor(x)).all())


def test_categorical_and_dirichlet_and_mvn_samples() -> None:
    G.manual_seed(1)
    probs = [0.1, 0.2, 0.7]
    counts = np.bincount(np.asarray(D.Categorical(G.tensor(probs)).sample((30000,)).tolist()), minlength=3)
    np.testing.assert_allclose(counts / 30000, probs, atol=0.015)
    onehot = D.OneHotCategorical(G.tensor(probs)).sample((5000,))
    assert tuple(onehot.shape) == (5000, 3) and bool((onehot.sum(-1) == 1).all())
    conc = G.tensor([1.0, 2.0, 3.0])
    s = np.asarray(D.Dirichlet(conc).sample((20000,)).tolist())
    np.testing.assert_allclose(s.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(s.mean(0), [1 / 6, 2 / 6, 3 / 6], atol=0.01)
    m = D.Multinomial(10, G.tensor(probs)).sample((2000,))
    assert bool((m.sum(-1) == 10).all())
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    mvn = D.MultivariateNormal(G.tensor([1.0, -1.0]), covariance_matrix=G.tensor(cov.tolist()))
    x = np.asarray(mvn.sample((40000,)).tolist())
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.06)


@pytest.mark.parametrize("family", ["Normal", "Laplace", "Uniform", "Exponential", "LogNormal"])
def test_rsample_carries_gradients_to_parameters(family: str) -> None:
    params = {"Normal": ("loc", "scale"), "Laplace": ("loc", "scale"), "Uniform": ("low", "high"),
              "Exponential": ("rate",), "LogNormal": ("loc", "scale")}[family]
    values = {"loc": 0.5, "scale": 1.5, "low": 0.0, "high": 2.0, "rate": 2.0}
    args = {p: G.tensor(values[p], requires_grad=True) for p in params}
    d = getattr(D, family)(**args)
    assert d.has_rsample
    G.manual_seed(3)
    d.rsample((20000,)).mean().backward()
    # d E[x] / d param, from the closed-form mean, should match the pathwise estimate
    args2 = {p: G.tensor(values[p], requires_grad=True) for p in params}
    getattr(D, family)(**args2).mean.backward()
    for p in params:
        expected = 0.0 if args2[p].grad is None else float(args2[p].grad)  # None: the mean ignores it
        assert abs(float(args[p].grad) - expected) < 0.05 * (1 + abs(expected))
    with G.no_grad():
        assert not d.sample((3,)).requires_grad


def test_mvn_rsample_gradient_is_exact_for_the_mean() -> None:
    loc = G.tensor([0.0, 1.0], requires_grad=True)
    tril = G.tensor([[1.0, 0.0], [0.5, 2.0]], requires_grad=True)
    D.MultivariateNormal(loc, scale_tril=tril).rsample((5,)).sum().backward()
    assert loc.grad.tolist() == [5.0, 5.0]
    assert tril.grad is not None


@pytest.mark.parametrize("make", [
    lambda: D.Normal(0.0, -1.0), lambda: D.Exponential(G.tensor([1.0, -2.0])), lambda: D.Bernoulli(probs=1.5),
    lambda: D.Categorical(G.tensor([0.5, -0.1])), lambda: D.Uniform(2.0, 1.0), lambda: D.Gamma(0.0, 1.0),
    lambda: D.Beta(1.0, -1.0), lambda: D.Poisson(-1.0),
])
def test_invalid_parameters_raise_value_error(make) -> None:
    with pytest.raises(ValueError):
        make()


def test_validation_of_values_and_switching_it_off() -> None:
    with pytest.raises(ValueError):
        D.Exponential(1.0).log_prob(G.tensor(-1.0))
    with pytest.raises(ValueError):
        D.Categorical(G.tensor([0.5, 0.5])).log_prob(G.tensor(3))
    assert float(D.Exponential(1.0, validate_args=False).log_prob(G.tensor(-1.0))) == 1.0  # unchecked formula
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)  # accepted while validation is off
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Bernoulli(probs=0.5, logits=0.0)


def test_expand_and_independent_shapes() -> None:
    n = D.Normal(G.tensor([0.0, 1.0]), G.tensor([1.0, 2.0])).expand((3, 2))
    assert tuple(n.batch_shape) == (3, 2)
    assert tuple(n.sample((4,)).shape) == (4, 3, 2)
    c = D.Categorical(logits=G.zeros(5)).expand((2,))
    assert tuple(c.sample().shape) == (2,)
    ind = D.Independent(D.Normal(G.zeros(4, 3), G.ones(4, 3)), 1)
    assert tuple(ind.batch_shape) == (4,) and tuple(ind.event_shape) == (3,)
    assert tuple(ind.log_prob(G.zeros(4, 3)).shape) == (4,)


@pytest.mark.parametrize("name", ["ExpTransform", "SigmoidTransform", "TanhTransform", "Affine", "Compose",
                                  "StickBreakingTransform", "PowerTransform"])
def test_transforms_agree_with_torch(name: str) -> None:
    def make(lib):
        T = lib.distributions.transforms
        if name == "Affine":
            return T.AffineTransform(0.5, -2.0)
        if name == "Compose":
            return T.ComposeTransform([T.AffineTransform(1.0, 3.0), T.SigmoidTransform()])
        if name == "PowerTransform":
            return T.PowerTransform(2.5)
        return getattr(T, name)()
    x = np.array([[0.3, -0.4, 1.2], [0.05, 0.9, -2.0]])
    if name == "PowerTransform":
        x = np.abs(x) + 0.1
    ours, ref = make(G), make(torch)
    y_o, y_r = ours(G.tensor(x)), ref(torch.tensor(x))
    _close(y_o, y_r)
    _close(ours.inv(y_o), ref.inv(y_r), 1e-6)
    _close(ours.log_abs_det_jacobian(G.tensor(x), y_o), ref.log_abs_det_jacobian(torch.tensor(x), y_r), 1e-6)


def test_transformed_distribution_log_prob_and_cdf() -> None:
    def make(lib):
        dist = lib.distributions
        base = dist.Normal(lib.tensor([0.0, 1.0], dtype=lib.float64), lib.tensor([1.0, 0.5], dtype=lib.float64))
        return dist.TransformedDistribution(base, [dist.transforms.AffineTransform(1.0, -2.0),
                                                   dist.transforms.SigmoidTransform()])
    v = np.array([0.3, 0.8])
    _close(make(G).log_prob(G.tensor(v)), make(torch).log_prob(torch.tensor(v)), 1e-6)
    _close(make(G).cdf(G.tensor(v)), make(torch).cdf(torch.tensor(v)), 1e-6)


def test_constraints_check() -> None:
    C = D.constraints
    assert C.positive.check(G.tensor([1.0, -1.0])).tolist() == [True, False]
    assert C.simplex.check(G.tensor([[0.5, 0.5], [0.5, 0.6]])).tolist() == [True, False]
    assert C.integer_interval(0, 3).check(G.tensor([0.0, 2.5, 3.0, 4.0])).tolist() == [True, False, True, False]
    assert C.lower_cholesky.check(G.tensor([[1.0, 0.0], [2.0, 1.0]])).item() is True
    assert C.independent(C.real, 1).check(G.tensor([[1.0, float("nan")], [0.0, 0.0]])).tolist() == [False, True]
    assert C.is_dependent(C.dependent)


def test_mixture_same_family_agrees_with_torch() -> None:
    def make(lib):
        dist = lib.distributions
        mix = dist.Categorical(lib.tensor([[0.3, 0.7], [0.5, 0.5]]))
        comp = dist.Independent(dist.Normal(lib.tensor([[[0.0, 1.0], [2.0, -1.0]], [[1.0, 1.0], [0.0, 0.0]]]),
                                            lib.tensor([[[1.0, 0.5], [2.0, 1.0]], [[1.0, 1.0], [0.3, 0.3]]])), 1)
        return dist.MixtureSameFamily(mix, comp)
    ours, ref = make(G), make(torch)
    v = [[0.5, 0.5], [1.0, -1.0]]
    _close(ours.log_prob(G.tensor(v)), ref.log_prob(torch.tensor(v)), 1e-6)
    _close(ours.mean, ref.mean, 1e-6)
    _close(ours.variance, ref.variance, 1e-6)
    assert tuple(ours.sample((5,)).shape) == (5, 2, 2)


REGISTRY_CASES = [(w, c) for w in ("biject_to", "transform_to")
                  for c in ("positive", "unit_interval", "simplex", "greater_than", "interval", "real_vector",
                            "lower_cholesky")
                  if (w, c) != ("biject_to", "lower_cholesky")]  # PyTorch registers that one for transform_to only


@pytest.mark.parametrize("which,constraint", REGISTRY_CASES)
def test_constraint_registry_agrees_with_torch(which: str, constraint: str) -> None:
    def make(lib):
        C = lib.distributions.constraints
        c = {"greater_than": lambda: C.greater_than(2.0), "interval": lambda: C.interval(-1.0, 3.0)}.get(
            constraint, lambda: getattr(C, constraint))()
        return getattr(lib.distributions, which)(c)
    x = np.array([[0.3, -1.2], [2.0, 0.5]])
    ours, ref = make(G), make(torch)
    y_o, y_r = ours(G.tensor(x)), ref(torch.tensor(x))
    _close(y_o, y_r, 1e-6)
    if ours.bijective:
        _close(ours.inv(y_o), ref.inv(y_r), 1e-6)
        _close(ours.log_abs_det_jacobian(G.tensor(x), y_o), ref.log_abs_det_jacobian(torch.tensor(x), y_r), 1e-6)


def test_more_transforms_agree_with_torch() -> None:
    def make(lib):
        T = lib.distributions.transforms
        return [T.SoftplusTransform(), T.IndependentTransform(T.ExpTransform(), 1), T.ReshapeTransform((4,), (2, 2)),
                T.CatTransform([T.ExpTransform(), T.SigmoidTransform()], dim=-1, lengths=[2, 2]),
                T.StackTransform([T.ExpTransform(), T.TanhTransform()], dim=0)]
    x = np.array([[0.3, -1.2, 0.4, 0.9], [2.0, 0.5, -0.1, 0.2]])
    for ours, ref in zip(make(G), make(torch), strict=True):
        xx = x[:2] if isinstance(ours, G.distributions.transforms.StackTransform) else x
        y_o, y_r = ours(G.tensor(xx)), ref(torch.tensor(xx))
        _close(y_o, y_r, 1e-6)
        _close(ours.inv(y_o), ref.inv(y_r), 1e-6)
        _close(ours.log_abs_det_jacobian(G.tensor(xx), y_o), ref.log_abs_det_jacobian(torch.tensor(xx), y_r), 1e-6)
    m = np.array([[0.5, 0.0], [0.3, -0.2]])
    for name in ("LowerCholeskyTransform", "PositiveDefiniteTransform"):
        _close(getattr(D.transforms, name)()(G.tensor(m)), getattr(torch.distributions.transforms, name)()(
            torch.tensor(m)), 1e-6)


@pytest.mark.parametrize("family", ["RelaxedBernoulli", "RelaxedOneHotCategorical", "OneHotCategoricalStraightThrough",
                                    "StudentT", "Gumbel", "Weibull", "Cauchy", "LowRankMultivariateNormal"])
def test_more_rsamples_carry_gradients(family: str) -> None:
    p = G.tensor([0.2, 0.3, 0.5], requires_grad=True)
    make = {
        "RelaxedBernoulli": lambda: D.RelaxedBernoulli(G.tensor(0.5), probs=p),
        "RelaxedOneHotCategorical": lambda: D.RelaxedOneHotCategorical(G.tensor(0.5), probs=p),
        "OneHotCategoricalStraightThrough": lambda: D.OneHotCategoricalStraightThrough(probs=p),
        "StudentT": lambda: D.StudentT(G.tensor(4.0), p, G.tensor(1.0)),
        "Gumbel": lambda: D.Gumbel(p, G.tensor(1.0)),
        "Weibull": lambda: D.Weibull(p, G.tensor(2.0)),
        "Cauchy": lambda: D.Cauchy(p, G.tensor(1.0)),
        "LowRankMultivariateNormal": lambda: D.LowRankMultivariateNormal(p, G.ones(3, 1), G.ones(3)),
    }[family]
    d = make()
    assert d.has_rsample
    (d.rsample((4,)) * G.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert p.grad is not None and bool(G.isfinite(p.grad).all()) and float(p.grad.abs().sum()) > 0


def test_generalized_pareto_agrees_with_torch() -> None:
    # float32: torch's GeneralizedPareto compares its concentration with a float32 zero and fails in float64
    def make(lib):
        return lib.distributions.GeneralizedPareto(lib.tensor([0.0, 1.0, 0.5]), lib.tensor([1.0, 2.0, 0.5]),
                                                   lib.tensor([0.3, 0.0, -0.2]))
    ours, ref = make(G), make(torch)
    v = [0.5, 3.0, 1.0]
    for fn in ("log_prob", "cdf"):
        _close(getattr(ours, fn)(G.tensor(v)), getattr(ref, fn)(torch.tensor(v)), 1e-5)
    _close(ours.icdf(G.tensor([0.1, 0.5, 0.9])), ref.icdf(torch.tensor([0.1, 0.5, 0.9])), 1e-5)
    for prop in ("mean", "variance", "mode"):
        _close(getattr(ours, prop), getattr(ref, prop), 1e-5)
    _close(ours.entropy(), ref.entropy(), 1e-5)
    x = ours.rsample((2000,))
    assert bool(ours.support.check(x).all())
