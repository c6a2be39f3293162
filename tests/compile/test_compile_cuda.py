"""G.compile on a CUDA device: fused groups run as CUDA kernels rendered from the kernel specs
(runtime/compile/cuda_fusion.py, Note [Fused CUDA kernels]); every compiled result is compared with the same
function run eagerly on the device. Runs on a GPU or on the emulated device (`OPGEN_EMULATE_CUDA=1 pytest -m
cuda`), where the fused source is compiled by the host engine."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import generated as G
from runtime.compile import cuda_fusion
from runtime.compile.training import TrainingProgram
from runtime.cuda.launch import force_index_bits

pytestmark = pytest.mark.cuda

def gelu_residual(x: G.Tensor) -> G.Tensor:
    return 0.5 * x * (1 + G.tanh(0.7978845608 * (x + 0.044715 * x * x * x))) * 1.5 + x


def host(t: G.Tensor) -> np.ndarray:
    return t.float().cpu().numpy() if t.dtype in (G.float16, G.bfloat16) else t.cpu().numpy()


def close(got: Any, want: Any, tol: float) -> None:
    got, want = (got, want) if isinstance(got, tuple | list) else ((got,), (want,))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert tuple(g.shape) == tuple(w.shape) and g.dtype == w.dtype and g.device == w.device
        np.testing.assert_allclose(host(g), host(w), rtol=tol, atol=tol)


def run(c: Any, *args: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fall back to eager fails the test
        return c(*args)


def test_a_pointwise_chain_is_one_cuda_kernel_on_every_layout() -> None:
    c = G.compile(gelu_residual)
    x = G.randn(3, 700, device="cuda")
    with G.no_grad():
        close(run(c, x), gelu_residual(x), 1e-6)
        (program,) = c.programs
        assert program.cuda is not None and program.library is None  # CUDA kernels, no CPU library
        (group,) = program.fused
        assert len(group.nodes) == len(program.graph.nodes) and group.outputs and not group.reduction
        source = program.kernel_source()
        assert "__global__" in source and "op_tanh" in source and "opgen::Strided" in source
        y = G.randn(3, 700, device="cuda")
        close(run(c, y), gelu_residual(y), 1e-6)  # the cached program on new values
        assert len(c.programs) == 1
    calls: list[str] = []
    original = cuda_fusion.CudaKernels._launch

    def spy(self: Any, group: Any, path: str, bits: int, *rest: Any) -> None:
        calls.append(f"{path}{bits}")
        original(self, group, path, bits, *rest)

    cuda_fusion.CudaKernels._launch = spy  # type: ignore[method-assign]
    try:
        with G.no_grad():
            close(run(c, x), gelu_residual(x), 1e-6)
            # the guard keys on strides: a transposed input compiles again, and takes the strided kernel
            xt = G.randn(700, 3, device="cuda").t()
            close(run(c, xt), gelu_residual(xt), 1e-6)
            with force_index_bits(64):
                close(run(c, x), gelu_residual(x), 1e-6)
                close(run(c, xt), gelu_residual(xt), 1e-6)
    finally:
        cuda_fusion.CudaKernels._launch = original  # type: ignore[method-assign]
    assert calls == ["contig32", "strided32", "contig64", "strided64"]
    assert c.programs[0].kernel_source() == c.programs[1].kernel_source()  # one source for both layouts


def test_broadcasting_several_outputs_and_kernels_between_groups() -> None:
    def f(x: G.Tensor, w: G.Tensor, b: G.Tensor) -> Any:
        h = G.sigmoid(x * 2 + b) - b * x  # b broadcasts over rows
        z = h @ w  # not fusible: the existing kernel
        s = G.exp(z * 0.25) - 1 + b[:3]
        return h, s, G.softmax(s, -1) * 2

    x, w, b = G.randn(5, 8, device="cuda"), G.randn(8, 3, device="cuda"), G.randn(8, device="cuda")
    c = G.compile(f)
    with G.no_grad():
        close(run(c, x, w, b), f(x, w, b), 1e-5)
    (program,) = c.programs
    assert len(program.fused) == 2
    assert any(n.name in ("mm", "matmul") for n in program.steps if not isinstance(n, cuda_fusion.FusedGroup))


@pytest.mark.parametrize("reduction", ["sum_last", "mean_last_keepdim", "mean_all", "sum_all_two_pass"])
def test_sums_and_means_of_an_expression_fuse_as_epilogues(reduction: str) -> None:
    def f(x: G.Tensor, b: G.Tensor) -> Any:
        e = G.exp(x * 0.5 + b) - x
        r = {"sum_last": lambda: e.sum(-1), "mean_last_keepdim": lambda: e.mean(1, keepdim=True),
             "mean_all": lambda: e.mean(), "sum_all_two_pass": lambda: e.sum()}[reduction]()
        return r, e * 3

    rows, cols = (300, 260) if reduction == "sum_all_two_pass" else (7, 33)  # two passes from 65536 elements
    x, b = G.randn(cols, rows, device="cuda").t(), G.randn(cols, device="cuda")  # a strided input too
    c = G.compile(f)
    with G.no_grad():
        close(run(c, x, b), f(x, b), 1e-4)
        with force_index_bits(64):  # the 64-bit index kernels of the same source
            close(run(c, x, b), f(x, b), 1e-4)
    (program,) = c.programs
    (group,) = program.fused
    assert group.reduction is not None and len(group.outputs) == 2  # the reduction and e * 3


@pytest.mark.parametrize("dtype", [G.float64, G.float16, G.bfloat16])
def test_other_floating_dtypes(dtype: G.dtype) -> None:
    def f(x: G.Tensor, b: G.Tensor) -> Any:
        y = gelu_residual(x) * b - 0.25
        return y, (y * y).sum(-1)

    x, b = G.randn(4, 64, device="cuda", dtype=dtype), G.randn(64, device="cuda", dtype=dtype)
    c = G.compile(f)
    with G.no_grad():
        got, want = run(c, x, b), f(x, b)
    # every intermediate is rounded to the half type as eager execution rounds it: the pointwise result is
    # the eager one (float64 agrees within rounding: a GPU may contract two ops' multiply and add into one
    # fused multiply-add); the sum adds in another order
    if dtype == G.float64:
        close(got, want, 1e-10)
    else:
        np.testing.assert_array_equal(host(got[0]), host(want[0]))
        close(got[1], want[1], 2e-2)
    (program,) = c.programs
    assert len(program.fused) == 1 and program.fused[0].dtype == dtype


def test_training_compiles_forward_and_backward_on_cuda() -> None:
    w = G.randn(8, 6, device="cuda", requires_grad=True)
    b = G.zeros(6, device="cuda", requires_grad=True)

    def loss(x: G.Tensor, target: G.Tensor) -> G.Tensor:
        h = gelu_residual(x @ w + b)
        return ((h - target) * (h - target)).mean()

    x, target = G.randn(5, 8, device="cuda"), G.randn(5, 6, device="cuda")
    c = G.compile(loss)
    for _ in range(2):
        grads = []
        for fn in (c, loss):
            w.grad = b.grad = None
            out = run(fn, x, target)
            out.backward()
            grads.append((out.detach(), w.grad, b.grad))
        close(grads[0], grads[1], 1e-5)
    (program,) = c.programs
    assert isinstance(program, TrainingProgram)
    assert program.forward.fused and program.backward.fused
    assert program.forward.cuda is not None and program.backward.cuda is not None


def test_inputs_the_kernels_do_not_take_run_the_nodes_kernels() -> None:
    c = G.compile(lambda x: G.tanh(x * 3) + 1)
    x = G.randn(4, 5, device="cuda")
    with G.no_grad():
        run(c, x)
        (program,) = c.programs
        (group,) = program.fused
        env = {group.inputs[0].id: G.randn(4, 5, device="cuda", dtype=G.float64)}  # not the group's dtype
        assert not program.cuda.run(group, [env[group.inputs[0].id]], env)
        assert len(env) == 1  # nothing stored


def _schema_arguments(schema: str) -> list[tuple[str, Any]]:
    """(name, default or None) of each argument of an operator's schema."""
    import ast

    inner = schema.split("(", 1)[1].rsplit(") ->", 1)[0]
    out = []
    for part in (p.strip() for p in inner.split(",")):
        if part in ("", "*"):
            continue
        declaration, _, default = part.partition("=")
        try:
            value = ast.literal_eval(default) if default else None
        except (ValueError, SyntaxError):
            value = None
        out.append((declaration.split()[-1], value))
    return out


