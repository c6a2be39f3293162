"""How an operator is spelled in Python: pure functions from schemas to bindings (no file layout here).

Note [Python bindings and overloads]
PyTorch exposes the overloads of one name (`add.Tensor`, `add.Scalar`, `add.out`) as one Python
function. opgen does the same: the parameters of all overloads are merged by name into one signature,
and a chain of conditions picks the overload at call time:
  - an out overload is taken when `out` is given;
  - a parameter that only some overloads have picks them when it is given (`sum(x)` vs `sum(x, 1)`);
  - a parameter that is a Tensor in one overload and a Scalar or a Tensor[] in another is told apart by
    isinstance (`atleast_1d(t)` vs `atleast_1d([t, u])`).
Overloads that no condition tells apart are a load error. The Python name of `self` is `input` (as
in `torch.add(input, other)`); a Tensor method is the same function, called with the tensor first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codegen.errors import Diagnostic, LoadError, Location, OpgenError
from codegen.literals import SYMBOL_DEFAULTS, python_value
from codegen.model import Argument, SchemaKind, Symbol
from codegen.names import py_name
from codegen.native import NativeFunction, Variant
from codegen.schema_parser import default_value

NOT_GIVEN = "_NG"   # the sentinel's name in generated code


# Python operators as Tensor dunders: (dunder, op name, form). Forms: "binary" calls op(self, other),
# "reflected" op(other, self) with `other` made a tensor, "unary" op(self), "inplace" self.op_(other).
DUNDERS = (
    ("__add__", "add", "binary"), ("__radd__", "add", "binary"), ("__iadd__", "add_", "binary"),
    ("__sub__", "sub", "binary"), ("__rsub__", "sub", "reflected"), ("__isub__", "sub_", "binary"),
    ("__mul__", "mul", "binary"), ("__rmul__", "mul", "binary"), ("__imul__", "mul_", "binary"),
    ("__truediv__", "div", "binary"), ("__rtruediv__", "div", "reflected"), ("__itruediv__", "div_", "binary"),
    ("__floordiv__", "floor_divide", "binary"), ("__rfloordiv__", "floor_divide", "reflected"),
    ("__ifloordiv__", "floor_divide_", "binary"),
    ("__mod__", "remainder", "binary"), ("__rmod__", "remainder", "reflected"), ("__imod__", "remainder_", "binary"),
    ("__pow__", "pow", "binary"), ("__rpow__", "pow", "reflected"), ("__ipow__", "pow_", "binary"),
    ("__matmul__", "matmul", "binary"), ("__rmatmul__", "matmul", "reflected"),
    ("__neg__", "neg", "unary"), ("__pos__", "positive", "unary"), ("__abs__", "abs", "unary"),
    ("__invert__", "bitwise_not", "unary"),
    ("__and__", "bitwise_and", "binary"), ("__rand__", "bitwise_and", "binary"), ("__iand__", "bitwise_and_", "binary"),
    ("__or__", "bitwise_or", "binary"), ("__ror__", "bitwise_or", "binary"), ("__ior__", "bitwise_or_", "binary"),
    ("__xor__", "bitwise_xor", "binary"), ("__rxor__", "bitwise_xor", "binary"), ("__ixor__", "bitwise_xor_", "binary"),
    ("__lshift__", "bitwise_left_shift", "binary"), ("__rlshift__", "bitwise_left_shift", "reflected"),
    ("__ilshift__", "bitwise_left_shift_", "binary"),
    ("__rshift__", "bitwise_right_shift", "binary"), ("__rrshift__", "bitwise_right_shift", "reflected"),
    ("__irshift__", "bitwise_right_shift_", "binary"),
    ("__rdiv__", "div", "reflected"),
    ("__lt__", "lt", "binary"), ("__le__", "le", "binary"), ("__gt__", "gt", "binary"),
    ("__ge__", "ge", "binary"), ("__eq__", "eq", "binary"), ("__ne__", "ne", "binary"),
)


def op_id(f: NativeFunction) -> str:
    """An identifier for an overload: `add.Tensor` -> `add_Tensor`, `add_.Tensor` -> `add__Tensor`."""
    return str(f.func.name).replace(".", "_")


def kernel_name(f: NativeFunction) -> str:
    """The name of a generated backend kernel (CPU and CUDA modules use the same names)."""
    root = f.root
    base = op_id(root)
    if f is root:
        return base
    return f"{base}_inplace" if f.kind == SchemaKind.inplace else f"{base}_out"


def python_default(arg: Argument) -> str | None:
    """The default of an argument as Python source, or None when it has none."""
    if arg.default is None:
        return None
    value = default_value(arg)
    if isinstance(value, Symbol):
        return SYMBOL_DEFAULTS[str(value)]  # the loader refuses any other symbol
    if isinstance(value, list | tuple):
        items = [SYMBOL_DEFAULTS[str(v)] if isinstance(v, Symbol) else python_value(v) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    return python_value(value)


def key_expr(arg: Argument) -> str:
    """The expression of one argument's dispatch key set."""
    name = py_name(arg.name)
    t = arg.type
    if t.is_tensor():
        return f"{name}._keys"
    if t.is_list():
        return f"_keys_of({name})"
    return f"({name}._keys if {name} is not None else 0)"


