"""Names: user names cannot shadow the generator's in generated code, and ops cannot replace the runtime's
names (Note [Reserved names in generated code] in codegen/names.py, Note [Names an op may not take] in
runtime/vocabulary.py). Each refusal here was a silent wrong result or an import failure before."""

from __future__ import annotations

import ast
import builtins
import functools
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codegen.derivatives import BUILTINS, load_derivatives, output_names
from codegen.errors import LoadError
from codegen.gen_autograd import render_formula
from codegen.loading import Model, load_model
from codegen.names import GENERATED_BUILTINS, is_reserved_argument, py_name, top_level_names
from codegen.native import load_native_functions
from runtime.vocabulary import API_NAMES, TENSOR_NAMES

ROOT = Path(__file__).resolve().parents[2]
NF = "native_functions.yaml"


def load(text: str) -> list:
    return load_native_functions(ROOT / NF, root=ROOT, text=textwrap.dedent(text), file=NF)


def refusal(text: str) -> str:
    """The one diagnostic `text` gets, as `file:line: message`."""
    with pytest.raises(LoadError) as info:
        load(text)
    assert len(info.value.diagnostics) == 1, info.value.diagnostics
    return str(info.value.diagnostics[0])


# -- argument names -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["a0", "a1", "a12", "dt", "r", "np", "_k", "_fn", "_e0", "_need", "_x",
                                  "result", "node", "grads", "fields", "Tensor", "isinstance", "kwargs",
                                  "launch", "check_condition", "MulBackward0"])
def test_arguments_in_the_generator_namespace_are_refused(name: str) -> None:
    """`f(Tensor self, Scalar a0)` computed self + self (a0 is the CPU kernel's array); `dt` failed at call
    time; `_k` was overwritten by the dispatch index."""
    text = f"- func: f(Tensor self, Scalar {name}) -> Tensor\n  pointwise: self + {name}\n"
    assert refusal(text).startswith(f"{NF}:1: argument name '{name}' is reserved")


@pytest.mark.parametrize("name", ["_k", "result", "node", "kwargs", "fields", "Tensor", "isinstance"])
def test_reserved_names_are_refused_on_dispatch_ops_too(name: str) -> None:
    text = f"- func: f(Tensor self, int {name}) -> Tensor\n  dispatch:\n    CPU: runtime.kernels.views.clone\n"
    assert refusal(text).startswith(f"{NF}:1: argument name '{name}' is reserved")


@pytest.mark.parametrize("name", ["r", "t", "dt", "np", "a0", "launch"])
def test_names_of_the_backend_kernels_are_free_without_pointwise(name: str) -> None:
    """PyTorch's `combinations(Tensor self, int r=2)`: only pointwise ops have the kernels that use `r`."""
    text = f"- func: f(Tensor self, int {name}=2) -> Tensor\n  dispatch:\n    CPU: runtime.kernels.views.clone\n"
    assert [a.name for a in load(text)[0].func.arguments.flat_all] == ["self", name]


@pytest.mark.parametrize("schema, message", [
    ("f(Tensor self, Tensor input) -> Tensor", "arguments 'self' and 'input' are both 'input' in Python"),
    ("f(Tensor self, int from, int from_) -> Tensor", "arguments 'from' and 'from_' are both 'from_' in Python"),
    ("f(Tensor self, int out) -> Tensor", "argument name 'out' is reserved for out arguments"),
    ("f(Tensor self) -> Tensor _x", "return name '_x' is reserved"),
    ("f(Tensor self) -> (Tensor self, Tensor b)", "return name 'self' is reserved"),
])
def test_names_that_meet_in_python_are_refused(schema: str, message: str) -> None:
    text = f"- func: {schema}\n  dispatch:\n    CPU: runtime.kernels.views.clone\n"
    assert refusal(text).startswith(f"{NF}:1: {message}")


def test_keyword_arguments_are_renamed_as_pytorch_does() -> None:
    f = load("- func: f(Tensor self, int from=0) -> Tensor\n  dispatch:\n    CPU: runtime.kernels.views.clone\n")[0]
    assert [py_name(a.name) for a in f.func.arguments.flat_all] == ["input", "from_"]


def test_derivative_of_an_op_with_an_argument_named_grad_is_refused() -> None:
    functions = load("- func: g(Tensor grad, Tensor self) -> Tensor\n  pointwise: grad * self\n"
                     "- func: h(Tensor self, Scalar max) -> Tensor\n  pointwise: self * max\n")
    with pytest.raises(LoadError) as info:
        load_derivatives(ROOT / "derivatives.yaml", functions, root=ROOT, file="derivatives.yaml",
                         text="- name: g(Tensor grad, Tensor self) -> Tensor\n  self: grad * grad\n"
                              "- name: h(Tensor self, Scalar max) -> Tensor\n  self: grad * max(1, 2)\n")
    messages = [str(d) for d in info.value.diagnostics]
    assert messages[0].startswith("derivatives.yaml:1: g has an argument named 'grad'")
    assert messages[1].startswith("derivatives.yaml:4: 'max' is a value, not a function")


