"""Sample inputs for every operator of native_functions.yaml, made from its schema (run by ops/test_every_yaml_op.py).

Note [Samples from the schema]
A root entry of native_functions.yaml gets value tests with no hand-written row: each argument is made from
its schema type. A Tensor is a random array of SHAPE in the sample's dtype (an argument named `mask` or
`condition` is a bool array of the same shape), a `Tensor?` with a default is None, a `Tensor[]` is two
arrays; other arguments take their schema default, else a typed value from TYPE_VALUES. Every Tensor is
then laid out as the layout says (transposed storage, an offset into a larger storage, a stride-0
expansion), and ops without hand-given shapes are also tried broadcast (elementwise ops), 0-d and empty.
The dtypes are those the YAML declares (`dtypes:` of a pointwise op), else every dtype.

Ops whose arguments need structure (index tensors, sizes, dims, matrices that are invertible) have a
`Row` in ROWS below; a row only adds sample inputs (shapes, values, hand-made tensors), never an
expected result: the reference is PyTorch's `torch.ops.aten.<name>.<overload>`, called with the same
arguments on tensors of the same layout (see tests/ops/test_every_yaml_op.py). tests/op_db.py keeps the NumPy
references of the OpInfo-style table; the gradcheck of
tests/autograd/test_gradcheck_every_derivative.py shares TYPE_VALUES.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from codegen.schema_parser import default_value
from tests.op_db import ALL, FLOAT, NUMERIC, rand

SHAPE = (3, 4)
# Layouts every op is tried in, and those only ops with schema-made shapes are (they change the shapes).
SHAPED_LAYOUTS = ("contiguous", "transposed", "offset")
FREE_LAYOUTS = ("expanded", "broadcast", "scalar", "empty")
LAYOUTS = SHAPED_LAYOUTS + FREE_LAYOUTS

# Values by type when the schema has no default (also used by tests/autograd/test_gradcheck_every_derivative.py).
TYPE_VALUES: dict[str, Any] = {"Scalar": 2.0, "float": 0.5, "int": 1, "SymInt": 1, "bool": False,
                               "int[]": [1], "SymInt[]": [1], "int[1]": [1], "str": "none"}


class SampleDtype:
    """Marks a ScalarType argument that takes the sample's dtype (factories without a Tensor argument)."""


DTYPE = SampleDtype()
# Makes a hand-made tensor: (rng, dtype name) -> array.
Maker = Callable[[np.random.Generator, str], Any]


@dataclass(frozen=True)
class Row:
    """What the schema cannot say about an op's inputs. Keys are argument names."""

    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    tensors: dict[str, Maker] = field(default_factory=dict)
    dtypes: tuple[str, ...] | None = None
    domain: tuple[float, float] = (-2.0, 2.0)
    nonzero: tuple[str, ...] = ()             # arguments kept away from 0 (divisors)
    deterministic: bool = True                # False: only shapes and dtypes are compared (random, empty)
    outputs: tuple[int, ...] | None = None    # which outputs are compared (None: all); e.g. SVD's S only
    torch_ref: Callable[..., Any] | None = None  # (torch, *args) when aten has no such overload
    reads_storage: bool = False               # the result depends on the storage, not only the values


@dataclass(frozen=True)
class Sample:
    dtype: str
    layout: str
    args: tuple[Any, ...]       # schema order; tensors as NumPy arrays (lists of them for Tensor[])
    defaults: frozenset[int]    # positions left at the schema default (not passed to PyTorch)


_CONV = {"stride": [2, 1], "padding": [1, 1], "dilation": [1, 2], "groups": 2}


def _pool_indices(rng: np.random.Generator, dt: str) -> Any:
    """Argmax indices of a 2x2, stride 2 max-pool of (2, 3, 4, 6) planes: one random position per window."""
    i, j = rng.integers(0, 2, (2, 3, 2, 3)), rng.integers(0, 2, (2, 3, 2, 3))
    return (np.arange(2).reshape(2, 1) * 2 + i) * 6 + np.arange(3) * 2 + j


def _ints(values: Any) -> Maker:
    return lambda rng, dt: np.array(values, dtype=np.int64)


def _distinct(rng: np.random.Generator, dt: str, shape: tuple[int, ...] = SHAPE) -> Any:
    """Values without ties (order statistics then have one right index)."""
    n = int(np.prod(shape))
    base = rng.permutation(n) - (0 if dt == "uint8" else n // 2)
    return (base * (0.5 if dt in FLOAT else 1)).reshape(shape).astype(dt)


def _well_conditioned(rng: np.random.Generator, dt: str) -> Any:
    return (rng.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)).astype(dt)