@dataclass(frozen=True)
class Param:
    name: str
    kwonly: bool
    default: str | None          # Python source; NOT_GIVEN when overloads differ


@dataclass(frozen=True)
class Case:
    condition: str               # Python boolean expression ("" means always)
    call: str                    # the call of one overload's op function
    op: str = ""                 # op_id of the overload, when the call can be inlined (plain-name arguments)


@dataclass(frozen=True)
class Binding:
    name: str
    params: tuple[Param, ...]
    cases: tuple[Case, ...]
    overloads: tuple[str, ...]   # schemas, for error messages and stubs
    tensor_varargs: bool = False  # Note [Tensors as varargs]: the first parameter is `*name`

    @property
    def overloads_literal(self) -> str:
        """`overloads` as a Python tuple literal (Note [Text into code only through one door])."""
        return python_value(self.overloads)

    @property
    def signature(self) -> str:
        parts: list[str] = []
        star = False
        for i, p in enumerate(self.params):
            if i == 0 and self.tensor_varargs:
                parts.append(f"*{p.name}")
                star = True
                continue
            if p.kwonly and not star:
                parts.append("*")
                star = True
            parts.append(p.name if p.default is None else f"{p.name}={p.default}")
        return ", ".join(parts)


def group_bindings(functions: list[NativeFunction]) -> list[Binding]:
    """One binding per Python name (function and method variants), sorted by name."""
    groups: dict[str, list[NativeFunction]] = {}
    for f in functions:
        if f.variants:
            groups.setdefault(f.func.name.name, []).append(f)
        elif (f.kind == SchemaKind.out and f.root.variants & {Variant.function}
              and f.func.name.name not in OUT_REFUSED):  # Note [Names whose binding refuses out=]
            groups.setdefault(f.func.name.name, []).append(f)
    bindings: list[Binding] = []
    problems: list[Diagnostic] = []
    for name, fs in sorted(groups.items()):
        try:
            bindings.append(make_binding(name, fs, _borrowed_inplace(name, fs, groups)))
        except OverloadClash as e:
            problems.append(Diagnostic(e.location, str(e)))
    if problems:
        raise LoadError(problems)
    return bindings


class OverloadClash(OpgenError):
    """Overloads whose Python calls cannot be told apart; `location` is the later entry of the clash."""

    def __init__(self, message: str, location: Location) -> None:
        super().__init__(message)
        self.location = location


