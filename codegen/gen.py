"""The generator: YAML -> model -> template contexts -> the files of `generated/`.

Everything is rendered in memory first; only then is the new tree written beside `generated/` and
swapped in whole (`write_files`, Note [Whole-tree swap]), so an error or a kill anywhere leaves
`generated/` entirely old or entirely new. Output depends only on the YAML, the templates and the
generator (sorted iteration everywhere, no timestamps), so `opgen check` can diff it byte for byte.
"""

from __future__ import annotations

import difflib
import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import jinja2

from codegen import api_python, differentiable, docstrings, gen_autograd, gen_cuda, gen_fusion, names, tree_swap
from codegen.api_python import kernel_name, key_expr, op_id, py_name
from codegen.errors import LoadError, Location, OpgenError
from codegen.jinja_env import environment
from codegen.kernel_spec import NUMPY, condition_tensors, integer_divisors
from codegen.literals import python_number, python_str, python_value
from codegen.loading import DERIVATIVES_YAML, Model, load_model
from codegen.model import Argument, BaseType, ListType, OptionalType, Type
from codegen.native import NativeFunction, Variant
from codegen.render_errors import owned, rendering
from codegen.schema_parser import default_value
from runtime.vocabulary import DTYPE_GROUPS, POINTWISE_KEYS, PromoteKind

GENERATED = "generated"


def render_all(root: Path) -> dict[str, str]:
    """Every file of `generated/`, as {relative path: content}; any failure of a template or a context
    builder is a RenderError naming the op (Note [Render errors name their op])."""
    with rendering():
        return _render_all(root)


def _render_all(root: Path) -> dict[str, str]:
    model = load_model(root)
    env = environment(root)
    functions = model.functions
    problems = differentiable.problems(functions, model.derivatives, DERIVATIVES_YAML)
    try:
        bindings = api_python.group_bindings(functions)  # LoadError at each clashing entry's file:line
    except LoadError as e:
        raise LoadError(e.diagnostics + problems) from None
    if problems:  # Note [A differentiable op needs a derivative]
        raise LoadError(problems)
    by_name: dict[str, list[NativeFunction]] = {}
    for f in functions:
        by_name.setdefault(f.func.name.name, []).append(f)
    for b in bindings:
        owned(b, by_name[b.name][0])
    exported = [b for b in bindings if any(Variant.function in f.root.variants for f in by_name.get(b.name, ()))]
    method_names = sorted({f.func.name.name for f in functions if Variant.method in f.variants})
    varargs = _varargs_methods(by_name, method_names)
    ops = [owned(_op_context(f), f) for f in functions]
    ops_by_id = {op.id: op for op in ops}
    docs = _docs(model, bindings, by_name, method_names, varargs)
    files = {
        "_ops.py": env.get_template("ops.py.j2").render(
            ops=ops, ops_by_id=ops_by_id, bindings=bindings, exported=exported, docs=docs),
        "_cpu_kernels.py": env.get_template("cpu_kernels.py.j2").render(
            kernels=[owned(_cpu_kernel_context(f), f) for f in functions
                     if f.pointwise is not None and f.derived_from is None]),
        "_autograd.py": gen_autograd.render(env, model, root),
        "_registrations.py": _render_registrations(env, model),
        "_methods.py": env.get_template("methods.py.j2").render(
            methods=[m for m in method_names if m not in varargs], varargs=varargs,
            direct=_direct_methods(bindings, ops_by_id, varargs), dunders=api_python.dunders(bindings),
            docs=docs),
        "__init__.py": env.get_template("init.py.j2").render(),
        "py.typed": "",  # PEP 561: the package ships its types (__init__.pyi)
        "__init__.pyi": env.get_template("init.pyi.j2").render(
            functions=[owned(_stub(b, functions), by_name[b.name][0]) for b in exported],
            methods=[owned(_stub(b, functions, varargs.get(b.name)), by_name[b.name][0])
                     for b in bindings if b.name in method_names],
            dunders=api_python.dunders(bindings), api_names=_stub_imports(root)),
    }
    files.update(gen_cuda.generate(functions, env))
    files["_fusion_specs.py"] = gen_fusion.render(gen_cuda.pointwise_ops(functions))
    names.check_module_names(files, _owners(model))
    return dict(sorted(files.items()))


def _owners(model: Model) -> dict[str, list[Location]]:
    """Every top-level name an op gives rise to in a generated module -> the entries that declare it."""
    owners: dict[str, list[Location]] = {}
    for f in model.functions:
        i, k = op_id(f), kernel_name(f)
        for name in (f.func.name.name, i, f"_op_{i}", f"_tab_{i}", f"_call_{i}", f"_rt_{i}", k, f"{k}_inplace",
                     f"{k}_out", f"_{k}", f"_FAST_{k}"):
            owners.setdefault(name, []).append(f.loc)
    for d in model.derivatives:
        owners.setdefault(d.class_name, []).append(d.loc)
    return owners