def test_every_op_with_a_float_kernel_agrees_inside_one_fused_kernel() -> None:
    """Every op whose per-op CUDA kernel maps float32 to float32 (no condition operand), called on the same
    inputs and all returned: one group of them all, each value compared with the per-op kernel's."""
    import re

    import generated._cuda_kernels as kernels
    from runtime.compile.program import fusion_specs
    from runtime.cuda.pointwise import PointwiseKernel
    from runtime.dispatcher import dispatcher

    by_name = {k.name: k for k in vars(kernels).values() if isinstance(k, PointwiseKernel)}
    calls = []
    for name, (tensors, scalars, _, _) in sorted(fusion_specs().items()):
        kernel = by_name.get(re.sub(r"\W", "_", name))
        if kernel is None or kernel.conditions or kernel.instances.get("float32", ("",))[0] != "float32":
            continue
        op = dispatcher.find(name)
        calls.append((op, [(a in tensors, tensors.index(a) if a in tensors else 0,
                            (0.5 if default is None else default) if a in scalars else default)
                           for a, default in _schema_arguments(str(op.schema))]))
    assert len(calls) > 40

    def every(*xs: G.Tensor) -> list[G.Tensor]:
        return [op.call(*(xs[k] if is_tensor else value for is_tensor, k, value in args)) for op, args in calls]

    xs = (G.rand(3, 17, device="cuda") * 0.6 + 0.2,  # inside every op's domain but acosh's
          G.rand(17, device="cuda") * 0.4 + 0.3, G.rand(3, 1, device="cuda") * 0.4 + 0.3)
    c = G.compile(every)
    with G.no_grad():
        got, want = run(c, *xs), every(*xs)
    for (op, _), g, w in zip(calls, got, want, strict=True):
        assert g.dtype == w.dtype == G.float32, op.name
        np.testing.assert_allclose(host(g), host(w), rtol=1e-6, atol=1e-6, err_msg=op.name)
    (program,) = c.programs
    assert sum(len(g.nodes) for g in program.fused) >= len(calls) - 2


