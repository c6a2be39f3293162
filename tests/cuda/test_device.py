"""The CUDA device as the runtime sees it (emulated under OPGEN_EMULATE_CUDA=1, else a real GPU): queries,
the caching allocator, copies and interop, the Philox kernels against Random123's known answers and their
distributions, and an autograd training step on the device."""

from __future__ import annotations

import numpy as np
import pytest

import generated as G
from runtime.cuda import emulator
from runtime.cuda import random as CR

pytestmark = pytest.mark.cuda


@pytest.mark.skipif(not emulator.active(), reason="checks the emulated device's description")
def test_emulated_device_describes_itself() -> None:
    assert G.cuda.is_available() and G.cuda.is_emulated()
    assert G.cuda.device_count() == 1
    assert "emulated" in G.cuda.get_device_name()
    assert 0 < G.cuda.get_device_properties(0)["multiProcessorCount"] <= 8


def test_tensors_come_from_the_caching_allocator_and_oom_is_reported() -> None:
    G.cuda.empty_cache()
    before = G.cuda.memory_allocated()
    t = G.empty((1 << 20,), device="cuda")
    assert G.cuda.memory_allocated() >= before + 4 * (1 << 20)
    assert G.cuda.memory_reserved() >= G.cuda.memory_allocated()
    del t
    assert G.cuda.memory_allocated() == before
    G.cuda.empty_cache()
    total = G.cuda.get_device_properties(0)["totalGlobalMem"]
    with pytest.raises(G.cuda.OutOfMemoryError):
        G.empty((total // 4 + (1 << 20),), device="cuda")


def test_copies_between_host_and_device() -> None:
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    t = G.from_numpy(a).cuda()
    assert t.device.type == "cuda" and t.is_cuda
    np.testing.assert_array_equal(t.cpu().numpy(), a)
    np.testing.assert_array_equal(t.to("cpu").numpy(), a)
    assert t.cuda() is t or t.cuda().data_ptr() == t.data_ptr()
    tt = t.t().contiguous()
    np.testing.assert_array_equal(tt.cpu().numpy(), a.T)
    d = t.to(G.float64)
    assert d.device.type == "cuda" and d.dtype is G.float64
    np.testing.assert_array_equal(d.cpu().numpy(), a.astype(np.float64))
    assert t.cpu().device.type == "cpu" and type(t.cpu().numpy()) is np.ndarray
    target = G.zeros(4, 6, device="cuda")
    target.copy_(G.from_numpy(a))
    np.testing.assert_array_equal(target.cpu().numpy(), a)


def test_cuda_array_interface_and_dlpack_share_memory() -> None:
    t = G.arange(10.0, device="cuda")
    cai = t.__cuda_array_interface__
    assert cai["data"][0] == t.data_ptr() and cai["shape"] == (10,) and cai["typestr"] == "<f4"
    assert t.__dlpack_device__()[0] == 2  # kDLCUDA
    u = G.from_dlpack(t)
    assert u.device.type == "cuda" and u.data_ptr() == t.data_ptr()
    u.add_(1)
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(10.0, dtype=np.float32) + 1)


def test_philox_known_answers_on_the_device() -> None:
    # Random123's kat_vectors for philox4x32_10: counter (0,0,0,0), key (0,0).
    assert CR.philox4x32(0, 0, 0) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)
    assert CR.philox4x32(2**64 - 1, 2**64 - 1, 2**64 - 1) == (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)
    assert CR.philox4x32(0x85A308D3243F6A88, 0x0370734413198A2E, 0x299F31D0A4093822) == (
        0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)
    # The device kernel: randint over the full 64-bit range returns the raw words of each group.
    for seed, offset in ((0, 0), (0x299F31D0A4093822, 7), (2**64 - 1, 2**40)):
        t = G.empty((1001,), dtype=G.int64, device="cuda")
        CR.random_(t, 0, 2**64 - 1, state=CR.PhiloxState(seed, offset))
        got = t.cpu().numpy().view(np.uint64)
        words = CR.philox_words(501, offset, seed).astype(np.uint64)
        ref = np.stack([(words[:, 1] << np.uint64(32)) | words[:, 0],
                        (words[:, 3] << np.uint64(32)) | words[:, 2]], axis=1).reshape(-1)[:1001]
        ref = np.where(ref == np.uint64(2**64 - 1), np.uint64(0), ref)
        np.testing.assert_array_equal(got, ref)
    t = G.empty((2,), dtype=G.int64, device="cuda")
    CR.random_(t, 0, 2**64 - 1, state=CR.PhiloxState(0, 0))
    assert t.cpu().numpy().view(np.uint64).tolist() == [0xE169C58D6627E8D5, 0x9B00DBD8BC57AC4C]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_uniform_and_normal_distributions(dtype: str) -> None:
    n = 1 << 16
    dt = getattr(G, dtype)
    u = G.empty((n,), dtype=dt, device="cuda")
    CR.uniform_(u, -1.0, 3.0, state=CR.PhiloxState(123, 5))
    x = u.cpu().numpy().astype(np.float64)
    assert x.min() >= -1.0 and x.max() < 3.0
    assert abs(x.mean() - 1.0) < 0.03 and abs(x.var() - 16 / 12) < 0.05
    counts, _ = np.histogram(x, bins=16, range=(-1.0, 3.0))
    assert counts.min() > 0.9 * n / 16 and counts.max() < 1.1 * n / 16
    if dtype != "float16":
        ref = CR.host_uniform(n, 5, 123, double=dtype == "float64") * 4.0 - 1.0
        np.testing.assert_allclose(x, ref, rtol=1e-6, atol=1e-6)
    z = G.empty((n,), dtype=dt, device="cuda")
    CR.normal_(z, 2.0, 0.5, state=CR.PhiloxState(7, 0))
    y = z.cpu().numpy().astype(np.float64)
    assert abs(y.mean() - 2.0) < 0.01 and abs(y.std() - 0.5) < 0.01
    assert abs(np.mean(np.abs(y - 2.0) < 0.5) - 0.6827) < 0.01  # one sigma


def test_autograd_training_step_on_the_device() -> None:
    rng = np.random.default_rng(0)
    xs, ws = rng.standard_normal((64, 8)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32)
    ys = rng.standard_normal((64, 3)).astype(np.float32)
    losses = {}
    grads = {}
    for device in ("cpu", "cuda"):
        w = G.from_numpy(ws.copy()).to(device).detach().requires_grad_()
        x, y = G.from_numpy(xs).to(device), G.from_numpy(ys).to(device)
        seen = []
        for _ in range(3):
            loss = ((x @ w).tanh() - y).pow(2).mean()
            w.grad = None
            loss.backward()
            seen.append(float(loss.item()))
            if device == "cuda":
                assert w.grad.device.type == "cuda"
            grads.setdefault(device, w.grad.cpu().numpy().copy())
            with G.no_grad():
                w.sub_(w.grad * 0.5)
        losses[device] = seen
    assert losses["cuda"][2] < losses["cuda"][0]
    np.testing.assert_allclose(losses["cuda"], losses["cpu"], rtol=1e-4)
    np.testing.assert_allclose(grads["cuda"], grads["cpu"], rtol=1e-4, atol=1e-6)