@dataclass(frozen=True)
class Docs:
    """The docstrings and shown signatures of generated/_ops.py and _methods.py, as Python source
    (codegen/docstrings.py): name -> literal, name -> ParamSpec source."""

    functions: dict[str, str]
    shown: dict[str, str]           # op functions whose `def` line has a sentinel default
    methods: dict[str, str]
    method_params: dict[str, str]


def _docs(model: Model, bindings: list[api_python.Binding], by_name: dict[str, list[NativeFunction]],
          method_names: list[str], varargs: dict[str, str]) -> Docs:
    ctx = docstrings.DocContext(by_name, lambda f: _autograd_words(model, f))
    functions, shown, methods, method_params = {}, {}, {}, {}
    for b in bindings:
        # the binding's overloads, those of another name included (Note [In-place forms of overloads declared
        # without one] in codegen/api_python.py)
        overloads = [f for f in model.functions if str(f.func) in b.overloads]
        overloads.sort(key=lambda f: b.overloads.index(str(f.func)))
        functions[b.name] = docstrings.literal(docstrings.docstring(b, overloads, ctx))
        if docstrings.needs_shown_signature(b):
            shown[b.name] = docstrings.param_spec(b, overloads)
        if b.name in method_names:
            text = docstrings.docstring(b, overloads, ctx, method=True)
            if b.name in varargs:
                text += f"\n\nThe sizes may also be given one by one: `t.{b.name}(2, 3)` is `t.{b.name}((2, 3))`."
            methods[b.name] = docstrings.literal(text)
            method_params[b.name] = docstrings.param_spec(b, overloads, method=True)
    return Docs(functions, shown, methods, method_params)


def _autograd_words(model: Model, f: NativeFunction) -> str:
    """How one (functional or in-place) op is differentiated, for its docstring."""
    if "CompositeImplicitAutograd" in f.root.dispatch:
        return "yes (composite: autograd records the ops it calls)"
    if "Autograd" in f.dispatch:
        return "yes (its own Autograd kernel)"
    d = model.derivative_of(f)
    if d is None:
        return "no"
    if not d.differentiable:
        return "no (derivatives.yaml marks its outputs not differentiable)"
    inputs = [py_name(i) for formula in d.formulas for i in formula.inputs]
    return f"yes, for {', '.join(inputs)} (derivatives.yaml; backward node {d.node_name})"


def _varargs_methods(by_name: dict[str, list[NativeFunction]], method_names: list[str]) -> dict[str, str]:
    """Methods that take their one positional argument, an int list, as varargs too, as PyTorch's do:
    `t.view(2, 3)` is `t.view((2, 3))`. Name -> that argument's Python name."""
    out = {}
    for name in method_names:
        schemas = [f.func for f in by_name[name] if Variant.method in f.variants]
        lists = {a.name for s in schemas for a in s.arguments.positional[1:]
                 if len(s.arguments.positional) == 2 and str(a.type) in ("int[]", "SymInt[]")}
        # an overload taking one int there (`hsplit.int`) reads `t.hsplit(2)` as that int, not as varargs
        ints = any(str(a.type) in ("int", "SymInt") for s in schemas for a in s.arguments.positional[1:])
        if len(lists) == 1 and not ints and all(len(s.arguments.positional) == 2 for s in schemas):
            out[name] = py_name(lists.pop())
    return out


@dataclass(frozen=True)
class DirectMethod:
    """A varargs method that dispatches itself (Note [Direct method calls] in templates/methods.py.j2)."""

    op: str                     # the op id whose dispatch table it calls
    defaults: tuple[str, ...]   # the Python defaults of the op's arguments after the int list (keyword-only)


def _direct_methods(bindings: list[api_python.Binding], ops_by_id: dict[str, OpContext],
                    varargs: dict[str, str]) -> dict[str, DirectMethod]:
    """Varargs methods whose Python function is one plain dispatch of `(self, list)`, any further argument
    keyword-only with a default: no overload to choose, nothing mutated, one plain tensor. Name -> the op and
    those defaults; the generated method calls that op's dispatch table itself (Note [Direct method calls] in
    templates/methods.py.j2), passing the defaults."""
    out = {}
    for b in bindings:
        if b.name not in varargs or len(b.cases) != 1 or b.cases[0].condition or not b.cases[0].op:
            continue
        op = ops_by_id[b.cases[0].op]
        rest = b.params[2:]
        if not all(p.kwonly and p.default is not None and p.default != api_python.NOT_GIVEN for p in rest):
            continue
        if (tuple(p.name for p in b.params) == op.params and op.tensor_positions == (0,)
                and op.key_exprs == (f"{op.params[0]}._keys",) and not op.mutated and not op.return_type):
            out[b.name] = DirectMethod(op.id, tuple(str(p.default) for p in rest))
    return out


