"""Autograd output: one backward node per derivatives.yaml entry and one Autograd kernel per operator.

Note [Autograd kernels]
Every operator that is not CompositeImplicitAutograd gets a kernel at the Autograd key:
  - with a derivative: run the op below Autograd, then (if an input requires grad) build its node,
    save what the formulas use, and set the outputs' history. In-place forms check the leaf rule,
    collect edges before the op (the old history of `self`) and rebase `self` onto the new node;
  - out forms: refuse inputs that require grad, as PyTorch does;
  - no derivative: run below Autograd and attach a NotImplementedNode, which fails at backward().
Formulas run at backward time through the public op API (`_F.mul(...)`), so backward works on every
device and, under create_graph=True, is itself recorded.

Note [Inline recording]
Recording is the hot path of training, so the kernel writes it out instead of calling generic helpers:
the node is made with `object.__new__` (Note [Lean node construction] in runtime/autograd/node.py), each
differentiable tensor argument's edge and input metadata are built in place, and a single Tensor output
gets its history by the body of `runtime.autograd.node.record_output`, rendered from its source (Note
[Generated, not copied, fast paths] in codegen/inline.py). Tensor[] arguments, several outputs and
output_differentiability take the generic `set_next_edges` / `set_history`, which do the same in a loop.
Every choice of what to write is made here, in Python (`_node_made`, `_edges`, `saves_before`, `saves_after`,
`NodeContext.unpacks`): the template receives assignments and edge guards as data and only writes them out.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from codegen.api_python import kernel_name, key_expr, op_id, py_name
from codegen.derivatives import BUILTINS, Derivative, Formula, helper_names, op_function_names, output_names
from codegen.model import Argument, SchemaKind
from codegen.native import NativeFunction
from codegen.render_errors import owned
from runtime.vocabulary import PromoteKind

if TYPE_CHECKING:
    from codegen.loading import Model

# Note [Saving metadata instead of tensors]
# A formula that reads only an input's metadata (`self.shape`, `self.stride()` ...) gets those values saved
# on the node, not the tensor: the node keeps no memory alive, and an in-place change of the input after
# the op (which leaves its metadata alone) does not fail the version check. PyTorch saves `self_sym_sizes`
# the same way (linear's and layer_norm's optional bias: its shape, None when absent, as addmm's `self` in
# PyTorch). Metadata name -> how it is read; a call takes no arguments.
META_ATTRIBUTES = {"shape": False, "dtype": False, "device": False, "stride": True, "storage_offset": True,
                   "dim": True}


def _meta_accesses(tree: ast.AST, name: str) -> set[str] | None:
    """The metadata a formula reads of argument `name`, or None if it uses the tensor itself."""
    parents = {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        attr = parents.get(id(node))
        if not isinstance(attr, ast.Attribute) or attr.attr not in META_ATTRIBUTES:
            return None
        if META_ATTRIBUTES[attr.attr]:
            call = parents.get(id(attr))
            if not isinstance(call, ast.Call) or call.func is not attr or call.args or call.keywords:
                return None
        found.add(attr.attr)
    return found


def meta_var(name: str, attr: str) -> str:
    """The local a node's apply() reads saved metadata as: in the reserved namespace (Note [Reserved names in
    generated code] in codegen/names.py), so `self`'s shape cannot meet an argument named `input_shape`."""
    return f"_{py_name(name)}_{attr}"


class _Rename(ast.NodeTransformer):
    """Formula names -> generated names: arguments by py_name, ops as _F.op, helpers as _H.fn, and the
    metadata reads of Note [Saving metadata instead of tensors] as their saved values."""

    def __init__(self, args: set[str], ops: frozenset[str], helpers: frozenset[str],
                 meta_only: frozenset[str] = frozenset()) -> None:
        self.args, self.ops, self.helpers, self.meta_only = args, ops, helpers, meta_only

    def _meta(self, node: ast.AST) -> str | None:
        """`x.shape` or `x.stride()` of a metadata-only argument -> the name of its saved value."""
        if isinstance(node, ast.Call) and not node.args and not node.keywords:
            node = node.func
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in self.meta_only:
            return meta_var(node.value.id, node.attr)
        return None

    def visit_Call(self, node: ast.Call) -> ast.AST:
        name = self._meta(node)
        if name is not None and META_ATTRIBUTES.get(node.func.attr):  # type: ignore[attr-defined]
            return ast.Name(id=name, ctx=ast.Load())
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Name):
            # a builtin through the builtins module: an op named `max` has an Autograd kernel `max` here
            module = "_builtins" if func.id in BUILTINS else "_H" if func.id in self.helpers else "_F"
            node.func = ast.Attribute(value=ast.Name(id=module, ctx=ast.Load()), attr=func.id, ctx=ast.Load())
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        name = self._meta(node)
        if name is not None and not META_ATTRIBUTES.get(node.attr):
            return ast.Name(id=name, ctx=ast.Load())
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.args:
            return ast.Name(id=py_name(node.id), ctx=node.ctx)
        return node