UNARY = ["exp", "tanh", "sigmoid", "relu", "abs", "neg", "sin", "log1p"]
TAILS: dict[str, Any] = {
    "none": None, "sum_last": lambda y: y.sum(-1), "mean_first": lambda y: y.mean(0), "all": lambda y: y.sum(),
    "amax_last": lambda y: G.amax(y, -1), "softmax_last": lambda y: G.softmax(y, -1) * 2,
    "log_softmax_first": lambda y: G.log_softmax(y, 0), "var_last": lambda y: G.var(y, -1, correction=0),
    "layer_norm": lambda y: G.nn.functional.layer_norm(y, (y.shape[-1],))}


@settings(max_examples=10, deadline=None, derandomize=True)  # the same graphs every run: their kernels stay cached
@given(ops=st.lists(st.tuples(st.sampled_from(UNARY + ["add", "mul", "sub"]), st.floats(-2, 2)), min_size=2,
                    max_size=6),
       rows=st.integers(1, 5), cols=st.integers(1, 40), broadcast=st.booleans(), transposed=st.booleans(),
       dtype=st.sampled_from([G.float32, G.float64]), tail=st.sampled_from(list(TAILS)))
def test_random_pointwise_graphs_agree_with_eager(ops: list[tuple[str, float]], rows: int, cols: int,
                                                  broadcast: bool, transposed: bool, dtype: G.dtype,
                                                  tail: str) -> None:
    """Random pointwise chains, and the same closed by a reduction (Note [Fused kernels on a CUDA device])."""
    def chain(x: G.Tensor, b: G.Tensor) -> G.Tensor:
        y = x
        for name, c in ops:
            if name == "add":
                y = y + b
            elif name == "mul":
                y = y * c
            elif name == "sub":
                y = c - y
            else:
                y = getattr(G, name)(y.abs() if name == "log1p" else y)
        return y

    def f(x: G.Tensor, b: G.Tensor) -> Any:
        y = chain(x, b)
        return (y, TAILS[tail](y)) if tail != "none" else y

    x = G.randn(cols, rows, device="cuda", dtype=dtype).t() if transposed else \
        G.randn(rows, cols, device="cuda", dtype=dtype)
    b = G.randn(cols, device="cuda", dtype=dtype) if broadcast else G.randn(rows, cols, device="cuda", dtype=dtype)
    c = G.compile(f)
    with G.no_grad():
        close(run(c, x, b), f(x, b), 1e-5)
    assert len(c.programs) == 1  # compiled, not run eagerly


def test_a_whole_training_step_compiles_on_cuda() -> None:
    from runtime.compile.step_program import StepProgram

    def make() -> tuple[Any, Any]:
        G.manual_seed(3)
        model = G.nn.Linear(6, 3).to("cuda")
        return model, G.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step_of(model: Any, opt: Any) -> Any:
        def step(x: G.Tensor, y: G.Tensor) -> G.Tensor:
            opt.zero_grad()
            loss = ((G.tanh(model(x)) * 2 - y) ** 2).mean()  # backward seeds its gradient on the loss device
            loss.backward()
            opt.step()
            return loss
        return step

    x, y = G.randn(5, 6, device="cuda"), G.randn(5, 3, device="cuda")
    (m1, o1), (m2, o2) = make(), make()
    compiled, eager = G.compile(step_of(m1, o1)), step_of(m2, o2)
    for _ in range(3):
        close(run(compiled, x, y), eager(x, y).detach(), 1e-5)
    close(tuple(p.detach() for p in m1.parameters()), tuple(p.detach() for p in m2.parameters()), 1e-5)
    assert compiled.programs and all(isinstance(p, StepProgram) for p in compiled.programs)