# -- contexts ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OpContext:
    """One operator of generated/_ops.py (templates/ops.py.j2)."""

    id: str
    name: str
    schema: str  # a Python string literal (Note [Text into code only through one door] in codegen/literals.py)
    params: tuple[str, ...]
    tensor_positions: tuple[int, ...]
    mixed_devices: bool
    scalar_positions: tuple[int, ...]  # Note [CPU scalars beside device tensors] (runtime/dispatcher.py)
    key_exprs: tuple[str, ...]
    mutated: tuple[str, ...]
    return_type: str


def _writes(a: Argument) -> bool:
    return a.annotation is not None and a.annotation.is_write


def _op_context(f: NativeFunction) -> OpContext:
    args = f.func.arguments.flat_all
    positions = tuple(i for i, a in enumerate(args) if a.type.is_tensor_like())
    return OpContext(
        id=op_id(f),
        name=f.name,
        schema=python_str(str(f.func), '"'),
        params=tuple(py_name(a.name) for a in args),
        tensor_positions=positions,
        mixed_devices=f.mixed_devices,
        # a pointwise op takes 0-dim CPU tensors among device tensors as inputs, as PyTorch's TensorIterator
        scalar_positions=tuple(i for i in positions if f.pointwise is not None and not _writes(args[i])),
        key_exprs=tuple(key_expr(args[i]) for i in positions),
        mutated=tuple(py_name(a.name) for a in args if _writes(a)),
        return_type=_return_type(f),
    )


def _return_type(f: NativeFunction) -> str:
    """`("max", ("values", "indices"))` for an op returning several named values (runtime/return_types.py)."""
    rets = f.func.returns
    if len(rets) < 2 or any(r.name is None for r in rets) or f.func.name.name.endswith("_"):
        return ""
    return python_value((f.func.name.name, tuple(r.name for r in rets)))


@dataclass(frozen=True)
class CpuKernelContext:
    """One pointwise op's NumPy kernels (templates/cpu_kernels.py.j2)."""

    name: str
    op: str
    params: tuple[str, ...]
    tensors: tuple[str, ...]
    arrays: tuple[str, ...]  # the NumPy array of each tensor
    expr: str
    fast_condition: str  # scalars at their numeric defaults ...
    fast_expr: str | None  # ... and the expression folded for them (None: folding changes nothing)
    promote: str
    promote_scalars: tuple[str, ...]
    dtypes: tuple[str, ...] | None  # None: every dtype
    fast_set: str  # Note [Pointwise fast path] (runtime/kernels/cpu_pointwise.py): the dtypes computed directly
    inplace: bool  # has an in-place form (NativeFunction.group)
    conditions: tuple[str, ...]
    zero_dim: tuple[str, ...] = ()  # tensors that must be 0-dimensional (PointwiseSpec.zero_dim)
    follow: tuple[int, ...] = ()  # positions in `tensors` of the zero_dim ones: they take the result dtype
    same_dtype: tuple[tuple[str, bool], ...] = ()  # PointwiseSpec.same_dtype
    divisors: tuple[str, ...] = ()  # integer divisors, rendered: checked for zero (kernel_spec.integer_divisors)


def _cpu_kernel_context(f: NativeFunction) -> CpuKernelContext:
    spec = f.pointwise
    assert spec is not None
    tensors = tuple(py_name(t) for t in spec.tensors)
    arrays = tuple(f"a{i}" for i in range(len(tensors)))
    names = {t: a for t, a in zip(spec.tensors, arrays, strict=True)}
    names.update({s: py_name(s) for s in spec.scalars})
    all_dtypes = spec.dtypes == DTYPE_GROUPS["all"]
    defaults = _numeric_defaults(f, spec.scalars)
    expr = spec.render(NUMPY, names)
    fast = spec.specialize(defaults).render(NUMPY, names) if defaults else None
    return CpuKernelContext(
        name=kernel_name(f),
        op=f.func.name.name,
        params=tuple(py_name(a.name) for a in f.func.arguments.flat_non_out),
        tensors=tensors,
        arrays=arrays,
        expr=expr,
        fast_condition=" and ".join(f"{py_name(k)} == {python_number(v)}" for k, v in defaults.items()),
        fast_expr=fast if fast != expr else None,
        promote=spec.promote,
        promote_scalars=tuple(py_name(x) for x in spec.promote_scalars),
        dtypes=None if all_dtypes else tuple(spec.dtypes),
        fast_set=("_NATIVE" if all_dtypes and spec.promote not in (PromoteKind.float, PromoteKind.int)
                  else f"_FAST_{kernel_name(f)}"),
        inplace=f.group.inplace is not None,
        conditions=tuple(py_name(t) for t in condition_tensors(spec)),
        zero_dim=tuple(py_name(t) for t in spec.zero_dim),
        follow=tuple(spec.tensors.index(t) for t in spec.zero_dim),
        same_dtype=tuple((py_name(t), always) for t, always in spec.same_dtype),
        divisors=tuple(NUMPY.render(d, names) for d in integer_divisors(spec)),
    )