def _spd(rng: np.random.Generator, dt: str) -> Any:
    a = rng.uniform(-1, 1, (3, 3))
    return (a @ a.T + np.eye(3)).astype(dt)


ORDERED = tuple(d for d in ALL if d != "bool")
_DISTINCT = {"self": lambda rng, dt: _distinct(rng, dt)}
_TARGETS = _ints([0, 3, 1])

ROWS: dict[str, Row] = {
    # views and shapes
    "transpose.int": Row(values={"dim0": 0, "dim1": 1}),
    "permute": Row(values={"dims": [1, 0]}),
    "expand": Row(shapes={"self": (3, 1)}, values={"size": [2, 3, 4]}),
    "squeeze": Row(shapes={"self": (3, 1, 4)}),
    "squeeze.dim": Row(shapes={"self": (3, 1, 4)}),
    "view": Row(values={"size": [4, 3]}),
    "reshape": Row(values={"shape": [2, 6]}),
    "slice.Tensor": Row(values={"dim": 1, "start": 1, "end": 4, "step": 2}),
    "narrow": Row(values={"dim": 1, "start": 1, "length": 2}),
    "as_strided": Row(values={"size": [2, 2], "stride": [1, 2], "storage_offset": 1}, reads_storage=True),
    "split.Tensor": Row(values={"split_size": 2, "dim": 1}),
    "chunk": Row(values={"chunks": 2}),
    "unflatten.int": Row(values={"dim": 1, "sizes": [2, 2]}),
    "expand_as": Row(shapes={"self": (4,), "other": SHAPE}),
    "movedim.intlist": Row(shapes={"self": (2, 3, 4)}, values={"source": [0, 1], "destination": [2, 0]}),
    "moveaxis.intlist": Row(values={"source": [0], "destination": [1]}),
    "repeat": Row(values={"repeats": [2, 1, 3]}),
    "tile": Row(values={"dims": [2, 1]}),
    "roll": Row(values={"shifts": [1, -2], "dims": [0, 1]}),
    "repeat_interleave.self_int": Row(values={"repeats": 2, "dim": 1}),
    "repeat_interleave.self_Tensor": Row(tensors={"repeats": _ints([1, 0, 3, 2])}, values={"dim": 1}),
    # opgen names the one-argument form's tensor `self` (aten: `repeats`)
    "repeat_interleave.Tensor": Row(dtypes=("int32", "int64"),
                                    tensors={"self": lambda rng, dt: np.array([1, 0, 3, 2], dtype=dt)},
                                    torch_ref=lambda torch, r, *a: torch.repeat_interleave(r, output_size=a[0])),
    # backward helpers of views
    "select_backward": Row(shapes={"grad_output": (3,)}, values={"input_sizes": [3, 4], "dim": 1, "index": 2}),
    "slice_backward": Row(shapes={"grad_output": (3, 2)},
                          values={"input_sizes": [3, 4], "dim": 1, "start": 1, "end": 3, "step": 1}),
    "diagonal_backward": Row(shapes={"grad_output": (3,)},
                             values={"input_sizes": [3, 4], "offset": 0, "dim1": 0, "dim2": 1}),
    "as_strided_backward": Row(shapes={"grad_output": (2, 2)}, values={
        "input_sizes": [3, 4], "input_strides": [4, 1], "input_offset": 0, "size": [2, 2], "stride": [1, 2],
        "storage_offset": 1},
        torch_ref=lambda torch, g, *a: torch.as_strided_scatter(torch.zeros(12, dtype=g.dtype), g, a[3], a[4],
                                                                a[5]).reshape(3, 4)),
    # indexing
    "index.Tensor": Row(tensors={"indices": lambda rng, dt: [np.array([2, 0, 2])]}),
    "index_put": Row(tensors={"indices": lambda rng, dt: [np.array([2, 0])]}, shapes={"values": (2, 4)}),
    "index_put_": Row(tensors={"indices": lambda rng, dt: [np.array([2, 0])]}, shapes={"values": (2, 4)}),
    "index_select": Row(values={"dim": 1}, tensors={"index": _ints([2, 0, 2, 1])}),
    "index_add": Row(values={"dim": 1}, tensors={"index": _ints([2, 0, 2, 1])}),
    "index_add_": Row(values={"dim": 1}, tensors={"index": _ints([2, 0, 2, 1])}),
    **{name: Row(values={"dim": 1}, tensors={"index": _ints([2, 0])}, shapes={"value": ()})
       for name in ("index_fill.int_Scalar", "index_fill.int_Tensor", "index_fill_.int_Scalar",
                    "index_fill_.int_Tensor")},
    "gather": Row(values={"dim": 1}, tensors={"index": _ints([[2, 0], [1, 3], [0, 1]])}),
    "scatter.src": Row(values={"dim": 1}, tensors={"index": _ints([[2, 0], [1, 3], [0, 1]])}),
    "scatter.value": Row(values={"dim": 1}, tensors={"index": _ints([[2, 0], [1, 3], [0, 1]])}),
    "scatter_add": Row(values={"dim": 1}, tensors={"index": _ints([[0, 0], [1, 1], [3, 0]])}),
    "masked_fill.Tensor": Row(shapes={"value": ()}),
    "embedding": Row(shapes={"weight": (5, 3)}, tensors={"indices": _ints([[0, 2], [4, 2]])}),
    "one_hot": Row(dtypes=("int64",), tensors={"self": _ints([[0, 2], [4, 2]])}, values={"num_classes": 5}),
    "bucketize.Tensor": Row(dtypes=NUMERIC, tensors={"boundaries": lambda rng, dt: np.array([0, 1, 2], dtype=dt)}),
    # order statistics (values without ties)
    "sort": Row(dtypes=ORDERED, tensors=_DISTINCT),
    "sort.stable": Row(tensors={"self": lambda rng, dt: rng.integers(0, 3, SHAPE).astype(dt)},
                       values={"stable": True}),
    "argsort": Row(dtypes=ORDERED, tensors=_DISTINCT),
    "argsort.stable": Row(tensors={"self": lambda rng, dt: rng.integers(0, 3, SHAPE).astype(dt)},
                          values={"stable": True}),
    "topk": Row(dtypes=ORDERED, tensors=_DISTINCT, values={"k": 2}),
    "kthvalue": Row(dtypes=ORDERED, tensors=_DISTINCT, values={"k": 2}),
    "median": Row(dtypes=ORDERED, tensors=_DISTINCT),
    "median.dim": Row(dtypes=ORDERED, tensors=_DISTINCT),
    "max.dim": Row(dtypes=ORDERED, tensors=_DISTINCT),
    "min.dim": Row(dtypes=ORDERED, tensors=_DISTINCT),
    "argmax": Row(dtypes=ORDERED, tensors=_DISTINCT),
    "argmin": Row(dtypes=ORDERED, tensors=_DISTINCT),
    "cummax": Row(dtypes=ORDERED, tensors=_DISTINCT),
    "cummin": Row(dtypes=ORDERED, tensors=_DISTINCT),
    "mode": Row(shapes={"self": (3, 7)}, tensors={"self": lambda rng, dt: rng.integers(0, 3, (3, 7)).astype(dt)}),
    "nonzero.as_tuple": Row(values={"as_tuple": True}, torch_ref=lambda torch, x, as_tuple: torch.nonzero(
        x, as_tuple=as_tuple)),
    "unique": Row(tensors={"self": lambda rng, dt: rng.integers(0, 3, SHAPE).astype(dt)},
                  torch_ref=lambda torch, x, *a: torch.unique(x, *a)),
    "_unique2": Row(tensors={"self": lambda rng, dt: rng.integers(0, 3, SHAPE).astype(dt)},
                    values={"return_inverse": True, "return_counts": True}),
    # reductions and norms
    "logsumexp": Row(values={"dim": [1]}),
    "norm.str": Row(dtypes=FLOAT, values={"p": "fro"},
                    torch_ref=lambda torch, x, p, dim, keepdim, dtype: torch.norm(x, p, dim, keepdim)),
    # linear algebra
    "mm": Row(shapes={"self": (3, 4), "mat2": (4, 5)}),
    "bmm": Row(shapes={"self": (2, 3, 4), "mat2": (2, 4, 5)}),
    "matmul": Row(shapes={"self": (2, 3, 4), "other": (4, 5)}),
    "addmm": Row(shapes={"self": (5,), "mat1": (3, 4), "mat2": (4, 5)}, values={"beta": 2, "alpha": 3}),
    "mv": Row(shapes={"self": (3, 4), "vec": (4,)}),
    "dot": Row(shapes={"self": (4,), "tensor": (4,)}),
    "outer": Row(shapes={"self": (3,), "vec2": (4,)}),
    "linear": Row(shapes={"input": (2, 4), "weight": (5, 4), "bias": (5,)}),
    "linalg_inv": Row(dtypes=FLOAT, tensors={"A": _well_conditioned}),
    "linalg_det": Row(dtypes=FLOAT, tensors={"A": _well_conditioned}),
    "inverse": Row(dtypes=FLOAT, tensors={"self": _well_conditioned}),
    "linalg_matrix_power": Row(dtypes=FLOAT, tensors={"self": _well_conditioned}, values={"n": -2}),
    "linalg_cross": Row(shapes={"self": (4, 3), "other": (4, 3)}),
    "det": Row(dtypes=FLOAT, tensors={"self": _well_conditioned}),
    "linalg_solve": Row(dtypes=FLOAT, tensors={"A": _well_conditioned}, shapes={"B": (3, 2)}),
    "linalg_cholesky": Row(dtypes=FLOAT, tensors={"self": _spd}),
    "linalg_qr": Row(dtypes=FLOAT, shapes={"A": (4, 3)}),
    "linalg_svd": Row(dtypes=FLOAT, shapes={"A": (4, 3)}, values={"full_matrices": False}, outputs=(1,)),
    "linalg_svdvals": Row(dtypes=FLOAT, shapes={"A": (4, 3)}),
    "linalg_eigh": Row(dtypes=FLOAT, tensors={"self": _spd}, outputs=(0,)),  # eigenvectors: up to sign
    "linalg_slogdet": Row(dtypes=FLOAT, tensors={"A": _well_conditioned}),
    "cdist": Row(shapes={"x1": (3, 4), "x2": (5, 4)}),
    "prelu": Row(shapes={"self": (2, 4, 3), "weight": (4,)}),  # channels on dim 1, not the last
    # normalization: the parameters are per channel (dim 1) or per normalized trailing dims
    "batch_norm": Row(shapes={"input": (2, 3, 4), "weight": (3,), "bias": (3,), "running_mean": (3,),
                              "running_var": (3,)},
                      values={"training": True, "momentum": 0.1, "eps": 1e-5}),
    **{name: Row(shapes={"input": (2, 3, 4), "weight": (4,), "bias": (4,)}, values={"normalized_shape": [4]})
       for name in ("layer_norm", "native_layer_norm")},
    # losses
    "binary_cross_entropy": Row(domain=(0.1, 0.9)),
    "nll_loss": Row(tensors={"target": _TARGETS}, shapes={"weight": (4,)}),
    "cross_entropy_loss": Row(tensors={"target": _TARGETS}),
    "_cross_entropy_indices": Row(tensors={"target": _TARGETS}, shapes={"weight": (4,)}),
    # convolution and pooling
    "im2col": Row(shapes={"self": (1, 4, 4)},
                  values={"kernel_size": [2, 2], "dilation": [1, 1], "padding": [0, 0], "stride": [1, 1]}),
    "col2im": Row(shapes={"self": (4, 4)}, values={"output_size": [3, 3], "kernel_size": [2, 2],
                                                   "dilation": [1, 1], "padding": [0, 0], "stride": [1, 1]}),
    "conv2d": Row(shapes={"input": (2, 3, 5, 6), "weight": (4, 3, 3, 3), "bias": (4,)},
                  values={"stride": [2, 1], "padding": [1, 1]}),
    "max_pool2d_with_indices": Row(shapes={"self": (2, 3, 4, 6)}, values={"kernel_size": [2, 2]}),
    "max_pool2d_with_indices_backward": Row(
        shapes={"grad_output": (2, 3, 2, 3), "self": (2, 3, 4, 6)}, tensors={"indices": _pool_indices},
        values={"kernel_size": [2, 2], "stride": [2, 2], "padding": [0, 0], "dilation": [1, 1]}),
    # the convolution behind conv2d (runtime/kernels/conv_ops.py): 2 groups, strided, padded, dilated
    "_conv2d_forward": Row(shapes={"input": (2, 4, 5, 6), "weight": (6, 2, 3, 3), "bias": (6,)},
                           values=_CONV, torch_ref=lambda torch, *a: torch.nn.functional.conv2d(*a)),
    "_conv2d_backward_input": Row(shapes={"grad_output": (2, 6, 3, 4), "weight": (6, 2, 3, 3)},
                                  values={"input_size": [2, 4, 5, 6], **_CONV},
                                  torch_ref=lambda torch, g, w, size, *a: torch.nn.grad.conv2d_input(size, w, g, *a)),
    "_conv2d_backward_weight": Row(
        shapes={"grad_output": (2, 6, 3, 4), "input": (2, 4, 5, 6)}, values={"weight_size": [6, 2, 3, 3], **_CONV},
        torch_ref=lambda torch, g, x, size, *a: torch.nn.grad.conv2d_weight(x, size, g, *a)),
    "max_pool2d": Row(shapes={"self": (2, 3, 4, 6)}, values={"kernel_size": [2, 2]}),
    "avg_pool2d": Row(shapes={"self": (2, 3, 4, 6)}, values={"kernel_size": [2, 2]}),
    "adaptive_avg_pool2d": Row(shapes={"self": (2, 3, 4, 6)}, values={"output_size": [2, 3]}),
    # arithmetic whose divisor must not be 0 (integer division by 0 is an error)
    "div.Tensor_mode": Row(values={"rounding_mode": "floor"}, nonzero=("other",)),
    "div.Scalar_mode": Row(values={"rounding_mode": "trunc"}),
    "floor_divide": Row(nonzero=("other",)),
    "remainder.Tensor": Row(nonzero=("other",)),
    "fmod.Tensor": Row(nonzero=("other",)),
    "addcdiv": Row(nonzero=("tensor2",)),
    "pow.Tensor_Tensor": Row(domain=(0.0, 2.0)),
    "clamp": Row(values={"min": -0.5, "max": 0.7}),
    "clip": Row(values={"max": 0.7}),
    "clamp_": Row(values={"min": -0.5}),
    "clamp.Tensor": Row(shapes={"min": (4,), "max": (3, 1)}),
    "clamp_.Tensor": Row(shapes={"max": (4,)}),
    "clip.Tensor": Row(shapes={"min": (3, 1)}),
    # factories and random fills: no fixed values to compare
    "empty_strided": Row(values={"size": [2, 3], "stride": [1, 2], "dtype": DTYPE}, deterministic=False),
    "new_empty": Row(values={"size": [2, 3]}, deterministic=False),
    "new_zeros": Row(values={"size": [2, 3]}),
    "new_ones": Row(values={"size": [2, 3]}),
    "new_full": Row(values={"size": [2, 3]}),
    "uniform_": Row(dtypes=FLOAT, deterministic=False),
    "normal_": Row(dtypes=FLOAT, deterministic=False),
    "random_.from": Row(values={"from": 0, "to": 2}, deterministic=False),
    "native_dropout": Row(values={"p": 0.5, "train": False}),
    "dropout": Row(values={"p": 0.5, "train": False}),
    "_to_copy": Row(values={"dtype": DTYPE}),
    # math, special, indexing, reductions
    "baddbmm": Row(shapes={"self": (2, 3, 5), "batch1": (2, 3, 4), "batch2": (2, 4, 5)}),
    "addbmm": Row(shapes={"self": (3, 5), "batch1": (2, 3, 4), "batch2": (2, 4, 5)}),
    "addmv": Row(shapes={"self": (3,), "mat": (3, 4), "vec": (4,)}),
    "addr": Row(shapes={"self": (3, 4), "vec1": (3,), "vec2": (4,)}),
    "split_with_sizes": Row(values={"split_sizes": [1, 2]}),
    "split_with_sizes_copy": Row(values={"split_sizes": [1, 2]}),
    "scatter_reduce.two": Row(values={"dim": 1, "reduce": "sum"}, tensors={"index": _ints([[0, 0], [1, 1], [3, 0]])}),
    "scatter_reduce_.two": Row(values={"dim": 1, "reduce": "amax"},
                               tensors={"index": _ints([[0, 0], [1, 1], [3, 0]])}),
    "index_copy": Row(values={"dim": 1}, tensors={"index": _ints([2, 0, 3, 1])}),
    "searchsorted.Tensor": Row(tensors={"sorted_sequence": lambda rng, dt: np.arange(5).astype(dt)}),
    "searchsorted.Scalar": Row(tensors={"sorted_sequence": lambda rng, dt: np.arange(5).astype(dt)}),
    "bincount": Row(dtypes=("int64", "int32", "uint8"), tensors={"self": lambda rng, dt: np.array([0, 3, 1, 3], dt)}),
    "quantile": Row(dtypes=("float32", "float64"), tensors={"q": lambda rng, dt: np.array([0.25, 0.5], dt)}),
    "nanquantile": Row(dtypes=("float32", "float64"), tensors={"q": lambda rng, dt: np.array([0.25, 0.5], dt)}),
    "permute_copy": Row(values={"dims": [1, 0]}),
    "scatter.reduce": Row(values={"dim": 1, "reduce": "add"}, tensors={"index": _ints([[0, 0], [1, 1], [3, 0]])}),
    "scatter.value_reduce": Row(values={"dim": 1, "reduce": "multiply"},
                                tensors={"index": _ints([[0, 0], [1, 1], [3, 0]])}),
    "scatter_.reduce": Row(values={"dim": 1, "reduce": "add"}, tensors={"index": _ints([[0, 0], [1, 1], [3, 0]])}),
    "scatter_.value_reduce": Row(values={"dim": 1, "reduce": "add"},
                                 tensors={"index": _ints([[0, 0], [1, 1], [3, 0]])}),
    "index_reduce": Row(dtypes=("float32", "float64"), values={"dim": 1, "reduce": "amax"},
                        tensors={"index": _ints([2, 0, 3, 1])}),
    "logdet": Row(dtypes=("float32", "float64"), tensors={"self": _well_conditioned}),
    "vdot": Row(shapes={"self": (4,), "other": (4,)}),
    "dsplit.int": Row(shapes={"self": (2, 2, 4)}, values={"sections": 2}),
    "dsplit.array": Row(shapes={"self": (2, 2, 4)}, values={"indices": [1, 3]}),
    "tensor_split.tensor_indices_or_sections": Row(tensors={"tensor_indices_or_sections": _ints([1, 2])}),
    "as_strided_scatter": Row(values={"size": [2], "stride": [1]}, shapes={"src": (2,)}),
    "diagonal_scatter": Row(shapes={"src": (3,)}),
    "select_scatter": Row(values={"dim": 0, "index": 1}, shapes={"src": (4,)}),
    "bernoulli": Row(domain=(0.0, 1.0), deterministic=False),
    "bernoulli.p": Row(deterministic=False),
    "normal.Tensor_float": Row(deterministic=False),
    "normal.float_Tensor": Row(domain=(0.0, 2.0), deterministic=False),
    "normal.Tensor_Tensor": Row(domain=(0.0, 2.0), deterministic=False),
    "normal.float_float": Row(deterministic=False),
    "multinomial": Row(domain=(0.0, 1.0), deterministic=False),
    # PyTorch's aliases, in-place samplers and Tensor-surface ops (runtime/kernels/aliases.py, tensor_extras.py)
    "clip_": Row(values={"min": -0.5}),
    "clip_.Tensor": Row(shapes={"max": (4,)}),
    "ger": Row(shapes={"self": (3,), "vec2": (4,)}),
    "matrix_power": Row(dtypes=FLOAT, tensors={"self": _well_conditioned}, values={"n": -2}),
    "slogdet": Row(dtypes=FLOAT, tensors={"self": _well_conditioned}),
    "bernoulli_.float": Row(deterministic=False),
    "bernoulli_.Tensor": Row(domain=(0.0, 1.0), deterministic=False),
    "cauchy_": Row(dtypes=FLOAT, deterministic=False),
    "exponential_": Row(dtypes=FLOAT, deterministic=False),
    "log_normal_": Row(dtypes=FLOAT, deterministic=False),
    "geometric_": Row(values={"p": 0.5}, deterministic=False),
    "fill_diagonal_": Row(reads_storage=True),  # an expanded self: the writes land in shared memory, as torch's
    "new_empty_strided": Row(values={"size": [2, 3], "stride": [1, 2]}, deterministic=False),
    "unsafe_split_with_sizes": Row(values={"split_sizes": [1, 2]}),
    "resize_": Row(values={"size": [2, 3]}, reads_storage=True),  # keeps the storage's elements
    # aten-level ops of the OpInfo database (runtime/kernels/aten_composites.py)
    "_softmax_backward_data": Row(dtypes=FLOAT, values={"dim": 1, "input_dtype": DTYPE}),
    "_safe_softmax": Row(dtypes=FLOAT, values={"dim": 1}),
    **{name: Row(dtypes=FLOAT, shapes={"input": (2, 3, 4), "weight": (3,), "bias": (3,), "running_mean": (3,),
                                       "running_var": (3,)},
                 domain=(0.5, 2.0), values={"training": True, "momentum": 0.1, "eps": 1e-5})
       for name in ("native_batch_norm", "_native_batch_norm_legit")},
    "_batch_norm_with_update": Row(dtypes=FLOAT, shapes={"input": (2, 3, 4), "weight": (3,), "bias": (3,),
                                                         "running_mean": (3,), "running_var": (3,)},
                                   domain=(0.5, 2.0), values={"momentum": 0.1, "eps": 1e-5}, outputs=(0, 1, 2)),
    "native_group_norm": Row(dtypes=FLOAT, shapes={"input": (2, 4, 3), "weight": (4,), "bias": (4,)},
                             values={"N": 2, "C": 4, "HxW": 3, "group": 2, "eps": 1e-5}),
    "constant_pad_nd": Row(values={"pad": [1, -1, 2, 0], "value": 1}),
    "native_dropout_backward": Row(dtypes=FLOAT, values={"scale": 2.0}),
    "grid_sampler_2d": Row(dtypes=FLOAT, shapes={"input": (1, 2, 4, 5), "grid": (1, 3, 3, 2)},
                           values={"interpolation_mode": 0, "padding_mode": 1, "align_corners": False}),
    "grid_sampler_3d": Row(dtypes=FLOAT, shapes={"input": (1, 2, 3, 4, 5), "grid": (1, 2, 2, 2, 3)},
                           values={"interpolation_mode": 0, "padding_mode": 0, "align_corners": True}),
    "_unsafe_masked_index": Row(shapes={"self": (4,)}, values={"fill": 1},
                                tensors={"mask": lambda rng, dt: rng.random((3, 4)) > 0.5,
                                         "indices": lambda rng, dt: [rng.integers(-4, 4, (3, 4))]}),
    "_unsafe_masked_index_put_accumulate": Row(
        dtypes=FLOAT, shapes={"self": (4,), "values": (3, 4)},
        tensors={"mask": lambda rng, dt: rng.random((3, 4)) > 0.5,
                 "indices": lambda rng, dt: [rng.integers(-4, 4, (3, 4))]}),
    "_chunk_cat": Row(shapes={"tensors": (3, 4)}, values={"dim": 1, "num_chunks": 3}),
    "_upsample_bilinear2d_aa": Row(dtypes=FLOAT, shapes={"self": (1, 2, 6, 8)},
                                   values={"output_size": [3, 5], "align_corners": False}),
    "_upsample_bilinear2d_aa.vec": Row(dtypes=FLOAT, shapes={"input": (1, 2, 6, 8)},
                                       values={"output_size": [3, 5], "align_corners": False}),
}
ROWS.update({  # issue 21: torch's legacy linalg names and numeric ops
    "cholesky": Row(dtypes=FLOAT, tensors={"self": _spd}),
    "cholesky_inverse": Row(dtypes=FLOAT, tensors={"self": lambda rng, dt: np.tril(_well_conditioned(rng, dt))}),
    "cholesky_solve": Row(dtypes=FLOAT, shapes={"self": (3, 2)},
                          tensors={"input2": lambda rng, dt: np.tril(_well_conditioned(rng, dt))}),
    "svd": Row(dtypes=FLOAT, shapes={"self": (4, 3)}, outputs=(1,)),  # singular vectors: up to sign
    "triangular_solve": Row(dtypes=FLOAT, shapes={"self": (3, 2)}, tensors={"A": _well_conditioned}),
    "lu_solve": Row(dtypes=FLOAT, shapes={"self": (3, 2)},
                    tensors={"LU_data": _well_conditioned, "LU_pivots": lambda rng, dt: np.array([2, 2, 3], np.int32)}),
    "lu_unpack": Row(dtypes=FLOAT, tensors={"LU_data": _well_conditioned,
                                            "LU_pivots": lambda rng, dt: np.array([3, 2, 3], np.int32)}),
    "orgqr": Row(dtypes=FLOAT, shapes={"self": (4, 3), "input2": (2,)}),
    "ormqr": Row(dtypes=FLOAT, shapes={"self": (4, 3), "input2": (3,), "input3": (4, 2)}),
    "pinverse": Row(dtypes=FLOAT, tensors={"self": _well_conditioned}),
    "matrix_exp": Row(dtypes=FLOAT, tensors={"self": _well_conditioned}),
    "bitwise_left_shift.Tensor_Scalar": Row(values={"other": 2}),
    "bitwise_right_shift.Tensor_Scalar": Row(values={"other": 2}),
    "bitwise_left_shift.Scalar_Tensor": Row(values={"self": 3}),
    "bitwise_right_shift.Scalar_Tensor": Row(values={"self": -7}),
    "histogram.bins_tensor": Row(dtypes=FLOAT, tensors={"bins": lambda rng, dt: np.array([-1.0, 0.0, 0.5, 2.0], dt)}),
    "histogram.bin_ct": Row(dtypes=FLOAT, values={"bins": 4, "range": [-1.0, 1.0]}),
    "combinations": Row(shapes={"self": (4,)}),
    "put": Row(tensors={"index": _ints([0, 5, -1])}, shapes={"source": (3,)}),
    "unique_consecutive": Row(tensors={"self": lambda rng, dt: rng.integers(0, 2, SHAPE).astype(dt)},
                              torch_ref=lambda torch, x, *a: torch.unique_consecutive(x, *a)),
    # opgen names the list `self` (so one positional argument picks the overload by its type); aten `tensors`
    **{f"atleast_{n}d.Sequence": Row(torch_ref=lambda torch, ts, n=n: getattr(torch, f"atleast_{n}d")(ts))
       for n in (1, 2, 3)},
})


