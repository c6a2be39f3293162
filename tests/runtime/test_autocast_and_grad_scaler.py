"""Autocast through the dispatcher (Note [Autocast in opgen], runtime/amp/autocast_mode.py): the Autocast key,
PyTorch's cast policy on CUDA (the emulated device under OPGEN_EMULATE_CUDA=1) and on the CPU with float16
(checked against PyTorch's CPU autocast where it is installed), nesting, enabled=False, the cast cache,
gradients through the casts, custom_fwd, and GradScaler over an autocast loop with an injected inf."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import generated as G
from runtime.amp import autocast_mode as amp
from runtime.amp.policy import AUTOCAST_FUNCTIONS, POLICY
from runtime.cuda import is_available
from runtime.dispatcher import dispatcher, tls
from runtime.vocabulary import KEYS_BY_PRIORITY, DispatchKey


def needs_cuda(fn: Callable[..., Any]) -> Callable[..., Any]:
    return pytest.mark.cuda(pytest.mark.skipif(not is_available(), reason="needs a CUDA device")(fn))


F16, F32, F64 = G.float16, G.float32, G.float64


def _arr(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# -- the key and the lists ---------------------------------------------------------------------------------
def test_autocast_key_sits_above_autograd_and_tracer() -> None:
    assert KEYS_BY_PRIORITY[0] is DispatchKey.Autocast
    assert DispatchKey.Autocast > DispatchKey.Tracer > DispatchKey.Autograd


def test_every_policy_name_is_an_operator() -> None:
    bases = {name.partition(".")[0] for name in dispatcher.ops} | set(AUTOCAST_FUNCTIONS)
    for device_type, table in POLICY.items():
        missing = sorted(set(table) - bases)
        assert not missing, f"{device_type} autocast policy names unknown operators: {missing}"


def test_key_is_included_only_while_a_region_casts() -> None:
    bit = 1 << DispatchKey.Autocast
    assert not tls.include & bit
    with G.autocast("cpu", dtype=G.float16):
        assert tls.include & bit
        with G.autocast("cpu", enabled=False):
            assert not tls.include & bit and not G.is_autocast_enabled("cpu")
        assert tls.include & bit
    assert not tls.include & bit
    assert "Autocast" not in dispatcher.find("mm").kernels  # the table `opgen show` prints, outside regions
    with G.autocast("cpu", dtype=G.float16):
        assert "Autocast" in dispatcher.find("mm").kernels and "Autocast" not in dispatcher.find("add.Tensor").kernels
        with G.autocast("cpu", enabled=False):
            assert "Autocast" not in dispatcher.find("mm").kernels
        assert "Autocast" in dispatcher.find("mm").kernels
    assert "Autocast" not in dispatcher.find("mm").kernels
    with G.autocast("cpu"):  # bfloat16: no CPU path, the state without casts
        assert G.is_autocast_enabled("cpu") and not tls.include & bit
        x = G.ones(2, 3)
        assert (x @ G.ones(3, 2)).dtype == F32
    assert not G.is_autocast_enabled("cpu")


# -- CPU float16 against PyTorch's CPU autocast ------------------------------------------------------------
CPU_CASES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "matmul": lambda M, a, b: a @ b,
    "mm_half_float": lambda M, a, b: M.mm(a.half(), b),
    "linear": lambda M, a, b: M.nn.functional.linear(a, b.t()),
    "addmm": lambda M, a, b: M.addmm(M.zeros(3, 2), a, b),
    "bmm": lambda M, a, b: M.bmm(a[None], b[None]),
    "baddbmm": lambda M, a, b: M.baddbmm(M.zeros(1, 3, 2), a[None], b[None]),
    "conv2d": lambda M, a, b: M.nn.functional.conv2d(a.reshape(1, 1, 3, 4), b.reshape(1, 1, 4, 2)[..., :2, :]),
    "conv_transpose2d": lambda M, a, b: M.nn.functional.conv_transpose2d(a.reshape(1, 1, 3, 4),
                                                                         b.reshape(1, 1, 4, 2)),
    "conv_transpose2d_bias": lambda M, a, b: M.nn.functional.conv_transpose2d(
        a.reshape(1, 1, 3, 4), b.reshape(1, 1, 4, 2), M.ones(1)),
    "conv3d_bias": lambda M, a, b: M.nn.functional.conv3d(
        a.reshape(1, 1, 1, 3, 4), b.reshape(1, 1, 1, 4, 2)[..., :2, :], M.ones(1)),
    "conv1d_bias": lambda M, a, b: M.nn.functional.conv1d(a.reshape(1, 3, 4), b.reshape(2, 4)[None, :, :3].reshape(
        2, 3, 1), M.ones(2)),
    "float64_matmul": lambda M, a, b: a.double() @ b.double(),
    "int_add": lambda M, a, b: M.ones(3, dtype=M.int64) + 1,
    "softmax_half": lambda M, a, b: M.softmax(a.half(), 1),
    "exp_half": lambda M, a, b: M.exp(a.half()),
    "sum_half": lambda M, a, b: a.half().sum(),
    "mse_half": lambda M, a, b: M.nn.functional.mse_loss(a.half(), a.half()),
    "l1_half": lambda M, a, b: M.nn.functional.l1_loss(a.half(), a.half() * 2),
    "cross_entropy_half": lambda M, a, b: M.nn.functional.cross_entropy(a.half(), M.tensor([0, 1, 2])),
    "nll_half": lambda M, a, b: M.nn.functional.nll_loss(a.half(), M.tensor([0, 1, 2])),
    "bce_half": lambda M, a, b: M.nn.functional.binary_cross_entropy(M.sigmoid(a.half()), M.ones(3, 4).half()),
    "prod_half": lambda M, a, b: a.half().prod(),
    "cat_mixed": lambda M, a, b: M.cat([a.half(), a]),
    "stack_half": lambda M, a, b: M.stack([a.half(), a.half()]),
    "layer_norm_half": lambda M, a, b: M.nn.functional.layer_norm(a.half(), (4,)),
    "einsum": lambda M, a, b: M.einsum("ij,jk->ik", a, b),
    "mv": lambda M, a, b: M.mv(a, b[:, 0]),
    "addmv": lambda M, a, b: M.addmv(a[:, 0], a, b[:, 0]),
    "dot": lambda M, a, b: M.dot(a[0], b[:, 0]),
    "tensordot": lambda M, a, b: M.tensordot(a, b, 1),
    "sdpa": lambda M, a, b: M.nn.functional.scaled_dot_product_attention(a[None], a[None], a[None]),
    "bilinear": lambda M, a, b: M.nn.functional.bilinear(a, a, M.ones(1, 4, 4), M.ones(1)),
    "relu_after_matmul": lambda M, a, b: M.relu(a @ b),
    "matmul_then_add_float": lambda M, a, b: (a @ b) + M.ones(3, 2),
}


@pytest.mark.parametrize("case", sorted(CPU_CASES))
def test_cpu_float16_policy_matches_pytorch(case: str) -> None:
    torch = pytest.importorskip("torch")
    fn = CPU_CASES[case]
    a, b = _arr(3, 4), _arr(4, 2, seed=1)
    with torch.autocast("cpu", dtype=torch.float16):
        want = fn(torch, torch.from_numpy(a), torch.from_numpy(b))
    with G.autocast("cpu", dtype=G.float16):
        got = fn(G, G.from_numpy(a), G.from_numpy(b))
    assert got.dtype.name == str(want.dtype).removeprefix("torch."), case
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=2e-2, atol=2e-2)


def test_cpu_gradients_flow_back_in_the_parameter_dtype() -> None:
    lin = G.nn.Linear(4, 3)
    x = G.from_numpy(_arr(5, 4))
    with G.autocast("cpu", dtype=G.float16):
        out = lin(x)
        loss = G.nn.functional.mse_loss(out, G.zeros(5, 3))
    assert out.dtype == F16 and loss.dtype == F32
    loss.backward()
    assert lin.weight.grad.dtype == F32 and lin.bias.grad.dtype == F32
    ref = G.nn.Linear(4, 3)
    ref.load_state_dict(lin.state_dict())
    G.nn.functional.mse_loss(ref(x), G.zeros(5, 3)).backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), ref.weight.grad.numpy(), rtol=2e-2, atol=2e-3)


def test_not_eligible_calls_are_not_cast() -> None:
    a, b = G.from_numpy(_arr(3, 4)), G.from_numpy(_arr(4, 2))
    with G.autocast("cpu", dtype=G.float16):
        out = G.empty(3, 2)
        G.mm(a, b, out=out)  # out= form
        assert out.dtype == F32
        c = G.zeros(3, 2)
        c.addmm_(a, b)  # in-place form
        assert c.dtype == F32
        assert G.cat([a.half(), a.half()]).dtype == F16
        assert G.sum(a.half(), dtype=F16).dtype == F16  # explicit dtype= is respected


def test_cast_cache_reuses_a_parameters_copy_within_the_outer_region() -> None:
    lin = G.nn.Linear(4, 4)
    x = G.from_numpy(_arr(2, 4))
    with G.autocast("cpu", dtype=G.float16):
        y = lin(lin(x))
        assert len(amp._state.cache) == 2  # weight and bias, each cast once for the two calls
        with G.autocast("cpu", dtype=G.float16):
            lin(x)
        assert len(amp._state.cache) == 2  # a nested region shares the cache
    assert not amp._state.cache
    y.sum().backward()
    assert lin.weight.grad.dtype == F32
    ref = G.nn.Linear(4, 4)
    ref.load_state_dict(lin.state_dict())
    ref(ref(x)).sum().backward()  # both uses of the cached copy send their gradient back
    np.testing.assert_allclose(lin.weight.grad.numpy(), ref.weight.grad.numpy(), rtol=2e-2, atol=2e-2)
    with G.autocast("cpu", dtype=G.float16, cache_enabled=False):
        lin(lin(x))
        assert not amp._state.cache


# -- CUDA --------------------------------------------------------------------------------------------------
@needs_cuda
def test_cuda_policy() -> None:
    a = G.from_numpy(_arr(3, 4)).cuda()
    b = G.from_numpy(_arr(4, 2)).cuda()
    h = a.half()
    with G.autocast("cuda"):
        assert G.is_autocast_enabled() and G.get_autocast_dtype("cuda") == F16
        assert (a @ b).dtype == F16 and G.mm(a, b).dtype == F16
        assert G.nn.functional.linear(a, b.t()).dtype == F16
        assert G.addmm(G.zeros(3, 2, device="cuda"), a, b).dtype == F16
        assert G.einsum("ij,jk->ik", a, b).dtype == F16 and G.mv(a, b[:, 0]).dtype == F16
        img = G.from_numpy(_arr(1, 2, 5, 5)).cuda()
        assert G.nn.Conv2d(2, 3, 3).cuda()(img).dtype == F16
        assert G.nn.ConvTranspose2d(2, 3, 3).cuda()(img).dtype == F16
        # fp32 list: softmax, exp/log/pow, sum/cumsum, norms, layer_norm, losses
        for out in (G.softmax(h, 1), G.log_softmax(h, 1), G.exp(h), G.log(h.abs()), h.pow(2), h.sum(),
                    G.cumsum(h, 0), h.norm(), G.nn.functional.layer_norm(h, (4,)),
                    G.nn.functional.mse_loss(h, h), G.nn.functional.cross_entropy(h, G.tensor([0, 1, 2]).cuda())):
            assert out.dtype == F32
        assert G.softmax(h, 1, dtype=F16).dtype == F16  # explicit dtype=
        # promote: the widest input type
        assert G.cat([h, a]).dtype == F32 and G.stack([h, h]).dtype == F16
        assert G.addcmul(h, h, a).dtype == F32
        # not in any list: runs in its inputs' dtype
        assert (h + h).dtype == F16 and G.relu(h).dtype == F16 and (a * 2).dtype == F32
        # float64 and integers are never cast; CPU tensors are not cast by a CUDA region
        assert (a.double() @ b.double()).dtype == F64
        assert (G.ones(2, 2, dtype=G.int64, device="cuda") * 3).dtype == G.int64
        assert (a.cpu() @ b.cpu()).dtype == F32
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            G.nn.functional.binary_cross_entropy(G.sigmoid(a), G.ones(3, 4, device="cuda"))
        with G.autocast("cuda", enabled=False):
            assert (a @ b).dtype == F32
            assert not G.is_autocast_enabled("cuda")
        with G.autocast("cuda", dtype=G.float32):
            assert (h @ h.t()).dtype == F32  # the region's dtype float32 casts lower-precision inputs up
        assert (a @ b).dtype == F16
    assert (a @ b).dtype == F32
    with G.autocast("cuda", dtype=G.bfloat16):  # opgen's CUDA matmuls take no bfloat16: state, no casts
        assert G.is_autocast_enabled("cuda") and (a @ b).dtype == F32


@needs_cuda
@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_cuda_training_with_autocast_and_grad_scaler() -> None:
    G.manual_seed(0)
    net = G.nn.Sequential(G.nn.Linear(4, 8), G.nn.ReLU(), G.nn.Linear(8, 2)).cuda()
    ref = G.nn.Sequential(G.nn.Linear(4, 8), G.nn.ReLU(), G.nn.Linear(8, 2)).cuda()
    ref.load_state_dict(net.state_dict())
    opt = G.optim.SGD(net.parameters(), lr=0.1)
    scaler = G.amp.GradScaler("cuda", init_scale=256.0, growth_interval=2)
    x = G.from_numpy(_arr(6, 4)).cuda()
    t = G.from_numpy(_arr(6, 2, seed=3)).cuda()
    # one step against the float32 reference: the same gradients, in float32, after unscaling
    with G.autocast("cuda"):
        out = net(x)
        loss = G.nn.functional.mse_loss(out, t)
    assert out.dtype == F16 and loss.dtype == F32
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    G.nn.functional.mse_loss(ref(x), t).backward()
    for p, q in zip(net.parameters(), ref.parameters(), strict=True):
        assert p.grad.dtype == F32
        np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.cpu().numpy(), rtol=2e-2, atol=2e-3)
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 256.0
    # an injected inf: the step is skipped and the scale backs off
    opt.zero_grad()
    with G.autocast("cuda"):
        loss = G.nn.functional.mse_loss(net(x), t) * float("inf")
    scaler.scale(loss).backward()
    before = [p.detach().clone() for p in net.parameters()]
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 128.0
    assert all(bool(G.equal(p, q)) for p, q in zip(net.parameters(), before, strict=True))
    # clean steps: the weights move and the scale grows after growth_interval of them
    for _step in range(2):
        opt.zero_grad()
        with G.autocast("cuda"):
            loss = G.nn.functional.mse_loss(net(x), t)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    assert scaler.get_scale() == 256.0
    assert not bool(G.equal(net[0].weight, before[0]))


@needs_cuda
def test_cuda_custom_fwd_casts_inputs_and_runs_without_autocast() -> None:
    seen: list[Any] = []

    class MyMM(G.autograd.Function):
        @staticmethod
        @G.amp.custom_fwd(device_type="cuda", cast_inputs=G.float32)
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            seen.append((a.dtype, G.is_autocast_enabled("cuda")))
            ctx.save_for_backward(a, b)
            return a.mm(b)

        @staticmethod
        @G.amp.custom_bwd(device_type="cuda")
        def backward(ctx: Any, grad: Any) -> Any:
            a, b = ctx.saved_tensors
            return grad.mm(b.t()), a.t().mm(grad)

    a = G.from_numpy(_arr(3, 4)).cuda().half().requires_grad_()
    b = G.from_numpy(_arr(4, 2)).cuda().requires_grad_()
    with G.autocast("cuda"):
        out = MyMM.apply(a, b)
    assert seen == [(F32, False)] and out.dtype == F32
    out.sum().backward()
    assert a.grad.dtype == F16 and b.grad.dtype == F32


def test_unsupported_regions_warn_and_are_disabled() -> None:
    with pytest.warns(UserWarning, match="target dtype is not supported"), G.autocast("cpu", dtype=G.float64):
        assert not G.is_autocast_enabled("cpu")
    with pytest.warns(UserWarning, match="target dtype is not supported"), G.autocast("cpu", dtype=G.int32):
        assert not G.is_autocast_enabled("cpu")
    if not is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"), G.autocast("cuda"):
            assert not G.is_autocast_enabled("cuda")


def test_per_device_spellings_and_nesting() -> None:
    assert not G.is_autocast_cpu_enabled()
    assert G.get_autocast_cpu_dtype() == G.bfloat16 and G.get_autocast_gpu_dtype() == F16
    with G.cpu.amp.autocast(dtype=G.float16):
        assert G.is_autocast_cpu_enabled() and G.get_autocast_cpu_dtype() == F16
        a = G.ones(2, 2)
        assert (a @ a).dtype == F16
    assert G.amp.autocast_mode.autocast is G.autocast and G.amp.grad_scaler.GradScaler is G.amp.GradScaler
    assert G.autocast_increment_nesting() == 1
    assert G.autocast_decrement_nesting() == 0


def test_every_schema_parses_for_its_dtype_argument() -> None:
    positions = {name: amp._dtype_position(op.schema) for name, op in dispatcher.ops.items()}
    assert positions["softmax.int"] == 2 and positions["sum"] == 1 and positions["mm"] is None
    assert positions["unbind.int"] is None  # an alias annotation `(a -> *)` inside the argument list


def test_grad_scaler_refuses_float16_gradients() -> None:
    p = G.nn.Parameter(G.ones(2, dtype=F16))
    p.grad = G.ones(2, dtype=F16)
    opt = G.optim.SGD([p], lr=0.1)
    scaler = G.amp.GradScaler("cpu")
    with pytest.raises(ValueError, match="FP16 gradients"):
        scaler.unscale_(opt)
    assert p.grad.tolist() == [1.0, 1.0]  # nothing was unscaled


def test_grad_scaler_on_cpu_autocast_loop_skips_the_step_with_an_injected_nan() -> None:
    lin = G.nn.Linear(3, 1)
    opt = G.optim.SGD(lin.parameters(), lr=0.1)
    scaler = G.amp.GradScaler("cpu", init_scale=64.0)
    x = G.from_numpy(_arr(4, 3))
    for step, poison in enumerate([False, True, False]):
        opt.zero_grad()
        with G.autocast("cpu", dtype=G.float16):
            loss = lin(x).float().pow(2).mean()
            if poison:
                loss = loss * float("nan")
        scaler.scale(loss).backward()
        before = lin.weight.detach().clone()
        scaler.step(opt)
        scaler.update()
        moved = not bool(G.equal(before, lin.weight))
        assert moved is not poison, step
    assert scaler.get_scale() == 32.0
