"""Loader errors: every problem names file:line and says what is wrong (tiny inline YAML)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codegen.derivatives import load_derivatives
from codegen.errors import LoadError
from codegen.native import load_native_functions

ROOT = Path(__file__).resolve().parents[2]
NF = "native_functions.yaml"


def load(text: str) -> list:
    return load_native_functions(ROOT / NF, root=ROOT, text=textwrap.dedent(text), file=NF)


def errors(text: str) -> list[str]:
    with pytest.raises(LoadError) as info:
        load(text)
    return [str(d) for d in info.value.diagnostics]


GOOD = """\
- func: twice(Tensor self) -> Tensor
  variants: function, method
  pointwise: 2 * self
"""


def test_good_entry_derives_inplace_and_out_forms() -> None:
    names = [f.name for f in load(GOOD)]
    assert names == ["twice", "twice_", "twice.out"]


@pytest.mark.parametrize("text, expected", [
    ("- func: f(Tensor self) -> Tensor\n  pointwise: self\n  varients: method\n",
     "native_functions.yaml:3: unknown key 'varients'; did you mean 'variants'?"),
    ("- func: f(Tensor self) -> Tensor\n  pointwise: self\n  zzz: method\n",
     "native_functions.yaml:3: unknown key 'zzz'; known keys: func, variants, dispatch, pointwise, "
     "promote, dtypes, promote_scalars, zero_dim, same_dtype, doc"),
    ("- func: f(Tensor self) -> Tensor\n  pointwise: self\n\n- func: f(Tensor self) -> Tensor\n  pointwise: self\n",
     "native_functions.yaml:4: operator 'f' is defined twice (first on line 1)"),
    ("- func: f(Tensor self -> Tensor\n  pointwise: self\n",
     "native_functions.yaml:1: bad schema:"),
    ("- func: f(Tensr self) -> Tensor\n  pointwise: self\n",
     "native_functions.yaml:1: bad schema: unknown type 'Tensr'"),
    ("- func: f(Tensor self) -> Tensor\n  dispatch:\n    GPU: runtime.kernels.linalg.mm\n",
     "native_functions.yaml:2: unknown dispatch key 'GPU'; known keys: Autograd, BackendSelect, CUDA, CPU, "
     "Meta, CompositeImplicitAutograd, CompositeExplicitAutograd"),
    ("- func: f(Tensor self) -> Tensor\n  dispatch:\n    CPU: runtime.kernels.linalg.nope\n",
     "native_functions.yaml:2: kernel 'runtime.kernels.linalg.nope': runtime/kernels/linalg.py defines no 'nope'"),
    ("- func: f(Tensor self) -> Tensor\n  dispatch:\n    CPU: runtime.nowhere.fn\n",
     "native_functions.yaml:2: kernel 'runtime.nowhere.fn': no module file runtime/nowhere.py"),
    ("- func: f(Tensor self) -> Tensor\n  variants: function\n",
     "native_functions.yaml:1: 'f' has no kernel: add 'pointwise: <expression>' or 'dispatch: {CPU: "
     "module.function}'"),
    ("- func: f(Tensor self) -> Tensor\n  pointwise: self + other\n",
     "native_functions.yaml:2: unknown name 'other' in pointwise expression; the op's arguments are: self"),
    ("- func: f(Tensor self) -> Tensor\n  pointwise: self +\n",
     "native_functions.yaml:2: pointwise expression is not valid Python"),
    ("- func: f(Tensor self) -> Tensor\n  pointwise: self\n  promote: double\n",
     "native_functions.yaml:3: unknown promote 'double'; expected one of common, float, bool"),
    ("- func: f(Tensor self, Scalar other) -> Tensor\n  pointwise: self * other\n  promote_scalars: [othr]\n",
     "native_functions.yaml:3: promote_scalars names 'othr', which is not a scalar argument of the op; its "
     "scalar arguments are: other"),
    ("- func: f(Tensor self, Tensor mask) -> Tensor\n  pointwise: self\n  zero_dim: [value]\n",
     "native_functions.yaml:3: zero_dim must list tensor arguments of the op (self, mask)"),
    ("- func: f(Tensor self, Scalar value) -> Tensor\n  pointwise: self * value\n  zero_dim: [value]\n",
     "native_functions.yaml:3: zero_dim must list tensor arguments of the op (self)"),
    ("- func: f(Tensor self, Tensor value) -> Tensor\n  dispatch:\n    CPU: runtime.kernels.linalg.mm\n"
     "  zero_dim: [value]\n",
     "native_functions.yaml:4: 'zero_dim' only applies to an entry with 'pointwise:'"),
    ("- func: f(Tensor self, Tensor end) -> Tensor\n  pointwise: self + end\n  same_dtype: [self]\n",
     "native_functions.yaml:3: same_dtype must list tensor arguments of the op after the first (end), each "
     "optionally followed by ' unless 0-d'"),
    ("- func: f(Tensor self, Tensor end) -> Tensor\n  pointwise: self + end\n  same_dtype: [end if 0-d]\n",
     "native_functions.yaml:3: same_dtype must list tensor arguments of the op after the first (end)"),
    ("- func: class(Tensor self) -> Tensor\n  pointwise: self\n",
     "native_functions.yaml:1: operator name 'class' is not a valid Python identifier"),
    ("- func: f(Tensor self) -> Tensor\n  pointwise: self\n  variants: function, methd\n",
     "native_functions.yaml:3: unknown variant 'methd'; expected function or method"),
    ("- func: f(Tensor self) -> Tensor\n  pointwise: self\n  pointwise: self\n",
     "native_functions.yaml:3: duplicate key 'pointwise' (first given on line 2); remove one"),
])
def test_native_errors(text: str, expected: str) -> None:
    assert any(e.startswith(expected) for e in errors(text)), errors(text)


def test_all_errors_of_a_file_are_reported_together() -> None:
    text = ("- func: a(Tensor self) -> Tensor\n  pointwise: self\n  bogus: 1\n\n"
            "- func: b(Tensr self) -> Tensor\n  pointwise: self\n")
    found = errors(text)
    assert [e.split(":")[1] for e in found] == ["3", "5"]


def test_keyword_argument_names_generate_valid_python() -> None:
    # `from` is a legal argument name in PyTorch schemas; the generated code must still parse.
    from codegen.api_python import make_binding, py_name
    fs = load("- func: shift(Tensor self, Scalar from) -> Tensor\n  dispatch:\n"
              "    CompositeExplicitAutograd: runtime.kernels.views.clone\n")
    binding = make_binding("shift", [fs[0]])
    assert py_name("from") == "from_"
    compile(f"def shift({binding.signature}):\n    return {binding.cases[0].call}\n", "<test>", "exec")


DERIV_FUNCS = """\
- func: twice(Tensor self) -> Tensor
  pointwise: 2 * self
