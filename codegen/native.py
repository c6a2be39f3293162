"""native_functions.yaml: the operator entries, loaded and validated.

Note [Derived in-place and out forms]
A pointwise op is written once, as its functional schema. For each such op (whose first argument
is `Tensor self`) the loader derives two more operators that share its kernel spec, as PyTorch's
structured kernels share one kernel between the three forms:
  - the in-place form `add_.Tensor(Tensor(a!) self, ...) -> Tensor(a!)`, a Tensor method;
  - the out form `add.out(..., *, Tensor(a!) out) -> Tensor(a!)`, reached through `out=`.
They are real entries of the model (listed by `opgen list`, registered in the dispatcher) that
remember which entry they came from (`derived_from`).
"""

from __future__ import annotations

import keyword
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from codegen.errors import Diagnostic, LoadError, Location, OpgenError, SchemaParseError, did_you_mean
from codegen.kernel_spec import PointwiseSpec, SpecError
from codegen.kernel_targets import check_kernel
from codegen.literals import SYMBOL_DEFAULTS
from codegen.model import Argument, FunctionSchema, SchemaKind, Symbol
from codegen.names import check_argument_names, check_op_name
from codegen.schema_parser import default_value, parse_schema
from codegen.yaml_lines import LocatedMap, load_entries, read_source
from runtime.vocabulary import DTYPE_GROUPS, POINTWISE_KEYS, VARIANTS, YAML_DISPATCH_KEYS, PromoteKind, Variant

# Dispatch keys an entry may name, in priority order (highest first); the last two are alias keys.
DISPATCH_KEYS = YAML_DISPATCH_KEYS

# Keys an entry of native_functions.yaml may have.
ENTRY_KEYS = {
    "func": "the function schema (required)",
    "variants": "'function', 'method' or 'function, method' (default: function)",
    "dispatch": "a mapping from dispatch keys to kernel functions named by module path",
    "pointwise": "a pointwise expression over the arguments (generates CPU and CUDA kernels)",
    "promote": f"how a pointwise op finds its output dtype: {', '.join(PromoteKind)}",
    "dtypes": f"dtypes a pointwise op accepts: {', '.join(DTYPE_GROUPS)}, or a list",
    "promote_scalars": "scalar arguments that take part in type promotion as wrapped numbers: [other]",
    "zero_dim": "tensor arguments that must be 0-dimensional (a value tensor standing for a scalar): [value]",
    "same_dtype": "tensor arguments that must have the first tensor's dtype: [end, weight unless 0-d]",
    "doc": "text shown by 'opgen show' and in the docstring of the op (help(G.op))",
    "device_check": "NoCheck: the op takes tensors on different devices (copies, CPU index tensors for CUDA)",
}

# The type each key's value must have (after YAML parsing), and how to say it.
ENTRY_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "func": ((str,), "a schema string"),
    "variants": ((str,), "a string like 'function, method'"),
    "dispatch": ((dict,), "a mapping like 'CPU: module.function'"),
    "pointwise": ((str,), "an expression string"),
    "promote": ((str,), f"one of {', '.join(PromoteKind)}"),
    "dtypes": ((str, list), "a dtype group or a list of dtypes"),
    "promote_scalars": ((list,), "a list of scalar argument names"),
    "zero_dim": ((list,), "a list of tensor argument names"),
    "same_dtype": ((list,), "a list of tensor argument names"),
    "doc": ((str,), "a one-line string"),
    "device_check": ((str,), "Check or NoCheck"),
}

# Operator names become Python names and file names (cuda/pointwise/<name>.cu): ASCII identifiers, bounded.
MAX_NAME_LENGTH = 100

# Scalar-like argument types a pointwise expression may use.
_POINTWISE_SCALARS = {"Scalar", "int", "float", "bool", "Scalar?", "float?", "int?"}


