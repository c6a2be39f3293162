"""CUDA kernels: what the CUDA renderer (codegen/render/cuda_kernels.py) renders, decided from the
native_functions.yaml pointwise specs: each op's `PointwiseOp` context and its instances (dtypes, vector
width), and the instances of the fixed kernels (reductions, copies, fill, random, softmax). The outputs:
  cuda/pointwise/<kernel>.cu   one file per pointwise op: for every dtype it supports, kernels for the
                               vectorised contiguous, contiguous and strided paths, 32- and 64-bit index
  cuda/reduce/<op>.cu          the fixed kernels: reductions, copy/cast per source
  cuda/copy/<src dtype>.cu     dtype, fill/arange, Philox random numbers, softmax/log_softmax
  cuda/fill.cu, random.cu, softmax.cu
  _cuda_kernels.py             backend kernels `<kernel>`, `<kernel>_inplace`, `<kernel>_out` for the
                               dispatcher; importable without CuPy (runtime.cuda.pointwise compiles lazily)

Note [Kernel instances]
A pointwise kernel instance is named `<kernel>__<dtype>__<path><bits>`, where <dtype> is the dtype of its
tensor inputs (the launcher casts every input to the common dtype first), <path> is `vec`, `contig` or
`strided` and <bits> 32 or 64 (the index width). The instance's output and compute dtypes follow from the
spec's `promote` (`instance_dtypes`); half precision computes in float. `runtime/cuda/pointwise.py` picks the
instance from the same names, so these rules and `KERNEL_PATHS` are the contract between the two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING

from codegen.api_python import kernel_name
from codegen.kernel_spec import CUDA
from codegen.literals import comment_text
from codegen.model import SchemaKind
from codegen.names import local_name
from codegen.pointwise_kernel import PointwiseKernel, pointwise_kernel
from codegen.render_errors import owned
from runtime.vocabulary import FLOATING_DTYPES, HALF_DTYPES, compute_dtype, opmath_dtype, promoted_dtype

if TYPE_CHECKING:
    from codegen.native import NativeFunction

# dtype name -> (C++ storage type, itemsize). The C++ names of half types are opgen's own
# (runtime/cuda/include/opgen_types.cuh).
CTYPES: dict[str, tuple[str, int]] = {
    "bool": ("bool", 1),
    "uint8": ("unsigned char", 1),
    "int8": ("signed char", 1),
    "int16": ("short", 2),
    "int32": ("int", 4),
    "int64": ("long long", 8),
    "float16": ("opgen::half", 2),
    "bfloat16": ("opgen::bfloat16", 2),
    "float32": ("float", 4),
    "float64": ("double", 8),
}
FLOATING = FLOATING_DTYPES
DEFAULT_FLOAT = "float32"
KERNEL_PATHS: tuple[str, ...] = ("vec", "contig", "strided")
INDEX_BITS: dict[int, str] = {32: "unsigned int", 64: "unsigned long long"}
VEC_BYTES = 16  # one 128-bit load per operand in the vectorised path


opmath = opmath_dtype  # Note [Floating dtypes and opmath] (runtime/vocabulary.py)


def instance_dtypes(promote: str, dtype: str) -> tuple[str, str, str]:
    """(input, output, compute) dtypes of the instance for inputs of `dtype` (Note [Kernel instances])."""
    return dtype, promoted_dtype(promote, dtype, DEFAULT_FLOAT), compute_dtype(promote, dtype, DEFAULT_FLOAT)


def vec_width(in_dtype: str, out_dtype: str) -> int:
    """Elements per vectorised access: a 16-byte load of the widest operand."""
    return max(1, VEC_BYTES // max(CTYPES[in_dtype][1], CTYPES[out_dtype][1]))


@dataclass(frozen=True)
class Instance:
    """One (op, input dtype) instance; rendered as len(KERNEL_PATHS) x len(INDEX_BITS) kernels."""

    name: str  # <kernel>__<dtype>
    dtype: str
    out_dtype: str
    in_t: str
    out_t: str
    comp_t: str
    vec: int


@dataclass(frozen=True, kw_only=True)
class PointwiseOp(PointwiseKernel):
    """What the CUDA templates need to know about one pointwise op: the shared facts (arguments by their
    Python local names, `self` kept) and what the CUDA kernels add."""

    schema: str  # comment text (Note [Text into code only through one door] in codegen/literals.py)
    yaml: str  # the file that declares the op (no line number: adding an op elsewhere changes no file)
    source: str  # the spec printed from its tree, as comment text (never the YAML text)
    args: tuple[str, ...]  # every schema argument in schema order, Python names (the backend kernels' parameters)
    params: tuple[str, ...]  # C++ parameter names of the op's device function, tensors then scalars
    expr: str  # the spec as C++ over `params`
    instances: tuple[Instance, ...]
    yaml_comment: str = ""  # `yaml` as comment text

    @property
    def path(self) -> str:
        return f"cuda/pointwise/{self.kernel}.cu"


def cxx_name(arg: str) -> str:
    """The C++ variable for a schema argument: prefixed, so `int` or `default` cannot clash."""
    return f"a_{arg}"


def pointwise_op(f: NativeFunction) -> PointwiseOp:
    """The template model of a functional NativeFunction with a pointwise spec."""
    spec = f.pointwise
    assert spec is not None
    func = f.func
    names = {a: cxx_name(a) for a in (*spec.tensors, *spec.scalars)}
    kernel = kernel_name(f)
    instances = []
    for dtype in spec.dtypes:
        in_d, out_d, comp_d = instance_dtypes(spec.promote, dtype)
        instances.append(Instance(f"{kernel}__{dtype}", dtype, out_d, CTYPES[in_d][0], CTYPES[out_d][0],
                                  CTYPES[comp_d][0], vec_width(in_d, out_d)))
    return PointwiseOp(
        **pointwise_kernel(f, local_name),
        schema=comment_text(str(func)),
        yaml=PurePath(f.loc.file).name,
        source=comment_text(spec.text),
        args=tuple(local_name(a.name) for a in func.arguments.flat_non_out),
        params=tuple(names[a] for a in (*spec.tensors, *spec.scalars)),
        expr=spec.render(CUDA, names),
        instances=tuple(instances),
        yaml_comment=comment_text(PurePath(f.loc.file).name),
    )


def pointwise_ops(functions: Sequence[NativeFunction]) -> list[PointwiseOp]:
    """Every functional op with a pointwise spec, sorted by kernel name (derived forms share its kernels)."""
    ops = [owned(pointwise_op(f), f) for f in functions
           if f.pointwise is not None and f.func.kind() == SchemaKind.functional]
    return sorted(ops, key=lambda op: op.kernel)


def kernel_names(op: PointwiseOp) -> list[str]:
    """Every kernel (extern "C" name) of `op`'s source file, in file order."""
    return [f"{inst.name}__{path}{bits}"
            for inst in op.instances for bits in INDEX_BITS for path in KERNEL_PATHS]


