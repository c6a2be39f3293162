"""The CUDA backend's kernels: generated/cuda/**.cu (one file per pointwise op, plus the fixed kernels) and
generated/_cuda_kernels.py (their launchers), from the contexts of codegen/gen_cuda.py (templates/cuda/)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import jinja2

from codegen import disk_cache
from codegen.gen_cuda import (
    CTYPES,
    INDEX_BITS,
    KERNEL_PATHS,
    REDUCTIONS,
    PointwiseOp,
    copy_pairs,
    fill_instances,
    pointwise_ops,
    random_instances,
    reduce_instances,
    softmax_instances,
)
from codegen.native import NativeFunction
from codegen.render.inputs import Inputs


@dataclass(frozen=True)
class CudaFiles:
    ops: tuple[PointwiseOp, ...]  # the pointwise ops, in file order


def contexts(inputs: Inputs) -> CudaFiles:
    return CudaFiles(tuple(pointwise_ops(inputs.model.functions)))


def render(env: jinja2.Environment, ctx: CudaFiles) -> dict[str, str]:
    """All CUDA outputs, {path relative to generated/: content}, in sorted path order."""
    cached = _renderer(env)
    files: dict[str, str] = {}
    for op in ctx.ops:
        files[op.path] = cached("cuda/pointwise.cu.j2", op=op, paths=KERNEL_PATHS, index_types=INDEX_BITS)
    files.update(fixed_sources(env))
    files["_cuda_kernels.py"] = cached("cuda/cuda_kernels.py.j2", ops=list(ctx.ops))
    return dict(sorted(files.items()))


def generate(functions: Sequence[NativeFunction], env: jinja2.Environment) -> dict[str, str]:
    """The CUDA outputs of `functions` (a model's, or a test corpus's)."""
    return render(env, CudaFiles(tuple(pointwise_ops(functions))))


def _renderer(env: jinja2.Environment) -> Callable[..., str]:
    """`render(template, **context)`: the template rendered with `context`, taken from the render cache
    when an earlier run rendered the same template and context with the same generator (Note [Generator
    caches] in codegen/disk_cache.py; a context here is frozen dataclasses and tuples of plain values, so
    its repr holds all of it). An environment not loading from a directory renders without the cache."""
    loader = env.loader
    if not isinstance(loader, jinja2.FileSystemLoader) or len(loader.searchpath) != 1:
        return lambda name, **context: env.get_template(name).render(**context)
    base = disk_cache.generator_digest(Path(loader.searchpath[0]))

    def render(name: str, **context: object) -> str:
        key = disk_cache.digest(base, name, repr(sorted(context.items())))
        return disk_cache.memo("render", key, lambda: env.get_template(name).render(**context))

    return render



def fixed_sources(env: jinja2.Environment) -> dict[str, str]:
    """The kernels that no YAML entry describes: reductions, copies, fill/arange, random, softmax.

    One file per reduction and per copy source dtype, so that first use compiles only what it needs.
    """
    render = _renderer(env)
    files: dict[str, str] = {}
    for op in sorted(REDUCTIONS):
        files[f"cuda/reduce/{op}.cu"] = render("cuda/reduce.cu.j2", op=op, instances=reduce_instances(op),
                                               index_types=INDEX_BITS)
    for src in CTYPES:
        files[f"cuda/copy/{src}.cu"] = render("cuda/copy.cu.j2", src=src, pairs=copy_pairs(src),
                                              index_types=INDEX_BITS)
    files["cuda/fill.cu"] = render("cuda/fill.cu.j2", fills=fill_instances(), index_types=INDEX_BITS)
    floats, ints = random_instances()
    files["cuda/random.cu"] = render("cuda/random.cu.j2", floats=floats, ints=ints)
    files["cuda/softmax.cu"] = render("cuda/softmax.cu.j2", instances=softmax_instances(),
                                      index_types=INDEX_BITS)
    return dict(sorted(files.items()))