@dataclass(frozen=True, eq=False)
class NativeFunction:
    """One operator: its schema and how it is computed."""

    func: FunctionSchema
    loc: Location
    variants: frozenset[Variant]
    dispatch: Mapping[str, str]           # dispatch key -> "module.path.function"
    pointwise: PointwiseSpec | None = None
    doc: str = ""
    derived_from: NativeFunction | None = field(default=None, repr=False)
    mixed_devices: bool = False           # `device_check: NoCheck`
    # the entry's forms, set once by the loader (load_native_functions) when they all exist
    group: OpGroup = field(init=False, repr=False)
    @property
    def name(self) -> str:
        """The operator's full name with overload, e.g. `add.Tensor`."""
        return str(self.func.name)

    @property
    def kind(self) -> SchemaKind:
        return self.func.kind()

    @property
    def root(self) -> NativeFunction:
        """The entry written in YAML that this one comes from (itself if not derived)."""
        return self.derived_from.root if self.derived_from is not None else self

    def kernel_keys(self) -> tuple[str, ...]:
        """Dispatch keys with a kernel, pointwise backends included, in priority order."""
        keys = set(self.dispatch)
        if self.pointwise is not None:
            keys |= set(POINTWISE_KEYS)
        return tuple(k for k in DISPATCH_KEYS if k in keys)

    @property
    def has_autograd_kernel(self) -> bool:
        """Whether the generator writes this op an Autograd kernel (generated/_autograd.py): every op but
        the CompositeImplicitAutograd ones (autograd comes from the ops they call) and those that name
        their own Autograd kernel."""
        return "CompositeImplicitAutograd" not in self.root.dispatch and "Autograd" not in self.dispatch


@dataclass
class _Collector:
    """Gathers every problem of a file so that all are reported together."""

    file: str
    problems: list[Diagnostic] = field(default_factory=list)

    def add(self, line: int, message: str) -> None:
        self.problems.append(Diagnostic(Location(self.file, line), message))

    def raise_if_any(self) -> None:
        if self.problems:
            raise LoadError(self.problems)


def load_native_functions(path: Path, *, root: Path | None = None, text: str | None = None,
                          file: str | None = None) -> list[NativeFunction]:
    """Load and validate native_functions.yaml; kernels named in `dispatch` are looked up under `root`."""
    file = file or path.name
    text = read_source(path, file) if text is None else text
    root = root if root is not None else path.parent
    problems = _Collector(file)
    functions: list[NativeFunction] = []
    seen: dict[str, int] = {}
    for entry in load_entries(text, file):
        try:
            f = _load_entry(entry, file, root)
        except (OpgenError, SpecError) as e:
            problems.add(_error_line(entry, e), str(e) if not isinstance(e, SchemaParseError) else _schema_msg(e))
            continue
        try:
            group = _derive_forms(f)
            for g in group:
                check_op_name(g.func, Variant.method in g.variants, Variant.function in g.root.variants)
        except OpgenError as e:
            problems.add(_error_line(entry, e), str(e) if not isinstance(e, SchemaParseError) else _schema_msg(e))
            continue
        for g in group:
            object.__setattr__(g, "group", group)  # the forms refer to their root: it cannot be an argument
        for g in group:
            if g.name in seen:
                problems.add(entry.line, f"operator '{g.name}' is defined twice (first on line {seen[g.name]})")
                continue
            seen[g.name] = entry.line
            functions.append(g)
    problems.raise_if_any()
    return functions


def _schema_msg(e: SchemaParseError) -> str:
    return f"bad schema: {e}"


def _error_line(entry: LocatedMap, e: Exception) -> int:
    key = getattr(e, "key", None)
    return entry.key_lines.get(key, entry.line) if key else entry.key_lines.get("func", entry.line)


