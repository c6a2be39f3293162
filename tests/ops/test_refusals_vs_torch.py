"""Bad calls, run against opgen and PyTorch side by side: opgen raises what PyTorch raises.

Each case is an expression over `T`, the library under test (`generated` or `torch`), which expose the
same API for these calls. For every case PyTorch raises, opgen must raise an exception of the same type
(or a subclass of it, as PyTorch's own IndexError/ValueError subclasses are); for a case PyTorch
accepts, opgen must not raise. The torch-free tests of the main cases are in tests/ops/test_refusals.py.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

import generated as G
from runtime.storage import MAX_DIMS

torch = pytest.importorskip("torch")


def _backward_twice(T: Any) -> None:
    x = T.ones(3, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _grad_of_non_scalar(T: Any) -> None:
    x = T.ones(3, requires_grad=True)
    (x * 2).backward()


def _grad_of_no_grad(T: Any) -> None:
    T.ones(3).sum().backward()


def _leaf_inplace(T: Any) -> None:
    T.ones(3, requires_grad=True).add_(1)


def _modified_saved(T: Any) -> None:
    x = T.ones(3, requires_grad=True)
    y = x * 1
    z = y.exp()
    y.add_(1)
    z.sum().backward()


def _autograd_grad_unused(T: Any) -> None:
    x = T.ones(3, requires_grad=True)
    w = T.ones(3, requires_grad=True)
    T.autograd.grad((x * 2).sum(), [w])


def _requires_grad_int(T: Any) -> None:
    T.ones(3, dtype=T.int64).requires_grad_()


def _set_grad_wrong_shape(T: Any) -> None:
    x = T.ones(3, requires_grad=True)
    x.grad = T.ones(4)


def _grad_tensors_wrong_shape(T: Any) -> None:
    x = T.ones(3, requires_grad=True)
    (x * 2).backward(T.ones(4))


def _index_put_wrong_shape(T: Any) -> None:
    x = T.zeros(3, 4)
    x[0] = T.ones(5)


def _setitem_out_of_range(T: Any) -> None:
    x = T.zeros(3)
    x[3] = 1.0


def _item_of_many(T: Any) -> None:
    T.ones(3).item()


def _bool_of_many(T: Any) -> None:
    bool(T.ones(3))


def _view_non_contiguous(T: Any) -> None:
    T.ones(3, 4).t().view(12)


def _numpy_of_requires_grad(T: Any) -> None:
    T.ones(3, requires_grad=True).numpy()


a23 = "T.ones(2, 3)"
a34 = "T.ones(3, 4)"
CASES: dict[str, Any] = {
    # matmul family
    "mm inner": f"T.mm({a23}, {a23})",
    "mm 1d": "T.mm(T.ones(3), T.ones(3, 2))",
    "mm 3d": "T.mm(T.ones(2, 2, 2), T.ones(2, 2))",
    "mm dtype": f"T.mm({a23}, T.ones(3, 4, dtype=T.float64))",
    "mm int float": f"T.mm(T.ones(2, 3, dtype=T.int64), {a34})",
    "matmul inner": f"T.matmul({a23}, {a23})",
    "matmul 0d": "T.matmul(T.tensor(1.0), T.ones(3))",
    "matmul batch": "T.matmul(T.ones(2, 2, 3), T.ones(3, 2, 4))",
    "matmul vec": "T.matmul(T.ones(3), T.ones(4))",
    "bmm 2d": f"T.bmm({a23}, {a34})",
    "bmm batch": "T.bmm(T.ones(2, 2, 3), T.ones(3, 3, 4))",
    "bmm inner": "T.bmm(T.ones(2, 2, 3), T.ones(2, 4, 4))",
    "dot sizes": "T.dot(T.ones(3), T.ones(4))",
    "dot 2d": f"T.dot({a23}, {a23})",
    "outer 2d ok": "T.outer(T.ones(2), T.ones(3))",
    "addmm shape": f"T.addmm(T.ones(5), {a23}, {a34})",
    "@ mismatch": f"{a23} @ {a23}",
    "linear shape": "T.nn.functional.linear(T.ones(2, 3), T.ones(4, 5))",
    "linear bias": "T.nn.functional.linear(T.ones(2, 3), T.ones(4, 3), T.ones(5))",
    # concatenation
    "cat shapes": "T.cat([T.ones(2, 3), T.ones(2, 4)])",
    "cat dim": "T.cat([T.ones(2, 3), T.ones(2, 3)], 2)",
    "cat neg dim": "T.cat([T.ones(2, 3), T.ones(2, 3)], -3)",
    "cat empty list": "T.cat([])",
    "cat ndim": "T.cat([T.ones(2, 3), T.ones(3)])",
    "cat zero-dim": "T.cat([T.tensor(1.0), T.tensor(2.0)])",
    "cat ok 1": "T.cat([T.ones(2, 3), T.ones(2, 4)], 1)",
    "stack shapes": "T.stack([T.ones(2), T.ones(3)])",
    "stack empty": "T.stack([])",
    "stack dim": "T.stack([T.ones(2), T.ones(2)], 3)",
    "stack neg dim": "T.stack([T.ones(2), T.ones(2)], -3)",
    # view / reshape / expand
    "view size": f"{a23}.view(5)",
    "view two -1": f"{a23}.view(-1, -1)",
    "view neg": f"{a23}.view(-2, 3)",
    "view non-contiguous": _view_non_contiguous,
    "view zero infer": "T.ones(0, 3).view(-1, 0)",
    "reshape size": f"{a23}.reshape(4, 2)",
    "reshape two -1": f"{a23}.reshape(-1, -1)",
    "reshape ok": f"{a23}.reshape(3, -1)",
    "expand smaller": f"{a23}.expand(3)",
    "expand mismatch": f"{a23}.expand(2, 4)",
    "expand neg new": "T.ones(3).expand(-1, 3)",
    "expand -1 ok": f"{a23}.expand(-1, 3)",
    "expand_as": f"{a23}.expand_as(T.ones(3, 2))",
    "flatten dims": f"{a23}.flatten(1, 0)",
    "flatten range": f"{a23}.flatten(0, 5)",
    "unflatten": "T.ones(6).unflatten(0, (4, 2))",
    "squeeze dim": f"{a23}.squeeze(3)",
    "unsqueeze dim": f"{a23}.unsqueeze(4)",
    "unsqueeze neg dim": f"{a23}.unsqueeze(-4)",
    "transpose dim": f"{a23}.transpose(0, 2)",
    "t 3d": "T.ones(2, 2, 2).t()",
    "permute count": f"{a23}.permute(0)",
    "permute repeat": f"{a23}.permute(0, 0)",
    "permute range": f"{a23}.permute(0, 2)",
    "narrow range": f"{a23}.narrow(1, 2, 2)",
    "narrow dim": f"{a23}.narrow(2, 0, 1)",
    "narrow neg len": f"{a23}.narrow(1, 0, -1)",
    "select range": f"{a23}.select(0, 2)",
    "select dim": f"{a23}.select(2, 0)",
    "split size 0": "T.ones(4).split(0)",
    "chunk 0": "T.ones(4).chunk(0)",
    "repeat fewer": f"{a23}.repeat(2)",
    "diagonal dims": f"{a23}.diagonal(0, 0, 0)",
    "unbind dim": f"{a23}.unbind(2)",
    "flip dim": f"{a23}.flip(2)",
    "roll dims": f"{a23}.roll(1, 2)",
    "tril 1d": "T.ones(3).tril()",
    # gather / scatter / index_select / take
    "gather dtype": f"T.gather({a23}, 1, T.zeros(2, 3))",
    "gather range": f"T.gather({a23}, 1, T.full((2, 3), 5, dtype=T.int64))",
    "gather ndim": f"T.gather({a23}, 1, T.zeros(3, dtype=T.int64))",
    "gather dim": f"T.gather({a23}, 2, T.zeros(2, 3, dtype=T.int64))",
    "gather negative": f"T.gather({a23}, 1, T.full((2, 3), -4, dtype=T.int64))",
    "index_select dtype": f"T.index_select({a23}, 0, T.zeros(2))",
    "index_select range": f"T.index_select({a23}, 0, T.tensor([5]))",
    "index_select 2d index": f"T.index_select({a23}, 0, T.zeros(2, 2, dtype=T.int64))",
    "index_select dim": f"T.index_select({a23}, 2, T.tensor([0]))",
    "scatter dtype": f"T.zeros(2, 3).scatter(1, T.zeros(2, 3), {a23})",
    "scatter range": f"T.zeros(2, 3).scatter(1, T.full((2, 3), 7, dtype=T.int64), {a23})",
    "scatter_add range": f"T.zeros(2, 3).scatter_add(1, T.full((2, 3), 7, dtype=T.int64), {a23})",
    "index_add shape": "T.zeros(3, 2).index_add(0, T.tensor([0, 1]), T.ones(3, 2))",
    "index_add range": "T.zeros(3, 2).index_add(0, T.tensor([0, 5]), T.ones(2, 2))",
    "index_add dtype": "T.zeros(3, 2).index_add(0, T.tensor([0., 1.]), T.ones(2, 2))",
    "embedding range": "T.nn.functional.embedding(T.tensor([3]), T.ones(3, 2))",
    "embedding dtype": "T.nn.functional.embedding(T.tensor([0.0]), T.ones(3, 2))",
    "one_hot range": "T.nn.functional.one_hot(T.tensor([3]), 3)",
    "one_hot dtype": "T.nn.functional.one_hot(T.tensor([1.0]), 3)",
    "one_hot negative": "T.nn.functional.one_hot(T.tensor([-1]), 3)",
    # convolution / pooling / losses
    "conv2d channels": "T.nn.functional.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 4, 3, 3))",
    "conv2d ndim": "T.nn.functional.conv2d(T.ones(3, 5), T.ones(2, 3, 3, 3))",
    "conv2d weight ndim": "T.nn.functional.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 3))",
    "conv2d kernel big": "T.nn.functional.conv2d(T.ones(1, 3, 2, 2), T.ones(2, 3, 3, 3))",
    "conv2d stride 0": "T.nn.functional.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 3, 3), stride=0)",
    "conv2d bias": "T.nn.functional.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 3, 3), T.ones(3))",
    "conv2d groups": "T.nn.functional.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 3, 3), groups=2)",
    "conv2d neg pad": "T.nn.functional.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 3, 3), padding=-1)",
    "max_pool2d big": "T.nn.functional.max_pool2d(T.ones(1, 1, 2, 2), 3)",
    "max_pool2d ndim": "T.nn.functional.max_pool2d(T.ones(2, 2), 2)",
    "avg_pool2d big": "T.nn.functional.avg_pool2d(T.ones(1, 1, 2, 2), 3)",
    "cross_entropy target range": "T.nn.functional.cross_entropy(T.ones(2, 3), T.tensor([0, 3]))",
    "cross_entropy batch": "T.nn.functional.cross_entropy(T.ones(2, 3), T.tensor([0, 1, 2]))",
    "cross_entropy dtype": "T.nn.functional.cross_entropy(T.ones(2, 3), T.ones(2))",
    "nll_loss range": "T.nn.functional.nll_loss(T.ones(2, 3), T.tensor([0, 5]))",
    "mse shapes ok": "T.nn.functional.mse_loss(T.ones(3), T.ones(3))",
    "dropout p": "T.nn.functional.dropout(T.ones(3), p=1.5)",
    "dropout neg p": "T.nn.functional.dropout(T.ones(3), p=-0.1)",
    "softmax dim": f"T.softmax({a23}, 2)",
    "softmax int": "T.softmax(T.ones(3, dtype=T.int64), 0)",
    "log_softmax dim": f"T.log_softmax({a23}, -3)",
    # reductions and dims
    "sum dim": f"{a23}.sum(2)",
    "sum neg dim": f"{a23}.sum(-3)",
    "sum repeated dims": f"{a23}.sum((0, 0))",
    "mean int": "T.ones(3, dtype=T.int64).mean()",
    "mean dim": f"{a23}.mean(5)",
    "max dim": f"{a23}.max(2)",
    "max empty": "T.ones(0).max()",
    "min empty": "T.ones(0).min()",
    "argmax dim": f"{a23}.argmax(2)",
    "argmax empty": "T.ones(0).argmax()",
    "amax empty": "T.ones(0).amax()",
    "prod dim": f"{a23}.prod(2)",
    "var dim": f"{a23}.var(2)",
    "std dim": f"{a23}.std(3)",
    "cumsum dim": f"{a23}.cumsum(2)",
    "cumsum no dim": f"T.cumsum({a23})",
    "logsumexp dim": f"{a23}.logsumexp(2)",
    "all dim": f"({a23} > 0).all(2)",
    "any dim": f"({a23} > 0).any(2)",
    "sort dim": f"{a23}.sort(2)",
    "topk k": "T.ones(3).topk(4)",
    "topk dim": f"{a23}.topk(1, 2)",
    "argsort dim": f"{a23}.argsort(2)",
    # dtypes
    "sqrt int ok": "T.sqrt(T.ones(3, dtype=T.int64))",
    "bitwise float": "T.bitwise_and(T.ones(3), T.ones(3))",
    "bitwise_not float": "T.bitwise_not(T.ones(3))",
    "~ float": "~T.ones(3)",
    "& float": "T.ones(3) & T.ones(3)",
    "| float int": "T.ones(3) | T.ones(3, dtype=T.int64)",
    "^ float": "T.ones(3) ^ T.ones(3)",
    "remainder int by 0": "T.remainder(T.ones(3, dtype=T.int64), 0)",
    "floor_divide int by 0": "T.floor_divide(T.ones(3, dtype=T.int64), 0)",
    "int div by zero tensor": "T.ones(3, dtype=T.int64) // T.zeros(3, dtype=T.int64)",
    "fmod int by 0": "T.fmod(T.ones(3, dtype=T.int64), 0)",
    "neg bool": "-T.ones(3, dtype=T.bool)",
    "sub bool": "T.ones(3, dtype=T.bool) - T.ones(3, dtype=T.bool)",
    "add_ float into int": "T.ones(3, dtype=T.int64).add_(T.ones(3))",
    "mul_ float into int": "T.ones(3, dtype=T.int64).mul_(1.5)",
    "div_ into int": "T.ones(3, dtype=T.int64).div_(2)",
    "add_ into bool": "T.ones(3, dtype=T.bool).add_(T.ones(3, dtype=T.int64))",
    "out wrong dtype": "T.add(T.ones(3), T.ones(3), out=T.empty(3, dtype=T.int64))",
    "out wrong shape": "T.add(T.ones(3), T.ones(3), out=T.empty(4))",
    "sin_ int": "T.ones(3, dtype=T.int64).sin_()",
    "exp_ int": "T.ones(3, dtype=T.int64).exp_()",
    "sqrt_ int": "T.ones(3, dtype=T.int64).sqrt_()",
    "clamp no bound": "T.clamp(T.ones(3))",
    "lerp int": "T.lerp(T.ones(3, dtype=T.int64), T.ones(3, dtype=T.int64), 0.5)",
    "lerp dtype mismatch": "T.lerp(T.ones(3), T.ones(3, dtype=T.float64), 0.5)",
    "atan2 ok": "T.atan2(T.ones(3, dtype=T.int64), T.ones(3))",
    "pow neg int exponent": "T.pow(T.tensor([2]), -1)",
    "pow int tensor neg exp": "T.tensor([2]) ** T.tensor([-1])",
    "to bad dtype": "T.ones(3).to('float7')",
    "type str": "T.ones(3).to(dtype='float32')",
    "tensor ragged": "T.tensor([[1, 2], [3]])",
    "tensor str": "T.tensor('abc')",
    "tensor none": "T.tensor([1, None])",
    "zeros float size": "T.zeros(2.5)",
    "zeros str size": "T.zeros('a')",
    "ones none size": "T.ones(None)",
    "arange step 0": "T.arange(0, 3, 0)",
    "arange wrong sign": "T.arange(0, 3, -1)",
    "arange nan": "T.arange(0, float('nan'))",
    "arange inf": "T.arange(0, float('inf'))",
    "linspace neg steps": "T.linspace(0, 1, -1)",
    "full bad value": "T.full((2,), 'a')",
    "eye neg": "T.eye(-1)",
    "randn neg": "T.randn(-1)",
    "rand int dtype": "T.rand(3, dtype=T.int64)",
    "randint low high": "T.randint(5, 3, (2,))",
    "randint no size": "T.randint(5)",
    "empty neg": "T.empty(-1)",
    "empty neg 2": "T.empty(2, -3)",
    "zeros neg": "T.zeros(-5)",
    "ones neg": "T.ones((3, -1))",
    "full neg": "T.full((-2,), 1.0)",
    "empty_strided neg stride ok": "T.empty_strided((2,), (-1,))",
    "empty huge": "T.empty(2 ** 62)",
    "zeros huge": "T.zeros(2 ** 40, 2 ** 30)",
    "new_zeros neg": "T.ones(2).new_zeros((-1,))",
    # broadcasting
    "add broadcast": "T.ones(2, 3) + T.ones(4)",
    "mul broadcast": "T.ones(2, 3) * T.ones(2)",
    "where broadcast": "T.where(T.ones(2, dtype=T.bool), T.ones(3), T.ones(3))",
    "add_ broadcast into smaller": "T.ones(3).add_(T.ones(2, 3))",
    "masked_fill broadcast": "T.ones(3).masked_fill(T.ones(4, dtype=T.bool), 0)",
    "eq broadcast": "T.ones(3) == T.ones(4)",
    "maximum broadcast": "T.maximum(T.ones(3), T.ones(4))",
    # masks, conditions, alpha, overlap
    "masked_fill float mask": "T.ones(3).masked_fill(T.ones(3), 0.0)",
    "masked_fill int mask": "T.ones(3).masked_fill(T.ones(3, dtype=T.int64), 0.0)",
    "masked_fill_ float mask": "T.ones(3).masked_fill_(T.ones(3), 0.0)",
    "masked_fill tensor value 1d": "T.ones(3).masked_fill(T.ones(3, dtype=T.bool), T.ones(3))",
    "where float cond": "T.where(T.ones(3), T.ones(3), T.ones(3))",
    "where int cond": "T.where(T.ones(3, dtype=T.int64), T.ones(3), T.ones(3))",
    "where method float": "T.ones(3).where(T.ones(3), T.ones(3))",
    "add float alpha int": "T.add(T.ones(3, dtype=T.int64), T.ones(3, dtype=T.int64), alpha=1.5)",
    "sub float alpha int": "T.sub(T.ones(3, dtype=T.int32), 1, alpha=0.5)",
    "add_ float alpha int": "T.ones(3, dtype=T.int64).add_(T.ones(3, dtype=T.int64), alpha=0.5)",
    "add bool alpha": "T.add(T.ones(3), T.ones(3), alpha=True)",
    "add alpha float ok": "T.add(T.ones(3, dtype=T.int64), T.ones(3), alpha=0.5)",
    "expand add_": "T.zeros(1).expand(3).add_(1)",
    "expand mul_": "T.zeros(1).expand(3).mul_(T.ones(3))",
    "expand copy_": "T.zeros(1).expand(3).copy_(T.ones(3))",
    "expand out": "T.add(T.ones(3), 1, out=T.zeros(1).expand(3))",
    "expand exp_": "T.zeros(2, 1).expand(2, 3).exp_()",
    "expand fill_ ok": "T.zeros(1).expand(3).fill_(1)",
    "expand zero_ ok": "T.zeros(1).expand(3).zero_()",
    "partial add_": "(lambda x: x[1:].add_(x[:-1]))(T.arange(6.0))",
    "partial copy_": "(lambda x: x[1:].copy_(x[:-1]))(T.arange(6.0))",
    "partial out": "(lambda x: T.add(x[:-1], 1, out=x[1:]))(T.arange(6.0))",
    "partial row": "(lambda x: x.add_(x[0]))(T.ones(2, 3))",
    "partial transpose": "(lambda x: x.t().add_(x))(T.ones(3, 3))",
    "alias add_ ok": "(lambda x: x.add_(x))(T.arange(6.0))",
    "alias out ok": "(lambda x: T.mul(x, x, out=x))(T.arange(6.0))",
    "interleaved ok": "(lambda x: x[::2].add_(x[1::2]))(T.arange(6.0))",
    "disjoint ok": "(lambda x: x[:3].add_(x[3:]))(T.arange(6.0))",
    # indexing
    "index out of range": f"{a23}[2]",
    "index neg out of range": f"{a23}[-3]",
    "index too many": f"{a23}[0, 0, 0]",
    "index float": f"{a23}[1.5]",
    "index str": f"{a23}['a']",
    "index bool mask shape": f"{a23}[T.tensor([True, False, True])]",
    "index long out of range": f"{a23}[T.tensor([0, 5])]",
    "index float tensor": f"{a23}[T.tensor([0.0])]",
    "index 0-d": "T.tensor(1.0)[0]",
    "index step 0": "T.ones(5)[::0]",
    "index neg step": "T.ones(5)[::-1]",
    "index two ellipsis": f"{a23}[..., ...]",
    "setitem shape": _index_put_wrong_shape,
    "setitem out of range": _setitem_out_of_range,
    "item many": _item_of_many,
    "bool many": _bool_of_many,
    "int many": "int(T.ones(3))",
    "float many": "float(T.ones(2))",
    "len 0-d": "len(T.tensor(1.0))",
    "iter 0-d": "iter(T.tensor(1.0))",
    # autograd
    "backward twice": _backward_twice,
    "grad of non-scalar": _grad_of_non_scalar,
    "backward without grad": _grad_of_no_grad,
    "in-place on leaf": _leaf_inplace,
    "modified saved tensor": _modified_saved,
    "grad unused": _autograd_grad_unused,
    "requires_grad on int": _requires_grad_int,
    "set .grad wrong shape": _set_grad_wrong_shape,
    "grad_tensors wrong shape": _grad_tensors_wrong_shape,
    "numpy of requires_grad": _numpy_of_requires_grad,
    "detach_ view ok": "T.ones(3).detach_()",
    # devices
    "bad device string": "T.ones(3, device='tpu')",
    "bad device index": "T.ones(3, device='cpu:x')",
    "to bad device": "T.ones(3).to('gpu')",
    "device type": "T.ones(3, device=3.5)",
}

# Families: every binary op with shapes that do not broadcast, every dim-taking method with a dim out of range.
BINARY_OPS = ["add", "sub", "mul", "div", "maximum", "minimum", "atan2", "eq", "ne", "lt", "le", "gt", "ge", "pow",
              "fmod", "remainder", "floor_divide", "logical_and", "logical_or", "logical_xor", "hypot", "copysign"]
# PyTorch's other names of some of them (runtime/kernels/aliases.py): the op's shape errors, in place too
ALIASES = ["divide", "multiply", "subtract", "arctan2", "greater", "greater_equal", "less", "less_equal", "not_equal"]
for _op in ALIASES:
    CASES[f"{_op} broadcast"] = f"T.{_op}(T.ones(2, 3), T.ones(4, 3))"
    CASES[f"{_op}_ broadcast into smaller"] = f"T.ones(3).{_op}_(T.ones(2, 3))"
for _op in BINARY_OPS:
    if hasattr(G, _op) and hasattr(torch, _op):
        CASES[f"{_op} broadcast"] = f"T.{_op}(T.ones(2, 3), T.ones(4, 3))"
        if hasattr(G.Tensor, _op + "_") and hasattr(torch.Tensor, _op + "_"):
            CASES[f"{_op}_ broadcast into smaller"] = f"T.ones(3).{_op}_(T.ones(2, 3))"
        CASES[f"{_op} out overlap"] = f"(lambda x: T.{_op}(x[:-1], x[1:], out=x[1:]))(T.arange(1.0, 7.0))"
DIM_METHODS = ["sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "softmax", "log_softmax", "cumsum",
               "cumprod", "squeeze", "unsqueeze", "flip", "logsumexp", "var", "std", "all", "any", "unbind",
               "argsort", "sort", "max", "min", "count_nonzero", "nansum", "unsqueeze_", "squeeze_"]
for _m in DIM_METHODS:
    if hasattr(G.Tensor, _m) and hasattr(torch.Tensor, _m):
        CASES[f"{_m} dim 5"] = f"T.ones(2, 3).{_m}(5)"
        CASES[f"{_m} dim -4 of 0-d"] = f"T.tensor(1.0).{_m}(-4)"



def _grad_other_dtype(T: Any) -> None:
    T.ones(2, requires_grad=True).grad = T.tensor([1, 2])


def _grad_not_a_tensor(T: Any) -> None:
    T.ones(2, requires_grad=True).grad = [1.0, 2.0]


def _setitem_str(T: Any) -> None:
    T.zeros(3)[0] = "a"


def _setitem_none(T: Any) -> None:
    T.zeros(3)[0] = None


def _setitem_list_of_str(T: Any) -> None:
    T.zeros(3)[0] = ["a"]


def _from_numpy_negative_strides(T: Any) -> None:
    import numpy as np
    T.from_numpy(np.arange(4)[::-1])


def _from_numpy_reversed_2d(T: Any) -> None:
    import numpy as np
    T.from_numpy(np.ones((3, 4))[:, ::-2])


# runtime bad calls: sizes, fill values, *_like inputs, pooling geometry, index_fill
CASES.update({
    "ones str size": "T.ones('3')",
    "ones list of str": "T.ones(['3'])",
    "zeros float size": "T.zeros(2.0)",
    "empty tuple of float": "T.empty((2.0, 3))",
    "full float overflow": "T.full((2,), 1e40, dtype=T.float32)",
    "full half overflow": "T.full((2,), 65520.0, dtype=T.float16)",
    "full int8 overflow": "T.full((2,), 300, dtype=T.int8)",
    "full int32 overflow": "T.full((2,), 2**31, dtype=T.int32)",
    "full uint8 below -255": "T.full((2,), -256, dtype=T.uint8)",
    "full uint8 -1 wraps": "T.full((2,), -1, dtype=T.uint8)",
    "full uint8 negative float": "T.full((2,), -1.5, dtype=T.uint8)",
    "full inf ok": "T.full((2,), float('inf'))",
    "full bool big ok": "T.full((2,), 1e40, dtype=T.bool)",
    "fill_ overflow": "T.zeros(2).fill_(1e40)",
    "fill_ int16 overflow": "T.zeros(2, dtype=T.int16).fill_(70000)",
    "fill_ str": "T.ones(2).fill_('a')",
    "fill_ None": "T.ones(2).fill_(None)",
    "new_full overflow": "T.zeros(2, 3).new_full((2,), 1e40)",
    "new_full int8 overflow": "T.zeros(2, 3).new_full((2,), 300, dtype=T.int8)",
    "grad other dtype": _grad_other_dtype,
    "grad not a tensor": _grad_not_a_tensor,
    "setitem str": _setitem_str,
    "setitem None": _setitem_none,
    "setitem list of str": _setitem_list_of_str,
    "from_numpy negative strides": _from_numpy_negative_strides,
    "from_numpy reversed 2d": _from_numpy_reversed_2d,
    "zeros_like list": "T.zeros_like([1, 2])",
    "ones_like tuple": "T.ones_like((1, 2))",
    "empty_like list": "T.empty_like([1.0])",
    "full_like list": "T.full_like([1.0], 2.0)",
    "rand_like list": "T.rand_like([1.0])",
    "max_pool2d kernel 0": "T.nn.functional.max_pool2d(T.ones(1, 1, 4, 4), 0)",
    "max_pool2d kernel -1": "T.nn.functional.max_pool2d(T.ones(1, 1, 4, 4), -1)",
    "max_pool2d stride 0": "T.nn.functional.max_pool2d(T.ones(1, 1, 4, 4), 2, 0)",
    "max_pool2d dilation 0": "T.nn.functional.max_pool2d(T.ones(1, 1, 4, 4), 2, dilation=0)",
    "max_pool2d padding -1": "T.nn.functional.max_pool2d(T.ones(1, 1, 4, 4), 2, padding=-1)",
    "avg_pool2d kernel 0": "T.nn.functional.avg_pool2d(T.ones(1, 1, 4, 4), 0)",
    "avg_pool2d stride 0": "T.nn.functional.avg_pool2d(T.ones(1, 1, 4, 4), 2, 0)",
    "index_fill_ past the end": "T.zeros(3).index_fill_(0, T.tensor([5]), 1.0)",
    "index_fill_ below -size": "T.zeros(3).index_fill_(0, T.tensor([-4]), 1.0)",
    "index_fill_ negative ok": "T.zeros(3).index_fill_(0, T.tensor([-1]), 1.0)",
    "index_fill dim 1": "T.zeros(3, 2).index_fill(1, T.tensor([2]), 1.0)",
    "index_fill float index": "T.zeros(3).index_fill_(0, T.tensor([1.0]), 1.0)",
    "index_fill 0-d": "T.zeros(()).index_fill_(0, T.tensor([1]), 1.0)",
    "ones most dims ok": f"T.ones([1] * {MAX_DIMS})",
    "ones past the most dims": f"T.ones([1] * {MAX_DIMS + 1})",
})

# A Python number for a Tensor operand: refused by these ops, taken by the arithmetic ones (Note [Numbers
# refused for a Tensor operand] in codegen/api_python.py).
for _op, _x in (("maximum", "T.ones(3)"), ("minimum", "T.ones(3)"), ("fmax", "T.ones(3)"), ("fmin", "T.ones(3)"),
                ("atan2", "T.ones(3)"), ("hypot", "T.ones(3)"), ("logaddexp", "T.ones(3)"),
                ("ldexp", "T.ones(3)"), ("heaviside", "T.ones(3)"), ("nextafter", "T.ones(3)"),
                ("gcd", "T.ones(3, dtype=T.int64)"), ("lcm", "T.ones(3, dtype=T.int64)"),
                ("logical_and", "T.ones(3)"), ("logical_or", "T.ones(3)"), ("logical_xor", "T.ones(3)"),
                ("dot", "T.ones(3)"), ("xlogy", "T.ones(3)"), ("copysign", "T.ones(3)"),
                ("bitwise_and", "T.ones(3, dtype=T.int64)"), ("true_divide", "T.ones(3)")):
    CASES[f"{_op} number other"] = f"T.{_op}({_x}, 2)"
    CASES[f"{_op} method number other"] = f"{_x}.{_op}(2)"

CASES.update({
    "diag_embed dim2 out of range": "T.diag_embed(T.ones(2, 3), dim1=0, dim2=5)",
    "diag_embed dim1 below range": "T.diag_embed(T.ones(2, 3), dim1=-4, dim2=0)",
    "diag_embed dims in range ok": "T.diag_embed(T.ones(2, 3), dim1=0, dim2=-1)",
    "cov of 3-d": "T.cov(T.ones(2, 3, 4))",
    "cov of 2-d ok": "T.cov(T.ones(2, 3))",
    "rms_norm empty normalized_shape": "T.nn.functional.rms_norm(T.ones(2, 3), ())",
    "avg_pool2d divisor_override 0": "T.nn.functional.avg_pool2d(T.ones(1, 1, 4, 4), 2, divisor_override=0)",
    "avg_pool2d divisor_override 3 ok": "T.nn.functional.avg_pool2d(T.ones(1, 1, 4, 4), 2, divisor_override=3)",
    "linspace float steps": "T.linspace(0, 1, 5.0)",
    "linspace bool steps": "T.linspace(0, 1, True)",
    "logspace float steps": "T.logspace(0, 1, 5.0)",
    "logspace int steps ok": "T.logspace(0, 1, 5)",
})

# Cases where opgen deliberately differs, with the reason.
KNOWN_DIFFERENCES: dict[str, str] = {
    "index two ellipsis": "PyTorch accepts x[..., ...]; opgen keeps Python's and NumPy's one-ellipsis rule",
    "pow int tensor neg exp": "PyTorch truncates integer powers with negative exponents to 0; opgen's NumPy "
                              "kernel refuses them (RuntimeError)",
    "type str": "opgen accepts dtype names as strings wherever a dtype is taken (a documented convenience)",
    "ones past the most dims": "PyTorch has no limit on dimensions; opgen's NumPy and CuPy arrays have at most 64 "
                               "(32 before NumPy 2), which opgen names (RuntimeError)",
    "~ float": "PyTorch's Python binding raises TypeError for ~ on floats; opgen's __invert__ is bitwise_not, "
               "which raises NotImplementedError (the kernel's dtype check)",
}


def _run(case: Any, lib: Any) -> BaseException | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if callable(case):
                case(lib)
            else:
                eval(case, {"T": lib})
        except Exception as e:
            return e
    return None


def _same_kind(ours: BaseException | None, theirs: BaseException | None) -> bool:
    if theirs is None or ours is None:
        return ours is None and theirs is None
    # PyTorch's own classes: torch.OutOfMemoryError etc. derive from the builtin types compared here.
    for kind in (IndexError, ValueError, TypeError, NotImplementedError, RuntimeError):
        if isinstance(theirs, kind):
            return isinstance(ours, kind)
    return type(ours) is type(theirs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_raises_what_torch_raises(name: str) -> None:
    if name in KNOWN_DIFFERENCES:
        pytest.skip(KNOWN_DIFFERENCES[name])
    case = CASES[name]
    theirs = _run(case, torch)
    ours = _run(case, G)
    assert _same_kind(ours, theirs), f"{name}: torch {_describe(theirs)}; opgen {_describe(ours)}"


def _describe(e: BaseException | None) -> str:
    return f"raised {type(e).__name__}: {(str(e).splitlines() or [''])[0]}" if e is not None else "accepted"


def test_the_probe_is_large_enough() -> None:
    assert len(CASES) >= 250
