"""KL divergence (torch.distributions.kl): `kl_divergence(p, q)` and the `register_kl` registry.

Note [KL dispatch]
`register_kl(P, Q)` records a function for the pair of classes. `kl_divergence(p, q)` uses the most specific
registered pair that matches (type(p), type(q)) through their MROs: pairs are ranked by (position of P in
type(p)'s MRO, position of Q in type(q)'s MRO), the smallest wins, and a tie between pairs that are not
ordered that way is an error, as PyTorch warns of ambiguity. Lookups are memoised per class pair; registering
clears the memo.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runtime import opcall
from runtime.distributions.bernoulli import Bernoulli
from runtime.distributions.beta import Beta
from runtime.distributions.binomial import Binomial
from runtime.distributions.categorical import Categorical
from runtime.distributions.dirichlet import Dirichlet
from runtime.distributions.distribution import Distribution
from runtime.distributions.exponential import Exponential
from runtime.distributions.gamma import Gamma
from runtime.distributions.independent import Independent
from runtime.distributions.laplace import Laplace
from runtime.distributions.multivariate_normal import MultivariateNormal, _batch_mahalanobis
from runtime.distributions.normal import Normal
from runtime.distributions.one_hot_categorical import OneHotCategorical
from runtime.distributions.poisson import Poisson
from runtime.distributions.special import digamma, lgamma
from runtime.distributions.transformed_distribution import TransformedDistribution
from runtime.distributions.uniform import Uniform
from runtime.distributions.utils import sum_rightmost

Tensor = Any
KLFn = Callable[[Any, Any], Tensor]

_KL_REGISTRY: dict[tuple[type, type], KLFn] = {}
_KL_MEMOIZE: dict[tuple[type, type], KLFn] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[KLFn], KLFn]:
    """Decorator: `fn(p, q)` computes KL(p || q) for p of `type_p` and q of `type_q` (Note [KL dispatch])."""
    if not (isinstance(type_p, type) and issubclass(type_p, Distribution)):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not (isinstance(type_q, type) and issubclass(type_q, Distribution)):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fn: KLFn) -> KLFn:
        _KL_REGISTRY[type_p, type_q] = fn
        _KL_MEMOIZE.clear()
        return fn
    return decorator


def _dispatch_kl(type_p: type, type_q: type) -> KLFn | None:
    ranked = []
    for (p, q), fn in _KL_REGISTRY.items():
        if issubclass(type_p, p) and issubclass(type_q, q):
            ranked.append(((type_p.__mro__.index(p), type_q.__mro__.index(q)), fn, (p, q)))
    if not ranked:
        return None
    ranked.sort(key=lambda r: r[0])
    best = ranked[0]
    for other in ranked[1:]:
        if other[0][0] >= best[0][0] and other[0][1] >= best[0][1]:
            continue
        raise NotImplementedError(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}): both "
                                  f"{best[2]} and {other[2]} match; register_kl the pair itself")
    return best[1]


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q), batched over the distributions' batch shape."""
    key = (type(p), type(q))
    fn = _KL_MEMOIZE.get(key)
    if fn is None:
        fn = _dispatch_kl(*key)
        if fn is None:
            raise NotImplementedError(f"No KL(p || q) is implemented for p type {type(p).__name__} and q type "
                                      f"{type(q).__name__}")
        _KL_MEMOIZE[key] = fn
    return fn(p, q)


def _inf_like(t: Tensor) -> Tensor:
    return opcall.api.full_like(t, float("inf"))


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    F = opcall.api.nn.functional
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t1 = opcall.api.where(p.probs == 0, opcall.api.zeros_like(t1), t1)
    t2 = opcall.api.where(p.probs == 1, opcall.api.zeros_like(t2), t2)
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    G = opcall.api
    t = p.probs * (p.logits - q.logits)
    t = G.where(q.probs == 0, _inf_like(t), t)
    t = G.where(p.probs == 0, G.zeros_like(t), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    G = opcall.api
    result = ((q.high - q.low) / (p.high - p.low)).log()
    outside = (q.low > p.low) | (q.high < p.high)
    return G.where(outside, _inf_like(result), result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Tensor:
    rate_ratio = q.rate / p.rate
    return rate_ratio - 1 - rate_ratio.log()


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Tensor:
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * (-loc_abs_diff / p.scale).exp()
    return t1 + t2 + t3 - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Tensor:
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Tensor:
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = lgamma(q.concentration1) + lgamma(q.concentration0) + lgamma(sum_p)
    t2 = lgamma(p.concentration1) + lgamma(p.concentration0) + lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * digamma(p.concentration0)
    t5 = (sum_q - sum_p) * digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = lgamma(sum_p) - lgamma(sum_q)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = digamma(p.concentration) - digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Tensor:
    G = opcall.api
    t = p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)
    return G.where(p.rate == 0, q.rate, t)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Binomial, q: Binomial) -> Tensor:
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count is not implemented")
    F = opcall.api.nn.functional
    kl = p.total_count * (p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits)) +
                          (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits)))
    return opcall.api.where(p.total_count > q.total_count, _inf_like(kl), kl)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    G = opcall.api
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise ValueError("KL-divergence between two Multivariate Normals with different event shapes cannot be "
                         "computed")
    half_term1 = q._half_log_det() - p._half_log_det()
    k = p.event_shape[0]
    shape = G.broadcast_shapes(tuple(p.batch_shape), tuple(q.batch_shape))
    qL = q._unbroadcasted_scale_tril.tril().expand(*shape, k, k)
    pL = p._unbroadcasted_scale_tril.expand(*shape, k, k)
    term2 = G.linalg.solve(qL, pL).pow(2).reshape(*shape, -1).sum(-1)  # tr(Sq^-1 Sp)
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - k)


@register_kl(Independent, Independent)
def _kl_independent_independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("KL between Independents with different reinterpreted_batch_ndims")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p: TransformedDistribution, q: TransformedDistribution) -> Tensor:
    if p.transforms != q.transforms:
        raise NotImplementedError("KL between TransformedDistributions with different transforms")
    if tuple(p.event_shape) != tuple(q.event_shape):
        raise NotImplementedError("KL between TransformedDistributions with different event shapes")
    return kl_divergence(p.base_dist, q.base_dist)


__all__ = ["kl_divergence", "register_kl"]
