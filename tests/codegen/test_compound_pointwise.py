"""Which pointwise ops are compound (Note [Compound pointwise ops] in codegen/render/compound_pointwise.py),
and the C++ source rendered for them."""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
import pytest

from codegen.jinja_env import environment
from codegen.kernel_spec import FUNCTIONS, PointwiseSpec
from codegen.render import compound_pointwise as cpw

ROOT = Path(__file__).resolve().parents[2]


def passes(source: str, tensors: tuple[str, ...] = ("self",), scalars: tuple[str, ...] = ()) -> int:
    return cpw.numpy_passes(PointwiseSpec.parse(source, tensors=tensors, scalars=scalars))


def test_every_helper_the_numpy_spellings_call_is_counted() -> None:
    for rule in FUNCTIONS.values():
        assert cpw.call_passes(rule.numpy) >= 1, rule.name  # a KeyError names a helper missing from the table


def test_passes() -> None:
    assert passes("exp(self)") == 1
    assert passes("rsqrt(self)") == 2  # np.reciprocal(np.sqrt(x))
    assert passes("sigmoid(self)") == cpw.HELPER_PASSES["_k.sigmoid"]
    assert passes("self * sigmoid(self)") == 1 + cpw.HELPER_PASSES["_k.sigmoid"]
    assert passes("self + alpha * other", ("self", "other"), ("alpha",)) == 2
    assert passes("self * (alpha * beta)", scalars=("alpha", "beta")) == 1  # scalars fold in Python
    assert passes("self if self > 0 else self * 0.5") == 3  # compare, product, select
    assert passes("erf(self)") >= cpw.PER_ELEMENT


def test_the_rendered_source_has_both_entries_of_every_op_and_dtype() -> None:
    env = environment(ROOT)
    op = cpw.CompoundOp("demo", "self * sigmoid(self)", ("a_self",), ("a_alpha",),
                        "(a_self * op_sigmoid((a_self * a_alpha)))", 7)
    text = cpw.render(env, cpw.CompoundFile((op,)))[cpw.SOURCE]
    entries = re.findall(r'extern "C" void (\w+)\(', text)
    assert entries == [f"demo__{d}__{p}" for d in ("float32", "float64") for p in ("contig", "strided")]
    assert "static_cast<float>(s0)" in text and "static_cast<double>(s0)" in text


def test_the_generated_source_is_what_the_renderer_makes() -> None:
    generated = (ROOT / "generated" / cpw.SOURCE).read_text()
    for name in ("sigmoid", "silu", "softplus", "mish", "logaddexp", "lerp_Tensor", "addcmul", "hardswish", "erf"):
        assert f'extern "C" void {name}__float32__contig(' in generated
        assert f'extern "C" void {name}__float64__strided(' in generated
    assert 'void exp__float32' not in generated and 'void add_Tensor__' not in generated
    assert 'void frac__float32' not in generated  # NOT_VECTORISED
    kernels = generated.partition("// addcdiv")[2]
    assert "fmaxf" not in kernels and "op_maximum(" not in kernels and "op_softplus(" not in kernels
    assert "?" not in generated.partition("// addcdiv")[2]  # selects are op_where: both sides, then a choice


def test_template_errors_are_loud() -> None:
    env = environment(ROOT)
    with pytest.raises(jinja2.UndefinedError):
        env.get_template("compound_pointwise.cpp.j2").render(ops=[object()], dtypes={"float32": "float"})
