"""The function-schema model: round-trip, structure, errors, hashability."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
from pathlib import Path

import pytest

from codegen.errors import SchemaParseError
from codegen.model import (
    BASE_TYPE_NAMES,
    Annotation,
    Argument,
    Arguments,
    BaseType,
    FunctionSchema,
    ListType,
    OperatorName,
    OptionalType,
    Return,
    SchemaKind,
    Symbol,
    Type,
)
from codegen.schema_parser import (
    clear_caches,
    default_value,
    parse_annotation,
    parse_argument,
    parse_arguments,
    parse_operator_name,
    parse_return,
    parse_schema,
    parse_type,
)

PARSERS = {FunctionSchema: parse_schema, OperatorName: parse_operator_name, Type: parse_type,
           Annotation: parse_annotation, Argument: parse_argument, Return: parse_return, Arguments: parse_arguments}

DATA = Path(__file__).resolve().parents[1] / "data"
CORPUS = (DATA / "schemas_hard.txt").read_text().splitlines()


def _torch_file() -> Path:
    """PyTorch's own native_functions.yaml: $OPGEN_TORCH_NATIVE_FUNCTIONS, else the copy that the oracle's
    torchgen package ships (found without importing torch)."""
    if os.environ.get("OPGEN_TORCH_NATIVE_FUNCTIONS"):
        return Path(os.environ["OPGEN_TORCH_NATIVE_FUNCTIONS"])
    spec = importlib.util.find_spec("torchgen")
    if spec is None or spec.origin is None:
        return Path("/nonexistent")
    return Path(spec.origin).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"


TORCH_FILE = _torch_file()


# Grammar features the corpus must contain (spelled as they appear in it).
FEATURES = (
    "Tensor(a -> *)",
    "Tensor(a!)[]",
    "Tensor(a)[]",
    "Tensor?[]",
    "int[1]?",
    "SymInt[]",
    "Generator?",
    "ScalarType?",
    "Layout?",
    "Device?",
    "MemoryFormat?",
    "Storage",
    "Stream",
    "=None",
    "=True",
    "=[]",
    "=[-2,-1]",
    "=-1",
    "=1e-05",
    '="mean"',
    "=contiguous_format",
    "=long",
    "int[1] padding=0",
    "-> ()",
    "-> (Tensor values, Tensor indices)",
    "-> (Tensor(a!) values, Tensor(b!) indices)",
    "-> Tensor[]",
    "\\",
    "__and__.",
)


def parse(s: str) -> FunctionSchema:
    return parse_schema(s)


# ---------------------------------------------------------------------------------------------------------
# Round-trip


@pytest.mark.parametrize("schema", CORPUS, ids=[f"line{i + 1}" for i in range(len(CORPUS))])
def test_corpus_round_trips(schema: str) -> None:
    assert str(parse(schema)) == schema


def test_corpus_round_trips_cold_cache() -> None:
    clear_caches()
    assert [str(parse(s)) for s in CORPUS] == CORPUS


def test_corpus_is_varied() -> None:
    assert len(CORPUS) >= 150
    assert len(set(CORPUS)) == len(CORPUS)
    schemas = [parse(s) for s in CORPUS]
    kinds = {s.kind() for s in schemas}
    assert kinds == set(SchemaKind)
    text = "\n".join(CORPUS)
    for feature in FEATURES:
        assert feature in text, feature
    assert any(len(s.arguments.out) > 1 for s in schemas)


@pytest.mark.skipif(not TORCH_FILE.is_file(), reason="PyTorch's native_functions.yaml not available")
def test_every_torch_schema_round_trips() -> None:
    yaml = pytest.importorskip("yaml")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    entries = yaml.load(TORCH_FILE.read_text(), Loader=loader)
    funcs = [e["func"] for e in entries]
    assert len(funcs) > 2500
    assert [s for s in funcs if str(parse(s)) != s] == []


@pytest.mark.parametrize(
    ("cls", "text"),
    [
        (Type, "Tensor"),
        (Type, "Tensor?[]"),
        (Type, "int[1]?"),
        (Type, "SymInt[]"),
        (Type, "int[]?[]"),
        (Annotation, "a"),
        (Annotation, "a!"),
        (Annotation, "a|b"),
        (Annotation, "a -> *"),
        (Annotation, "a! -> a|b"),
        (Argument, "Tensor(a!) self"),
        (Argument, "Tensor(a!)[] out"),
        (Argument, "int[1] padding=0"),
        (Argument, 'str reduction="mean"'),
        (Return, "Tensor(a!) values"),
        (Return, "Tensor(a)[]"),
        (Arguments, "Tensor self, *, Scalar alpha=1, Tensor(a!) out"),
        (Arguments, ""),
        (OperatorName, "add_.Tensor"),
        (OperatorName, "__iand__.Scalar"),
    ],
)
def test_parts_round_trip(cls: type, text: str) -> None:
    assert str(PARSERS[cls](text)) == text


# ---------------------------------------------------------------------------------------------------------
# Structure


@pytest.mark.parametrize(
    ("text", "base", "inplace", "dunder", "overload", "name", "functional"),
    [
        ("add", "add", False, False, "", "add", "add"),
        ("add_.Tensor", "add", True, False, "Tensor", "add_", "add"),
        ("_foreach_add_.List", "_foreach_add", True, False, "List", "_foreach_add_", "_foreach_add"),
        ("__and__.Tensor", "__and__", False, True, "Tensor", "__and__", "__and__"),
        ("__iand__.Scalar", "__iand__", True, True, "Scalar", "__iand__", "__and__"),
        ("__ilshift__", "__ilshift__", True, True, "", "__ilshift__", "__lshift__"),
        ("__index__", "__index__", False, True, "", "__index__", "__index__"),
        ("_", "_", False, False, "", "_", "_"),
    ],
)
def test_operator_name(
    text: str, base: str, inplace: bool, dunder: bool, overload: str, name: str, functional: str
) -> None:
    op = parse_operator_name(text)
    assert (op.base, op.inplace, op.dunder, op.overload) == (base, inplace, dunder, overload)
    assert op.name == name
    assert op.functional_name == functional
    assert op.unambiguous == str(op) == text


def test_types() -> None:
    assert parse_type("Tensor") == BaseType("Tensor")
    assert parse_type("int[1]?") == OptionalType(ListType(BaseType("int"), 1))
    assert parse_type("Tensor?[]") == ListType(OptionalType(BaseType("Tensor")), None)
    assert {"Tensor", "SymInt", "Storage", "Stream", "Dimname", "DeviceIndex", "QScheme"} <= BASE_TYPE_NAMES
    table = {
        # text: (is_tensor, is_tensor_like, is_list, is_optional, is_nullable)
        "Tensor": (True, True, False, False, False),
        "Tensor?": (False, True, False, True, True),
        "Tensor[]": (False, True, True, False, False),
        "Tensor?[]": (False, True, True, False, True),
        "int[2]": (False, False, True, False, False),
        "int[1]?": (False, False, False, True, True),
        "Scalar": (False, False, False, False, False),
    }
    for text, expected in table.items():
        t = parse_type(text)
        got = (t.is_tensor(), t.is_tensor_like(), t.is_list(), t.is_optional(), t.is_nullable())
        assert got == expected, text
    assert parse_type("int[1]?").elem.size == 1
    assert parse_type("SymInt[]").size is None


def test_annotations() -> None:
    assert parse_annotation("a!") == Annotation(("a",), True, ())
    assert parse_annotation("a -> *") == Annotation(("a",), False, ("*",))
    assert parse_annotation("a|b") == Annotation(("a", "b"), False, ())
    arg = parse_argument("Tensor(b!)[] out")
    assert arg.type == ListType(BaseType("Tensor"), None)
    assert arg.annotation == Annotation(("b",), True, ())
    assert arg.is_write


def test_add_out() -> None:
    s = parse("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    assert s.kind() is SchemaKind.out
    assert s.is_out_fn()
    assert s.name == OperatorName("add", False, False, "out")
    assert [a.name for a in s.arguments.positional] == ["self", "other"]
    assert [a.name for a in s.arguments.kwarg_only] == ["alpha"]
    assert [a.name for a in s.arguments.out] == ["out"]
    assert s.self_arg is s.arguments.positional[0]
    assert [a.name for a in s.arguments.flat_all] == ["self", "other", "alpha", "out"]
    assert [a.name for a in s.arguments.flat_non_out] == ["self", "other", "alpha"]
    assert [a.name for a in s.tensor_arguments()] == ["self", "other", "out"]
    assert [a.name for a in s.differentiable_arguments()] == ["self", "other"]
    assert s.returns == (Return(None, BaseType("Tensor"), Annotation(("a",), True, ())),)
    assert not s.returns_tuple


@pytest.mark.parametrize(
    ("schema", "kind"),
    [
        ("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", SchemaKind.functional),
        ("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", SchemaKind.inplace),
        ("__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", SchemaKind.inplace),
        ("__and__.Tensor(Tensor self, Tensor other) -> Tensor", SchemaKind.functional),
        ("abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", SchemaKind.out),
        (
            "_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, "
            "Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
            SchemaKind.mutable,
        ),
    ],
)
def test_kinds(schema: str, kind: SchemaKind) -> None:
    assert parse(schema).kind() is kind


def test_several_outs_and_named_returns() -> None:
    s = parse(
        "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) "
        "-> (Tensor(a!) values, Tensor(b!) indices)"
    )
    assert [a.name for a in s.arguments.out] == ["max", "max_values"]
    assert [a.annotation.alias_set for a in s.arguments.out] == [("a",), ("b",)]
    assert s.arguments.kwarg_only == ()
    assert [r.name for r in s.returns] == ["values", "indices"]
    assert s.returns_tuple
    assert parse("_assert_async(Tensor self) -> ()").returns == ()
    assert parse("cudnn_grid_sampler(Tensor self, Tensor grid) -> Tensor output").returns[0].name == "output"


def test_list_returns_and_views() -> None:
    s = parse("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]")
    assert s.self_arg.annotation == Annotation(("a",), False, ("*",))
    (ret,) = s.returns
    assert ret.type == ListType(BaseType("Tensor"), None)
    assert ret.annotation == Annotation(("a",), False, ())
    assert parse("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]").kind() is SchemaKind.functional


def test_no_self_and_keywords_as_names() -> None:
    s = parse("can_cast(ScalarType from_, ScalarType to) -> bool")
    assert s.self_arg is None
    assert s.tensor_arguments() == ()
    s = parse("_test(Tensor self, ScalarType from, ScalarType to) -> Tensor")
    assert [a.name for a in s.arguments.positional] == ["self", "from", "to"]


@pytest.mark.parametrize(
    ("arg", "value"),
    [
        ("Tensor? weight=None", None),
        ("bool keepdim=True", True),
        ("bool keepdim=False", False),
        ("int dim=-1", -1),
        ("int[1] padding=0", 0),
        ("float eps=1e-05", 1e-05),
        ("float p=0.3333333333333333", 0.3333333333333333),
        ("float a=-inf", float("-inf")),
        ("int[] dims=[]", []),
        ("int[2] dim=[-2,-1]", [-2, -1]),
        ("int[3] a=[1, 2, 3]", [1, 2, 3]),
        ('str[] c=["a","b,c"]', ["a", "b,c"]),
        ('str reduction="mean"', "mean"),
        ("str mode='reduced'", "reduced"),
        ('str s=""', ""),
        ('str quotes="\\"\'\\\\"', "\"'\\"),
        ("str quotes='\"\\'\\\\'", "\"'\\"),
        ("MemoryFormat memory_format=contiguous_format", Symbol("contiguous_format")),
        ("ScalarType dtype=long", Symbol("long")),
        ("int reduction=Mean", Symbol("Mean")),
        ("Tensor self", None),
    ],
)
def test_default_value(arg: str, value: object) -> None:
    a = parse_argument(arg)
    assert str(a) == arg
    got = default_value(a)
    assert got == value
    assert type(got) is type(value)


def test_symbol_is_distinct_from_string_default() -> None:
    assert isinstance(default_value(parse_argument("ScalarType dtype=long")), Symbol)
    assert not isinstance(default_value(parse_argument('str dtype="long"')), Symbol)
    assert repr(Symbol("long")) == "Symbol('long')"


# ---------------------------------------------------------------------------------------------------------
# Errors: the column points AT the offending character (from 1).

ERRORS = [
    ("add", 4, "expected '(' to open the argument list"),
    ("(Tensor self) -> Tensor", 1, "expected an operator name"),
    ("add.(Tensor self) -> Tensor", 5, "expected an overload name after '.'"),
    ("ad-d(Tensor self) -> Tensor", 3, "unexpected character '-' in operator name"),
    ("add.Ten sor(Tensor self) -> Tensor", 8, "unexpected character ' ' in overload name"),
    ("add(Tensr self) -> Tensor", 5, "unknown type 'Tensr'; did you mean 'Tensor'?"),
    ("add(Tensor self -> Tensor", 16, "expected ',' or ')' after argument 'self'"),
    ("add(Tensor self", 16, "expected ')' to close the argument list"),
    ("add(Tensor self, Tensor self) -> Tensor", 25, "duplicate argument name 'self'"),
    (
        "add(Tensor self, *, Tensor(a!) out=None) -> Tensor(a!)",
        35,
        "out argument 'out' cannot have a default",
    ),
    (
        "add(Tensor self, int a=1, int b) -> Tensor",
        27,
        "positional argument 'b' needs a default: it follows 'a'",
    ),
    ("add(Tensor self, *, *, int a) -> Tensor", 21, "'*' may appear only once"),
    ("add(Tensor self, *) -> Tensor", 19, "expected a keyword-only argument after '*'"),
    (
        "add(Tensor self, *, Tensor(a!) out, int k) -> Tensor",
        37,
        "keyword-only argument 'k' follows the out arguments",
    ),
    ("add(Tensor self,Tensor other) -> Tensor", 17, "expected a space after ','"),
    ("add(Tensor self) Tensor", 17, "expected ' -> ' after the argument list"),
    ("add(Tensor self) -> ", 21, "expected a return type"),
    ("add(Tensor self) -> (Tensor, Tensor", 36, "expected ')' to close the return list"),
    ("add(Tensor self) -> (Tensor)", 21, "a single return is written without parentheses"),
    ("add(Tensor self) -> Tensor extra stuff", 33, "unexpected text after the returns"),
    ("add(Tensor(a! self) -> Tensor", 14, "expected ')' to close the alias annotation"),
    ("add(Tensor(a self", 18, "expected ')' to close the alias annotation"),
    ("add(int(a) self) -> Tensor", 8, "alias annotation on non-tensor type 'int'"),
    ("add(Tensor?(a!) self) -> Tensor", 11, "unexpected character '?' before the alias annotation"),
    ("add(int[x] size) -> Tensor", 9, "invalid list size 'x'"),
    ("add(int[2 size) -> Tensor", 10, "expected ']' to close the list type"),
    ("add(int[02] size) -> Tensor", 9, "invalid list size '02'"),
    ("add(Tensor) -> Tensor", 11, "expected an argument name after type 'Tensor'"),
    ("add(Tensor 1x) -> Tensor", 12, "expected an argument name"),
    ("add(Tensor self, int a=) -> Tensor", 24, "expected a default value after '='"),
    ('add(Tensor self, str a="abc) -> Tensor', 24, "unterminated string in default value"),
    ("add(Tensor self, int[] a=[1,2) -> Tensor", 41, "expected ']' to close the list default"),
    ("add(Tensor self, float a=1.2.3) -> Tensor", 26, "invalid default value '1.2.3'"),
    ('add(Tensor self, str a="\\q") -> Tensor', 25, "unknown escape sequence '\\q'"),
    ("add(Tensor self, int a=1 2) -> Tensor", 24, "invalid default value '1 2'"),
    ("add(Tensor self, int[] a=[1,,2]) -> Tensor", 29, "expected a list element"),
    ("add(Tensor self) -> Tensor(a", 29, "expected ')' to close the alias annotation"),
    ("add(Tensor self) -> (Tensor a, Tensor 2b)", 39, "expected a return name"),
    ("add(Tensor self) -> ()x", 23, "unexpected text after the returns"),
    ("add(Tensor self) -> (Tensor a; Tensor b)", 30, "expected ',' or ')' after the return"),
    ("add(Tensor self) -> Tensr", 21, "unknown type 'Tensr'; did you mean 'Tensor'?"),
    ("add(Tensor(a|) self) -> Tensor", 14, "expected an alias name"),
    ("add(Tensor() self) -> Tensor", 12, "expected an alias name"),
    ("add(Tensor  self) -> Tensor", 12, "expected an argument name"),
    ("add(Tensor self)  -> Tensor", 17, "expected ' -> ' after the argument list"),
    ("add(Tensor self, int a=1_0) -> Tensor", 24, "invalid default value '1_0'"),
]


@pytest.mark.parametrize(("schema", "column", "message"), ERRORS, ids=[e[2] for e in ERRORS])
def test_schema_errors(schema: str, column: int, message: str) -> None:
    with pytest.raises(SchemaParseError) as info:
        parse(schema)
    assert (info.value.column, info.value.message) == (column, message)
    assert info.value.schema == schema


@pytest.mark.parametrize(
    ("cls", "text", "column", "message"),
    [
        (Type, "Tensr", 1, "unknown type 'Tensr'; did you mean 'Tensor'?"),
        (Type, "Tensor(a)", 7, "unexpected character '(' in type"),
        (Type, "", 1, "expected a type"),
        (Annotation, "", 1, "expected an alias name"),
        (Annotation, "a!!", 3, "expected ')' to close the alias annotation"),
        (OperatorName, "add..x", 5, "unexpected character '.' in overload name"),
        (Argument, "Tensor self x", 12, "expected ',' or ')' after argument 'self'"),
        (Arguments, "Tensor a, Tensor a", 18, "duplicate argument name 'a'"),
    ],
)
def test_part_errors(cls: type, text: str, column: int, message: str) -> None:
    with pytest.raises(SchemaParseError) as info:
        PARSERS[cls](text)
    assert (info.value.column, info.value.message) == (column, message)


def test_type_cache_keeps_the_annotation_place() -> None:
    parse("f(Tensor? x) -> Tensor")
    with pytest.raises(SchemaParseError, match="before the alias annotation"):
        parse("g(Tensor?(a!) x) -> Tensor")
    assert str(parse("g(Tensor(a!)? x) -> Tensor")) == "g(Tensor(a!)? x) -> Tensor"


def test_error_message_shows_a_caret() -> None:
    with pytest.raises(SchemaParseError) as info:
        parse("add(Tensr self) -> Tensor")
    assert str(info.value) == ("unknown type 'Tensr'; did you mean 'Tensor'? (column 5)\n"
                               "    add(Tensr self) -> Tensor\n        ^")


# ---------------------------------------------------------------------------------------------------------
# Frozen, hashable, deterministic


def test_frozen_hashable_deterministic() -> None:
    first = [parse(s) for s in CORPUS]
    clear_caches()
    second = [parse(s) for s in CORPUS]
    assert first == second
    assert [hash(s) for s in first] == [hash(s) for s in second]
    assert len(set(first)) == len(CORPUS)
    assert {parse(CORPUS[0]): 1}[parse(CORPUS[0])] == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        first[0].name = parse_operator_name("x")  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        first[0].arguments.positional[0].default = "1"  # type: ignore[misc]
    assert isinstance(first[0].returns, tuple)
    assert isinstance(first[0].arguments.positional, tuple)


# -- derived forms, built as model objects (Note [Derived in-place and out forms]) ------------------------
@pytest.mark.parametrize(("functional", "inplace", "out"), [
    ("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
     "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
     "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"),
    ("exp(Tensor self) -> Tensor", "exp_(Tensor(a!) self) -> Tensor(a!)",
     "exp.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"),
    ("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
     "pow_.Tensor_Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)",
     "pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out) -> Tensor(a!)"),
    ("__and__.Tensor(Tensor self, Tensor other) -> Tensor",
     "__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
     "__and__.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)"),
])
def test_derived_forms_are_the_schemas_their_text_parses_to(functional: str, inplace: str, out: str) -> None:
    f = parse_schema(functional)
    assert f.inplace_form() == parse_schema(inplace) and str(f.inplace_form()) == inplace
    assert f.out_form() == parse_schema(out) and str(f.out_form()) == out
    assert f.inplace_form().kind() == SchemaKind.inplace and f.out_form().kind() == SchemaKind.out


@pytest.mark.parametrize("schema", [
    "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",  # self is not first
    "add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",           # not functional
    "alias(Tensor(a) self) -> Tensor(a)",                                 # self is annotated
    "full(int[] size, Scalar fill_value) -> Tensor",                      # no self
])
def test_only_a_plain_tensor_self_has_an_inplace_form(schema: str) -> None:
    f = parse_schema(schema)
    assert not f.has_inplace_form()
    with pytest.raises(ValueError, match="in-place form"):
        f.inplace_form()


def test_the_loaded_pointwise_forms_are_derived_schemas() -> None:
    from codegen.loading import load_model

    model = load_model(Path(__file__).resolve().parents[2])
    groups = [f.group for f in model.functions if f.pointwise is not None and f.derived_from is None]
    assert len(groups) > 50 and any(g.inplace is not None for g in groups)
    for g in groups:
        assert g.out is not None and g.out.func == parse_schema(str(g.out.func)) == g.functional.func.out_form()
        if g.inplace is not None:
            assert g.inplace.func == parse_schema(str(g.inplace.func)) == g.functional.func.inplace_form()