def row_of(f: Any) -> Row:
    return ROWS.get(f.name, Row())


def dtypes_of(f: Any) -> tuple[str, ...]:
    """The dtypes an op is tested in: its row's, else those the YAML declares (pointwise) that the CPU
    backend has (not bfloat16: tests/cuda/test_bfloat16.py), else all."""
    row = row_of(f)
    if row.dtypes is not None:
        return row.dtypes
    if f.pointwise is not None:
        return tuple(d for d in f.pointwise.dtypes if d in ALL)
    return ALL


def resolvable(f: Any) -> list[str]:
    """The arguments of `f` that no rule gives a value (empty when samples can be made)."""
    row = row_of(f)
    missing = []
    for a in f.func.arguments.flat_non_out:
        t = a.type
        if a.name in row.values or a.name in row.tensors or a.default is not None or t.is_optional():
            continue
        if t.is_tensor_like():
            if str(t) == "Tensor?[]":
                missing.append(a.name)
            continue
        if str(t) not in TYPE_VALUES and t.base_name() not in TYPE_VALUES:
            missing.append(a.name)
    return missing


def _shape_for(layout: str, position: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of the `position`-th data tensor of an op without hand shapes, in `layout`."""
    if layout == "broadcast":
        return (SHAPE, (SHAPE[1],), (SHAPE[0], 1))[position % 3]
    if layout == "scalar":
        return ()
    if layout == "empty":
        return (0,) + SHAPE[1:]
    return shape


def layouts_of(f: Any) -> tuple[str, ...]:
    """Hand-given shapes fix an op's geometry; broadcasting is tried for elementwise ops only."""
    row = row_of(f)
    if row.shapes or row.tensors:
        return SHAPED_LAYOUTS + ("empty",)  # the first data tensor gets 0 rows
    free = FREE_LAYOUTS if f.pointwise is not None else tuple(x for x in FREE_LAYOUTS if x != "broadcast")
    return SHAPED_LAYOUTS + free


# Dtypes every layout is tried in (when the op accepts them); the others are tried contiguous only, which
# covers the dtype rules at a third of the cost (layout handling does not depend on the element type).
LAYOUT_DTYPES = ("bool", "int64", "float32")


def samples(f: Any, seed: int = 0) -> Iterator[Sample]:
    """The (dtype, layout) samples the op is tested in (see Note [Samples from the schema])."""
    dtypes = dtypes_of(f)
    wide = [d for d in dtypes if d in LAYOUT_DTYPES] or [dtypes[-1]]
    for dtype in dtypes:
        for layout in layouts_of(f) if dtype in wide else ("contiguous",):
            yield make_sample(f, dtype, layout, seed)


def make_sample(f: Any, dtype: str, layout: str, seed: int = 0) -> Sample:
    row = row_of(f)
    rng = np.random.default_rng(seed)
    args: list[Any] = []
    defaults = set()
    position = 0
    for i, a in enumerate(f.func.arguments.flat_non_out):
        t = a.type
        if a.name in row.values:
            args.append(row.values[a.name])
        elif a.name in row.tensors:
            args.append(row.tensors[a.name](rng, dtype))
        elif t.is_tensor_like() and a.name not in row.shapes and t.is_optional():
            args.append(None)
            if a.default is not None:
                defaults.add(i)
        elif t.is_tensor_like():
            if a.name in row.shapes:
                shape = row.shapes[a.name]
                shape = (0,) + shape[1:] if layout == "empty" and position == 0 and shape else shape
            else:
                shape = _shape_for(layout, position, SHAPE)
            position += 1
            if layout == "expanded" and shape:
                shape = (1,) + shape[1:]  # laid out as a stride-0 expansion to SHAPE
            kind = "bool" if a.name in ("mask", "condition") else dtype
            values = [np.asarray(rand(rng, kind, shape, row.domain, a.name in row.nonzero))
                      for _ in range(2 if t.is_list() else 1)]
            args.append(values if t.is_list() else values[0])
        elif a.default is not None:
            args.append(default_value(a))
            defaults.add(i)
        elif t.is_optional():
            args.append(None)
        else:
            args.append(TYPE_VALUES.get(str(t), TYPE_VALUES.get(t.base_name())))
    return Sample(dtype, layout, tuple(args), frozenset(defaults))
