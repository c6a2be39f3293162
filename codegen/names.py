"""Which names a schema may use: argument names that cannot shadow the generator's own, op names that
cannot replace the runtime's.

Note [Reserved names in generated code]
Argument names become parameters of generated Python functions (bindings, kernels, Autograd kernels, the
locals of backward nodes), whose bodies also use names of the generator's own. Those live in a reserved
namespace that an argument may not use, so a user's name can never shadow them:
  - every name that starts with `_` (the generator's helpers, tables and locals: `_k`, `_fn`, `_e0`, `_r`,
    `_need`, `_saved_*`, the metadata a node saves, `_{name}_{attr}`);
  - `RESERVED_ARGUMENT_NAMES`: the few non-underscore names that generated function bodies use besides
    their parameters (the Autograd kernel's `result` and `node`, `Tensor`, the builtins the templates
    call ...), `fields`, whose slot `_saved_fields` is the node class's list of saved variables, and the
    backward node classes `<Name>Backward<digits>`;
  - in an op with `pointwise:`, also `POINTWISE_RESERVED` and `a0`, `a1` ...: the backend kernels' locals
    (the CPU kernel's `dt`, `r`, `t`, `np` and arrays) and names (`is_reserved_argument`).
A Python keyword is renamed with a trailing `_` as PyTorch's bindings do (`from` -> `from_`); two
arguments whose Python names are the same (`self`, which is `input` in Python, beside `input`; `from`
beside `from_`) are refused. `tests/codegen/test_reserved_names.py` checks the list against the generated package:
every non-parameter name of a generated function body is reserved.

Op names: a method replaces an attribute of the runtime's Tensor class and a function a name of the
package `generated` (Note [Names an op may not take] in runtime/vocabulary.py), so those names are
refused; a dunder op name must be one of Python's operator dunders.
"""

from __future__ import annotations

import keyword

from codegen.errors import Diagnostic, LoadError, Location, OpgenError
from codegen.model import FunctionSchema
from runtime.vocabulary import API_NAMES, TENSOR_NAMES

RESERVED_ARGUMENT_NAMES: frozenset[str] = frozenset({
    # generated/_autograd.py: the Autograd kernel and a node's apply()
    "result", "node", "grads", "fields", "AUTOGRAD_BIT",
    # generated/_methods.py: a varargs method's `**kwargs`
    "kwargs",
    # names and builtins that generated code reads inside functions with YAML-named parameters
    "Tensor", "isinstance", "locals", "len", "type", "getattr", "setattr", "bool", "int", "object",
    "AttributeError", "RuntimeError", "ValueError", "TypeError",
})  # fmt: skip
# Reserved only in ops with `pointwise:`, whose backend kernels use them too (and `a0`, `a1` ...).
POINTWISE_RESERVED: frozenset[str] = frozenset({
    "dt", "r", "t", "np",  # generated/_cpu_kernels.py
    "launch", "check_condition",  # generated/_cuda_kernels.py
})

# Python's operator dunders an op may be named after (PyTorch declares `__and__`, `__ilshift__` ...).
_OPERATORS = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "div", "mod", "pow", "lshift", "rshift",
              "and", "xor", "or")
OPERATOR_DUNDERS: frozenset[str] = frozenset(
    {f"__{p}{op}__" for op in _OPERATORS for p in ("", "r", "i")} | {"__neg__", "__pos__", "__abs__", "__invert__"}
) - TENSOR_NAMES


# Builtins that generated modules call in their own code (formulas call theirs through `builtins`): an op
# of that name would be a top-level function of those modules and shadow it.
GENERATED_BUILTINS: frozenset[str] = frozenset({
    "len", "isinstance", "locals", "globals", "type", "getattr", "setattr", "object", "list", "str", "bool",
    "int", "AttributeError", "RuntimeError", "ValueError",
    "tuple",  # Note [Tensors as varargs] (codegen/api_python.py)
})  # fmt: skip


def py_name(name: str) -> str:
    """A schema argument name as a Python parameter: `self` is `input`, keywords get a `_`."""
    if name == "self":
        return "input"
    return f"{name}_" if keyword.iskeyword(name) else name


def local_name(name: str) -> str:
    """A schema argument name as a Python local where `self` may keep its name (the backend kernels):
    keywords get a `_`, as in `py_name`."""
    return f"{name}_" if keyword.iskeyword(name) else name


def is_reserved_argument(name: str, pointwise: bool = True) -> bool:
    """Whether `name` is in the generator's namespace (Note [Reserved names in generated code]) for an op
    with (`pointwise`) or without a kernel spec."""
    if name.startswith("_") or name in RESERVED_ARGUMENT_NAMES or name.rstrip("0123456789").endswith("Backward"):
        return True  # the last: the backward node classes
    return pointwise and (name in POINTWISE_RESERVED or (name[:1] == "a" and name[1:].isdigit()
                                                         and name[1:].isascii()))