def render_formula(formula: Formula, args: set[str], ops: frozenset[str], helpers: frozenset[str],
                   meta_only: frozenset[str] = frozenset()) -> str:
    tree = _Rename(args, ops, helpers, meta_only).visit(ast.parse(formula.source, mode="eval"))
    return ast.unparse(ast.fix_missing_locations(tree))


@dataclass(frozen=True)
class SavedContext:
    """One value a node saves (Note [Saving metadata instead of tensors] for kind "meta").

    kind: "value" (a non-tensor argument), "meta" (`expr`, read of a tensor argument's metadata), "tensor",
    "tensor_list", or "output" (output `index` of the op's results)."""

    name: str
    var: str  # the variable the formulas read it as
    field: str  # the node's slot
    kind: str
    expr: str | None = None
    index: int | None = None


@dataclass(frozen=True)
class FormulaContext:
    indices: tuple[int, ...]  # the differentiable inputs it computes the gradients of
    code: str


@dataclass(frozen=True)
class NodeContext:
    """One backward node class (templates/autograd.py.j2)."""

    name: str
    public_name: str
    op: str
    saved: tuple[SavedContext, ...]
    formulas: tuple[FormulaContext, ...]
    n_inputs: int
    has_lists: bool
    missing: tuple[tuple[int, str], ...]  # differentiable inputs no formula covers: (index, name)
    multi_output: bool

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(s.field for s in self.saved)

    @property
    def saved_variables(self) -> tuple[str, ...]:
        """The slots that hold SavedVariables (not plain values or metadata)."""
        return tuple(s.field for s in self.saved if s.kind not in ("value", "meta"))

    @property
    def unpacks(self) -> tuple[Assign, ...]:
        """What `apply` reads before its formulas: each saved value into the variable the formulas use."""
        return tuple(Assign(s.var, _unpacked(s)) for s in self.saved)


@dataclass(frozen=True)
class Assign:
    """One assignment `<target> = <value>` of generated code, both sides Python source."""

    target: str
    value: str


def _unpacked(s: SavedContext) -> str:
    """How `apply` reads the saved value `s` back: a plain value as it is, a SavedVariable unpacked (an output
    gets the node back as its grad_fn: Note [Saved tensors and reference cycles])."""
    if s.kind in ("value", "meta"):
        return f"self.{s.field}"
    if s.kind == "tensor_list":
        return f"[s.unpack(self) for s in self.{s.field}]"
    return f"self.{s.field}.unpack(self)"


def saves_before(node: NodeContext, form: str, diff: tuple[str, ...], self_arg: str | None) -> tuple[Assign, ...]:
    """What an Autograd kernel stores on its node before the op runs (targets are `node.<slot>`): the sizes of
    Tensor[] inputs, plain values, metadata (Note [Saving metadata instead of tensors]) and inputs, of which
    an in-place form saves `self` as a copy (the op overwrites it) and the others before `self` is written
    (`save_before_write`: an input that aliases `self` is copied too)."""
    out = [Assign("node._sizes", f"_list_sizes({', '.join(diff)})")] if node.has_lists else []
    for s in node.saved:
        if s.kind == "value":
            value = s.var
        elif s.kind == "meta":
            assert s.expr is not None
            value = s.expr
        elif s.kind == "tensor" and form == "inplace" and s.var == self_arg:
            value = f"_Saved(_clone({s.var}), False)"
        elif s.kind == "tensor" and form == "inplace":
            value = f"_save_before_write(_Saved, {s.var}, {self_arg})"
        elif s.kind == "tensor":
            value = f"_Saved({s.var}, False)"
        elif s.kind == "tensor_list":
            value = f"[_Saved(t, False) for t in {s.var}]"
        else:
            continue  # an output: saved once the op has run (saves_after)
        out.append(Assign(f"node.{s.field}", value))
    return tuple(out)


