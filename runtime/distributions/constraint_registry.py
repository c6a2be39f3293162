"""biject_to and transform_to (torch.distributions.constraint_registry): from a constraint to a transform
whose codomain it is, so an unconstrained parameter can be optimised and mapped into the constraint.

`biject_to(c)` gives a bijection (used where log |det J| matters); `transform_to(c)` any transform onto the
set (it may differ, e.g. softmax for the simplex). A registry keyed by constraint class: `register(c, fn)`
adds or overrides a rule; an instance rule beats its class's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import runtime.distributions.constraints as constraints
from runtime.distributions.elementwise_transforms import (
    AffineTransform,
    ExpTransform,
    SigmoidTransform,
    SoftmaxTransform,
    StickBreakingTransform,
)
from runtime.distributions.structured_transforms import (
    CatTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    StackTransform,
)
from runtime.distributions.transform_base import ComposeTransform, Transform, identity_transform

Factory = Callable[[Any], Transform]


class ConstraintRegistry:
    """Constraint (class or instance) -> a factory of transforms onto it."""

    def __init__(self) -> None:
        self._registry: dict[Any, Factory] = {}

    def register(self, constraint: Any, factory: Factory | None = None) -> Any:
        if factory is None:
            return lambda f: self.register(constraint, f)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and issubclass(constraint, constraints.Constraint)):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or instance, but got "
                            f"{constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: Any) -> Transform:
        for cls in type(constraint).__mro__:
            factory = self._registry.get(cls)
            if factory is not None:
                return factory(constraint)
        raise NotImplementedError(f"Cannot transform {type(constraint).__name__} constraints")


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _real(c: Any) -> Transform:
    return identity_transform


def _independent(registry: ConstraintRegistry) -> Factory:
    def factory(c: Any) -> Transform:
        return IndependentTransform(registry(c.base_constraint), c.reinterpreted_batch_ndims)
    return factory


def _greater_than(c: Any) -> Transform:
    return ComposeTransform([ExpTransform(), AffineTransform(c.lower_bound, 1)])


def _less_than(c: Any) -> Transform:
    return ComposeTransform([ExpTransform(), AffineTransform(c.upper_bound, -1)])


def _interval(c: Any) -> Transform:
    lower_is_0 = isinstance(c.lower_bound, (int, float)) and c.lower_bound == 0
    upper_is_1 = isinstance(c.upper_bound, (int, float)) and c.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return SigmoidTransform()
    return ComposeTransform([SigmoidTransform(), AffineTransform(c.lower_bound, c.upper_bound - c.lower_bound)])


def _cat(registry: ConstraintRegistry) -> Factory:
    def factory(c: Any) -> Transform:
        return CatTransform([registry(part) for part in c.cseq], c.dim, c.lengths)
    return factory


def _stack(registry: ConstraintRegistry) -> Factory:
    def factory(c: Any) -> Transform:
        return StackTransform([registry(part) for part in c.cseq], c.dim)
    return factory


for _registry in (biject_to, transform_to):
    _registry.register(constraints._Real, _real)
    _registry.register(constraints._IndependentConstraint, _independent(_registry))
    _registry.register(constraints._GreaterThan, _greater_than)
    _registry.register(constraints._GreaterThanEq, _greater_than)
    _registry.register(constraints._LessThan, _less_than)
    _registry.register(constraints._Interval, _interval)
    _registry.register(constraints._HalfOpenInterval, _interval)
    _registry.register(constraints._Cat, _cat(_registry))
    _registry.register(constraints._Stack, _stack(_registry))
biject_to.register(constraints._Simplex, lambda c: StickBreakingTransform())
transform_to.register(constraints._Simplex, lambda c: SoftmaxTransform())
transform_to.register(constraints._LowerCholesky, lambda c: LowerCholeskyTransform())
transform_to.register(constraints._PositiveDefinite, lambda c: PositiveDefiniteTransform())


def _corr_cholesky(c: Any) -> Transform:
    from runtime.distributions.correlation import CorrCholeskyTransform
    return CorrCholeskyTransform()


biject_to.register(constraints._CorrCholesky, _corr_cholesky)
transform_to.register(constraints._CorrCholesky, _corr_cholesky)

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]
