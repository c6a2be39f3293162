"""bfloat16 tensors on the CUDA backend (Note [bfloat16 on the CUDA backend] in runtime/kernels/copy.py):
made, copied and cast on every path, filled, printed, compared, reduced and computed as PyTorch does
(round to nearest even from float32, float32 accumulation), and refused with a clear error wherever the
array library would see the raw uint16 bits. PyTorch's CPU bfloat16 is the oracle where it is installed;
the CPU backend of opgen has no bfloat16."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import generated as G
from runtime.cuda.composites import BFLOAT16_SAFE
from runtime.dispatcher import CUDA_BIT, dispatcher

pytestmark = pytest.mark.cuda

BF = G.bfloat16
ALL = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
# float32 values around bfloat16's rounding: ties to even down and up, just above a tie, the largest finite
# value and what overflows, subnormals, signed zero, infinities, NaN
EDGES = np.array([1.0, 1.00390625, 1.01171875, np.nextafter(np.float32(1.00390625), 2), -1.00390625, 3.14159265,
                  -2.5, 0.1, 65504.0, 3.3895313892515355e38, 3.4e38, 1e-40, -1e-45, -0.0, 0.0, np.inf, -np.inf,
                  np.nan], np.float32)


def _bits(t: G.Tensor) -> np.ndarray:
    """The bfloat16 bit patterns of a bfloat16 tensor (its values in float32, whose high half they are)."""
    return (t.float().cpu().numpy().view(np.uint32) >> 16).astype(np.uint16)


def _torch_bits(torch: Any, values: np.ndarray) -> np.ndarray:
    return torch.from_numpy(values).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)


def _bf(values: Any) -> G.Tensor:
    return G.tensor(values, dtype=BF, device="cuda")


def test_float32_to_bfloat16_rounds_to_nearest_even() -> None:
    got = _bits(G.from_numpy(EDGES).cuda().to(BF))
    # known answers (no oracle needed): 1 + 2**-8 is a tie that goes down to 1.0, 1 + 3 * 2**-8 one that goes up
    assert got[0] == 0x3F80 and got[1] == 0x3F80 and got[2] == 0x3F82 and got[3] == 0x3F81
    assert got[10] == 0x7F80 and got[-1] & 0x7FFF > 0x7F80  # 3.4e38 overflows to inf; NaN stays NaN
    torch = pytest.importorskip("torch")
    want = _torch_bits(torch, EDGES)
    nan = np.isnan(EDGES)
    np.testing.assert_array_equal(got[~nan], want[~nan])


@pytest.mark.parametrize("other", ALL)
def test_casts_to_and_from_every_dtype_match_pytorch(other: str) -> None:
    torch = pytest.importorskip("torch")
    values = np.array([0, 1, -1, 2.5, -3.75, 100.0, 255.0, 3.14159265, 1.00390625, 300.0], np.float64)
    if other == "bool":
        values = values != 0
    elif other == "uint8":
        values = np.abs(values)
    src = torch.from_numpy(values).to(getattr(torch, other))
    ours = G.tensor(values).cuda().to(getattr(G, other))
    # other -> bfloat16, through `.to` and through copy_ (into a strided, offset destination)
    want = src.to(torch.bfloat16).float().numpy()
    np.testing.assert_array_equal(ours.to(BF).float().cpu().numpy(), want, err_msg=f"{other} -> bfloat16")
    dst = G.zeros(2 * len(values) + 1, dtype=BF, device="cuda")[1::2]
    dst.copy_(ours)
    np.testing.assert_array_equal(dst.float().cpu().numpy(), want, err_msg=f"copy_ {other} -> bfloat16")
    # bfloat16 -> other (the values PyTorch's bfloat16 holds, cast as PyTorch casts them)
    held = src.to(torch.bfloat16)
    mine = ours.to(BF)
    want_back = held.to(getattr(torch, other))
    if other != "bfloat16":
        got = mine.to(getattr(G, other))
        assert got.dtype is getattr(G, other) and got.device.type == "cuda"
        if other in ("uint8", "int8", "int16"):  # out-of-range float -> small int is undefined in C++ and PyTorch
            keep = (held.float().abs() < 100).numpy()
            np.testing.assert_array_equal(got.cpu().numpy()[keep], want_back.numpy()[keep])
        else:
            np.testing.assert_array_equal(got.cpu().numpy(), want_back.numpy(), err_msg=f"bfloat16 -> {other}")
        on_cpu = mine.to("cpu", getattr(G, other))  # cast on the device, then moved
        assert on_cpu.device.type == "cpu"
        np.testing.assert_array_equal(on_cpu.numpy(), got.cpu().numpy())
        into_cpu = G.zeros(len(values), dtype=getattr(G, other))
        into_cpu.copy_(mine)
        np.testing.assert_array_equal(into_cpu.numpy(), got.cpu().numpy())


def test_factories_fill_and_print() -> None:
    np.testing.assert_array_equal(G.zeros(2, 3, dtype=BF, device="cuda").float().cpu().numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(G.ones(4, dtype=BF, device="cuda").float().cpu().numpy(), np.ones(4))
    full = G.full((3,), 1.7, dtype=BF, device="cuda")
    assert full.tolist() == [1.703125] * 3  # 1.7 rounded to bfloat16
    assert _bf([1.7]).item() == 1.703125 and G.ones(2, 2, device="cuda").to(BF).new_full((2,), 0.1).tolist() == \
        [0.10009765625] * 2
    assert G.arange(0, 300, 37, dtype=BF, device="cuda").tolist() == [0, 37, 74, 111, 148, 185, 222, 260, 296]
    assert G.linspace(0, 1, 5, dtype=BF, device="cuda").tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert G.eye(2, 3, dtype=BF, device="cuda").tolist() == [[1, 0, 0], [0, 1, 0]]
    like = G.ones_like(full)
    assert like.dtype is BF and like.tolist() == [1.0] * 3 and G.zeros_like(full).tolist() == [0.0] * 3
    e = G.empty(5, dtype=BF, device="cuda")
    e.fill_(-2.5)
    assert e.tolist() == [-2.5] * 5
    e.t().fill_(G.tensor(3.0))  # a 0-d tensor value
    assert e.tolist() == [3.0] * 5
    e.zero_()
    assert e.tolist() == [0.0] * 5
    assert G.tensor(_bf([1.5, 2.0])).dtype is BF  # a tensor of a bfloat16 tensor keeps it
    assert repr(_bf([1.5, 3.14159])) == "tensor([1.5000, 3.1406], device='cuda:0', dtype=opgen.bfloat16)"
    torch = pytest.importorskip("torch")
    values = [0.1, -2.5, 1e-5, 123456.0]
    values_text = repr(_bf(values)).split("]")[0]  # the values, laid out as PyTorch lays them out
    assert values_text == repr(torch.tensor(values, dtype=torch.bfloat16)).split("]")[0]


def test_random_factories_round_into_bfloat16() -> None:
    G.manual_seed(0)
    for t in (G.rand(2000, dtype=BF, device="cuda"), G.randn(2000, dtype=BF, device="cuda"),
              G.randint(0, 7, (2000,), dtype=BF, device="cuda")):
        assert t.dtype is BF
        v = t.float().cpu().numpy()
        assert (v.view(np.uint32) & 0xFFFF == 0).all()
    u = G.rand(2000, dtype=BF, device="cuda").float().cpu().numpy()
    assert 0 <= u.min() and u.max() <= 1 and 0.45 < u.mean() < 0.55
    n = G.randn(2000, dtype=BF, device="cuda").float().cpu().numpy()
    assert abs(n.mean()) < 0.1 and 0.9 < n.std() < 1.1
    r = G.randint(0, 7, (2000,), dtype=BF, device="cuda").float().cpu().numpy()
    assert set(np.unique(r)) == set(range(7))


def test_pointwise_promotion_inplace_and_out_match_pytorch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-4, 4, (3, 17)).astype(np.float32), rng.uniform(0.5, 4, (3, 17)).astype(np.float32)
    ta, tb = torch.from_numpy(a).bfloat16(), torch.from_numpy(b).bfloat16()
    x, y = G.from_numpy(a).cuda().to(BF), G.from_numpy(b).cuda().to(BF)
    for got, want in ((x + y, ta + tb), (x * y, ta * tb), (x - 2.5 * y, ta - 2.5 * tb), (x / y, ta / tb),
                      (x + 3, ta + 3), (x.t() * y.t(), ta.t() * tb.t())):
        assert got.dtype is BF
        np.testing.assert_array_equal(got.float().cpu().numpy(), want.float().numpy())  # exactly rounded
    for got, want in ((x.exp(), ta.exp()), (y.sqrt(), tb.sqrt()), (x.tanh(), ta.tanh()), (x.sigmoid(), ta.sigmoid())):
        np.testing.assert_allclose(got.float().cpu().numpy(), want.float().numpy(), rtol=8e-3, atol=1e-6)
    # promotion as PyTorch: with float32 -> float32, with float16 -> float32, with an int tensor -> bfloat16
    f32 = G.from_numpy(b).cuda()
    assert (x + f32).dtype is G.float32 and (x + y.to(G.float16)).dtype is G.float32
    assert (x + G.ones(3, 17, dtype=G.int64, device="cuda")).dtype is BF
    np.testing.assert_array_equal((x + f32).cpu().numpy(), (ta.float() + torch.from_numpy(b)).numpy())
    z = x.clone()
    z.mul_(f32)  # a float32 result written into bfloat16: rounded by the cast kernel
    want = (ta.float() * torch.from_numpy(b)).bfloat16().float().numpy()
    np.testing.assert_array_equal(z.float().cpu().numpy(), want)
    out = G.empty(3, 17, dtype=G.float64, device="cuda")
    G.add(x, y, out=out)
    np.testing.assert_array_equal(out.cpu().numpy(), (ta + tb).double().numpy())
    # comparisons and the testing helpers
    assert (x == x).all().item() and not (x != x).any().item()
    np.testing.assert_array_equal((x < y).cpu().numpy(), (ta < tb).numpy())
    assert G.equal(x, x.clone()) and G.allclose(x, x + 1e-3, rtol=0, atol=1e-2) and not G.allclose(x, x + 1)
    G.testing.assert_close(x, x.clone())
    with pytest.raises(AssertionError, match="not close"):
        G.testing.assert_close(x, x + 1)


def test_reductions_accumulate_in_float32() -> None:
    ones = G.ones(1000, dtype=BF, device="cuda")
    assert ones.sum().item() == 1000.0  # a bfloat16 accumulator would stop at 256
    assert G.ones(1 << 16, dtype=BF, device="cuda").sum().item() == 65536.0  # the two-pass path too
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a = rng.uniform(-2, 2, (6, 40)).astype(np.float32)
    ta, x = torch.from_numpy(a).bfloat16(), G.from_numpy(a).cuda().to(BF)
    for name in ("sum", "mean", "amax", "amin"):
        for dim in (None, 0, 1):
            got = getattr(x, name)() if dim is None else getattr(x, name)(dim)
            want = getattr(ta, name)() if dim is None else getattr(ta, name)(dim)
            assert got.dtype is BF, name
            np.testing.assert_allclose(got.float().cpu().numpy(), want.float().numpy(), rtol=8e-3, atol=1e-2,
                                       err_msg=f"{name} dim={dim}")
    np.testing.assert_array_equal(x.argmax(1).cpu().numpy(), ta.argmax(1).numpy())
    values, indices = x.max(0)
    np.testing.assert_array_equal(values.float().cpu().numpy(), ta.max(0).values.float().numpy())
    np.testing.assert_array_equal(indices.cpu().numpy(), ta.max(0).indices.numpy())
    assert x.max().item() == ta.max().item() and x.min().item() == ta.min().item()
    np.testing.assert_allclose(x.var(1).float().cpu().numpy(), ta.float().var(1).numpy(), rtol=2e-2)
    np.testing.assert_allclose(x.sum(1, dtype=G.float32).cpu().numpy(), ta.float().sum(1).numpy(), rtol=1e-6)


def test_softmax_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(2).uniform(-3, 3, (5, 70)).astype(np.float32)
    ta, x = torch.from_numpy(a).bfloat16(), G.from_numpy(a).cuda().to(BF)
    for dim in (0, 1):
        got = G.softmax(x, dim)
        assert got.dtype is BF
        np.testing.assert_allclose(got.float().cpu().numpy(), torch.softmax(ta, dim).float().numpy(),
                                   rtol=1e-2, atol=1e-3)
        np.testing.assert_allclose(G.log_softmax(x, dim).float().cpu().numpy(),
                                   torch.log_softmax(ta, dim).float().numpy(), rtol=1e-2, atol=2e-2)
    wide = G.softmax(x, 1, dtype=G.float32)
    np.testing.assert_allclose(wide.cpu().numpy(), torch.softmax(ta.float(), 1).numpy(), rtol=1e-5, atol=1e-7)


def test_bit_exact_ops_move_values() -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    x = G.from_numpy(a).cuda().to(BF)
    assert x.flip(0).tolist() == a[::-1].tolist()
    assert x.t().contiguous().tolist() == a.T.tolist()
    assert x.roll(1, 1).tolist() == np.roll(a, 1, 1).tolist()
    assert x.tril().tolist() == np.tril(a).tolist() and x.triu(1).tolist() == np.triu(a, 1).tolist()
    index = G.tensor([2, 0], device="cuda")
    assert x.index_select(0, index).tolist() == a[[2, 0]].tolist()
    assert x[1:, ::2].tolist() == a[1:, ::2].tolist() and x[2, 3].item() == a[2, 3]
    assert x.repeat(2, 1).tolist() == np.tile(a, (2, 1)).tolist()
    x[0] = 2.7  # setitem: a number, a CPU tensor of another dtype, a list
    x[1, 1:] = G.tensor([7.0, 8.0, 9.0], dtype=G.float64)
    x[2] = [0.1, 0.2, 0.3, 0.4]
    rounded = [0.10009765625, 0.2001953125, 0.30078125, 0.400390625]  # 0.1 ... 0.4 to nearest bfloat16
    assert x.tolist() == [[2.703125] * 4, [a[1, 0], 7.0, 8.0, 9.0], rounded]


def test_autograd_step_in_bfloat16() -> None:
    w = G.tensor([0.5, -1.0, 2.0], dtype=BF, device="cuda", requires_grad=True)
    x = _bf([1.0, 2.0, 3.0])
    loss = (x * w).tanh().sum()
    loss.backward()
    assert w.grad.dtype is BF and w.grad.device.type == "cuda"
    want = (1 - np.tanh(np.array([0.5, -2.0, 6.0])) ** 2) * np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(w.grad.float().cpu().numpy(), want, rtol=2e-2, atol=1e-3)
    with G.no_grad():
        w -= 0.1 * w.grad
    np.testing.assert_allclose(w.detach().float().cpu().numpy(), np.array([0.5, -1.0, 2.0]) - 0.1 * want, rtol=1e-2)


@pytest.mark.parametrize("call, error, words", [
    (lambda x: x.numpy(), TypeError, "BFloat16"),
    (lambda x: np.asarray(x), TypeError, "BFloat16"),
    (lambda x: x.__cuda_array_interface__, TypeError, "bfloat16"),
    (lambda x: x.__dlpack__(), TypeError, "bfloat16"),
    (lambda x: x.cpu(), TypeError, "bfloat16 is not supported by the CPU backend"),
    (lambda x: x.to("cpu"), TypeError, "bfloat16 is not supported by the CPU backend"),
    (lambda x: G.zeros(2, dtype=BF), TypeError, "bfloat16"),
    (lambda x: G.tensor([1.0], dtype=BF), TypeError, "bfloat16"),
    (lambda x: G.ones(2).to(BF), TypeError, "bfloat16 is not supported by the CPU backend"),
    (lambda x: x.new_zeros(2, device="cpu"), TypeError, "bfloat16"),
    (lambda x: x.fill_(1e39), RuntimeError, "value cannot be converted to type bfloat16 without overflow"),
    (lambda x: G.full((2,), -3.4e38, dtype=BF, device="cuda"), RuntimeError, "bfloat16 without overflow"),
    (lambda x: x @ x, NotImplementedError, "\"mm_cuda\" not implemented for 'bfloat16'"),
    (lambda x: G.nn.functional.linear(x, x), NotImplementedError, "linear_cuda\" not implemented for 'bfloat16'"),
    (lambda x: x.cumsum(0), NotImplementedError, "\"cumsum_cuda\" not implemented for 'bfloat16'"),
    (lambda x: x.sort(), NotImplementedError, "\"sort_cuda\" not implemented for 'bfloat16'"),
    (lambda x: x.clamp(0, 1), NotImplementedError, "\"clamp_cuda\" not implemented for 'bfloat16'"),
    (lambda x: G.cat([x, x]), NotImplementedError, "\"cat_cuda\" not implemented for 'bfloat16'"),
    (lambda x: x[x > 0], NotImplementedError, "\"index_cuda\" not implemented for 'bfloat16'"),
])
def test_what_would_see_the_bits_refuses(call: Any, error: type, words: str) -> None:
    x = _bf([[1.0, -2.0], [3.0, 4.0]])
    with pytest.raises(error, match=words.replace("(", r"\(")):
        call(x)
    assert x.tolist() == [[1.0, -2.0], [3.0, 4.0]]  # untouched


def test_only_named_composite_kernels_take_bfloat16_on_cuda() -> None:
    """Every CUDA entry served by a CompositeExplicitAutograd kernel refuses bfloat16, except the listed
    bit-exact or converting ones (Note [Composite kernels and bfloat16]); the list names real operators."""
    names = set(dispatcher.ops)
    assert BFLOAT16_SAFE <= names, sorted(BFLOAT16_SAFE - names)
    for name in sorted(names):
        op = dispatcher.find(name)
        if "CompositeExplicitAutograd" not in op.kernels or "CUDA" in op.kernels:
            continue
        cell = op.table[CUDA_BIT]
        wrapped = cell is not op.kernels["CompositeExplicitAutograd"]
        assert wrapped == (name not in BFLOAT16_SAFE), name
    assert dispatcher.find("add.Tensor").table[CUDA_BIT].__name__ != "kernel_without_bfloat16"
