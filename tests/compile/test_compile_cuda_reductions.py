"""G.compile on a CUDA device: reductions with fused pointwise prologues and epilogues (softmax, log-softmax,
layer norm, cross entropy, variance, sum/mean/amax of expressions) run as one kernel each, rendered by
runtime/compile/cuda_render.py (Note [Fused kernels on a CUDA device]), forward and backward (training
capture); every result and gradient is compared with the same function run eagerly on the device. Runs on a
GPU or on the emulated device (`OPGEN_EMULATE_CUDA=1 pytest -m cuda`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import generated as G
from runtime.compile import cuda_fusion
from runtime.compile.fusion import FusedGroup
from runtime.compile.training import TrainingProgram
from runtime.cuda import emulator
from runtime.cuda.launch import force_index_bits

pytestmark = pytest.mark.cuda
F = G.nn.functional

ROWS, COLS = 6, 37
CASES: dict[str, tuple[Callable[..., Any], str]] = {  # the function of (x, b, target), an op its group holds
    "softmax": (lambda x, b, t: F.softmax(x * 2 + b, -1) * 3 - x, "softmax.int"),
    "softmax_dim0": (lambda x, b, t: G.exp(F.softmax(G.tanh(x), 0)), "softmax.int"),
    "log_softmax": (lambda x, b, t: F.log_softmax(x - b, 1) * x, "log_softmax.int"),
    "layer_norm": (lambda x, b, t: G.relu(F.layer_norm(x * 0.5, (COLS,), b, b * 2)), "layer_norm"),
    "cross_entropy": (lambda x, b, t: F.cross_entropy(x * 2 + b, t), "cross_entropy"),
    "cross_entropy_sum_ignore": (lambda x, b, t: F.cross_entropy(x, t, reduction="sum", ignore_index=3),
                                 "cross_entropy"),
    "var": (lambda x, b, t: G.var(x * b, 1) + 1, "var.correction"),
    "sum_of_expression": (lambda x, b, t: (G.exp(x * 0.5) - b).sum(-1), "sum.dim_IntList"),
    "mean_of_expression": (lambda x, b, t: (G.tanh(x) * x).mean(0, keepdim=True) * 2, "mean.dim"),
    "mean_all": (lambda x, b, t: ((x - b) * (x - b)).mean(), "mean"),
    "amax_of_expression": (lambda x, b, t: G.amax(G.sigmoid(x) * b, 1) - 1, "amax"),
}


def host(t: G.Tensor) -> np.ndarray:
    return t.float().cpu().numpy() if t.dtype in (G.float16, G.bfloat16) else t.cpu().numpy()


def close(got: Any, want: Any, tol: float) -> None:
    for g, w in zip(got, want, strict=True):
        assert tuple(g.shape) == tuple(w.shape) and g.dtype == w.dtype and g.device == w.device
        np.testing.assert_allclose(host(g), host(w), rtol=tol, atol=tol)


def inputs(dtype: Any = G.float32, requires_grad: bool = False) -> tuple[G.Tensor, G.Tensor, G.Tensor]:
    G.manual_seed(0)
    x = G.randn(COLS, ROWS, device="cuda", dtype=dtype).t().contiguous()  # dense; strided cases below
    b = G.randn(COLS, device="cuda", dtype=dtype)
    if requires_grad:
        x.requires_grad_(True)
        b.requires_grad_(True)
    t = G.tensor([0, 5, 3, 36, 3, 11], device="cuda")
    return x, b, t


class Launches:
    """The fused kernels launched (cuda_fusion.CudaKernels._launch), as (group entry, path)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []


@pytest.fixture
def launches() -> Iterator[Launches]:
    seen = Launches()
    original = cuda_fusion.CudaKernels._launch

    def launch(self: Any, group: FusedGroup, path: str, *rest: Any) -> None:
        seen.calls.append((group.entry, path))
        original(self, group, path, *rest)

    cuda_fusion.CudaKernels._launch = launch  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        cuda_fusion.CudaKernels._launch = original  # type: ignore[method-assign]