def _numeric_defaults(f: NativeFunction, scalars: tuple[str, ...]) -> dict[str, float]:
    """Scalar arguments whose default is a finite number (candidates for the kernel's fast path)."""
    out: dict[str, float] = {}
    for a in f.func.arguments.flat_non_out:
        if a.name in scalars and a.default is not None:
            value = default_value(a)
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                out[a.name] = value
    return out


# How generated/_registrations.py names the generated kernel modules.
GENERATED_MODULES = {"_cpu": "generated._cpu_kernels", "_cuda": "generated._cuda_kernels",
                     "_autograd": "generated._autograd"}
# The kernel modules generated/_registrations.py imports with the package: the generated CPU kernels, which
# nearly every program calls. Every other kernel is registered by name and its module imported on the first
# call of one of its kernels (Note [Kernels loaded on first call] in runtime/first_call.py): a CPU-only program
# never loads the CUDA backend, inference never loads the Autograd kernels and nodes, and each family of
# hand-written kernels (runtime/kernels/*.py) loads when one of its ops is first called.
IMPORTED_NOW = frozenset({"_cpu"})


def registrations(f: NativeFunction) -> list[tuple[str, str]]:
    """(dispatch key, kernel expression) of every kernel the generated package registers for `f`."""
    kname = kernel_name(f)
    out = [(key, f"_{key.lower()}.{kname}") for key in POINTWISE_KEYS] if f.pointwise is not None else []
    out += f.dispatch.items()
    if f.has_autograd_kernel:
        out.append(("Autograd", f"_autograd.{kname}"))
    return out


def kernel_path(expression: str) -> str:
    """The dotted path of a kernel expression of `registrations` (`_cpu.add_Tensor` ->
    `generated._cpu_kernels.add_Tensor`), as the runtime names the function."""
    module, _, name = expression.partition(".")
    return f"{GENERATED_MODULES[module]}.{name}" if module in GENERATED_MODULES else expression


def _render_registrations(env: jinja2.Environment, model: Model) -> str:
    """generated/_registrations.py: every kernel, in file order; those outside IMPORTED_NOW by name."""
    entries: list[tuple[str, str, str]] = []
    for f in model.functions:
        for key, kernel in registrations(f):
            if kernel.partition(".")[0] not in IMPORTED_NOW:
                module, _, function = kernel_path(kernel).rpartition(".")
                where = ", ".join(python_str(part, '"') for part in (module, function))
                kernel = f"_on_first_call({where})"
            entries.append((f.name, key, kernel))
    return env.get_template("registrations.py.j2").render(
        registrations=entries,
        imported_now=[(GENERATED_MODULES[a].rpartition(".")[2], a) for a in sorted(IMPORTED_NOW)])


# Names the stub defines itself, so that type checkers see them with the generated methods: the Tensor
# class and the factories that return it (templates/init.pyi.j2).
STUB_OWN_NAMES = frozenset({
    "Tensor", "tensor", "as_tensor", "from_numpy", "empty", "zeros", "ones", "rand", "randn", "full", "arange",
    "linspace", "eye", "randint", "randperm", "empty_like", "zeros_like", "ones_like", "full_like", "rand_like",
    "randn_like"})