- func: scale(Tensor self, int k) -> Tensor
  pointwise: self * k
"""


def deriv_errors(text: str) -> list[str]:
    functions = load(DERIV_FUNCS)
    with pytest.raises(LoadError) as info:
        load_derivatives(ROOT / "derivatives.yaml", functions, root=ROOT, text=textwrap.dedent(text),
                         file="derivatives.yaml")
    return [str(d) for d in info.value.diagnostics]


@pytest.mark.parametrize("text, expected", [
    ("- name: thrice(Tensor self) -> Tensor\n  self: grad\n",
     "derivatives.yaml:1: derivative for unknown operator 'thrice(Tensor self) -> Tensor'"),
    ("- name: twice(Tensor self) -> Tensor\n  other: grad\n",
     "derivatives.yaml:2: 'other' is not an argument of twice; its arguments are: self"),
    ("- name: scale(Tensor self, int k) -> Tensor\n  k: grad\n",
     "derivatives.yaml:2: argument 'k' (int) of scale is not differentiable"),
    ("- name: twice(Tensor self) -> Tensor\n  self: grad *\n",
     "derivatives.yaml:2: formula is not a valid Python expression"),
    ("- name: twice(Tensor self) -> Tensor\n  self: grad * undefined_thing\n",
     "derivatives.yaml:2: formula uses undefined name 'undefined_thing'"),
    ("- name: twice(Tensor self) -> Tensor\n  self: no_such_op(grad)\n",
     "derivatives.yaml:2: formula calls unknown function 'no_such_op'"),
    ("- name: twice(Tensor self) -> Tensor\n  self: grad\n- name: twice(Tensor self) -> Tensor\n  self: grad\n",
     "derivatives.yaml:3: 'twice' has a derivative already (line 1)"),
])
def test_derivative_errors(text: str, expected: str) -> None:
    found = deriv_errors(text)
    assert any(e.startswith(expected) for e in found), found


def test_derivative_names_backward_nodes_like_pytorch() -> None:
    functions = load(DERIV_FUNCS)
    ds = load_derivatives(ROOT / "derivatives.yaml", functions, root=ROOT, file="derivatives.yaml",
                          text="- name: twice(Tensor self) -> Tensor\n  self: grad * 2\n")
    assert ds[0].node_name == "TwiceBackward0"
    assert ds[0].formulas[0].uses == frozenset({"grad"})


CLASH = """\
- func: twice(Tensor self) -> Tensor
  pointwise: 2 * self