# Note [Numbers refused for a Tensor operand]
# PyTorch's Python binding takes a number for a Tensor argument only for its arithmetic ops (an allow-list:
# `torch.xlogy(t, 2)`, `torch.bitwise_and(t, 1)`, `torch.copysign(t, -1)`); for these ops, measured against
# torch 2.13 (`torch.maximum(t, 2)` is a TypeError, "argument 'other' must be Tensor"), it refuses one,
# and so does opgen: the argument is passed on unwrapped and the dispatch's refusal of a non-tensor names
# it. Keyed by (op name without a trailing `_`, argument name).
NUMBER_REFUSED: frozenset[tuple[str, str]] = frozenset({
    ("maximum", "other"), ("minimum", "other"), ("fmax", "other"), ("fmin", "other"), ("atan2", "other"),
    ("arctan2", "other"), ("gcd", "other"), ("lcm", "other"), ("heaviside", "values"),
    ("logical_and", "other"), ("logical_or", "other"), ("logical_xor", "other"), ("ldexp", "other"),
    ("hypot", "other"), ("igamma", "other"), ("igammac", "other"), ("nextafter", "other"),
    ("logaddexp", "other"), ("logaddexp2", "other"), ("cross", "other"), ("dist", "other"),
    ("dot", "tensor"), ("vdot", "other"), ("inner", "other"), ("kron", "other"), ("matmul", "other"),
    ("mv", "vec"), ("equal", "other"), ("allclose", "other"), ("isclose", "other"),
})


def _call(f: NativeFunction, union: dict[str, Param], others: list[NativeFunction],
          sources: dict[str, str] | None = None) -> str:
    args = []
    for i, a in enumerate(f.func.arguments.flat_all):
        name = py_name(a.name)
        expr = name
        if sources and name in sources:
            args.append(sources[name])   # a required Tensor given under another parameter's position
            continue
        scalar_elsewhere = any(_type_of(o, a.name) not in (None, "Tensor") for o in others)
        refused = (f.func.name.name.removesuffix("_"), a.name) in NUMBER_REFUSED
        if (i > 0 and a.type.is_tensor() and a not in f.func.arguments.out and not scalar_elsewhere
                and not refused):
            # a Python number passed where only a Tensor fits becomes a wrapped-number tensor
            where = f"op={python_value(f.func.name.name)}, arg={python_value(name)}"
            expr = f"({name} if isinstance({name}, Tensor) else _scalar({name}, {where}))"
        default = python_default(a)
        if union[name].default == NOT_GIVEN and default is not None:
            expr = f"({default} if {name} is {NOT_GIVEN} else {expr})"
        args.append(expr)
    return f"_call_{op_id(f)}({', '.join(args)})"


def _type_of(f: NativeFunction, name: str) -> str | None:
    """How a Python call tells `f`'s argument `name` apart: "Tensor" for one (optional) tensor; a list of
    tensors keeps its own type (`atleast_1d(Tensor self)` and `atleast_1d.Sequence(Tensor[] self)` differ by
    whether the argument is a Tensor)."""
    for a in f.func.arguments.flat_all:
        if a.name == name:
            return "Tensor" if a.type.is_tensor_like() and not a.type.is_list() else str(a.type)
    return None


def _tensor_twin(f: NativeFunction, overloads: list[NativeFunction]) -> NativeFunction | None:
    """The overload that takes a Tensor where `f` takes a Scalar, with the same argument names (add.Tensor
    for add.Scalar). PyTorch's Python binding hides such Scalar overloads (a number reaches the Tensor one as
    a wrapped tensor), so the twin's keyword-only parameters stay keyword-only: `add(a, b, 2)` is a TypeError."""
    mine = f.func.arguments.flat_all
    for g in overloads:
        theirs = g.func.arguments.flat_all
        if g is f or g.kind != f.kind or [a.name for a in mine] != [a.name for a in theirs]:
            continue
        pairs = list(zip(mine, theirs, strict=True))
        if any(str(a.type) == "Scalar" and b.type.is_tensor() for a, b in pairs) and all(
                str(a.type) == str(b.type) or (str(a.type) == "Scalar" and b.type.is_tensor()) for a, b in pairs):
            return g
    return None


def _returns_one_tensor(f: NativeFunction) -> bool:
    return len(f.func.returns) == 1 and str(f.func.returns[0].type) == "Tensor" and not f.func.returns[0].annotation