def saves_after(node: NodeContext) -> tuple[Assign, ...]:
    """What an Autograd kernel stores on its node after the op ran: the outputs the formulas read, saved as
    outputs (`is_output=True`: Note [Saved tensors and reference cycles])."""
    return tuple(Assign(f"node.{s.field}", f"_Saved({f'result[{s.index}]' if node.multi_output else 'result'}, True)")
                 for s in node.saved if s.kind == "output")


def _node_context(d: Derivative, ops: frozenset[str], helpers: frozenset[str]) -> NodeContext:
    f = d.function
    args = {a.name: a for a in f.func.arguments.flat_non_out}
    diff_inputs = [a.name for a in f.func.differentiable_arguments()]
    outputs = _output_index(f)
    saved: list[SavedContext] = []
    meta_only: set[str] = set()
    for name in sorted(d.uses - {"grad", "grads"}, key=lambda n: (n not in args, n)):
        if name in args:
            a = args[name]
            kind = ("tensor_list" if a.type.is_list() else "tensor") if a.type.is_tensor_like() else "value"
        else:
            kind = "output"
        metas = _metadata_only(d, name) if kind == "tensor" else None
        if metas:
            meta_only.add(name)
            for attr in sorted(metas):
                call = "()" if META_ATTRIBUTES[attr] else ""
                # the array's plain shape tuple: Tensor.shape builds a Size, work the recording path skips
                expr = f"{py_name(name)}._data.shape" if attr == "shape" else f"{py_name(name)}.{attr}{call}"
                if not a.type.is_tensor():  # `Tensor?`: None when absent (no formula reads it then: no edge)
                    expr = f"None if {py_name(name)} is None else {expr}"
                saved.append(SavedContext(name, meta_var(name, attr), f"_saved_{meta_var(name, attr)}", "meta",
                                          expr=expr))
            continue
        saved.append(SavedContext(name, py_name(name), f"_saved_{py_name(name)}", kind,
                                  index=outputs.get(name) if kind == "output" else None))
    formulas = tuple(FormulaContext(tuple(diff_inputs.index(i) for i in formula.inputs),
                                    render_formula(formula, set(args), ops, helpers, frozenset(meta_only)))
                     for formula in d.formulas)
    covered = {i for fm in formulas for i in fm.indices}
    return NodeContext(
        name=d.class_name,
        public_name=d.node_name,
        op=f.name,
        saved=tuple(saved),
        formulas=formulas,
        n_inputs=len(diff_inputs),
        has_lists=any(args[n].type.is_list() for n in diff_inputs),
        missing=tuple((i, n) for i, n in enumerate(diff_inputs) if i not in covered),
        multi_output=len(f.func.returns) > 1,
    )


def _metadata_only(d: Derivative, name: str) -> set[str] | None:
    """The metadata every formula of `d` reads of `name`, if that is all they read of it."""
    found: set[str] = set()
    for formula in d.formulas:
        if name not in formula.uses:
            continue
        metas = _meta_accesses(formula.tree, name)
        if metas is None:
            return None
        found |= metas
    return found or None


def _output_index(f: NativeFunction) -> dict[str, int]:
    """Each name a formula may use for an output -> that output's position (`indices` -> 1)."""
    index = {name: 0 for name in output_names(f) if len(f.func.returns) == 1}
    for i, r in enumerate(f.func.returns):
        if len(f.func.returns) > 1:
            index[f"result{i}"] = i
        if r.name:
            index[r.name] = i
    return index


@dataclass(frozen=True)
class EdgeContext:
    """The edge of one differentiable argument, made in the kernel (Note [Inline recording])."""

    name: str
    var: str            # the local it is made in: `_e0`, `_e1` ...
    guard: str | None   # the test that it requires grad; None where the kernel's own test was that


def _edges(diff_args: tuple[Argument, ...]) -> tuple[EdgeContext, ...] | None:
    """The edges of the differentiable arguments; None with a Tensor[] among them (the generic
    `set_next_edges` flattens it)."""
    if any(a.type.is_list() for a in diff_args):
        return None
    out = []
    for i, a in enumerate(diff_args):
        name = py_name(a.name)
        guard: str | None = f"{name}._requires_grad"
        if a.type.is_optional():
            guard = f"{name} is not None and {guard}"
        elif len(diff_args) == 1:
            guard = None  # the kernel's needs_grad was this argument's requires_grad
        out.append(EdgeContext(name, f"_e{i}", guard))
    return tuple(out)