# -- op names -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, variants, what", [
    ("backward", "method", "a method named 'backward' would replace the runtime's Tensor.backward"),
    ("numpy", "method", "a method named 'numpy' would replace the runtime's Tensor.numpy"),
    ("to", "function, method", "a method named 'to' would replace the runtime's Tensor.to"),
    ("grad", "method", "a method named 'grad' would replace the runtime's Tensor.grad"),
    ("manual_seed", "function", "a function named 'manual_seed' would replace the runtime's 'manual_seed'"),
    ("no_grad", "function", "a function named 'no_grad' would replace the runtime's 'no_grad'"),
    ("nn", "function", "a function named 'nn' would replace the runtime's 'nn'"),
    ("_ops", "function", "a function named '_ops' would replace the runtime's '_ops'"),
    ("__init__", "method", "operator name '__init__' is a dunder that is not one of Python's operators"),
    ("__getattr__", "function", "operator name '__getattr__' is a dunder"),
    ("len", "function", "operator name 'len' would shadow the builtin 'len' that generated code calls"),
    ("isinstance", "method", "operator name 'isinstance' would shadow the builtin"),
])
def test_op_names_that_replace_runtime_names_are_refused(name: str, variants: str, what: str) -> None:
    """`y.backward()` computed no gradients once an op named `backward` had replaced it."""
    text = f"- func: {name}(Tensor self) -> Tensor\n  variants: {variants}\n  pointwise: -self\n"
    assert refusal(text).startswith(f"{NF}:1: {what}")


def test_derived_inplace_form_is_checked_too() -> None:
    """`detach` as a pointwise op derives the method `detach_`, the runtime's Tensor.detach_."""
    text = "- func: detach(Tensor self) -> Tensor\n  variants: function\n  pointwise: self\n"
    assert refusal(text).startswith(f"{NF}:1: a method named 'detach_' would replace")


def test_operator_dunders_are_allowed() -> None:
    text = ("- func: __and__(Tensor self, Tensor other) -> Tensor\n  variants: method\n"
            "  dispatch:\n    CPU: runtime.kernels.views.clone\n")
    assert [f.name for f in load(text)] == ["__and__"]


# -- the lists are the runtime's own --------------------------------------------------------------------
RUNTIME_NAMES = """
import json
import runtime.api as api
from runtime.tensor import Tensor
machinery = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__slots__", "__annotations__",
             "__firstlineno__", "__static_attributes__", "__orig_bases__", "__parameters__"}
own = {n for cls in Tensor.__mro__[:-1] for n in vars(cls)} - machinery
public = set(api.__all__) | set(api.LAZY) | {k.split(".")[0] for k in api.SUBMODULES}
print(json.dumps({"tensor": sorted(own), "api": sorted(public)}))
"""


def test_vocabulary_lists_are_the_runtimes_names() -> None:
    """In a fresh interpreter without `generated` (which adds the op methods to Tensor)."""
    done = subprocess.run([sys.executable, "-c", RUNTIME_NAMES], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    names = json.loads(done.stdout)
    assert set(names["tensor"]) == TENSOR_NAMES
    package = {n for n, _ in top_level_names((ROOT / "generated" / "__init__.py").read_text())
               if not n.startswith("__")}
    assert set(names["api"]) | package == API_NAMES


@functools.cache
def generated_tree(module: str) -> ast.Module:
    """A module of the committed generated package, parsed once for the tests below."""
    return ast.parse((ROOT / "generated" / f"{module}.py").read_text())


@functools.cache
def real_model() -> Model:
    return load_model(ROOT)


def _params(fn: ast.FunctionDef) -> set[str]:
    a = fn.args
    return {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, [a.vararg, a.kwarg])]}