def _borrowed_inplace(name: str, fs: list[NativeFunction],
                      groups: dict[str, list[NativeFunction]]) -> list[NativeFunction]:
    """Note [In-place forms of overloads declared without one]: the in-place name `div_` binds the in-place
    overloads it has (`div_.Tensor`, derived from a pointwise entry) and also the functional method
    overloads of `div` that have no in-place form (`div.Tensor_mode`: `t.div_(o, rounding_mode='floor')`),
    whose result is written back into `self` (`runtime.opcall.call_into_self`), as PyTorch's in-place
    forms take every overload's keywords."""
    base = name[:-1]
    if not name.endswith("_") or name.startswith("_") or base not in groups:
        return []
    own = [[py_name(a.name) for a in g.func.arguments.flat_all] for g in fs if g.kind == SchemaKind.inplace]
    if not own:
        return []
    borrowed = []
    for f in groups[base]:
        args = f.func.arguments.flat_all
        if (f.kind == SchemaKind.functional and Variant.method in f.variants and _returns_one_tensor(f)
                and args and args[0].name == "self" and str(args[0].type) == "Tensor"
                and [py_name(a.name) for a in args] not in own):
            borrowed.append(f)
    return borrowed


def _keywords(f: NativeFunction) -> str:
    """`f`'s arguments (out aside) as a dict literal by Python name, for a helper that passes them to the
    binding of the name (`ops.<name>(**kwargs)` picks `f` again from them)."""
    return "{" + ", ".join(f"{py_name(a.name)!r}: {py_name(a.name)}" for a in f.func.arguments.flat_all
                           if a not in f.func.arguments.out) + "}"


def make_binding(name: str, overloads: list[NativeFunction], borrowed: list[NativeFunction] | None = None) -> Binding:
    # Calls without out= are the common case: their overloads are tried first, in YAML order.
    overloads = sorted(overloads, key=lambda f: f.kind == SchemaKind.out) + list(borrowed or ())
    union: dict[str, Param] = {}
    presence: dict[str, int] = {}
    for f in overloads:
        twin = _tensor_twin(f, overloads)
        for a in f.func.arguments.flat_all:
            pname = py_name(a.name)
            kwonly = a in f.func.arguments.kwarg_only or a in f.func.arguments.out or (
                twin is not None and any(k.name == a.name for k in twin.func.arguments.kwarg_only))
            default = "None" if a in f.func.arguments.out else python_default(a)
            presence[pname] = presence.get(pname, 0) + 1
            if pname not in union:
                union[pname] = Param(pname, kwonly, default)
                continue
            seen = union[pname]
            if seen.kwonly and not kwonly:
                # positional in this overload (`var.dim`'s keepdim): it follows the positional
                # parameters seen so far, so `x.var(1, True, True)` binds as PyTorch binds it
                del union[pname]
            union[pname] = Param(pname, seen.kwonly and kwonly, seen.default if seen.default == default else NOT_GIVEN)
    for pname, count in presence.items():
        p = union[pname]
        # a parameter some overloads lack tells them apart when given (`var(t, unbiased=False)`)
        if count < len(overloads) and pname != "out":
            union[pname] = Param(pname, p.kwonly, NOT_GIVEN)
    params = _order(union)
    cases: list[Case] = []
    owners: list[NativeFunction] = []  # the overload of each case
    for f in overloads:
        others = [o for o in overloads if o is not f]
        conds: list[str] = []
        mine = {py_name(a.name): a for a in f.func.arguments.flat_all}
        for p in params:
            found = mine.get(p.name)
            if found is None:
                if p.name == "out":
                    conds.insert(0, "out is None")
                elif p.default == NOT_GIVEN:
                    conds.append(f"{p.name} is {NOT_GIVEN}")
                continue
            a = found
            if p.name == "out" and f.kind == SchemaKind.out:
                conds.append("out is not None")
            elif p.default == NOT_GIVEN and a.default is None:
                conds.append(f"{p.name} is not {NOT_GIVEN}")
            mine_t = _type_of(f, a.name)
            other_ts = {_type_of(o, a.name) for o in others} - {None}
            if mine_t == "Tensor" and other_ts - {"Tensor"}:
                conds.append(f"({p.name} is None or isinstance({p.name}, Tensor))" if a.type.is_nullable()
                             else f"isinstance({p.name}, Tensor)")
            elif mine_t != "Tensor" and "Tensor" in other_ts:
                conds.append(f"not isinstance({p.name}, Tensor)")
        if borrowed and f in borrowed:  # Note [In-place forms of overloads declared without one]
            cases.append(Case(" and ".join(conds), f"_call_into_self({name[:-1]!r}, {_keywords(f)})"))
            owners.append(f)
            continue
        call = _call(f, union, others)
        flag = _positional_bool(f, params, others)
        if flag is not None:
            # `x.var(True)`: a bool passed where the merged signature has another overload's `dim` is
            # this overload's bool (PyTorch's parser never binds a bool to an int list)
            name_, other_ = flag
            alias_conds = [c for c in conds if not re.search(rf"\b({name_}|{other_})\b", c)]
            alias_conds += [f"{other_}.__class__ is bool", f"{name_} is {NOT_GIVEN}"]
            cases.insert(0, Case(" and ".join(alias_conds), _call(f, union, others, {name_: other_})))
            owners.insert(0, f)  # and the overload's own case below (`x.var(unbiased=False)`)
        alias = _positional_alias(f, params)
        if alias is not None:
            # Note [Python bindings and overloads]: `G.max(a, b)` passes b where max.dim has `dim`
            name_, other_ = alias
            conds = [c for c in conds if name_ not in c and other_ not in c]
            conds.append(f"({name_} is not {NOT_GIVEN} and {other_} is {NOT_GIVEN} or "
                         f"isinstance({other_}, Tensor) and {name_} is {NOT_GIVEN})")
            call = _call(f, union, others, {name_: f"({name_} if {name_} is not {NOT_GIVEN} else {other_})"})
            cases.insert(0, Case(" and ".join(conds), call))
            owners.insert(0, f)
            continue
        plain = call == f"_call_{op_id(f)}({', '.join(py_name(a.name) for a in f.func.arguments.flat_all)})"
        cases.append(Case(" and ".join(conds), call, op_id(f) if plain else ""))
        owners.append(f)
    params, cases, owners = _out_fallback(name, overloads, params, cases, owners)
    params, cases = _requires_grad_param(name, overloads, params, cases)
    first: dict[str, NativeFunction] = {}
    for case, f in zip(cases, owners, strict=True):
        other = first.setdefault(case.condition, f)
        if other is not f:
            clash = sorted((other, f), key=lambda g: g.loc)
            raise OverloadClash(f"overloads of '{name}' can't be told apart in Python: "
                                f"{'; '.join(str(g.func) for g in clash)} (the other is at {clash[0].loc})",
                                clash[1].loc)
    return Binding(name, tuple(params), tuple(cases), tuple(str(f.func) for f in overloads),
                   _takes_tensor_varargs(overloads))


