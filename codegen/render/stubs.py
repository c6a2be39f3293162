"""generated/__init__.pyi: the type stubs of the generated functions and Tensor methods
(templates/init.pyi.j2)."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import jinja2

from codegen import api_python, runtime_reads
from codegen.api_python import py_name
from codegen.model import BaseType, ListType, OptionalType, Type
from codegen.native import NativeFunction
from codegen.render.inputs import Inputs
from codegen.render_errors import owned

# Names the stub defines itself, so that type checkers see them with the generated methods: the Tensor
# class and the factories that return it (templates/init.pyi.j2).
STUB_OWN_NAMES = frozenset({
    "Tensor", "tensor", "as_tensor", "from_numpy", "empty", "zeros", "ones", "rand", "randn", "full", "arange",
    "linspace", "eye", "randint", "randperm", "empty_like", "zeros_like", "ones_like", "full_like", "rand_like",
    "randn_like"})


@dataclass(frozen=True)
class StubContext:
    """One signature of generated/__init__.pyi (templates/init.pyi.j2)."""

    name: str
    params: str
    returns: str


@dataclass(frozen=True)
class StubsFile:
    functions: tuple[StubContext, ...]
    methods: tuple[StubContext, ...]
    dunders: tuple[api_python.Dunder, ...]
    api_names: tuple[str, ...]                 # names imported from runtime.api


def stub_imports(root: Path) -> list[str]:
    """The names of runtime/api.py's `__all__` (read from its source, a declared read: codegen/runtime_reads.py)
    that the stub imports rather than defines."""
    tree = ast.parse((root / runtime_reads.API_MODULE).read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        target = getattr(node, "target", None) or (node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "__all__" and isinstance(node, ast.Assign | ast.AugAssign):
            value = node.value
            if isinstance(value, ast.List):
                names += [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return sorted(set(names) - STUB_OWN_NAMES)


def stub(binding: api_python.Binding, candidates: list[tuple[str, NativeFunction]],
         varargs: str | None = None) -> StubContext:
    """One stub; `candidates` pairs each function with its schema's text (computed once per file, not once per
    stub); `varargs` names the int-list argument a method takes as `*args` (python_api.varargs)."""
    wanted = set(binding.overloads)
    overloads = [f for text, f in candidates if text in wanted]
    hints: dict[str, set[str]] = {}
    for f in overloads:
        for a in f.func.arguments.flat_all:
            hints.setdefault(py_name(a.name), set()).add(hint(a.type))
    params = []
    star = False
    for i, p in enumerate(binding.params):
        if i == 0 and binding.tensor_varargs:  # Note [Tensors as varargs] (codegen/api_python.py)
            params.append(f"*{p.name}: Tensor | Sequence[Tensor]")
            star = True
            continue
        if p.name == varargs:
            params.append(f"*{p.name}: _int | Sequence[_int]")
            star = True
            continue
        if p.kwonly and not star:
            params.append("*")
            star = True
        text = " | ".join(sorted(hints.get(p.name, {"Any"})))
        params.append(f"{p.name}: {text}" + ("" if p.default is None else " = ..."))
    returns = {len(f.func.returns) for f in overloads}
    ret = "Tensor" if returns == {1} else "None" if returns == {0} else "tuple[Tensor, ...]"
    return StubContext(binding.name, ", ".join(params), ret)


# The stub imports the builtins as _int, _float, _bool (G.int, G.float, G.bool are dtypes, as in PyTorch) and
# spells a Scalar _Scalar (int | float | bool).
_HINTS = {"Tensor": "Tensor", "Scalar": "_Scalar", "int": "_int", "SymInt": "_int", "float": "_float",
          "bool": "_bool", "str": "str", "ScalarType": "DType", "Device": "Device | str", "Generator": "Generator",
          "Layout": "Any", "MemoryFormat": "Any"}


def hint(t: Type) -> str:
    """The Python type hint of a schema type: `int[]?` -> `Sequence[int] | int | None`."""
    if isinstance(t, OptionalType):
        return f"{hint(t.elem)} | None"
    if isinstance(t, ListType):
        elem = t.elem.elem if isinstance(t.elem, OptionalType) else t.elem
        name = elem.name if isinstance(elem, BaseType) else ""
        # a plain int list also takes one int, as PyTorch's IntArrayRef does
        one_int = isinstance(t.elem, BaseType) and name in ("int", "SymInt")
        return f"Sequence[{_HINTS.get(name, 'Any')}]" + (" | _int" if one_int else "")
    return _HINTS.get(t.name, "Any") if isinstance(t, BaseType) else "Any"


def contexts(inputs: Inputs) -> StubsFile:
    api = inputs.api
    by_name = api.by_name
    # a binding's overloads may be of another name (api_python)
    functions = [(str(f.func), f) for f in inputs.model.functions]
    return StubsFile(
        functions=tuple(owned(stub(b, functions), by_name[b.name][0]) for b in api.exported),
        methods=tuple(owned(stub(b, functions, api.varargs.get(b.name)), by_name[b.name][0])
                      for b in api.bindings if b.name in api.method_names),
        dunders=tuple(api_python.dunders(list(api.bindings))), api_names=tuple(stub_imports(inputs.root)))


def render(env: jinja2.Environment, ctx: StubsFile) -> dict[str, str]:
    return {"__init__.pyi": env.get_template("init.pyi.j2").render(
        functions=ctx.functions, methods=ctx.methods, dunders=ctx.dunders, api_names=ctx.api_names)}
