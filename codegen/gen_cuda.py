"""CUDA kernels: native_functions.yaml pointwise specs -> CUDA C++ sources and their Python launchers.

`generate(functions, env)` returns {path under generated/: content}:
  cuda/pointwise/<kernel>.cu   one file per pointwise op: for every dtype it supports, kernels for the
                               vectorised contiguous, contiguous and strided paths, 32- and 64-bit index
  cuda/<name>.cu               the fixed kernels: copy/cast, fill/arange, reductions, softmax, random
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

import jinja2

from codegen.kernel_spec import PointwiseSpec, render_cuda
from codegen.model import SchemaKind

try:  # the lead's naming module; the fallback spells the same names until it lands
    from codegen.names import kernel_name
except ImportError:  # pragma: no cover
    def kernel_name(f: object) -> str:  # type: ignore[misc]
        name = f.func.name  # type: ignore[attr-defined]
        return f"{name.name}_{name.overload}" if name.overload else name.name

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
FLOATING = ("float16", "bfloat16", "float32", "float64")
DEFAULT_FLOAT = "float32"
KERNEL_PATHS: tuple[str, ...] = ("vec", "contig", "strided")
INDEX_BITS: dict[int, str] = {32: "unsigned int", 64: "unsigned long long"}
VEC_BYTES = 16  # one 128-bit load per operand in the vectorised path


def opmath(dtype: str) -> str:
    """The dtype arithmetic happens in: float for half precision (PyTorch's opmath_type)."""
    return "float32" if dtype in ("float16", "bfloat16") else dtype


def instance_dtypes(promote: str, dtype: str) -> tuple[str, str, str]:
    """(input, output, compute) dtypes of the instance for inputs of `dtype` (Note [Kernel instances])."""
    if promote == "bool":
        return dtype, "bool", opmath(dtype)
    if promote == "float" and dtype not in FLOATING:
        return dtype, DEFAULT_FLOAT, DEFAULT_FLOAT
    return dtype, dtype, opmath(dtype)


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


@dataclass(frozen=True)
class PointwiseOp:
    """What the templates need to know about one pointwise op."""

    kernel: str  # kernel_name(f), e.g. add_Tensor
    schema: str
    location: str
    source: str  # the spec's expression
    promote: str
    tensors: tuple[str, ...]
    scalars: tuple[str, ...]
    args: tuple[str, ...]  # every schema argument in schema order (the backend kernels' parameters)
    params: tuple[str, ...]  # C++ parameter names of the op's device function, tensors then scalars
    expr: str  # the spec as C++ over `params`
    instances: tuple[Instance, ...]
    inplace: bool  # has an in-place form (native.py derives it)

    @property
    def path(self) -> str:
        return f"cuda/pointwise/{self.kernel}.cu"


def cxx_name(arg: str) -> str:
    """The C++ variable for a schema argument: prefixed, so `int` or `default` cannot clash."""
    return f"a_{arg}"


def pointwise_op(f: object) -> PointwiseOp:
    """The template model of a functional NativeFunction with a pointwise spec."""
    spec: PointwiseSpec = f.pointwise  # type: ignore[attr-defined]
    func = f.func  # type: ignore[attr-defined]
    names = {a: cxx_name(a) for a in (*spec.tensors, *spec.scalars)}
    kernel = kernel_name(f)
    instances = []
    for dtype in spec.dtypes:
        in_d, out_d, comp_d = instance_dtypes(spec.promote, dtype)
        instances.append(Instance(f"{kernel}__{dtype}", dtype, out_d, CTYPES[in_d][0], CTYPES[out_d][0],
                                  CTYPES[comp_d][0], vec_width(in_d, out_d)))
    positional = func.arguments.positional
    return PointwiseOp(
        kernel=kernel,
        schema=str(func),
        location=str(f.loc),  # type: ignore[attr-defined]
        source=spec.source,
        promote=spec.promote,
        tensors=spec.tensors,
        scalars=spec.scalars,
        args=tuple(a.name for a in func.arguments.flat_non_out),
        params=tuple(names[a] for a in (*spec.tensors, *spec.scalars)),
        expr=render_cuda(spec, names),
        instances=tuple(instances),
        inplace=bool(positional) and str(positional[0]) == "Tensor self" and spec.promote != "bool",
    )


def pointwise_ops(functions: Sequence[object]) -> list[PointwiseOp]:
    """Every functional op with a pointwise spec, sorted by kernel name (derived forms share its kernels)."""
    ops = [pointwise_op(f) for f in functions
           if getattr(f, "pointwise", None) is not None and f.func.kind() == SchemaKind.functional]  # type: ignore[attr-defined]
    return sorted(ops, key=lambda op: op.kernel)


def kernel_names(op: PointwiseOp) -> list[str]:
    """Every kernel (extern "C" name) of `op`'s source file, in file order."""
    return [f"{inst.name}__{path}{bits}"
            for inst in op.instances for bits in INDEX_BITS for path in KERNEL_PATHS]


def generate(functions: Sequence[object], env: jinja2.Environment) -> dict[str, str]:
    """All CUDA outputs, {path relative to generated/: content}, in sorted path order."""
    ops = pointwise_ops(functions)
    files: dict[str, str] = {}
    pointwise = env.get_template("cuda/pointwise.cu.j2")
    for op in ops:
        files[op.path] = pointwise.render(op=op, paths=KERNEL_PATHS, index_types=INDEX_BITS)
    files.update(fixed_sources(env))
    files["_cuda_kernels.py"] = env.get_template("cuda/cuda_kernels.py.j2").render(ops=ops)
    return dict(sorted(files.items()))


def template_env(templates_dir: str) -> jinja2.Environment:
    """The Jinja2 environment the CUDA templates expect (the CLI builds an equivalent one)."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(templates_dir), undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


# Reductions: name -> (reducer in opgen_reduce.cuh, dtypes, output rule). Output rules: "same" keeps the
# input dtype, "acc" the accumulator's (int64 sums of integers, as PyTorch), "bool" for any/all.
REDUCTIONS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "sum": ("SumOp", tuple(CTYPES), "acc"),
    "prod": ("ProdOp", tuple(CTYPES), "acc"),
    "mean": ("MeanOp", FLOATING, "same"),
    "amax": ("AmaxOp", tuple(CTYPES), "same"),
    "amin": ("AminOp", tuple(CTYPES), "same"),
    "any": ("AnyOp", tuple(CTYPES), "bool"),
    "all": ("AllOp", tuple(CTYPES), "bool"),
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


def reduce_instances() -> list[ReduceInstance]:
    out = []
    for op, (reducer, dtypes, rule) in sorted(REDUCTIONS.items()):
        for dtype in dtypes:
            acc = reduce_acc(op, dtype)
            out_dtype = {"same": dtype, "acc": acc if dtype not in FLOATING else dtype, "bool": "bool"}[rule]
            out.append(ReduceInstance(f"reduce_{op}__{dtype}", op, dtype, out_dtype, reducer,
                                      CTYPES[dtype][0], CTYPES[out_dtype][0], CTYPES[acc][0]))
    return out


def fixed_sources(env: jinja2.Environment) -> dict[str, str]:
    """The kernels that no YAML entry describes (reductions so far)."""
    template = env.get_template("cuda/reduce.cu.j2")
    reduce = template.render(instances=reduce_instances(), index_types=INDEX_BITS)
    return {"cuda/reduce.cu": reduce}
