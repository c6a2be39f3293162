"""Each rule that the generator and both backends use has one definition (runtime/vocabulary.py, runtime/strides.py):
the promote kinds, which dtypes are floating and the dtype arithmetic happens in (Note [Floating dtypes and opmath]),
contiguity, and the CUDA pointwise path choice. A copy spelt again elsewhere fails the guard below."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from codegen import gen_cuda
from codegen.kernel_spec import PointwiseSpec, SpecError
from runtime import dtypes, strides
from runtime.cuda import launch as L
from runtime.cuda.pointwise import PointwiseKernel, plan, select_instance
from runtime.kernels import cpu_pointwise
from runtime.vocabulary import (
    DTYPE_GROUPS,
    FLOATING_DTYPES,
    PROMOTE_KINDS,
    PromoteKind,
    compute_dtype,
    is_floating,
    opmath_dtype,
    promoted_dtype,
)

ROOT = Path(__file__).resolve().parents[2]
ALL = DTYPE_GROUPS["all"]


def test_promote_kinds_are_one_enum_equal_to_their_yaml_spelling() -> None:
    assert list(PROMOTE_KINDS) == list(PromoteKind)
    assert [str(k) for k in PromoteKind] == ["common", "float", "bool", "int"]
    spec = PointwiseSpec.parse("self * 2", tensors=("self",), scalars=(), promote="float")
    assert spec.promote is PromoteKind.float
    with pytest.raises(SpecError, match="expected one of common, float, bool, int"):
        PointwiseSpec.parse("self", tensors=("self",), scalars=(), promote="half")


def test_floating_and_opmath() -> None:
    assert FLOATING_DTYPES == DTYPE_GROUPS["floating"]
    assert {d for d in ALL if is_floating(d)} == {d.name for d in dtypes.ALL_DTYPES if d.is_floating_point}
    assert {d: opmath_dtype(d) for d in FLOATING_DTYPES} == {
        "float16": "float32", "bfloat16": "float32", "float32": "float32", "float64": "float64"}
    assert all(opmath_dtype(d) == d for d in ALL if not is_floating(d))


@pytest.mark.parametrize("kind", list(PromoteKind))
@pytest.mark.parametrize("dtype", ALL)
def test_cuda_instances_and_cpu_kernels_follow_the_one_rule(kind: PromoteKind, dtype: str) -> None:
    out, comp = promoted_dtype(kind, dtype, "float32"), compute_dtype(kind, dtype, "float32")
    assert gen_cuda.instance_dtypes(kind, dtype) == (dtype, out, comp)
    if kind == PromoteKind.float and not is_floating(dtype):  # uint8 x / 2 computes in float (Note)
        assert (out, comp) == ("float32", "float32")
    dt = dtypes.as_dtype(dtype)
    if dt.np is not None:  # the NumPy kernels compute in the same dtype
        assert cpu_pointwise.COMPUTE_NP[dt] == np.dtype(opmath_dtype(dtype))


def test_select_instance_casts_integers_to_another_default_float() -> None:
    k = PointwiseKernel("div", "x.cu", "float", 2, 0, {d: (promoted_dtype("float", d, "float32"), 1) for d in ALL})
    assert select_instance(k, "int64", "float64") == "float64"
    assert select_instance(k, "int64", "float32") == "int64"


def _code_files() -> list[Path]:
    return [p for d in ("codegen", "runtime") for p in sorted((ROOT / d).rglob("*.py"))]


def test_no_copy_of_the_dtype_rules_or_promote_spellings() -> None:
    """The floating tuple and the half-precision pair are spelt only in runtime/vocabulary.py, and no module
    compares a `promote` with a string literal."""
    floating = re.compile(r"""\(\s*["']float16["'],\s*["']bfloat16["']""")
    compare = re.compile(r"""promote\s*(==|!=|\bin\b|\bnot in\b)\s*\(?\s*["']""")
    offenders = []
    for path in _code_files():
        if path == ROOT / "runtime" / "vocabulary.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if floating.search(line) or compare.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert offenders == []


def test_one_is_contiguous_and_an_empty_tensor_is_contiguous() -> None:
    assert L.is_contiguous is strides.is_contiguous
    assert strides.is_contiguous((0, 3), (1, 7))  # PyTorch: any empty tensor is contiguous
    assert strides.is_contiguous((2, 1, 3), (3, 99, 1))
    assert not strides.is_contiguous((2, 3), (1, 2))


def test_plan_is_the_whole_path_decision() -> None:
    shape, st = (4, 8), [(8, 1), (8, 1)]
    assert plan(shape, st, [0, 0], [4, 4], 4)[0] == "vec"
    assert plan(shape, st, [0, 4], [4, 4], 4)[0] == "contig"
    # an input broadcast to the shape (here one that merely gained a leading dim) takes the strided path
    assert plan((1, 8), [(8, 1), (0, 1)], [0, 0], [4, 4], 4, shapes_equal=False)[0] == "strided"
    assert plan((1, 8), [(8, 1), (0, 1)], [0, 0], [4, 4], 4)[0] == "vec"