def run(c: Any, *args: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fall back to eager fails the test
        return c(*args)


def group_of(program: Any, op: str) -> FusedGroup:
    """The fused group holding `op` (the compound op or its decomposition's reduction)."""
    names = {"layer_norm": {op, "native_layer_norm"}, "cross_entropy": {"cross_entropy_loss", "_cross_entropy_indices"}
             }.get(op, {op})
    found = [g for g in program.fused if names & {n.name for n in g.nodes}]
    assert found, f"{op} is in no fused group: {[[n.name for n in g.nodes] for g in program.fused]}"
    return found[0]


@pytest.mark.parametrize("case", list(CASES))
def test_forward_is_one_fused_kernel_and_agrees(case: str, launches: Launches) -> None:
    fn, op = CASES[case]
    x, b, t = inputs()
    c = G.compile(fn)
    with G.no_grad():
        close([run(c, x, b, t)], [fn(x, b, t)], 1e-5)
        (program,) = c.programs
        group = group_of(program, op)
        assert len(group.terms) >= 2 and program.cuda.plans[id(group)] is not None
        assert group.row_dims is not None and "__rows" in program.kernel_source()
        assert (group.entry, "rows") in launches.calls
        with force_index_bits(64):  # the 64-bit index kernels of the same source
            close([run(c, x, b, t)], [fn(x, b, t)], 1e-5)
        assert len(c.programs) == 1


@pytest.mark.parametrize("case", list(CASES))
def test_backward_is_compiled_and_agrees(case: str, launches: Launches) -> None:
    fn, op = CASES[case]
    x, b, t = inputs(requires_grad=True)

    def loss(x: G.Tensor, b: G.Tensor, t: G.Tensor) -> G.Tensor:
        out = fn(x, b, t)  # weighted: a softmax's plain sum has no gradient
        return (out * G.linspace(0.5, 1.5, out.numel(), device="cuda").reshape(tuple(out.shape))).sum()

    c = G.compile(loss)
    results = []
    for f in (c, loss):
        x.grad = b.grad = None
        out = run(f, x, b, t)
        out.backward()
        results.append((out.detach(), x.grad, b.grad if b.grad is not None else G.zeros_like(b)))
    close(results[0], results[1], 1e-4)
    (program,) = c.programs
    assert isinstance(program, TrainingProgram)
    group_of(program.forward, op)
    assert program.backward.fused and program.backward.cuda is not None
    if case.startswith(("softmax", "log_softmax", "layer_norm", "cross_entropy", "var")):
        # their gradients reduce over the rows again (a softmax's: the sum of grad * output)
        assert any(g.row_dims is not None for g in program.backward.fused)
    entries = {e for e, _ in launches.calls}
    assert all(g.entry in entries for g in program.backward.fused if program.backward.cuda.plans[id(g)])


def test_strided_and_broadcast_inputs_and_a_cached_program(launches: Launches) -> None:
    def f(x: G.Tensor, b: G.Tensor) -> Any:
        return F.softmax(x * b, 0), F.layer_norm(x + b, (x.shape[1],)), (x * x).sum(0)

    x = G.randn(40, 5, device="cuda").t()  # transposed: the row dims are strided
    b = G.randn(5, 1, device="cuda")  # broadcast along the rows
    c = G.compile(f)
    with G.no_grad():
        close(run(c, x, b), f(x, b), 1e-5)
        y = G.randn(40, 5, device="cuda").t()
        close(run(c, y, b), f(y, b), 1e-5)  # the cached program, new values
    assert len(c.programs) == 1 and sum(1 for e in launches.calls if e[1] == "rows") >= 2


@pytest.mark.parametrize("dtype", [G.float16, G.bfloat16, G.float64])
def test_half_types_reduce_in_float_as_eager(dtype: Any) -> None:
    def f(x: G.Tensor, b: G.Tensor) -> Any:
        out = [F.softmax(x * 2, -1), F.log_softmax(x, 0), (x * b).sum(-1), G.var(x, 1), G.amax(x - b, 0)]
        if dtype != G.bfloat16:  # (no eager bfloat16 layer norm to compare with)
            out.append(F.layer_norm(x, (COLS,), b, b))
        return tuple(out)

    x, b, _ = inputs(dtype)
    c = G.compile(f)
    with G.no_grad():
        got, want = run(c, x, b), f(x, b)
    # temporaries in float, every result rounded once: the eager kernels' values (float64: within rounding)
    close(got, want, 1e-10 if dtype == G.float64 else 1e-2)
    if dtype != G.float64:
        assert sum(np.array_equal(host(g), host(w)) for g, w in zip(got, want, strict=True)) >= len(got) - 2
    assert all(g.row_dims is not None for g in c.programs[0].fused)


def test_a_target_out_of_range_raises_the_eager_error() -> None:
    c = G.compile(lambda x, t: F.cross_entropy(x * 2, t))
    x, _, t = inputs()
    with G.no_grad():
        run(c, x, t)
        bad = G.tensor([0, 5, 3, 37, 3, 11], device="cuda")
        with pytest.raises(IndexError):
            c(x, bad)
        close([run(c, x, t)], [F.cross_entropy(x * 2, t)], 1e-5)  # the kernel still runs on good targets


def test_a_scatter_sum_beside_a_row_reduction_in_one_kernel() -> None:
    """A sum over the rows (the bias gradient's pattern) fused beside a row reduction: scatter sums added
    with atomics and finished by the finish kernel."""
    def f(x: G.Tensor, b: G.Tensor) -> Any:
        y = G.tanh(x) * b
        return F.softmax(y, 1), y.sum(0), (y * 2).sum()

    x, b, _ = inputs()
    c = G.compile(f)
    with G.no_grad():
        close(run(c, x, b), f(x, b), 1e-5)
    (program,) = c.programs
    (group,) = program.fused
    plan = program.cuda.plans[id(group)]
    assert plan is not None and plan.rows and plan.finish and len(plan.scatters) == 2


def test_few_long_rows_are_split_over_blocks() -> None:
    """Sums of everything and over the batch of a tall matrix give each row several blocks (Note [Split
    rows]); a softmax over the same long dim keeps one block per row."""
    splits: list[tuple[str, int]] = []
    original = cuda_fusion.CudaKernels._launch

    def launch(self: Any, group: FusedGroup, path: str, bits: int, args: tuple[Any, ...], work: int) -> None:
        if path == "rows":
            splits.append((",".join(n.name for n in group.nodes), int(args[2])))
        original(self, group, path, bits, args, work)

    def sums(x: G.Tensor, b: G.Tensor) -> Any:
        return (G.exp(x * 0.25) - b).sum(), (x * b).mean(0), G.softmax(x, 0)

    x, b = G.randn(5000, 3, device="cuda"), G.randn(3, device="cuda")
    cuda_fusion.CudaKernels._launch = launch  # type: ignore[method-assign]
    try:
        c = G.compile(sums)
        with G.no_grad():
            close(run(c, x, b), sums(x, b), 1e-4)
    finally:
        cuda_fusion.CudaKernels._launch = original  # type: ignore[method-assign]
    split = [k for name, k in splits if "softmax" not in name]
    assert split and all(k > 1 for k in split)
    assert [k for name, k in splits if "softmax" in name] == [1]


def test_mixed_dtypes_in_one_group() -> None:
    """Comparisons, casts, integer and half inputs beside float32 and float64 reductions: one kernel, every
    value in its own dtype."""
    def f(x: G.Tensor, y: G.Tensor, i: G.Tensor, h: G.Tensor) -> Any:
        a = (x > 0.1).float() * y.double() + i * 0.5
        s = F.softmax(h.float() * 2, -1).half()
        return a, (a * a).sum(1), s, (x * i).mean(-1), y < 0, G.log_softmax(x.double(), 1)

    x, y = G.randn(4, 9, device="cuda"), G.randn(4, 9, device="cuda", dtype=G.float64)
    i, h = G.randint(0, 5, (4, 9), device="cuda"), G.randn(4, 9, device="cuda", dtype=G.float16)
    c = G.compile(f)
    with G.no_grad():
        got, want = run(c, x, y, i, h), f(x, y, i, h)
    close(got, want, 1e-6)
    (program,) = c.programs
    assert len(program.fused) == 1 and len(program.fused[0].nodes) >= 10


@pytest.mark.skipif(not emulator.active(), reason="racecheck is a mode of the emulated device")
def test_fused_reductions_pass_the_emulators_racecheck() -> None:
    """Under racecheck (Note [Schedules that expose races] in opgen_emulate.h) no two threads of a block touch
    one shared-memory element between barriers, and no two blocks write one global address but by atomics:
    the rows kernels (one block per row and split rows), their finish kernels, a gather's error word."""
    from runtime.cuda.emulator import engine

    x, b, t = inputs()
    tall = G.randn(3000, 3, device="cuda")
    with engine.racecheck(), G.no_grad():
        for fn, _ in CASES.values():
            close([run(G.compile(fn), x, b, t)], [fn(x, b, t)], 1e-5)
        c = G.compile(lambda y: (y.sum(), y.mean(0), G.softmax(y, 0)))
        close(run(c, tall), (tall.sum(), tall.mean(0), G.softmax(tall, 0)), 1e-4)


ND_CASES: dict[str, Callable[[G.Tensor, G.Tensor], G.Tensor]] = {  # (x of 3 dims, w of its last two)
    "softmax_middle_dim": lambda x, w: F.softmax(x * 2, 1),
    "layer_norm_two_dims": lambda x, w: F.layer_norm(x, (5, 7), w, w * 0.5),
    "sum_over_first_and_last": lambda x, w: (G.exp(x * 0.5) + 1).sum((0, 2), keepdim=True),
    "var_without_correction": lambda x, w: G.var(x * w, (0, 2), correction=0),
    "amin_of_transposed": lambda x, w: G.amin(x.transpose(0, 2) * 3, 1) + 1,
}


@pytest.mark.parametrize("case", list(ND_CASES))
def test_reductions_over_several_and_middle_dims(case: str) -> None:
    fn = ND_CASES[case]
    G.manual_seed(1)
    x = G.randn(3, 5, 7, device="cuda", requires_grad=True)
    w = G.randn(5, 7, device="cuda", requires_grad=True)

    def loss(x: G.Tensor, w: G.Tensor) -> G.Tensor:
        out = fn(x, w)
        return (out * G.linspace(0.5, 1.5, out.numel(), device="cuda").reshape(tuple(out.shape))).sum()

    c = G.compile(loss)
    results = []
    for f in (c, loss):
        x.grad = w.grad = None
        out = run(f, x, w)
        out.backward()
        results.append((out.detach(), x.grad, w.grad if w.grad is not None else G.zeros_like(w)))
    close(results[0], results[1], 1e-4)
    (program,) = c.programs
    assert any(g.row_dims is not None for g in program.forward.fused)


@pytest.mark.parametrize("transposed", [False, True])
def test_slice_gradients_are_read_through_a_window_in_the_fused_backward(transposed: bool) -> None:
    def f(x: G.Tensor) -> G.Tensor:
        a, b, c = x.chunk(3, dim=-1)  # the backward places each gradient in its slice and adds them
        return G.tanh(a) * b + c[:, ::2].sum(-1, keepdim=True) + x[:, 1:8:3].sum(-1, keepdim=True)

    x = (G.randn(9, 4, device="cuda").t() if transposed else G.randn(4, 9, device="cuda")).requires_grad_(True)
    c = G.compile(f)
    grads = []
    for fn in (c, c, f):
        x.grad = None
        (run(fn, x) * G.arange(12, device="cuda").reshape(4, 3)).sum().backward()
        grads.append(x.grad)
    close(grads[:2], [grads[2], grads[2]], 1e-5)
    (program,) = c.programs
    windows = [g for g in program.backward.fused if any(t.kind == "window" for t in g.terms)]
    assert windows and all(program.backward.cuda.plans[id(g)].windows for g in windows)