def _node_made(f: NativeFunction, node: NodeContext | None) -> tuple[Assign, ...]:
    """How the kernel makes its node: a generated Node class without its __init__ (Note [Lean node
    construction]), or a NotImplementedNode for an op without a derivative."""
    if node is None:
        return (Assign("node", f'_NotImplementedNode("{f.name}")'),)
    return Assign("node", f"_new({node.name})"), Assign("node.sequence_nr", "_next_seq()")


@dataclass(frozen=True)
class KernelContext:
    """One operator's Autograd kernel (templates/autograd.py.j2, Note [Autograd kernels])."""

    name: str
    op: str
    op_name: str
    id: str
    params: tuple[str, ...]
    key_exprs: tuple[str, ...]
    diff: tuple[str, ...]  # the differentiable arguments
    needs_grad: str  # a Python test: does any differentiable argument require grad
    form: str  # "functional", "inplace" or "out"
    node: NodeContext | None  # None: no derivative (a NotImplementedNode)
    differentiable: tuple[bool, ...] | None  # output_differentiability
    self: str | None
    # Note [Inline recording]: edges and history are written out in the kernel where that is simple.
    edges: tuple[EdgeContext, ...] | None  # None: a Tensor[] argument, the generic set_next_edges
    one_output: bool
    view: bool  # an output aliases an input, not written: Note [In-place ops on views]
    float_output: bool  # a pointwise op that promotes to a common or float dtype
    made: tuple[Assign, ...] = ()          # how the node is made (`_node_made`)
    saves_before: tuple[Assign, ...] = ()  # stores on the node before the op runs (`saves_before`)
    saves_after: tuple[Assign, ...] = ()   # and after it ran (`saves_after`)


def _kernel_context(f: NativeFunction, d: Derivative | None, node: NodeContext | None) -> KernelContext:
    args = f.func.arguments.flat_all
    positions = [i for i, a in enumerate(args) if a.type.is_tensor_like()]
    params = tuple(py_name(a.name) for a in args)
    diff_args = f.func.differentiable_arguments()
    kind = f.kind
    form = "out" if kind == SchemaKind.out else "inplace" if kind == SchemaKind.inplace else "functional"
    diff_flags = None
    if d is not None and d.output_differentiability is not None:
        diff_flags = tuple(d.output_differentiability)
    returns = f.func.returns
    self_arg = params[0] if params else None
    return KernelContext(
        name=kernel_name(f),
        op=f.name,
        op_name=f.func.name.name,
        id=op_id(f),
        params=params,
        key_exprs=tuple(key_expr(args[i]) for i in positions),
        diff=tuple(py_name(a.name) for a in diff_args),
        needs_grad=" or ".join(_requires_grad_expr(a) for a in diff_args) or "False",
        form=form,
        node=node,
        differentiable=diff_flags,
        self=self_arg,
        edges=_edges(diff_args),
        one_output=diff_flags is None and len(returns) == 1 and returns[0].type.is_tensor(),
        view=form == "functional" and any(r.annotation is not None and not r.annotation.is_write for r in returns),
        float_output=f.pointwise is not None and f.pointwise.promote != PromoteKind.bool,
        made=_node_made(f, node),
        saves_before=saves_before(node, form, tuple(py_name(a.name) for a in diff_args), self_arg)
        if node is not None else (),
        saves_after=saves_after(node) if node is not None else (),
    )


def _requires_grad_expr(arg: Argument) -> str:
    """Inline test of one differentiable argument (the hot path avoids a generic helper call)."""
    name = py_name(arg.name)
    if arg.type.is_list():
        return f"_any_requires_grad({name})"
    if arg.type.is_tensor():
        return f"{name}._requires_grad"
    return f"({name} is not None and {name}._requires_grad)"


@dataclass(frozen=True)
class AutogradFile:
    """What generated/_autograd.py holds (codegen/render/autograd.py renders it)."""

    nodes: tuple[NodeContext, ...]      # one per derivatives.yaml entry, in file order
    kernels: tuple[KernelContext, ...]  # one per op with an Autograd kernel, in file order


def autograd_file(model: Model, root: Path) -> AutogradFile:
    """The nodes of every derivative and the Autograd kernel of every op."""
    ops = op_function_names(model.functions)
    helpers = helper_names(root)
    nodes = {id(d): owned(_node_context(d, ops, helpers), d) for d in model.derivatives}
    kernels = []
    for f in model.functions:
        if not f.has_autograd_kernel:
            continue
        d = model.derivative_of(f)
        kernels.append(owned(_kernel_context(f, d, nodes[id(d)] if d is not None else None), f))
    return AutogradFile(tuple(nodes.values()), tuple(kernels))