# Note [Tensors as varargs]
# PyTorch writes the functions whose one argument is a Tensor in one overload and a Tensor[] in its twin
# (`atleast_1d(Tensor self)`, `atleast_1d.Sequence(Tensor[] self)`) in Python over its binding
# (torch/functional.py), taking the tensors one by one too: `atleast_1d(a, b)` is `atleast_1d((a, b))`, and no
# tensor at all (`atleast_1d()`, `atleast_1d([])`) gives an empty tuple. opgen's binding for such a name takes
# `*input` (so `input=` is refused, as PyTorch refuses it); `runtime.opcall.tensor_varargs` turns the
# arguments back into the one value the overloads are chosen from, and an empty list returns `()` before any
# dispatch (there is no tensor to dispatch on; the Sequence form maps each tensor, so nothing maps to nothing).
def _takes_tensor_varargs(overloads: list[NativeFunction]) -> bool:
    """Whether a binding's overloads are one Tensor form and its Tensor[] twin, each of one argument."""
    plain = [f for f in overloads if f.kind != SchemaKind.out]
    if len(plain) != 2 or len(plain) != len(overloads):
        return False
    types = sorted(str(a.type) for f in plain for a in f.func.arguments.flat_all)
    returns = sorted(str(r.type) for f in plain for r in f.func.returns)
    names = {a.name for f in plain for a in f.func.arguments.flat_all}
    return (types == ["Tensor", "Tensor[]"] and returns == ["Tensor", "Tensor[]"] and len(names) == 1
            and all(Variant.function in f.variants for f in plain))


