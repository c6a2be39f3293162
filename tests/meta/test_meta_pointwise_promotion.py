"""The generated Meta kernel of every pointwise op gives exactly the CPU kernel's dtype and broadcast shape,
and refuses exactly what the CPU kernel refuses, over every pair of dtypes (Note [Meta tensors]). The CPU
side runs on one- and three-element tensors; the meta side computes nothing."""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import pytest

import generated as G
from codegen.loading import load_model

ROOT = Path(__file__).resolve().parents[2]
DTYPES = ("bool", "uint8", "int32", "int64", "float16", "float32", "float64")
SHAPES = ((3, 1), (4,))  # broadcast to (3, 4)


def _pointwise_ops() -> list[tuple[str, int]]:
    """(function name, number of tensor arguments) of the functional pointwise ops whose arguments without a
    default are all tensors."""
    found = {}
    for f in load_model(ROOT).functions:
        if f.pointwise is None or f.derived_from is not None:
            continue
        args = f.func.arguments.flat_non_out
        required = [a for a in args if a.default is None]
        name = f.func.name.name
        if required and all(str(a.type) == "Tensor" for a in required) and hasattr(G, name):
            found.setdefault(name, len(required))
    return sorted(found.items())


OPS = _pointwise_ops()


def _outcome(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = call()
        except (RuntimeError, TypeError, NotImplementedError, ValueError) as e:
            return ("raises", type(e).__name__)
    return ("gives", r.dtype.name, tuple(r.shape))


def test_enough_ops_are_checked() -> None:
    assert len(OPS) >= 60, OPS


@pytest.mark.parametrize(("name", "arity"), OPS, ids=[n for n, _ in OPS])
def test_meta_matches_cpu(name: str, arity: int) -> None:
    fn = getattr(G, name)
    for dts in itertools.product(DTYPES, repeat=arity):
        shapes = SHAPES[:arity] if arity <= 2 else ((3, 1), (4,), (1,))
        cpu = [G.ones(s, dtype=getattr(G, d)) for s, d in zip(shapes, dts, strict=False)]
        meta = [G.empty(s, dtype=getattr(G, d), device="meta") for s, d in zip(shapes, dts, strict=False)]
        want, got = _outcome(lambda c=cpu: fn(*c)), _outcome(lambda m=meta: fn(*m))
        assert got == want, f"{name}{dts}: meta {got}, CPU {want}"
