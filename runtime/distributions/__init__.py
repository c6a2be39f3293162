"""`G.distributions` (torch.distributions): probability distributions built from opgen's ops, so log_prob,
entropy and reparameterised samples are differentiable (Note [Distribution shapes and validation],
distribution.py; Note [KL dispatch], kl.py).

Sampling: Normal, Uniform, Exponential, Laplace, Cauchy, LogNormal, the half and transformed families
(Gumbel, Weibull, Pareto, Kumaraswamy, LogisticNormal), the relaxed ones, MultivariateNormal and its low-rank
form (and Independent or TransformedDistribution over them) have `rsample` with gradients to their
parameters; StudentT's reaches loc and scale, not df. Gamma, Beta, Dirichlet, Chi2, InverseGamma,
FisherSnedecor, Poisson, Binomial, NegativeBinomial and Multinomial sample with NumPy's samplers on the
default CPU generator (so `G.manual_seed` fixes them) and have no rsample (opgen has no implicit
reparameterisation); Bernoulli, Categorical and Geometric sample with opgen's `rand`. The streams are not
PyTorch's: the same seed gives other draws of the same distribution. VonMises samples with NumPy's
sampler, LKJCholesky by the onion method, and Wishart by the Bartlett decomposition (rsample with gradients to
its scale, not df); CorrCholeskyTransform maps reals to Cholesky factors of correlation matrices.
"""

from runtime.distributions import constraint_registry, constraints, kl, transforms
from runtime.distributions.bernoulli import Bernoulli
from runtime.distributions.beta import Beta
from runtime.distributions.binomial import Binomial
from runtime.distributions.categorical import Categorical
from runtime.distributions.cauchy import Cauchy, HalfCauchy, HalfNormal
from runtime.distributions.constraint_registry import biject_to, transform_to
from runtime.distributions.continuous_bernoulli import ContinuousBernoulli
from runtime.distributions.counts import Geometric, NegativeBinomial
from runtime.distributions.dirichlet import Dirichlet
from runtime.distributions.distribution import Distribution
from runtime.distributions.exp_family import ExponentialFamily
from runtime.distributions.exponential import Exponential
from runtime.distributions.gamma import Gamma
from runtime.distributions.gamma_derived import Chi2, FisherSnedecor, InverseGamma, StudentT
from runtime.distributions.generalized_pareto import GeneralizedPareto
from runtime.distributions.independent import Independent
from runtime.distributions.kl import kl_divergence, register_kl
from runtime.distributions.laplace import Laplace
from runtime.distributions.log_normal import LogNormal
from runtime.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from runtime.distributions.mixture_same_family import MixtureSameFamily
from runtime.distributions.multinomial import Multinomial
from runtime.distributions.multivariate_normal import MultivariateNormal
from runtime.distributions.normal import Normal
from runtime.distributions.one_hot_categorical import OneHotCategorical
from runtime.distributions.poisson import Poisson
from runtime.distributions.relaxed import (
    ExpRelaxedCategorical,
    LogitRelaxedBernoulli,
    OneHotCategoricalStraightThrough,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
)
from runtime.distributions.transformed_distribution import TransformedDistribution
from runtime.distributions.transformed_families import Gumbel, Kumaraswamy, LogisticNormal, Pareto, Weibull
from runtime.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from runtime.distributions.uniform import Uniform

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform", "Categorical",
           "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli", "CumulativeDistributionTransform",
           "Dirichlet", "Distribution", "ExpRelaxedCategorical", "ExpTransform", "Exponential", "ExponentialFamily",
           "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
           "Independent", "IndependentTransform", "InverseGamma", "Kumaraswamy", "Laplace", "LogNormal",
           "LogisticNormal", "LogitRelaxedBernoulli", "LowRankMultivariateNormal", "LowerCholeskyTransform",
           "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial", "Normal",
           "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "PositiveDefiniteTransform",
           "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical", "ReshapeTransform", "SigmoidTransform",
           "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform", "StudentT",
           "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "Weibull", "biject_to",
           "constraint_registry", "constraints", "identity_transform", "kl", "kl_divergence", "register_kl",
           "transform_to", "transforms"]

# issue 22: the remaining families and transform
from runtime.distributions.correlation import CorrCholeskyTransform, LKJCholesky
from runtime.distributions.von_mises import VonMises
from runtime.distributions.wishart import Wishart

__all__ += ["CorrCholeskyTransform", "LKJCholesky", "VonMises", "Wishart"]