# Reductions: name -> (reducer in opgen_reduce.cuh, dtypes, output rule). Output rules: "same" keeps the
# input dtype, "acc" the accumulator's (int64 sums of integers, as PyTorch), "bool" for any/all. max and
# min also write int64 indices (argmax/argmin use them).
REDUCTIONS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "sum": ("SumOp", tuple(CTYPES), "acc"),
    "prod": ("ProdOp", tuple(CTYPES), "acc"),
    "mean": ("MeanOp", FLOATING, "same"),
    "amax": ("AmaxOp", tuple(CTYPES), "same"),
    "amin": ("AminOp", tuple(CTYPES), "same"),
    "max": ("MaxOp", tuple(CTYPES), "same"),
    "min": ("MinOp", tuple(CTYPES), "same"),
    "any": ("AnyOp", tuple(CTYPES), "bool"),
    "all": ("AllOp", tuple(CTYPES), "bool"),
    "var": ("VarOp", FLOATING, "same"),
    "std": ("StdOp", FLOATING, "same"),
}


def reduce_acc(op: str, dtype: str) -> str:
    """The accumulator dtype: float for half precision, int64 for sum/prod of integers and bool."""
    if dtype in FLOATING:
        return opmath(dtype)
    if op in ("sum", "prod", "mean"):
        return "int64"
    return dtype


@dataclass(frozen=True)
class ReduceInstance:
    name: str  # reduce_<op>__<dtype>
    op: str
    dtype: str
    out_dtype: str
    reducer: str
    in_t: str
    out_t: str
    acc_t: str


def reduce_instances(op: str) -> list[ReduceInstance]:
    reducer, dtypes, rule = REDUCTIONS[op]
    out = []
    for dtype in dtypes:
        acc = reduce_acc(op, dtype)
        out_dtype = {"same": dtype, "acc": acc if dtype not in FLOATING else dtype, "bool": "bool"}[rule]
        out.append(ReduceInstance(f"reduce_{op}__{dtype}", op, dtype, out_dtype, reducer,
                                  CTYPES[dtype][0], CTYPES[out_dtype][0], CTYPES[acc][0]))
    return out


@dataclass(frozen=True)
class CopyPair:
    name: str  # copy__<src>__<dst>
    src_t: str
    dst_t: str


@dataclass(frozen=True)
class FillInstance:
    dtype: str
    ctype: str
    arange_t: str | None  # the C++ type arange computes in; None where there is no arange (bool)


@dataclass(frozen=True)
class RandomInstance:
    dtype: str
    ctype: str
    acc_t: str  # what uniform/normal draw in: float, or double for float64


@dataclass(frozen=True)
class SoftmaxInstance:
    name: str  # <softmax|log_softmax>__<in dtype>__<out dtype>
    log: bool
    in_t: str
    out_t: str


# softmax input -> output dtypes: the same dtype, or half precision to float (`_softmax(half_to_float)`).
SOFTMAX_PAIRS: tuple[tuple[str, str], ...] = (
    *((d, d) for d in FLOATING), *((d, opmath(d)) for d in HALF_DTYPES))


def copy_pairs(src: str) -> list[CopyPair]:
    return [CopyPair(f"copy__{src}__{dst}", CTYPES[src][0], CTYPES[dst][0]) for dst in CTYPES]


def fill_instances() -> list[FillInstance]:
    out = []
    for dtype, (ctype, _) in CTYPES.items():
        arange_t = None if dtype == "bool" else "double" if dtype in FLOATING else "long long"
        out.append(FillInstance(dtype, ctype, arange_t))
    return out


def random_instances() -> tuple[list[RandomInstance], list[RandomInstance]]:
    """(uniform/normal instances: floating dtypes; randint instances: every dtype but bool)."""
    floats = [RandomInstance(d, CTYPES[d][0], "double" if d == "float64" else "float") for d in FLOATING]
    ints = [RandomInstance(d, CTYPES[d][0], "long long") for d in CTYPES if d != "bool"]
    return floats, ints


def softmax_instances() -> list[SoftmaxInstance]:
    return [SoftmaxInstance(f"{kind}__{i}__{o}", kind == "log_softmax", CTYPES[i][0], CTYPES[o][0])
            for kind in ("softmax", "log_softmax") for i, o in SOFTMAX_PAIRS]