def _stub_imports(root: Path) -> list[str]:
    """The names of runtime/api.py's `__all__` (read from its source: codegen imports no runtime module)
    that the stub imports rather than defines."""
    import ast

    tree = ast.parse((root / "runtime" / "api.py").read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        target = getattr(node, "target", None) or (node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "__all__" and isinstance(node, ast.Assign | ast.AugAssign):
            value = node.value
            if isinstance(value, ast.List):
                names += [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return sorted(set(names) - STUB_OWN_NAMES)


@dataclass(frozen=True)
class StubContext:
    """One signature of generated/__init__.pyi (templates/init.pyi.j2)."""

    name: str
    params: str
    returns: str


def _stub(binding: api_python.Binding, candidates: list[NativeFunction], varargs: str | None = None) -> StubContext:
    """One stub; `varargs` names the int-list argument a method takes as `*args` (_varargs_methods)."""
    overloads = [f for f in candidates if str(f.func) in binding.overloads]
    hints: dict[str, set[str]] = {}
    for f in overloads:
        for a in f.func.arguments.flat_all:
            hints.setdefault(py_name(a.name), set()).add(_hint(a.type))
    params = []
    star = False
    for p in binding.params:
        if p.name == varargs:
            params.append(f"*{p.name}: _int | Sequence[_int]")
            star = True
            continue
        if p.kwonly and not star:
            params.append("*")
            star = True
        hint = " | ".join(sorted(hints.get(p.name, {"Any"})))
        params.append(f"{p.name}: {hint}" + ("" if p.default is None else " = ..."))
    returns = {len(f.func.returns) for f in overloads}
    ret = "Tensor" if returns == {1} else "None" if returns == {0} else "tuple[Tensor, ...]"
    return StubContext(binding.name, ", ".join(params), ret)


# The stub imports the builtins as _int, _float, _bool (G.int, G.float, G.bool are dtypes, as in PyTorch) and
# spells a Scalar _Scalar (int | float | bool).
_HINTS = {"Tensor": "Tensor", "Scalar": "_Scalar", "int": "_int", "SymInt": "_int", "float": "_float",
          "bool": "_bool", "str": "str", "ScalarType": "DType", "Device": "Device | str", "Generator": "Generator",
          "Layout": "Any", "MemoryFormat": "Any"}


def _hint(t: Type) -> str:
    """The Python type hint of a schema type: `int[]?` -> `Sequence[int] | int | None`."""
    if isinstance(t, OptionalType):
        return f"{_hint(t.elem)} | None"
    if isinstance(t, ListType):
        elem = t.elem.elem if isinstance(t.elem, OptionalType) else t.elem
        name = elem.name if isinstance(elem, BaseType) else ""
        # a plain int list also takes one int, as PyTorch's IntArrayRef does
        one_int = isinstance(t.elem, BaseType) and name in ("int", "SymInt")
        return f"Sequence[{_HINTS.get(name, 'Any')}]" + (" | _int" if one_int else "")
    return _HINTS.get(t.name, "Any") if isinstance(t, BaseType) else "Any"


# -- writing ----------------------------------------------------------------------------------------
def generate(root: Path) -> dict[str, str]:
    """Render everything and return it (nothing is written). Each Python file that differs from what
    generated/ holds is compiled once, a check against template bugs (what is already there passed it
    when it was written); `compile`, not `ast.parse`, which slows down more than linearly on big files."""
    files = render_all(root)
    out_dir = root / GENERATED
    for path, text in files.items():
        if path.endswith(".py") and not _on_disk(out_dir / path, text):
            _check_python(path, text)
    return files


def _on_disk(path: Path, text: str) -> bool:
    try:
        data = text.encode()
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def _check_python(path: str, text: str) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, f"{GENERATED}/{path}", "exec", dont_inherit=True)
    except SyntaxError as e:  # a template bug, never the user's: say where
        raise OpgenError(f"generated {GENERATED}/{path}:{e.lineno} is not valid Python: {e.msg}") from None


def write_files(root: Path, files: dict[str, str]) -> list[str]:
    """Make `generated/` hold exactly `files`, swapped in whole (Note [Whole-tree swap],
    codegen/tree_swap.py). Returns the paths that changed."""
    return tree_swap.write_tree(root / GENERATED, files)


def _existing(out_dir: Path) -> list[Path]:
    return [p for p in out_dir.rglob("*") if p.is_file() and "__pycache__" not in p.parts]


def diff(root: Path, files: dict[str, str]) -> str:
    """A unified diff from what `generated/` holds to what it should hold ('' when fresh)."""
    out_dir = root / GENERATED
    chunks: list[str] = []
    on_disk = {p.relative_to(out_dir).as_posix(): p for p in _existing(out_dir)} if out_dir.is_dir() else {}
    for rel in sorted(set(files) | set(on_disk)):
        old = on_disk[rel].read_text() if rel in on_disk else ""
        new = files.get(rel, "")
        if old != new:
            chunks.extend(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                               f"a/{GENERATED}/{rel}", f"b/{GENERATED}/{rel}"))
    return "".join(chunks)
