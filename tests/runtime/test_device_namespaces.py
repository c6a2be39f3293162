"""G.backends, G.accelerator, G.amp / G.cuda.amp (autocast state, GradScaler), seeding helpers, the default
device, thread counts, Tensor.is_* flags, and from_numpy of ndarray subclasses."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import generated as G


def test_backends_report_what_opgen_uses() -> None:
    for name in ("cudnn", "cuda", "mps", "mkldnn", "mkl", "openmp", "cpu", "opt_einsum", "nnpack", "mha",
                 "cusparselt", "kleidiai", "quantized", "miopen"):
        assert importlib.import_module(f"generated.backends.{name}") is getattr(G.backends, name)
    assert G.backends.mps.is_available() is False and G.backends.mps.is_built() is False
    assert G.backends.cudnn.is_available() is False and G.backends.cudnn.version() is None
    assert G.backends.mkldnn.is_available() is False and G.backends.openmp.is_available() is False
    assert not any(getattr(G.backends, n).is_available() for n in ("opt_einsum", "nnpack", "cusparselt", "kleidiai",
                                                                   "miopen"))
    G.backends.mha.set_fastpath_enabled(False)
    assert G.backends.mha.get_fastpath_enabled() is False
    G.backends.mha.set_fastpath_enabled(True)
    assert isinstance(G.backends.mkl.is_available(), bool)
    assert G.backends.cpu.get_cpu_capability() in {"AVX512", "AVX2", "DEFAULT"}
    old = G.backends.cudnn.benchmark
    G.backends.cudnn.benchmark = True
    G.backends.cuda.matmul.allow_tf32 = True
    try:
        assert G.backends.cudnn.benchmark is True and G.backends.cuda.matmul.allow_tf32 is True
    finally:
        G.backends.cudnn.benchmark = old
        G.backends.cuda.matmul.allow_tf32 = False


def test_accelerator_agrees_with_cuda() -> None:
    available = G.cuda.is_available()
    assert G.accelerator.is_available() is available
    assert G.accelerator.device_count() == (G.cuda.device_count() if available else 0)
    acc = G.accelerator.current_accelerator()
    assert (acc is None) != available
    if acc is not None:
        assert acc.type == "cuda"


def test_autocast_state_nesting_and_decorator() -> None:
    assert not G.is_autocast_enabled("cpu")
    with G.amp.autocast("cpu", dtype=G.bfloat16):
        assert G.is_autocast_enabled("cpu") and G.get_autocast_dtype("cpu") == G.bfloat16
        with G.amp.autocast("cpu", enabled=False):
            assert not G.is_autocast_enabled("cpu")
        assert G.is_autocast_enabled("cpu")
        x = G.ones(2, 3)
        y = x @ G.ones(3, 2)
        assert y.dtype == G.float32  # CPU autocast applies no casts (documented)
    assert not G.is_autocast_enabled("cpu")

    @G.amp.autocast("cpu")
    def inside() -> bool:
        return G.is_autocast_enabled("cpu")
    assert inside() and not G.is_autocast_enabled("cpu")
    if G.cuda.is_available():
        with G.cuda.amp.autocast():
            assert G.is_autocast_enabled("cuda")
    else:  # as PyTorch's: a CUDA region without CUDA warns and is disabled
        with pytest.warns(UserWarning, match="CUDA is not available"), G.cuda.amp.autocast():
            assert not G.is_autocast_enabled("cuda")
    with pytest.raises(RuntimeError):
        G.amp.autocast("tpu")


def _model_and_opt():
    G.manual_seed(0)
    model = G.nn.Linear(3, 1)
    return model, G.optim.SGD(model.parameters(), lr=0.1)


def test_grad_scaler_disabled_is_a_pass_through() -> None:
    scaler = G.cuda.amp.GradScaler(enabled=False)
    model, opt = _model_and_opt()
    loss = model(G.ones(2, 3)).sum()
    assert scaler.scale(loss) is loss
    scaler.scale(loss).backward()
    before = model.weight.detach().clone()
    scaler.step(opt)
    scaler.update()
    assert not bool((model.weight == before).all())
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {} and not scaler.is_enabled()


def test_grad_scaler_scales_unscales_skips_and_adapts() -> None:
    scaler = G.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    model, opt = _model_and_opt()
    x = G.ones(2, 3)
    scaled = scaler.scale(model(x).sum())
    assert float(scaled) == pytest.approx(8.0 * float(model(x).sum()))
    scaled.backward()
    scaler.unscale_(opt)
    assert model.weight.grad.tolist() == [[2.0, 2.0, 2.0]]  # the true gradient after unscaling
    with pytest.raises(RuntimeError):
        scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 8.0
    opt.zero_grad()
    scaler.scale(model(x).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 16.0  # grown after growth_interval clean steps
    # an inf gradient: the step is skipped and the scale backs off
    opt.zero_grad()
    scaler.scale(model(x).sum() * float("inf")).backward()
    before = model.weight.detach().clone()
    scaler.step(opt)
    scaler.update()
    assert bool((model.weight == before).all()) and scaler.get_scale() == 8.0
    state = scaler.state_dict()
    other = G.amp.GradScaler("cpu")
    other.load_state_dict(state)
    assert other.get_scale() == 8.0 and other.state_dict() == state
    with pytest.raises(ValueError):
        G.amp.GradScaler(growth_factor=0.5)


def test_seeding_helpers() -> None:
    G.cuda.manual_seed_all(5)
    G.cuda.manual_seed(5)
    G.cuda.seed_all()
    G.manual_seed(11)
    a = G.rand(3).tolist()
    G.manual_seed(11)
    with G.random.fork_rng(devices=[]):
        G.rand(10)
    assert G.rand(3).tolist() == a  # the fork left the stream where it was
    state = G.get_rng_state()
    b = G.rand(2).tolist()
    G.set_rng_state(state)
    assert G.rand(2).tolist() == b


def test_default_device() -> None:
    assert G.get_default_device() == G.device("cpu")
    G.set_default_device("cpu")
    try:
        assert G.zeros(2).device.type == "cpu" and G.tensor([1.0]).device.type == "cpu"
    finally:
        G.set_default_device(None)
    if not G.cuda.is_available():
        G.set_default_device("cuda")
        try:
            with pytest.raises(RuntimeError):
                G.zeros(2)  # factories now ask for the CUDA device, which this machine lacks
        finally:
            G.set_default_device(None)
    assert G.ones(1).device.type == "cpu"


def test_thread_count(monkeypatch) -> None:
    pytest.importorskip("threadpoolctl")
    from threadpoolctl import threadpool_info

    from runtime import threads
    monkeypatch.setattr(threads, "_requested", [None])  # the process's setting comes back after the test
    monkeypatch.setattr(threads, "_limiter", [None])
    before = G.get_num_threads()
    assert before >= 1
    G.set_num_threads(1)
    try:
        assert all(i["num_threads"] == 1 for i in threadpool_info() if i["user_api"] == "blas")
        assert G.get_num_threads() == 1
        assert threads.one_blas_thread()
        with pytest.raises(RuntimeError):
            G.set_num_threads(0)
    finally:
        threads._limiter[0].restore_original_limits()
    G.set_num_interop_threads(2)
    assert G.get_num_interop_threads() == 2
    G.set_num_interop_threads(1)


def test_tensor_device_flags() -> None:
    t = G.zeros(2)
    assert t.is_cpu and not t.is_cuda and not t.is_meta
    for flag in ("is_xpu", "is_mps", "is_quantized", "is_sparse", "is_mkldnn", "is_nested", "is_vulkan"):
        assert getattr(t, flag) is False
    assert G.zeros(1, dtype=G.uint8).is_signed() is False and t.is_signed() and not t.is_complex()


def test_from_numpy_of_memmap_shares_memory(tmp_path) -> None:
    m = np.memmap(tmp_path / "m.dat", dtype=np.float32, mode="w+", shape=(3, 4))
    m[:] = 1.0
    t = G.from_numpy(m)
    assert t.sum().item() == 12.0
    t[0, 0] = 5.0
    assert m[0, 0] == 5.0  # shared, not copied
    assert G.as_tensor(m).sum().item() == 16.0
    assert G.from_numpy(np.matrix([[1, 2]])).tolist() == [[1, 2]]


def test_numerics_switches_are_kept() -> None:
    assert G.get_float32_matmul_precision() == "highest"
    G.set_float32_matmul_precision("high")
    try:
        assert G.get_float32_matmul_precision() == "high"
        with pytest.raises(RuntimeError):
            G.set_float32_matmul_precision("fast")
    finally:
        G.set_float32_matmul_precision("highest")
    G.use_deterministic_algorithms(True, warn_only=True)
    try:
        assert G.are_deterministic_algorithms_enabled() and G.is_deterministic_algorithms_warn_only_enabled()
    finally:
        G.use_deterministic_algorithms(False)
    assert not G.are_deterministic_algorithms_enabled()
    assert G.is_anomaly_enabled() is False


def test_cuda_grad_scaler_without_cuda_disables_itself() -> None:
    if G.cuda.is_available():
        assert G.amp.GradScaler("cuda").is_enabled()
        return
    with pytest.warns(UserWarning):
        scaler = G.cuda.amp.GradScaler()
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0