class _EntryError(OpgenError):
    """A problem with one key of an entry (the line of that key is reported)."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(message)


def _load_entry(entry: LocatedMap, file: str, root: Path) -> NativeFunction:
    unknown = sorted(set(entry) - set(ENTRY_KEYS))
    if unknown:
        known = ", ".join(ENTRY_KEYS)
        hint = did_you_mean(unknown[0], ENTRY_KEYS) or f"; known keys: {known}"
        raise _EntryError(unknown[0], f"unknown key '{unknown[0]}'{hint}")
    if "func" not in entry:
        raise OpgenError("entry has no 'func: <schema>' string")
    for key, value in entry.items():
        types, what = ENTRY_TYPES[key]
        if not isinstance(value, types) or (isinstance(value, list) and not all(isinstance(v, str) for v in value)):
            raise _EntryError(key, f"'{key}' must be {what}, not {_describe(value)}")
    func = parse_schema(entry["func"])
    _check_names(func)
    check_argument_names(func, pointwise="pointwise" in entry)
    _check_defaults(func)
    variants = _parse_variants(entry.get("variants", "function"), func)
    dispatch = _parse_dispatch(entry.get("dispatch"), root)
    pointwise = None
    if "pointwise" in entry:
        pointwise = _parse_pointwise(entry, func)
        clash = sorted(set(dispatch) & {"CPU", "CUDA", "CompositeExplicitAutograd", "CompositeImplicitAutograd"})
        if clash:
            raise _EntryError("dispatch", f"'pointwise' already gives the CPU and CUDA kernels; remove "
                                          f"dispatch key {clash[0]}")
    else:
        for key in ("promote", "dtypes", "promote_scalars", "zero_dim", "same_dtype"):
            if key in entry:
                raise _EntryError(key, f"'{key}' only applies to an entry with 'pointwise:'")
        if not dispatch:
            raise OpgenError(f"'{func.name}' has no kernel: add 'pointwise: <expression>' or "
                             f"'dispatch: {{CPU: module.function}}'")
    doc = entry.get("doc", "")
    if not doc.isprintable():  # no line break, control or format character: it is printed by `opgen show`
        raise _EntryError("doc", "'doc' must be one line of printable text")
    loc = Location(file, entry.line)
    mixed_devices = _parse_device_check(entry.get("device_check", "Check"))
    return NativeFunction(func, loc, variants, dispatch, pointwise, doc, mixed_devices=mixed_devices)


def _parse_device_check(value: object) -> bool:
    if value not in ("Check", "NoCheck"):
        raise _EntryError("device_check", f"device_check must be Check (the default) or NoCheck, not {value!r}")
    return value == "NoCheck"


def _describe(value: object) -> str:
    if isinstance(value, list):
        bad = next((v for v in value if not isinstance(v, str)), None)
        return f"a list holding {_describe(bad)}" if value and bad is not None else "a list"
    return {dict: "a mapping", type(None): "empty (null)", bool: "a bool", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)


def _check_names(func: FunctionSchema) -> None:
    base = func.name.base
    if not (base.isidentifier() and base.isascii()) or (keyword.iskeyword(base) and not base.startswith("__")):
        raise OpgenError(f"operator name '{base}' is not a valid Python identifier (ASCII letters, digits, _)")
    if len(str(func.name)) > MAX_NAME_LENGTH:
        raise OpgenError(f"operator name '{str(func.name)[:40]}...' is {len(str(func.name))} characters long; "
                         f"the limit is {MAX_NAME_LENGTH} (names become file names)")


# Note [Defaults that mean what they say]
# A default is printed into the generated Python signature (codegen/literals.py python_value), so it must be
# a value of its argument's type there: a quoted string only on a `str` argument, an integer within int64
# (the runtime's widest integer), inf/-inf/nan/1e400 as the float they are (`float('inf')`), and a bare
# name only when it is a known symbol (codegen/literals.py SYMBOL_DEFAULTS: `contiguous_format`, `Mean`).
_INT64 = range(-(2**63), 2**63)


def _check_defaults(func: FunctionSchema) -> None:
    for a in func.arguments.flat_all:
        if a.default is not None:
            _check_default(a, default_value(a))


def _check_default(a: Argument, value: object) -> None:
    base = a.type.base_name()
    for v in value if isinstance(value, list) else [value]:
        if isinstance(v, Symbol) and v not in SYMBOL_DEFAULTS:
            raise OpgenError(f"default '{v}' of argument '{a.name}' is not a number, a string or one of the "
                             f"known symbols ({', '.join(SYMBOL_DEFAULTS)})")
        if isinstance(v, str) and not isinstance(v, Symbol) and base != "str":
            raise OpgenError(f"argument '{a.name}' of type {a.type} has a string default; only str arguments may")
        if isinstance(v, int) and not isinstance(v, bool) and v not in _INT64:
            raise OpgenError(f"default {v} of argument '{a.name}' does not fit in int64")


def _parse_variants(value: object, func: FunctionSchema) -> frozenset[Variant]:
    if not isinstance(value, str):
        raise _EntryError("variants", "variants must be a string like 'function, method'")
    out = set()
    for word in (w.strip() for w in value.split(",")):
        try:
            out.add(Variant(word))
        except ValueError:
            raise _EntryError("variants", f"unknown variant '{word}'; expected {' or '.join(VARIANTS)}") from None
    if Variant.method in out and func.arguments.self_arg is None:
        raise _EntryError("variants", "a method variant needs an argument named 'self'")
    return frozenset(out)


def _parse_dispatch(value: object, root: Path) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _EntryError("dispatch", "dispatch must be a mapping like 'CPU, CUDA: module.function'")
    out: dict[str, str] = {}
    for keys, kernel in value.items():
        if not isinstance(kernel, str):
            raise _EntryError("dispatch", f"kernel for '{keys}' must be a module path string")
        for key in (k.strip() for k in str(keys).split(",")):
            if key not in DISPATCH_KEYS:
                raise _EntryError("dispatch", f"unknown dispatch key '{key}'; known keys: "
                                              f"{', '.join(DISPATCH_KEYS)}")
            try:
                check_kernel(kernel, root)
            except OpgenError as e:
                raise _EntryError("dispatch", str(e)) from None
            out[key] = kernel
    if "CompositeImplicitAutograd" in out and len(out) > 1:
        raise _EntryError("dispatch", "a CompositeImplicitAutograd kernel serves every key; give no other key")
    return dict(sorted(out.items(), key=lambda kv: DISPATCH_KEYS.index(kv[0])))


def _parse_pointwise(entry: LocatedMap, func: FunctionSchema) -> PointwiseSpec:
    if func.kind() != SchemaKind.functional:
        raise _EntryError("pointwise", "write 'pointwise:' on the functional schema; the in-place and "
                                       "out forms are derived from it")
    tensors, scalars = [], []
    for arg in func.arguments.flat_non_out:
        if str(arg.type) == "Tensor":
            tensors.append(arg.name)
        elif str(arg.type) in _POINTWISE_SCALARS:
            scalars.append(arg.name)
        else:
            raise _EntryError("pointwise", f"argument '{arg.name}' of type {arg.type} cannot be used in a "
                                           "pointwise op (Tensor, Scalar, int, float and bool can)")
    if len(func.returns) != 1 or str(func.returns[0].type) != "Tensor":
        raise _EntryError("pointwise", "a pointwise op returns one Tensor")
    promote_scalars = entry.get("promote_scalars", [])
    if not isinstance(promote_scalars, list) or not all(isinstance(s, str) for s in promote_scalars):
        raise _EntryError("promote_scalars", "promote_scalars must be a list of scalar argument names: [other]")
    zero_dim = entry.get("zero_dim", [])
    if not all(isinstance(t, str) for t in zero_dim) or not set(zero_dim) <= set(tensors):
        raise _EntryError("zero_dim", f"zero_dim must list tensor arguments of the op ({', '.join(tensors)})")
    same_dtype = [str(t).removesuffix(" unless 0-d") for t in entry.get("same_dtype", [])]
    if not set(same_dtype) <= set(tensors[1:]):
        raise _EntryError("same_dtype", "same_dtype must list tensor arguments of the op after the first "
                                        f"({', '.join(tensors[1:])}), each optionally followed by ' unless 0-d'")
    same_dtype_0d = tuple(str(t) in same_dtype for t in entry.get("same_dtype", []))  # True: no suffix
    try:
        return PointwiseSpec.parse(entry["pointwise"], tensors=tuple(tensors), scalars=tuple(scalars),
                                   promote=entry.get("promote", "common"), dtypes=entry.get("dtypes", "all"),
                                   promote_scalars=tuple(promote_scalars), zero_dim=tuple(zero_dim),
                                   same_dtype=tuple(zip(same_dtype, same_dtype_0d, strict=True)))
    except SpecError as e:
        message = str(e)
        key = ("promote_scalars" if "promote_scalars" in message else "promote" if "promote" in message
               else "dtypes" if "dtype" in message else "pointwise")
        raise _EntryError(key, str(e)) from None


@dataclass(frozen=True, eq=False)
class OpGroup:
    """A YAML entry and the forms the loader derives from it (Note [Derived in-place and out forms]):
    `add.Tensor`, `add_.Tensor`, `add.out`. Computed once, by the loader; every member's `group`."""

    functional: NativeFunction
    inplace: NativeFunction | None = None
    out: NativeFunction | None = None

    def __iter__(self) -> Iterator[NativeFunction]:
        """The members in YAML order: the entry, then its derived in-place and out forms."""
        return iter([g for g in (self.functional, self.inplace, self.out) if g is not None])


def _derive_forms(f: NativeFunction) -> OpGroup:
    """`f` with the in-place and out forms of a pointwise op (Note [Derived in-place and out forms])."""
    if f.pointwise is None:
        return OpGroup(f)
    schema = f.func
    inplace = None
    if schema.has_inplace_form() and f.pointwise.promote != PromoteKind.bool:
        inplace = NativeFunction(schema.inplace_form(), f.loc, frozenset({Variant.method}),
                                 {}, f.pointwise, f.doc, derived_from=f)
    out = NativeFunction(schema.out_form(), f.loc, frozenset(), {}, f.pointwise, f.doc, derived_from=f)
    return OpGroup(f, inplace, out)