def test_every_name_generated_bodies_use_is_reserved() -> None:
    """Each name a generated function reads or writes that is not its parameter, not YAML's (an argument or
    output read back by a node) and not guarded by derivatives.yaml's checks, is refused as an argument."""
    model = real_model()
    yaml_names = {py_name(a.name) for f in model.functions for a in f.func.arguments.flat_all}
    yaml_names |= {n for f in model.functions for n in output_names(f)}
    guarded = {"grad"} | set(BUILTINS)  # refused by derivatives.yaml where they would meet
    loose = set()
    for module in ("_ops", "_cpu_kernels", "_cuda_kernels", "_autograd", "_methods"):
        pointwise = module in ("_cpu_kernels", "_cuda_kernels")  # only pointwise ops have functions there
        for fn in ast.walk(generated_tree(module)):
            if not isinstance(fn, ast.FunctionDef) or fn.name in ("install", "_view"):
                continue
            params = _params(fn) | {t.id for c in ast.walk(fn) if isinstance(c, ast.comprehension)
                                    for t in ast.walk(c.target) if isinstance(t, ast.Name)}  # own scope
            for node in ast.walk(fn):
                if isinstance(node, ast.Name) and node.id not in params and node.id not in yaml_names | guarded:
                    if not is_reserved_argument(node.id, pointwise):
                        loose.add(f"{module}.{fn.name}: {node.id}")
    assert not loose, sorted(loose)[:20]


def test_names_of_the_real_yaml_pass() -> None:
    model = real_model()
    assert not [a.name for f in model.functions for a in f.func.arguments.flat_all
                if is_reserved_argument(a.name, f.pointwise is not None)]
    # the names the generated package binds: op functions beside the runtime's API, methods on its Tensor (an
    # op may share a name with a runtime method when it has no method variant: `where`, whose method the
    # runtime defines with PyTorch's argument order)
    bound = {n.name for n in generated_tree("_ops").body if isinstance(n, ast.FunctionDef) and n.name[0] != "_"}
    assert not bound & API_NAMES
    assert not {f.func.name.name for f in model.functions if "method" in str(f.variants)} & TENSOR_NAMES


def test_builtins_generated_code_calls_are_the_listed_ones() -> None:
    """An op of one of these names would shadow it in the generated module that defines the op's function."""
    model = real_model()
    yaml_names = {py_name(a.name) for f in model.functions for a in f.func.arguments.flat_all}
    used = set()
    for path in (ROOT / "generated").glob("*.py"):
        own = {name for name, _ in top_level_names(path.read_text())}  # the module's own `def all` is no builtin
        used |= {n.id for n in ast.walk(generated_tree(path.stem)) if isinstance(n, ast.Name)
                 and n.id in dir(builtins) and n.id not in yaml_names and n.id not in own
                 and not n.id.startswith("__")}
    assert used <= GENERATED_BUILTINS, sorted(used - GENERATED_BUILTINS)


def test_formula_builtins_cannot_meet_an_op_of_the_same_name() -> None:
    """`max(dim, 0)` in a formula called the Autograd kernel of the op `max`, a function of _autograd.py."""
    functions = load("- func: g(Tensor self, int dim) -> Tensor\n  pointwise: self\n")
    d = load_derivatives(ROOT / "derivatives.yaml", functions, root=ROOT, file="derivatives.yaml",
                         text="- name: g(Tensor self, int dim) -> Tensor\n  self: grad * max(dim, 0)\n")[0]
    code = render_formula(d.formulas[0], {"self", "dim"}, frozenset({"max"}), frozenset())
    assert code == "grad * _builtins.max(dim, 0)"


def test_top_level_names_of_generated_modules() -> None:
    text = ("import numpy as np\nfrom a.b import c as d, e\nfrom a import e\nimport os.path\n\nX = 1\nY: int = 2\n"
            "if X:\n    Z = 3\nelse:\n    pass\n\n\ndef f(a=1):\n    g = 2\n\n\nclass K(object):\n    h = 1\n"
            "K.__name__ = 'k'\ndel X\n")
    assert top_level_names(text) == [("np", 1), ("d", 2), ("e", 2), ("e", 3), ("os", 4), ("X", 6), ("Y", 7),
                                     ("f", 14), ("K", 18)]


def test_generated_modules_bind_each_name_once() -> None:
    for path in (ROOT / "generated").glob("*.py"):
        names = [n for n, _ in top_level_names(path.read_text())]
        assert len(names) == len(set(names)), path.name
        tree = generated_tree(path.stem)
        bound = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        bound |= {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
        bound |= {(a.asname or a.name).split(".")[0] for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)
                  for a in n.names if a.name != "*"}
        assert bound <= set(names), (path.name, sorted(bound - set(names))[:5])  # the scan misses nothing


def test_out_forms_may_name_their_returns_as_their_out_arguments() -> None:
    """As PyTorch's `sort.values(..., *, Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, ...)`."""
    text = ("- func: srt.values(Tensor self, *, Tensor(a!) values, Tensor(b!) indices) -> "
            "(Tensor(a!) values, Tensor(b!) indices)\n  dispatch:\n    CPU: runtime.kernels.views.clone\n")
    assert [f.name for f in load(text)] == ["srt.values"]
