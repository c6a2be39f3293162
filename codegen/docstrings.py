"""The docstrings and shown signatures of the generated op functions and Tensor methods, from the schemas.

Note [YAML text reaches generated code only as literals]
Text from the YAML (an entry's `doc:`, a schema, a default) is written into generated Python only through
`literal` (`python_str` of codegen/literals.py, Note [Text into code only through one door]): never pasted
into a triple-quoted string, where a `\"\"\"`, a backslash or a line separator would end the string or change it.
A docstring is such a literal as the first statement of the function body, which Python takes as
`__doc__`, so `help()` shows it and calls pay nothing.

A docstring holds: a PyTorch-style signature line (`add(input, other, *, alpha=1, out=None) -> Tensor`;
a method's names the tensor `self`), the entry's `doc:`, each argument with its type and default, the
forms (function, method, in-place, out=), whether it is differentiable and how, and the schemas.
The shown signatures (Note [Shown signatures] in runtime/signatures.py) are specs of
(name, keyword-only, default source) that `runtime.signatures` turns into `inspect.Signature`s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from codegen.api_python import NOT_GIVEN, Binding, Param, py_name, python_default
from codegen.literals import python_str
from codegen.model import BaseType, ListType, OptionalType, SchemaKind, Type
from codegen.native import NativeFunction, Variant

REQUIRED = "_REQ"   # the name of runtime.signatures.REQUIRED in generated code


def literal(text: str) -> str:
    """The one way YAML text enters generated code: a Python string literal (Note [YAML text reaches
    generated code only as literals]), through the one door for Python strings: quotes, backslashes and
    every character that is not printable ASCII (U+2028 included) are escaped."""
    return python_str(str(text))


# How a schema's base types read in a docstring.
_WORDS = {"Tensor": "Tensor", "Scalar": "number", "int": "int", "SymInt": "int", "float": "float", "bool": "bool",
          "str": "str", "ScalarType": "dtype", "Device": "device", "Generator": "Generator",
          "Layout": "layout", "MemoryFormat": "memory format", "Dimname": "str"}


def type_words(t: Type) -> str:
    """A schema type as docs say it: `int[1]?` -> `int or sequence of ints, optional`."""
    if isinstance(t, OptionalType):
        return f"{type_words(t.elem)}, optional"
    if isinstance(t, ListType):
        elem = t.elem.elem if isinstance(t.elem, OptionalType) else t.elem
        word = type_words(elem)
        plural = "Tensors" if word == "Tensor" else f"{word}s"
        if isinstance(elem, BaseType) and elem.name in ("int", "SymInt"):
            return f"int or sequence of {plural}"
        return f"sequence of {plural}" + (" (None allowed)" if isinstance(t.elem, OptionalType) else "")
    return _WORDS.get(t.name, t.name) if isinstance(t, BaseType) else str(t)


def _shown(source: str) -> str:
    """A default's Python source as a reader sees it: `_dtypes.int64` -> `opgen.int64`."""
    if source.startswith("_dtypes."):
        return "opgen." + source.removeprefix("_dtypes.").rstrip("_")
    return source


def real_default(p: Param, overloads: list[NativeFunction]) -> str:
    """The default a parameter shows (Python source): the one its `def` line has, or, for a parameter that
    only some overloads take (`sum`'s `dim`), the default those overloads agree on, `None` where they all
    take None, else the not-given sentinel (the argument may be left out, and has no value that means that)."""
    if p.default is None:
        return REQUIRED
    if p.default != NOT_GIVEN:
        return p.default
    args = [a for f in overloads for a in f.func.arguments.flat_all if py_name(a.name) == p.name]
    defaults = {python_default(a) for a in args}
    if len(defaults) == 1 and None not in defaults:
        return defaults.pop()  # type: ignore[return-value]
    if args and all(a.type.is_nullable() for a in args):
        return "None"
    return NOT_GIVEN


def param_spec(binding: Binding, overloads: list[NativeFunction], *, method: bool = False) -> str:
    """The shown signature of a binding, as the Python source of a `runtime.signatures.ParamSpec`."""
    items = []
    for i, p in enumerate(binding.params):
        name = "self" if method and i == 0 else p.name
        items.append(f"({literal(name)}, {p.kwonly}, {real_default(p, overloads)})")
    return "(" + "".join(f"{item}, " for item in items) + ")"


def needs_shown_signature(binding: Binding) -> bool:
    """Whether `inspect` would show a sentinel where the parameter has a real default."""
    return any(p.default == NOT_GIVEN for p in binding.params)


@dataclass(frozen=True)
class DocContext:
    """What a docstring needs to know beyond the binding: the ops by name, and how each is differentiated."""

    by_name: dict[str, list[NativeFunction]]
    autograd: Callable[[NativeFunction], str]   # 'yes ...' / 'no ...' for one functional or in-place op


