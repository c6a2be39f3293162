"""The Python API of a model, which the ops, methods and stubs renderers share: the bindings (one Python
function per op name, codegen/api_python.py), which are exported and which are methods, the methods taking
varargs sizes, and every docstring."""

from __future__ import annotations

from dataclasses import dataclass

from codegen import api_python, differentiable, docstrings
from codegen.api_python import py_name
from codegen.errors import LoadError
from codegen.loading import DERIVATIVES_YAML, Model
from codegen.native import NativeFunction, Variant
from codegen.render_errors import owned


@dataclass(frozen=True)
class Docs:
    """The docstrings and shown signatures of generated/_ops.py and _methods.py, as Python source
    (codegen/docstrings.py): name -> literal, name -> ParamSpec source."""

    functions: dict[str, str]
    shown: dict[str, str]           # op functions whose `def` line has a sentinel default
    methods: dict[str, str]
    method_params: dict[str, str]


@dataclass(frozen=True)
class PythonApi:
    bindings: tuple[api_python.Binding, ...]
    by_name: dict[str, list[NativeFunction]]  # op name -> its overloads (and derived forms), in file order
    exported: tuple[api_python.Binding, ...]  # the bindings of function variants (the `G.` names)
    method_names: tuple[str, ...]             # sorted
    varargs: dict[str, str]                   # method -> its int-list argument taken as varargs too
    docs: Docs


def python_api(model: Model) -> PythonApi:
    """The bindings of the model's functions; a LoadError at each clashing entry or differentiable op
    without a derivative (Note [A differentiable op needs a derivative])."""
    functions = model.functions
    problems = differentiable.problems(functions, model.derivatives, DERIVATIVES_YAML)
    try:
        bindings = api_python.group_bindings(functions)  # LoadError at each clashing entry's file:line
    except LoadError as e:
        raise LoadError(e.diagnostics + problems) from None
    if problems:
        raise LoadError(problems)
    by_name: dict[str, list[NativeFunction]] = {}
    for f in functions:
        by_name.setdefault(f.func.name.name, []).append(f)
    for b in bindings:
        owned(b, by_name[b.name][0])
    exported = tuple(b for b in bindings
                     if any(Variant.function in f.root.variants for f in by_name.get(b.name, ())))
    method_names = tuple(sorted({f.func.name.name for f in functions if Variant.method in f.variants}))
    varargs = _varargs_methods(by_name, method_names)
    docs = _docs(model, bindings, by_name, method_names, varargs)
    return PythonApi(tuple(bindings), by_name, exported, method_names, varargs, docs)


def _docs(model: Model, bindings: list[api_python.Binding], by_name: dict[str, list[NativeFunction]],
          method_names: tuple[str, ...], varargs: dict[str, str]) -> Docs:
    ctx = docstrings.DocContext(by_name, lambda f: _autograd_words(model, f))
    functions, shown, methods, method_params = {}, {}, {}, {}
    texts = [(str(f.func), f) for f in model.functions]  # once, not once per binding
    for b in bindings:
        # the binding's overloads, those of another name included (Note [In-place forms of overloads declared
        # without one] in codegen/api_python.py)
        wanted = set(b.overloads)
        overloads = [f for text, f in texts if text in wanted]
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


def _varargs_methods(by_name: dict[str, list[NativeFunction]], method_names: tuple[str, ...]) -> dict[str, str]:
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