def _positional_alias(f: NativeFunction, params: list[Param]) -> tuple[str, str] | None:
    """(name, alias) when a required Tensor parameter of `f` sits at a position the merged signature gives
    to a non-Tensor parameter of another overload (`max.other`'s `other` where `max.dim` has `dim`): a
    Tensor passed there positionally is taken as `name`."""
    positional = [p.name for p in params if not p.kwonly]
    mine = [a for a in f.func.arguments.flat_all
            if a not in f.func.arguments.kwarg_only and a not in f.func.arguments.out]
    names = {py_name(a.name) for a in f.func.arguments.flat_all}
    for i, a in enumerate(mine[1:], start=1):
        name = py_name(a.name)
        if (a.type.is_tensor() and a.default is None and i < len(positional) and positional[i] != name
                and positional[i] not in names):
            return name, positional[i]
    return None


# Note [Names whose binding refuses out=]
# PyTorch's Python binding takes `out=` only where an op has an out form; opgen gives every other functional
# op one (Note [out= for ops without an out overload]), except these names, whose every PyTorch overload
# refuses `out=` (measured against torch 2.13: `torch.repeat_interleave(r, out=t)` and `torch.relu(x, out=y)`
# are TypeErrors, as they are here). An out overload of such a name (`relu.out`, derived from its pointwise
# entry) stays an op that the runtime may call; the Python binding leaves it out.
OUT_REFUSED: frozenset[str] = frozenset({
    "argwhere", "atleast_1d", "atleast_2d", "atleast_3d", "binary_cross_entropy_with_logits", "bincount", "cdist",
    "clone", "combinations", "corrcoef", "cosine_similarity", "cov", "det", "diag_embed", "diagflat",
    "diagonal_scatter", "dist", "embedding", "fliplr", "flipud", "group_norm", "isclose", "isfinite", "isinf",
    "isnan", "isreal", "kl_div", "logdet", "matrix_exp", "max_pool2d", "pairwise_distance", "pinverse", "prelu",
    "relu", "repeat_interleave", "roll", "rot90", "selu", "trace", "unique", "unique_consecutive",
})


def _out_fallback(name: str, overloads: list[NativeFunction], params: list[Param], cases: list[Case],
                  owners: list[NativeFunction]) -> tuple[list[Param], list[Case], list[NativeFunction]]:
    """Note [out= for ops without an out overload]: a functional op that declares no `.out` overload still
    takes `out=` as PyTorch's ops do: the binding computes the result and `runtime.opcall.store_out` writes
    it into `out` (a tensor, or a tuple of them for a tuple result; resized, cast when the result's dtype
    can be cast to out's, refused when an input requires grad). When every overload of the name returns
    new Tensors (one, or a tuple: `max.dim`) one case serves them all; otherwise each functional overload
    that returns one Tensor and has no out form gets its own out= case, beside the out overloads of the
    others (`div(a, b, rounding_mode='floor', out=t)` next to `div.out`) or the overloads that can't write
    into `out` (`nonzero(x, out=t)` but not with `as_tuple=True`)."""
    if name.endswith("_") or name.startswith("_") or name in OUT_REFUSED:
        return params, cases, owners
    has_out = any(p.name == "out" for p in params)
    whole = all(f.func.returns and all(str(r.type) == "Tensor" and not r.annotation for r in f.func.returns)
                for f in overloads)
    if not has_out and whole:
        positional = "".join(f"{p.name}, " for p in params if not p.kwonly)
        keywords = ", ".join(f"{p.name!r}: {p.name}" for p in params if p.kwonly)
        call = f"_call_into_out({name!r}, ({positional.rstrip()}), {{{keywords}}}, out)"
        return ([*params, Param("out", True, "None")], [Case("out is not None", call), *cases],
                [overloads[0], *owners])
    lacking = [f for f in overloads if f.kind == SchemaKind.functional and _returns_one_tensor(f)
               and getattr(getattr(f, "group", None), "out", None) is None]
    if not lacking:
        return params, cases, owners
    # beside them, an overload returning a list decides at run time (`nonzero(x, as_tuple=False, out=t)` gives
    # one tensor; with as_tuple=True store_out refuses the tensor `out`)
    lacking += [f for f in overloads if f.kind == SchemaKind.functional and len(f.func.returns) == 1
                and str(f.func.returns[0].type) == "Tensor[]" and not f.func.returns[0].annotation]
    if not has_out:  # the other overloads now run only without out=
        params = [*params, Param("out", True, "None")]
        cases = [Case(" and ".join(["out is None", c.condition] if c.condition else ["out is None"]), c.call, c.op)
                 for c in cases]
    extra: list[Case] = []
    extra_owners: list[NativeFunction] = []
    for case, f in zip(cases, owners, strict=True):
        if f not in lacking:
            continue
        rest = [c for c in case.condition.split(" and ") if c and c != "out is None"]
        call = f"_call_into_out({name!r}, (), {_keywords(f)}, out)"
        extra.append(Case(" and ".join(["out is not None", *rest]), call))
        extra_owners.append(f)
    return params, [*cases, *extra], [*owners, *extra_owners]


