"""conv2d (runtime/kernels/conv_ops.py) and max_pool2d (runtime/kernels/nn_ops.py) against PyTorch: outputs,
input/weight/bias gradients and argmax indices over the paths the kernels choose between (stride 1 rows of
padded width or exact columns, grouped, dilated, padded, non-contiguous inputs; tiled pooling windows or
the general sweep, ceil_mode, padding, NaN, ties, -inf windows), and the same on the CUDA backend."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import generated as G  # noqa: E402
from runtime.cuda import is_available  # noqa: E402
from runtime.kernels import conv_pool_cpp  # noqa: E402


def _require_cpp() -> None:
    """Wait for the C++ conv/pool kernels; skip only where they cannot exist (no compiler, turned off)."""
    from runtime.compile import cpp_build
    from runtime.kernels import compiled_pointwise

    state = conv_pool_cpp.wait()
    off = not compiled_pointwise.enabled_by_environment()
    if state == "unavailable" and (cpp_build.find_compiler() is None or off):
        pytest.skip("no C++ compiler, or OPGEN_EAGER_CPP=0")
    assert state == "ready"


@pytest.fixture(params=["numpy", "cpp"])
def kernels(request: Any, monkeypatch: Any) -> str:
    """Each test that takes it runs on the NumPy kernels and on the C++ ones (Note [Compiled convolution and
    pooling kernels])."""
    if request.param == "cpp":
        _require_cpp()
    else:
        monkeypatch.setattr(conv_pool_cpp, "_loaded", lambda: None)
    return request.param

# (input shape, weight shape, stride, padding, dilation, groups)
CONV_CASES = [
    ((2, 3, 7, 8), (4, 3, 3, 3), 1, 1, 1, 1),            # stride 1, padded: wide rows in the input gradient
    ((3, 8, 14, 14), (16, 8, 3, 3), 1, 1, 1, 1),         # the cnn's second layer: wide rows in the forward too
    ((2, 4, 9, 8), (6, 2, 3, 2), 1, (2, 1), (2, 3), 2),  # grouped, dilated, asymmetric kernel, stride 1
    ((2, 4, 9, 7), (6, 2, 3, 2), 2, (1, 2), (2, 1), 2),  # strided: exact columns and the strided fold
    ((3, 6, 8, 8), (6, 1, 3, 3), (2, 1), 2, 1, 6),       # depthwise
    ((1, 1, 5, 5), (2, 1, 1, 1), 1, 0, 1, 1),            # 1x1
    ((2, 3, 5, 5), (4, 3, 5, 5), 1, 0, 1, 1),            # the kernel covers the input
    ((0, 3, 5, 5), (4, 3, 3, 3), 1, 1, 1, 1),            # empty batch
    ((3, 16, 6, 5), (8, 16, 3, 3), 1, 1, 1, 1),          # many channels: channels-last columns, one GEMM
    ((2, 16, 9, 7), (4, 16, 3, 2), 2, (1, 2), (2, 1), 1),  # channels-last, strided, dilated, padded
    ((0, 16, 6, 6), (4, 16, 3, 3), 1, 1, 1, 1),          # channels-last geometry, empty batch
    ((2, 4, 10, 14), (6, 2, 3, 3), 1, 1, 1, 2),          # grouped wide rows in the forward (1/8 junk)
    ((2, 3, 6, 7), (4, 3, 3, 2), 1, (2, 0), (2, 3), 1),  # input gradient as a dilated, padded convolution
    ((2, 3, 6, 6), (4, 3, 1, 3), 1, 1, 1, 1),            # padding past (k - 1) * dil: the fold instead
    ((2, 3, 5, 30), (4, 3, 2, 3), 1, (1, 2), (2, 2), 1),  # input gradient by kernel rows, dilated
    ((9, 8, 5, 4), (6, 8, 3, 3), 1, 1, 1, 1),            # C++: batch larger than a row, batch-last columns
    ((9, 8, 5, 3), (6, 4, 3, 3), 1, (1, 0), 1, 2),       # batch-last, grouped
    ((10, 16, 7, 6), (4, 16, 2, 3), (2, 1), (1, 0), (1, 2), 1),  # batch-last, strided and dilated
    ((2, 16, 7, 9), (5, 16, 3, 3), (1, 2), 2, (2, 1), 1),  # C++ channel-major columns, one GEMM
    ((3, 4, 9, 8), (8, 1, 3, 2), (1, 2), 1, (2, 1), 4),  # C++: depthwise with multiplier 2, directly
]


def _close(actual: Any, expected: Any, tol: float) -> None:
    a, e = actual.detach().cpu().numpy(), expected.detach().numpy()
    assert a.shape == e.shape
    np.testing.assert_allclose(a, e, rtol=tol, atol=tol)


def _conv_case(case: tuple, dtype: Any, device: str, transposed: bool) -> None:
    xs, ws, st, pad, dil, groups = case
    rng = np.random.default_rng(0)
    if transposed:  # a non-contiguous input: the last two dims swapped
        x = rng.standard_normal((*xs[:2], xs[3], xs[2])).astype(dtype).swapaxes(2, 3)
    else:
        x = rng.standard_normal(xs).astype(dtype)
    w, b = rng.standard_normal(ws).astype(dtype), rng.standard_normal(ws[0]).astype(dtype)
    tx, tw, tb = (torch.tensor(np.ascontiguousarray(v), requires_grad=True) for v in (x, w, b))
    ox = G.tensor(np.ascontiguousarray(x), device=device)
    if transposed:
        ox = G.tensor(np.ascontiguousarray(x.swapaxes(2, 3)), device=device).transpose(2, 3)
        assert not ox.is_contiguous() or ox.numel() == 0
    ox.requires_grad_(True)
    ow, ob = (G.tensor(v, device=device, requires_grad=True) for v in (w, b))
    expected = torch.nn.functional.conv2d(tx, tw, tb, st, pad, dil, groups)
    out = G.conv2d(ox, ow, ob, st, pad, dil, groups)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    _close(out, expected, tol)
    assert out.is_contiguous()
    g = rng.standard_normal(tuple(expected.shape)).astype(dtype)
    expected.backward(torch.tensor(g))
    out.backward(G.tensor(g, device=device))
    for mine, theirs in ((ox, tx), (ow, tw), (ob, tb)):
        _close(mine.grad, theirs.grad, tol)


@pytest.mark.parametrize("case", CONV_CASES, ids=[str(c[:2]) for c in CONV_CASES])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transposed", [False, True])
def test_conv2d_matches_torch(case: tuple, dtype: Any, transposed: bool, kernels: str) -> None:
    _conv_case(case, dtype, "cpu", transposed)


@pytest.mark.parametrize("one_thread", [False, True])
@pytest.mark.parametrize("case", CONV_CASES[:2] + CONV_CASES[-7:], ids=lambda c: str(c[:2]))
def test_conv2d_batch_gemm_and_per_sample_gemms_agree(case: tuple, one_thread: bool, monkeypatch: Any,
                                                      kernels: str) -> None:
    # Note [One GEMM or one per sample]: both forms of each product, whatever this process's BLAS threads.
    from runtime.kernels import conv_ops
    monkeypatch.setattr(conv_ops, "one_blas_thread", lambda: one_thread)
    _conv_case(case, np.float64, "cpu", False)


def _conv_results(case: tuple, seed: int) -> list[np.ndarray]:
    """The output and the three gradients of conv2d on `case` (float32, random data from `seed`)."""
    xs, ws, st, pad, dil, groups = case
    rng = np.random.default_rng(seed)
    x, w, b = (G.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True) for s in (xs, ws, ws[:1]))
    out = G.conv2d(x, w, b, st, pad, dil, groups)
    out.backward(G.tensor(rng.standard_normal(tuple(out.shape)).astype(np.float32)))
    return [t._data for t in (out, x.grad, w.grad, b.grad)]


@pytest.mark.parametrize("one_thread", [False, True])
def test_conv2d_results_are_not_scratch_buffers(one_thread: bool, monkeypatch: Any, kernels: str) -> None:
    # Note [Convolution scratch buffers]: what the kernels return shares no memory with the buffers they reuse,
    # and a later call (which rewrites them) leaves earlier results as they were.
    from runtime.kernels import conv_ops
    monkeypatch.setattr(conv_ops, "one_blas_thread", lambda: one_thread)
    for case in (CONV_CASES[0], CONV_CASES[1], CONV_CASES[8], CONV_CASES[-3], CONV_CASES[-5], CONV_CASES[-1]):
        first = _conv_results(case, 0)
        kept = [a.copy() for a in first]
        _conv_results(case, 1)
        buffers = [buf for buf in conv_ops._SCRATCH.buffers if buf is not None]
        assert buffers
        for a, k in zip(first, kept, strict=True):
            np.testing.assert_array_equal(a, k)
            assert not any(np.shares_memory(a, buf) for buf in buffers)


def test_conv2d_scratch_buffers_are_per_thread_and_limited(monkeypatch: Any, kernels: str) -> None:
    # Several threads convolving at once each get their own buffers; past the size limit, fresh arrays.
    import threading

    from runtime.kernels import conv_ops
    cases = [CONV_CASES[1], CONV_CASES[8], CONV_CASES[0], CONV_CASES[-3]]
    expected = [_conv_results(case, i) for i, case in enumerate(cases)]
    results: dict[int, list[list[np.ndarray]]] = {}
    start = threading.Barrier(len(cases))

    def work(i: int) -> None:
        start.wait()
        results[i] = [_conv_results(cases[i], i) for _ in range(5)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(cases))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, runs in results.items():
        for run in runs:
            for a, e in zip(run, expected[i], strict=True):
                np.testing.assert_array_equal(a, e)
    monkeypatch.setattr(conv_ops, "_SCRATCH_LIMIT", 0)
    monkeypatch.setattr(conv_ops, "_SCRATCH", conv_ops._Scratch())
    for case, e in zip(cases, expected, strict=True):
        for a, b in zip(_conv_results(case, cases.index(case)), e, strict=True):
            np.testing.assert_array_equal(a, b)
    assert conv_ops._SCRATCH.buffers == [None, None, None]


def test_conv2d_input_gradient_with_an_infinite_weight(kernels: str) -> None:
    # The wide-row input gradient multiplies junk zeros by the weight: an inf there must not leak as NaN.
    x = np.ones((1, 1, 4, 4), np.float32)
    w = np.ones((1, 1, 3, 3), np.float32)
    w[0, 0, 0, 0] = np.inf
    tx, ox = torch.tensor(x, requires_grad=True), G.tensor(x, requires_grad=True)
    torch.nn.functional.conv2d(tx, torch.tensor(w), padding=1).sum().backward()
    G.conv2d(ox, G.tensor(w), padding=1).sum().backward()
    np.testing.assert_array_equal(ox.grad.numpy(), tx.grad.numpy())


def test_conv2d_refuses_mismatched_arguments() -> None:
    x, w = G.randn(2, 3, 5, 5), G.randn(4, 3, 3, 3)
    with pytest.raises(RuntimeError, match="expected scalar type Double but found Float"):
        G.conv2d(x.double(), w)
    with pytest.raises(RuntimeError, match="expected bias to be 1-dimensional with 4 elements"):
        G.conv2d(x, w, G.zeros(5))
    with pytest.raises(RuntimeError, match="to have 6 channels, but got 3 channels"):
        G.conv2d(x, G.randn(4, 3, 3, 3), None, 1, 0, 1, 2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        G.conv2d(x, G.randn(4, 3, 7, 7))


# (input shape, kernel, stride, padding, dilation, ceil_mode)
POOL_CASES = [
    ((2, 3, 8, 8), 2, None, 0, 1, False),              # tiled windows: the separable path
    ((2, 2, 7, 9), 2, 2, 0, 1, False),                 # tiled, the last row and column dropped
    ((2, 3, 9, 8), (3, 2), (3, 2), 0, 1, False),       # tiled, rectangular
    ((2, 3, 9, 8), (1, 3), (1, 3), 0, 1, False),
    ((2, 3, 8, 9), (2, 3), (2, 3), 0, 1, False),
    ((2, 3, 9, 7), 3, 2, 1, 1, True),                  # overlapping, padded, ceil_mode: the general sweep
    ((1, 2, 10, 9), (3, 2), (2, 1), (1, 0), (2, 1), False),
    ((2, 2, 7, 7), 2, 1, 0, 1, False),
    ((4, 5, 6), 3, 3, 1, 1, True),                     # unbatched
]


def _pool_case(case: tuple, dtype: Any, device: str) -> None:
    shape, k, st, pad, dil, ceil = case
    rng = np.random.default_rng(1)
    if dtype == np.int64:
        x = rng.integers(-3, 3, shape).astype(dtype)  # many ties: the first position wins
    else:
        x = rng.standard_normal(shape).astype(dtype)
        x.flat[::7] = np.round(x.flat[::7])
        x.flat[3::11] = -np.inf
        x[..., 0, 0] = np.nan  # NaN wins its windows, at its own position
    grad = dtype != np.int64
    tx, ox = torch.tensor(x, requires_grad=grad), G.tensor(x, device=device, requires_grad=grad)
    t_out, t_idx = torch.nn.functional.max_pool2d_with_indices(tx, k, st, pad, dil, ceil)
    o_out, o_idx = G.max_pool2d_with_indices(ox, k, st, pad, dil, ceil)
    np.testing.assert_array_equal(o_out.detach().cpu().numpy(), t_out.detach().numpy())
    np.testing.assert_array_equal(o_idx.cpu().numpy(), t_idx.numpy())
    if grad:
        g = rng.standard_normal(tuple(t_out.shape)).astype(dtype)
        t_out.backward(torch.tensor(g))
        o_out.backward(G.tensor(g, device=device))
        np.testing.assert_allclose(ox.grad.cpu().numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", POOL_CASES, ids=[str(c[:3]) for c in POOL_CASES])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_max_pool2d_matches_torch(case: tuple, dtype: Any, kernels: str) -> None:
    _pool_case(case, dtype, "cpu")


def test_max_pool2d_tiled_nan_free_and_nan_inputs_agree_with_the_sweep(kernels: str) -> None:
    # A NaN in a tiled input sends the kernel to the general sweep; the result is PyTorch's either way.
    x = np.arange(64, dtype=np.float32).reshape(1, 1, 8, 8)[:, :, ::-1].copy()
    x[0, 0, 5, 2] = np.nan
    o_out, o_idx = G.max_pool2d_with_indices(G.tensor(x), 2)
    t_out, t_idx = torch.nn.functional.max_pool2d_with_indices(torch.tensor(x), 2)
    np.testing.assert_array_equal(o_out.numpy(), t_out.numpy())
    np.testing.assert_array_equal(o_idx.numpy(), t_idx.numpy())


def test_max_pool2d_window_of_minus_inf_in_padding_points_inside(kernels: str) -> None:
    x = np.full((1, 1, 4, 4), -np.inf, np.float32)
    o_idx = G.max_pool2d_with_indices(G.tensor(x), 3, 2, 1)[1].numpy()
    t_idx = torch.nn.functional.max_pool2d_with_indices(torch.tensor(x), 3, 2, 1)[1].numpy()
    np.testing.assert_array_equal(o_idx, t_idx)


def test_im2col_col2im_match_unfold_fold_and_own_their_memory(kernels: str) -> None:
    rng = np.random.default_rng(2)
    for shape, k, dil, pad, st in [((2, 3, 7, 8), (3, 2), (1, 2), (1, 0), (2, 1)), ((1, 2, 5, 5), 1, 1, 0, 1)]:
        x = rng.standard_normal(shape)
        cols = G.im2col(G.tensor(x), k, dil, pad, st)
        t_cols = torch.nn.functional.unfold(torch.tensor(x), k, dil, pad, st)
        np.testing.assert_allclose(cols.numpy(), t_cols.numpy(), rtol=1e-12)
        back = G.col2im(cols, shape[2:], k, dil, pad, st)
        np.testing.assert_allclose(back.numpy(), torch.nn.functional.fold(t_cols, shape[2:], k, dil, pad, st).numpy(),
                                   rtol=1e-12)
        cols.add_(1.0)  # a new, writable array: not a view of the input (a 1x1 kernel could have been one)
        np.testing.assert_array_equal(G.tensor(x).numpy(), x)


@pytest.mark.cuda
@pytest.mark.skipif(not is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("case", CONV_CASES[:5], ids=[str(c[:2]) for c in CONV_CASES[:5]])
def test_conv2d_on_cuda_matches_torch(case: tuple) -> None:
    _conv_case(case, np.float32, "cuda", False)


@pytest.mark.cuda
@pytest.mark.skipif(not is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("case", POOL_CASES[:6], ids=[str(c[:3]) for c in POOL_CASES[:6]])
def test_max_pool2d_on_cuda_matches_torch(case: tuple) -> None:
    _pool_case(case, np.float32, "cuda")


# -- the C++ kernels (Note [Compiled convolution and pooling kernels]) ----------------------------------------

def _spy(monkeypatch: Any) -> dict[str, int]:
    """Count the C++ entries that answered (returned a result, not None)."""
    calls: dict[str, int] = {}
    for name in ("im2col", "im2col_batch_last", "col2im", "col2im_batch_last", "max_pool", "max_pool_backward",
                 "depthwise_forward", "depthwise_backward_input", "depthwise_backward_weight"):
        real = getattr(conv_pool_cpp, name)

        def counted(*args: Any, _real: Any = real, _name: str = name, **kw: Any) -> Any:
            out = _real(*args, **kw)
            if out is not None:
                calls[_name] = calls.get(_name, 0) + 1
            return out
        monkeypatch.setattr(conv_pool_cpp, name, counted)
    return calls


@pytest.mark.parametrize(("case", "layout", "entries"), [
    (CONV_CASES[0], "sample", {"im2col": 2, "col2im": 1}),   # C*kh*kw = 27: per-sample GEMMs
    (CONV_CASES[-5], "last", {"im2col_batch_last": 2, "col2im_batch_last": 1}),
    (CONV_CASES[-2], "batch", {"im2col": 2, "col2im": 1}),
    (CONV_CASES[5], "sample", {"im2col": 2, "col2im": 1}),  # one input channel: not the depthwise kernel
])
def test_conv2d_takes_the_cpp_kernels_in_each_layout(case: tuple, layout: str, entries: dict, monkeypatch: Any) -> None:
    _require_cpp()
    from runtime.kernels import conv_ops
    monkeypatch.setattr(conv_ops, "one_blas_thread", lambda: True)
    layouts: list[str] = []
    real_layout = conv_ops._cpp_layout
    monkeypatch.setattr(conv_ops, "_cpp_layout", lambda *a: layouts.append(real_layout(*a)) or layouts[-1])
    calls = _spy(monkeypatch)
    _conv_case(case, np.float32, "cpu", False)
    assert set(layouts) == {layout}
    assert calls == entries


@pytest.mark.parametrize("case", [CONV_CASES[4], CONV_CASES[-1]], ids=lambda c: str(c[:2]))
def test_depthwise_conv2d_takes_the_direct_cpp_kernels(case: tuple, monkeypatch: Any) -> None:
    _require_cpp()
    calls = _spy(monkeypatch)
    for transposed in (False, True):
        _conv_case(case, np.float32, "cpu", transposed)
    assert calls == {"depthwise_forward": 2, "depthwise_backward_input": 2, "depthwise_backward_weight": 2}


def test_max_pool2d_takes_the_cpp_kernels(monkeypatch: Any) -> None:
    _require_cpp()
    calls = _spy(monkeypatch)
    for case in POOL_CASES:
        _pool_case(case, np.float32, "cpu")
    assert calls == {"max_pool": len(POOL_CASES), "max_pool_backward": len(POOL_CASES)}


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int32, np.float64])
def test_max_pool2d_of_other_dtypes_on_the_cpp_kernels(dtype: Any) -> None:
    _require_cpp()
    x = np.random.default_rng(3).integers(0, 5, (2, 3, 9, 8)).astype(dtype)
    for k, st, pad, dil, ceil in [(2, 2, 0, 1, False), (3, 2, 1, 2, True), ((2, 3), 1, (1, 0), 1, False)]:
        o_out, o_idx = G.max_pool2d_with_indices(G.tensor(x), k, st, pad, dil, ceil)
        t_out, t_idx = torch.nn.functional.max_pool2d_with_indices(torch.tensor(x), k, st, pad, dil, ceil)
        np.testing.assert_array_equal(o_out.numpy(), t_out.numpy())
        np.testing.assert_array_equal(o_idx.numpy(), t_idx.numpy())


def test_max_pool2d_with_several_nans_in_a_window_points_at_the_last(kernels: str) -> None:
    # PyTorch's rule: a NaN replaces the running maximum, so the last NaN of a window wins (the NumPy sweep
    # once took the first).
    x = np.zeros((1, 2, 4, 4), np.float32)
    x[0, 0, 0, 0] = x[0, 0, 1, 1] = x[0, 0, 0, 3] = x[0, 1, 2, 2] = x[0, 1, 3, 1] = np.nan
    x[0, 0, 1, 2] = 5
    for k, st, pad in [(2, 2, 0), (3, 1, 1), (2, 1, 0)]:
        o_out, o_idx = G.max_pool2d_with_indices(G.tensor(x), k, st, pad)
        t_out, t_idx = torch.nn.functional.max_pool2d_with_indices(torch.tensor(x), k, st, pad)
        np.testing.assert_array_equal(o_out.numpy(), t_out.numpy())
        np.testing.assert_array_equal(o_idx.numpy(), t_idx.numpy())


def test_conv_and_pool_of_float16_stay_on_numpy(monkeypatch: Any) -> None:
    # float16 has no C++ kernel: the NumPy paths answer, with the results of the NumPy kernels.
    _require_cpp()
    calls = _spy(monkeypatch)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float16)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float16)
    out = G.conv2d(G.tensor(x), G.tensor(w), padding=1)
    pooled = G.max_pool2d(G.tensor(x), 2)
    expected = torch.nn.functional.conv2d(torch.tensor(x).float(), torch.tensor(w).float(), padding=1)
    np.testing.assert_allclose(out.numpy().astype(np.float32), expected.numpy(), rtol=2e-2, atol=2e-2)
    np.testing.assert_array_equal(pooled.numpy(), torch.nn.functional.max_pool2d(torch.tensor(x).float(), 2).numpy()
                                  .astype(np.float16))
    assert "max_pool" not in calls and "col2im" not in calls


def test_cpp_kernels_refuse_what_they_cannot_read() -> None:
    # Misaligned data, an unsupported dtype or an empty array: None, so the caller takes NumPy.
    _require_cpp()
    raw = np.zeros(4 * 2 * 2 * 4 * 4 + 1, np.uint8)
    misaligned = raw[1:].view(np.float32).reshape(2, 2, 4, 4)
    assert misaligned.ctypes.data % 4
    assert conv_pool_cpp.max_pool(misaligned, (2, 2), (2, 2), (0, 0), (1, 1), 2, 2) is None
    assert conv_pool_cpp.im2col(misaligned, (2, 2), (1, 1), (0, 0), (1, 1), 3, 3, False, np.empty) is None
    assert conv_pool_cpp.max_pool(np.zeros((2, 2, 4, 4), np.float16), (2, 2), (2, 2), (0, 0), (1, 1), 2, 2) is None
    assert conv_pool_cpp.max_pool(np.zeros((0, 2, 4, 4), np.float32), (2, 2), (2, 2), (0, 0), (1, 1), 2, 2) is None
    assert conv_pool_cpp.im2col(np.zeros((1, 1, 3, 3), np.complex128), (2, 2), (1, 1), (0, 0), (1, 1), 2, 2, False,
                                np.empty) is None
    ok = np.ones((2, 2, 4, 4), np.float32)
    assert conv_pool_cpp.max_pool(ok, (2, 2), (2, 2), (0, 0), (1, 1), 2, 2) is not None


def test_max_pool2d_backward_with_an_index_outside_the_plane_is_refused(kernels: str) -> None:
    x = G.randn(1, 1, 4, 4)
    out, idx = G.max_pool2d_with_indices(x, 2)
    bad = idx.clone()
    bad[0, 0, 0, 0] = 16
    g = G.ones(1, 1, 2, 2)
    assert conv_pool_cpp.max_pool_backward(g._data, bad._data, 1, 16) is None
    with pytest.raises(IndexError):
        G.ops.aten.max_pool2d_with_indices_backward(g, x, [2, 2], [2, 2], [0, 0], [1, 1], False, bad)


def test_conv_pool_without_cpp_kernels_in_a_new_process() -> None:
    # OPGEN_EAGER_CPP=0: the library never builds and the kernels answer on NumPy, with PyTorch's results.
    import os
    import subprocess
    import sys
    code = (
        "import numpy as np, torch, generated as G\n"
        "from runtime.kernels import conv_pool_cpp\n"
        "x = np.random.default_rng(0).standard_normal((9, 8, 5, 4)).astype(np.float32)\n"
        "w = np.random.default_rng(1).standard_normal((6, 8, 3, 3)).astype(np.float32)\n"
        "o = G.max_pool2d(G.conv2d(G.tensor(x), G.tensor(w), padding=1), 2)\n"
        "F = torch.nn.functional\n"
        "t = F.max_pool2d(F.conv2d(torch.tensor(x), torch.tensor(w), padding=1), 2)\n"
        "np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-4, atol=1e-4)\n"
        "assert conv_pool_cpp.wait(1) == 'unavailable', conv_pool_cpp.wait(1)\n"
        "print('numpy ok')\n")
    env = {**os.environ, "OPGEN_EAGER_CPP": "0"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "numpy ok" in proc.stdout


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64, np.int16, np.uint8])
def test_cpp_transpose_of_every_element_size(dtype: Any) -> None:
    # The batch-last copies: whole 8x8 register blocks (4-byte elements with AVX), tiles and ragged edges.
    _require_cpp()
    rng = np.random.default_rng(5)
    for rows, cols in [(1, 1), (7, 9), (8, 8), (61, 333), (64, 17), (3, 64)]:
        a = (rng.standard_normal((rows, cols)) * 100).astype(dtype)
        out = np.empty((cols, rows), dtype)
        assert conv_pool_cpp.transpose(a, out) is out
        np.testing.assert_array_equal(out, a.T)
    assert conv_pool_cpp.transpose(np.zeros((4, 6), np.float32).T, np.empty((4, 6), np.float32)) is None
