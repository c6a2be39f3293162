"""The function-schema model: PyTorch's schema language as frozen dataclasses.

Every class has a `__str__` that gives back the parsed text exactly, so a schema read from YAML can be
printed into generated code unchanged. The parser (codegen/schema_parser.py: `parse_schema`, `parse_type`, ...,
which imports this module; this module imports nothing of it) is a small hand-written scanner (no regular
expressions); it accepts only the canonical spelling (", " between items, " -> " before the returns), which is
what makes the round-trip exact. A malformed schema raises `SchemaParseError` whose column (from 1) points at
the offending character.

Note [Parse caches]: schemas repeat the same few type, annotation, default and return spellings thousands of
times, so each is parsed once and kept in a module-level dict keyed by its text. The cached values are
immutable, so sharing them is safe; `clear_caches()` empties them (the benchmark uses it to time cold parses).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from codegen.errors import SchemaParseError

__all__ = [
    "BASE_TYPE_NAMES",
    "Annotation",
    "Argument",
    "Arguments",
    "BaseType",
    "FunctionSchema",
    "ListType",
    "OperatorName",
    "OptionalType",
    "Return",
    "SchemaKind",
    "Symbol",
    "Type",
    "annotated",
    "bad_name_char",
    "is_name",
    "schema_error",
]

# Every base type of PyTorch's schema language (torchgen's BaseTy), which covers native_functions.yaml.
BASE_TYPE_NAMES: frozenset[str] = frozenset(
    {
        "Tensor", "int", "float", "bool", "str", "Scalar", "ScalarType", "Generator", "Layout", "Device",
        "DeviceIndex", "MemoryFormat", "Dimname", "DimVector", "Storage", "Stream", "SymInt", "SymFloat",
        "SymBool", "QScheme", "ConstQuantizerPtr", "GraphModule",
    }
)  # fmt: skip



def schema_error(s: str, pos: int, message: str) -> SchemaParseError:
    return SchemaParseError(s, pos + 1, message)


def is_name(text: str) -> bool:
    return text.isidentifier() and text.isascii()


def bad_name_char(text: str) -> int:
    """Index of the first character that keeps `text` from being an ASCII identifier (len if empty)."""
    for i, c in enumerate(text):
        if not (c == "_" or (c.isascii() and (c.isalpha() or (i and c.isdigit())))):
            return i
    return len(text)


class SchemaKind(Enum):
    """What a schema does to its arguments (torchgen's meaning)."""

    functional = "functional"  # writes nothing
    inplace = "inplace"  # `add_`: writes `self`
    out = "out"  # writes keyword-only out arguments
    mutable = "mutable"  # writes some positional argument, but is neither of the above


@dataclass(frozen=True, slots=True)
class OperatorName:
    """`add_.Tensor`. Invariant: `str(self) == name + ("." + overload if overload else "")`.

    `base` drops the in-place `_` of ordinary names (`add_` -> `add`) but is the whole dunder (`__iand__`):
    an `__iXX__` dunder has `inplace=True` and keeps its `i`; `functional_name` gives `__and__` for it.
    """

    base: str
    inplace: bool
    dunder: bool
    overload: str

    @property
    def name(self) -> str:
        """The name without the overload: `add_`, `__iand__`."""
        return self.base + "_" if self.inplace and not self.dunder else self.base

    @property
    def functional_name(self) -> str:
        """The name of the functional counterpart: `add` for `add_`, `__and__` for `__iand__`."""
        if self.inplace and self.dunder:
            return "__" + self.base[3:]
        return self.base

    @property
    def unambiguous(self) -> str:
        return str(self)

    def __str__(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name


class Type:
    """A schema type: `BaseType`, `OptionalType` (`T?`) or `ListType` (`T[]`, `T[2]`)."""

    __slots__ = ()

    def base_name(self) -> str:
        """The innermost base type name: `Tensor` for `Tensor?[]`."""
        t: Type = self
        while not isinstance(t, BaseType):
            t = t.elem  # type: ignore[attr-defined]
        return t.name

    def is_tensor(self) -> bool:
        """Exactly `Tensor`."""
        return isinstance(self, BaseType) and self.name == "Tensor"

    def is_tensor_like(self) -> bool:
        """`Tensor`, `Tensor?`, `Tensor[]`, `Tensor?[]` (any nesting of Tensor)."""
        return self.base_name() == "Tensor"

    def is_list(self) -> bool:
        """A `ListType` at the top (`int[2]?` is optional, not a list)."""
        return isinstance(self, ListType)

    def is_optional(self) -> bool:
        return isinstance(self, OptionalType)

    def is_nullable(self) -> bool:
        """Can hold None: an optional, or a list whose elements can (`Tensor?[]`)."""
        if isinstance(self, OptionalType):
            return True
        if isinstance(self, ListType):
            return self.elem.is_nullable()
        return False


@dataclass(frozen=True, slots=True)
class BaseType(Type):
    name: str  # one of BASE_TYPE_NAMES

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class OptionalType(Type):
    elem: Type

    def __str__(self) -> str:
        return f"{self.elem}?"


@dataclass(frozen=True, slots=True)
class ListType(Type):
    elem: Type
    size: int | None  # `int[2]` has size 2; `int[]` has None

    def __str__(self) -> str:
        return f"{self.elem}[{'' if self.size is None else self.size}]"


@dataclass(frozen=True, slots=True)
class Annotation:
    """An alias annotation: `a`, `a!` (written), `a|b`, `a -> *` (aliases after the call)."""

    alias_set: tuple[str, ...]
    is_write: bool
    alias_set_after: tuple[str, ...]

    def __str__(self) -> str:
        text = "|".join(self.alias_set) + ("!" if self.is_write else "")
        if self.alias_set_after:
            text += " -> " + "|".join(self.alias_set_after)
        return text


def annotated(t: Type, annotation: Annotation | None) -> str:
    """The type's text with the annotation right after the base name: `Tensor(a!)[]`."""
    text = str(t)
    if annotation is None:
        return text
    base = t.base_name()
    return f"{base}({annotation}){text[len(base) :]}"


class Symbol(str):
    """An identifier used as a default value (`contiguous_format`, `long`, `Mean`), not a string literal."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Symbol({str.__repr__(self)})"


@dataclass(frozen=True, slots=True)
class Argument:
    """`Tensor(a!) self`, `int[1] padding=0`. `default` is the source text, so printing is exact."""

    name: str
    type: Type
    default: str | None
    annotation: Annotation | None

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    def __str__(self) -> str:
        text = f"{annotated(self.type, self.annotation)} {self.name}"
        return text if self.default is None else f"{text}={self.default}"


@dataclass(frozen=True, slots=True)
class Return:
    """`Tensor`, `Tensor(a!) values`."""

    name: str | None
    type: Type
    annotation: Annotation | None

    def __str__(self) -> str:
        text = annotated(self.type, self.annotation)
        return text if self.name is None else f"{text} {self.name}"


@dataclass(frozen=True, slots=True)
class Arguments:
    """An argument list. Invariant: out arguments are keyword-only, written (`!`) and come last."""

    positional: tuple[Argument, ...]
    kwarg_only: tuple[Argument, ...]  # after `*`, not written
    out: tuple[Argument, ...]  # after `*`, written: torchgen's rule for out arguments

    @property
    def self_arg(self) -> Argument | None:
        for a in self.positional:
            if a.name == "self":
                return a
        return None

    @property
    def flat_all(self) -> tuple[Argument, ...]:
        return self.positional + self.kwarg_only + self.out

    @property
    def flat_non_out(self) -> tuple[Argument, ...]:
        return self.positional + self.kwarg_only

    @property
    def tensor_args(self) -> tuple[Argument, ...]:
        """Tensor-like arguments that are not out arguments."""
        return tuple(a for a in self.positional + self.kwarg_only if a.type.is_tensor_like())

    def __str__(self) -> str:
        parts = [str(a) for a in self.positional]
        if self.kwarg_only or self.out:
            parts.append("*")
            parts.extend(str(a) for a in self.kwarg_only + self.out)
        return ", ".join(parts)


@dataclass(frozen=True, slots=True)
class FunctionSchema:
    """`add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`."""

    name: OperatorName
    arguments: Arguments
    returns: tuple[Return, ...]

    def kind(self) -> SchemaKind:
        if self.name.inplace:
            return SchemaKind.inplace
        if self.arguments.out:
            return SchemaKind.out
        if any(a.is_write for a in self.arguments.flat_non_out):
            return SchemaKind.mutable
        return SchemaKind.functional

    def is_out_fn(self) -> bool:
        return bool(self.arguments.out)

    @property
    def self_arg(self) -> Argument | None:
        return self.arguments.self_arg

    @property
    def returns_tuple(self) -> bool:
        """More than one return."""
        return len(self.returns) > 1

    def tensor_arguments(self) -> tuple[Argument, ...]:
        """Every tensor-like argument, out arguments included (what dispatch looks at)."""
        return tuple(a for a in self.arguments.flat_all if a.type.is_tensor_like())

    def differentiable_arguments(self) -> tuple[Argument, ...]:
        """Tensor-like arguments that are not out arguments."""
        return self.arguments.tensor_args

    def __str__(self) -> str:
        rets = self.returns
        if len(rets) == 1:
            returns = str(rets[0])
        else:
            returns = "(" + ", ".join(str(r) for r in rets) + ")"
        return f"{self.name}({self.arguments}) -> {returns}"

    # -- derived forms (Note [Derived in-place and out forms] in codegen/native.py) --------------------
    def has_inplace_form(self) -> bool:
        """A functional schema whose first argument is a plain `Tensor self`, as an in-place form needs."""
        first = self.arguments.positional[0] if self.arguments.positional else None
        return (self.kind() == SchemaKind.functional and first is not None and first.name == "self"
                and first.type == TENSOR and first.annotation is None and first.default is None)

    def inplace_form(self) -> FunctionSchema:
        """`add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)`: the in-place form of
        a schema that `has_inplace_form` (`self` written and returned; the other arguments as they are)."""
        if not self.has_inplace_form():
            raise ValueError(f"{self}: only a functional schema whose first argument is `Tensor self` has an "
                             "in-place form")
        name = self.name
        base = "__i" + name.base[2:] if name.dunder else name.base
        args = self.arguments
        first = Argument("self", TENSOR, None, WRITTEN)
        return FunctionSchema(OperatorName(base, True, name.dunder, name.overload),
                              Arguments((first, *args.positional[1:]), args.kwarg_only, ()),
                              (Return(None, TENSOR, WRITTEN),))

    def out_form(self) -> FunctionSchema:
        """`add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)`: the out= form
        of a functional schema, overload `out` for the unnamed and the `Tensor` overload, `<overload>_out` else."""
        if self.kind() != SchemaKind.functional:
            raise ValueError(f"{self}: only a functional schema has an out= form")
        name = self.name
        overload = "out" if name.overload in ("", "Tensor") else f"{name.overload}_out"
        args = self.arguments
        return FunctionSchema(OperatorName(name.base, False, name.dunder, overload),
                              Arguments(args.positional, args.kwarg_only, (Argument("out", TENSOR, None, WRITTEN),)),
                              (Return(None, TENSOR, WRITTEN),))


TENSOR = BaseType("Tensor")
WRITTEN = Annotation(("a",), True, ())  # `(a!)`: the one alias set a derived form writes and returns