def _signature_line(binding: Binding, overloads: list[NativeFunction], method: bool) -> str:
    parts: list[str] = []
    star = False
    for i, p in enumerate(binding.params):
        if p.kwonly and not star:
            parts.append("*")
            star = True
        name = "self" if method and i == 0 else p.name
        if i == 0 and binding.tensor_varargs and not method:  # Note [Tensors as varargs] (api_python.py)
            parts.append(f"*{name}")
            star = True
            continue
        default = real_default(p, overloads)
        parts.append(name if default in (REQUIRED, NOT_GIVEN) else f"{name}={_shown(default)}")
    prefix = "Tensor." if method else ""
    if any(real_default(p, overloads) == NOT_GIVEN for p in binding.params):
        # no one line says which arguments go together (`max(input)`, `max(input, dim, keepdim=False)`):
        # one line per overload, as PyTorch documents such functions
        return "\n".join(_overload_line(prefix + binding.name, f, method)
                         for f in overloads if f.kind != SchemaKind.out)
    return f"{prefix}{binding.name}({', '.join(parts)}) -> {_returns(overloads)}"


def _overload_line(name: str, f: NativeFunction, method: bool) -> str:
    args = f.func.arguments
    parts: list[str] = []
    for i, a in enumerate(args.flat_all):
        if a in args.out:
            continue
        if a in args.kwarg_only and "*" not in parts:
            parts.append("*")
        pname = "self" if method and i == 0 else py_name(a.name)
        default = python_default(a)
        parts.append(pname if default is None else f"{pname}={_shown(default)}")
    return f"{name}({', '.join(parts)}) -> {_returns([f])}"


def _returns(overloads: list[NativeFunction]) -> str:
    shown: list[str] = []
    for f in overloads:
        rets = f.func.returns
        if not rets:
            text = "None"
        elif len(rets) == 1:
            text = "list of Tensors" if rets[0].type.is_list() else str(rets[0].type)
        else:
            text = "(" + ", ".join(f"{r.type} {r.name}" if r.name else str(r.type) for r in rets) + ")"
        if text not in shown:
            shown.append(text)
    return " or ".join(shown)


def _arguments(binding: Binding, overloads: list[NativeFunction], method: bool) -> list[str]:
    lines = []
    for i, p in enumerate(binding.params):
        args = [(f, a) for f in overloads for a in f.func.arguments.flat_all if py_name(a.name) == p.name]
        words: list[str] = []
        for _, a in args:
            w = type_words(a.type)
            if w not in words:
                words.append(w)
        name = "self" if method and i == 0 else p.name
        if p.name == "out":
            lines.append(f"    {name} (Tensor, optional): the tensor to write the result into (the out= form)")
            continue
        default = real_default(p, overloads)
        what = " or ".join(words) or "any"
        if default == NOT_GIVEN:
            takers = ", ".join(sorted({f.name for f, _ in args}))
            what += f"; may be left out: only {takers} take{'s' if len(args) == 1 else ''} it"
        elif default != REQUIRED:
            what += f", default {_shown(default)}"
        if len(args) < len(overloads) and default != NOT_GIVEN:
            what += f"; taken by {', '.join(sorted({f.name for f, _ in args}))}"
        lines.append(f"    {name} ({what})")
    return lines


def _forms(name: str, overloads: list[NativeFunction], ctx: DocContext) -> str:
    forms = []
    base = name.removesuffix("_")
    for n in (base, base + "_"):
        fs = [f for f in ctx.by_name.get(n, ()) if f.variants]
        variants = {v for f in fs for v in f.variants}
        where = [w for v, w in ((Variant.function, f"opgen.{n}"), (Variant.method, f"Tensor.{n}")) if v in variants]
        if where:
            kind = "in-place" if n.endswith("_") and n != base else "functional"
            forms.append(f"{kind}: {' and '.join(where)}")
    if any(f.kind == SchemaKind.out for f in ctx.by_name.get(base, ())):
        forms.append(f"out=: opgen.{base}(..., out=t)")
    return "; ".join(forms)


def _differentiable(overloads: list[NativeFunction], ctx: DocContext) -> str:
    answers: dict[str, list[str]] = {}
    for f in overloads:
        if f.kind != SchemaKind.out:
            answers.setdefault(ctx.autograd(f), []).append(f.name)
    if any(f.kind == SchemaKind.out for f in overloads):
        out_note = " (out= calls are not recorded for autograd)"
    else:
        out_note = ""
    if not answers:
        return "no (out= calls are not recorded for autograd)"
    if len(answers) == 1:
        return next(iter(answers)) + out_note
    return "; ".join(f"{', '.join(names)}: {a}" for a, names in answers.items()) + out_note


def docstring(binding: Binding, overloads: list[NativeFunction], ctx: DocContext, *, method: bool = False) -> str:
    """The docstring of an op function (or, with `method`, of the Tensor method of the same name)."""
    lines = [_signature_line(binding, overloads, method), ""]
    docs = _unique(f.root.doc.strip() for f in overloads if f.root.doc.strip())
    if docs:
        lines += [*docs, ""]
    lines += ["Arguments:", *_arguments(binding, overloads, method), ""]
    forms = _forms(binding.name, overloads, ctx)
    if forms:
        lines.append(f"Forms: {forms}")
    lines.append(f"Differentiable: {_differentiable(overloads, ctx)}")
    lines += ["", "Schemas (native_functions.yaml):", *(f"    {s}" for s in binding.overloads)]
    return "\n".join(lines)


def _unique(items: Iterable[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out
