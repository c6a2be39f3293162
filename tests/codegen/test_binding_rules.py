"""Binding rules measured against PyTorch's Python API: a Tensor / Tensor[] pair taken as varargs (Note
[Tensors as varargs]) and the names whose binding refuses out= (Note [Names whose binding refuses out=]),
on tiny inline YAML."""

from __future__ import annotations

import textwrap
from pathlib import Path

from codegen.api_python import OUT_REFUSED, group_bindings
from codegen.native import load_native_functions

ROOT = Path(__file__).resolve().parents[2]
KERNEL = "    CompositeImplicitAutograd: runtime.kernels.compat_composites.atleast_1d\n"


def _bindings(text: str) -> dict[str, object]:
    fs = load_native_functions(ROOT / "native_functions.yaml", root=ROOT, text=textwrap.dedent(text),
                               file="native_functions.yaml")
    return {b.name: b for b in group_bindings(fs)}


def test_a_tensor_and_its_sequence_twin_take_varargs() -> None:
    b = _bindings("- func: lift(Tensor self) -> Tensor\n  dispatch:\n" + KERNEL +
                  "\n- func: lift.Sequence(Tensor[] self) -> Tensor[]\n  dispatch:\n" + KERNEL)["lift"]
    assert b.tensor_varargs and b.signature.startswith("*input")
    compile(f"def lift({b.signature}):\n    pass\n", "<test>", "exec")


def test_other_pairs_keep_one_parameter() -> None:
    found = _bindings(
        "- func: two(Tensor self, int k) -> Tensor\n  dispatch:\n" + KERNEL +
        "\n- func: two.Sequence(Tensor[] self, int k) -> Tensor[]\n  dispatch:\n" + KERNEL +
        "\n- func: one(Tensor self) -> Tensor\n  dispatch:\n" + KERNEL)
    assert not found["two"].tensor_varargs and not found["one"].tensor_varargs
    assert found["one"].signature.startswith("input")


def test_a_refused_name_has_no_out_parameter_even_with_a_derived_out_form() -> None:
    name = sorted(OUT_REFUSED)[0]
    found = _bindings(f"- func: {name}(Tensor self) -> Tensor\n  pointwise: 2 * self\n"
                      "\n- func: twice(Tensor self) -> Tensor\n  pointwise: 2 * self\n")
    assert "out" not in [p.name for p in found[name].params]
    assert "out" in [p.name for p in found["twice"].params]