def _requires_grad_param(name: str, overloads: list[NativeFunction], params: list[Param],
                         cases: list[Case]) -> tuple[list[Param], list[Case]]:
    """Note [requires_grad= of factory ops]: PyTorch's Python binding gives every factory function (an op
    whose schema ends in the tensor options `dtype, layout, device, pin_memory`: `empty_strided`,
    `new_empty`) a keyword-only `requires_grad=False` that the ATen schema lacks; opgen's binding takes it too
    and sets it on the result (`runtime.opcall.with_requires_grad`). Only where every overload but the out
    ones is such a factory (`normal` mixes factories with ops of tensors: it keeps the schema's parameters)."""
    if name.startswith("_") or name.endswith("_") or any(p.name == "requires_grad" for p in params):
        return params, cases
    factories = [f for f in overloads if f.kind != SchemaKind.out]
    if not factories or not all(any(a.name == "pin_memory" for a in f.func.arguments.kwarg_only) for f in factories):
        return params, cases
    at = next(i for i, p in enumerate(params) if p.name == "pin_memory") + 1
    params = [*params[:at], Param("requires_grad", True, "False"), *params[at:]]
    cases = [c if c.condition.startswith("out is not None") else
             Case(c.condition, f"_with_requires_grad({c.call}, requires_grad)") for c in cases]
    return params, cases


def _positional_bool(f: NativeFunction, params: list[Param], others: list[NativeFunction]) -> tuple[str, str] | None:
    """(name, alias) when a positional `bool` parameter of `f` sits at a position the merged signature
    gives to an int-list parameter of other overloads (`var(Tensor self, bool unbiased)` beside
    `var.correction(Tensor self, int[1]? dim)`): a bool passed there positionally is taken as `name`."""
    positional = [p.name for p in params if not p.kwonly]
    mine = [a for a in f.func.arguments.flat_all
            if a not in f.func.arguments.kwarg_only and a not in f.func.arguments.out]
    names = {py_name(a.name) for a in f.func.arguments.flat_all}
    for i, a in enumerate(mine[1:], start=1):
        name = py_name(a.name)
        if str(a.type) != "bool" or i >= len(positional) or positional[i] == name or positional[i] in names:
            continue
        theirs = {_type_of(o, positional[i]) for o in others} - {None}
        if theirs and all(t is not None and t.startswith("int[") for t in theirs):
            return name, positional[i]
    return None


def _order(union: dict[str, Param]) -> list[Param]:
    """Positional parameters without defaults first (Python requires it), then the rest in order."""
    positional = [p for p in union.values() if not p.kwonly]
    kwonly = [p for p in union.values() if p.kwonly]
    first_default = next((i for i, p in enumerate(positional) if p.default is not None), len(positional))
    head, tail = positional[:first_default], positional[first_default:]
    # A required parameter after one with a default becomes keyword-only (kept callable by name).
    tail_required = [Param(p.name, True, p.default) for p in tail if p.default is None]
    tail = [p for p in tail if p.default is not None]
    return head + tail + tail_required + kwonly


@dataclass(frozen=True)
class Dunder:
    """A Python operator of Tensor: its dunder name, the op it calls and how (a form of DUNDERS)."""

    name: str
    op: str
    form: str  # "binary", "reflected", "unary" or "inplace"


def dunders(bindings: list[Binding]) -> list[Dunder]:
    """The Tensor dunders whose op exists."""
    names = {b.name for b in bindings}
    return [Dunder(d, op, form) for d, op, form in DUNDERS if op in names]