def check_argument_names(func: FunctionSchema, pointwise: bool) -> None:
    """Refuse argument names that would shadow the generator's names or each other in Python."""
    seen: dict[str, str] = {}
    for a in func.arguments.flat_all:
        if is_reserved_argument(a.name, pointwise):
            also = f"{', '.join(sorted(POINTWISE_RESERVED))}, a0, a1 ... and " if pointwise else ""
            raise OpgenError(f"argument name '{a.name}' is reserved: generated code uses it (names starting "
                             f"with '_', {also}{', '.join(sorted(RESERVED_ARGUMENT_NAMES))})")
        if a.name == "out" and not a.is_write:
            raise OpgenError("argument name 'out' is reserved for out arguments (Tensor(a!) out)")
        p = py_name(a.name)
        if p in seen:
            raise OpgenError(f"arguments '{seen[p]}' and '{a.name}' are both '{p}' in Python")
        seen[p] = a.name
    for r in func.returns:
        # a named output is a field of a named tuple and, read by a formula, a local of the node's apply()
        if r.name is not None and (r.name.startswith("_") or keyword.iskeyword(r.name)
                                   or r.name in ("self", "grad", "grads", "out")):
            raise OpgenError(f"return name '{r.name}' is reserved or a Python keyword")


def check_op_name(func: FunctionSchema, method: bool, function: bool) -> None:
    """Refuse an op name that would replace a runtime Tensor attribute or a name of `generated`."""
    name = func.name.name
    if name.startswith("__") and name.endswith("__") and name not in OPERATOR_DUNDERS:
        raise OpgenError(f"operator name '{name}' is a dunder that is not one of Python's operators "
                         "(__add__, __iand__, __neg__ ...)")
    if func.name.functional_name in GENERATED_BUILTINS or name in GENERATED_BUILTINS:
        raise OpgenError(f"operator name '{name}' would shadow the builtin '{func.name.functional_name}' that "
                         "generated code calls")
    if method and name in TENSOR_NAMES:
        raise OpgenError(f"a method named '{name}' would replace the runtime's Tensor.{name}; choose another "
                         "name or drop the method variant")
    if function and name in API_NAMES:
        raise OpgenError(f"a function named '{name}' would replace the runtime's '{name}' in the package "
                         "`generated`; choose another name or drop the function variant")


def top_level_names(text: str) -> list[tuple[str, int]]:
    """The names bound at the top level of a generated Python module, with their line numbers. Generated
    modules bind names only in unindented one-line statements (`def name(`, `class name`, `name = `,
    imports), so reading the unindented lines is exact for them; it is not a parser for other Python."""
    out: list[tuple[str, int]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line[:1].isidentifier():
            continue
        if line.startswith(("import ", "from ")):
            line = line.partition("#")[0]  # a trailing comment
        words = line.replace("(", " ( ").replace(":", " : ").replace(",", " , ").split()
        if words[0] in ("def", "class") and len(words) > 1:
            out.append((words[1], number))
        elif words[0] in ("import", "from") and "import" in words:
            names = " ".join(words[words.index("import") + 1:]).split(",")
            for name in (n.split() for n in names):  # `a`, `a.b` (binds a), `a as b`
                if name and name[-1] != "*":
                    out.append((name[-1] if len(name) > 1 else name[0].split(".")[0], number))
        elif (words[0].isidentifier() and not keyword.iskeyword(words[0]) and len(words) > 1
              and words[1] in ("=", ":")):
            out.append((words[0], number))
    return out


def check_module_names(files: dict[str, str], owners: dict[str, list[Location]]) -> None:
    """Refuse a generated Python module that binds a name twice at its top level (an op named `np`, two ops
    whose identifiers meet: `foo.bar` and `foo_bar`): a safety net under the name checks of the loader.
    `owners` maps the names that ops give rise to, to the entries that declare them."""
    problems: list[Diagnostic] = []
    for path, text in files.items():
        if not path.endswith(".py"):
            continue
        first: dict[str, int] = {}
        for name, line in top_level_names(text):
            if name not in first:
                first[name] = line
                continue
            where = owners.get(name, [])
            message = (f"'{name}' would be bound twice in generated/{path} (lines {first[name]} and {line}): "
                       "an operator's name meets a name the generator uses or another operator's")
            if where:
                problems.append(Diagnostic(max(where), message))
            else:
                raise OpgenError(message)
    if problems:
        raise LoadError(sorted(set(problems), key=lambda d: (d.location, d.message)))