- func: pick(Tensor self, int k) -> Tensor
  dispatch:
    CompositeExplicitAutograd: runtime.kernels.views.clone

- func: pick.f(Tensor self, float k) -> Tensor
  dispatch:
    CompositeExplicitAutograd: runtime.kernels.views.clone
"""


def test_overload_clash_names_the_entry() -> None:
    # `pick(t, 1)` could be either overload: the error is at the later entry (line 8), not at line 1
    from codegen.api_python import group_bindings
    with pytest.raises(LoadError) as info:
        group_bindings(load(CLASH))
    (found,) = [str(d) for d in info.value.diagnostics]
    assert found.startswith("native_functions.yaml:8: overloads of 'pick' can't be told apart in Python: "
                            "pick(Tensor self, int k) -> Tensor; pick.f(Tensor self, float k) -> Tensor"), found
    assert "native_functions.yaml:4" in found


def test_generate_reports_an_overload_clash_at_its_line(tmp_path: Path) -> None:
    from codegen import gen
    yaml = (ROOT / NF).read_text()
    (tmp_path / NF).write_text(yaml + "\n" + CLASH.split("\n\n", 1)[1].replace("pick", "add"))
    for name in ("templates", "runtime", "derivatives.yaml"):
        (tmp_path / name).symlink_to(ROOT / name)
    line = yaml.count("\n") + 1 + 5  # the second added entry
    with pytest.raises(LoadError) as info:
        gen.render_all(tmp_path)
    clashes = [d for d in info.value.diagnostics if "can't be told apart" in d.message]
    assert [str(d).split(": ")[0] for d in clashes] == [f"{NF}:{line}"], str(info.value)


def test_op_group_is_computed_by_the_loader() -> None:
    text = GOOD + """\
- func: positive(Tensor self) -> Tensor
  pointwise: self > 0
  promote: bool
- func: copyish(Tensor self) -> Tensor
  dispatch:
    CompositeExplicitAutograd: runtime.kernels.views.clone
"""
    fs = {f.name: f for f in load(text)}
    group = fs["twice"].group
    assert (group.functional, group.inplace, group.out) == (fs["twice"], fs["twice_"], fs["twice.out"])
    assert fs["twice_"].group is group and fs["twice.out"].group is group
    assert [f.name for f in group] == ["twice", "twice_", "twice.out"]
    # a bool-valued op cannot write its result into `self`: no in-place form
    assert fs["positive"].group.inplace is None and fs["positive.out"].group.out is fs["positive.out"]
    assert list(fs["copyish"].group) == [fs["copyish"]]


def test_cpu_and_cuda_kernels_agree_on_inplace_forms() -> None:
    from codegen import gen_cuda
    from codegen.loading import load_model
    from codegen.render.cpu_kernels import cpu_kernel_context as _cpu_kernel_context
    functions = load_model(ROOT).functions
    cuda = {op.kernel: op.inplace for op in gen_cuda.pointwise_ops(functions)}
    cpu = {k.kernel: k.inplace for k in (_cpu_kernel_context(f) for f in functions
                                              if f.pointwise is not None and f.derived_from is None)}
    assert cpu == cuda and any(cpu.values()) and not all(cpu.values())
    # and both say exactly what the loader derived
    derived = {f.derived_from.name for f in functions if f.derived_from is not None and f.kind.value == "inplace"}
    roots = {f.name: f for f in functions if f.pointwise is not None and f.derived_from is None}
    assert {name for name, f in roots.items() if cpu[gen_cuda.kernel_name(f)]} == derived
