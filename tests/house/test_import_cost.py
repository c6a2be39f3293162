"""What `import generated` loads (Note [Kernels loaded on first call] in runtime/first_call.py, Note [The CUDA
backend loads on first use] in runtime/cuda/__init__.py): no CUDA backend and no Autograd kernels until a
call needs them, with the same tables, names and results afterwards. The time itself is measured by
bench/bench_cpu_paths.py (`measure_import`), not here."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import types
from pathlib import Path

import pytest

from runtime.dispatcher import AUTOGRAD_BIT, CPU_BIT, Dispatcher

ROOT = Path(__file__).resolve().parents[2]

# modules that a CPU program without autograd must not load, and the stdlib modules only they bring
LAZY_MODULES = ("generated._autograd", "generated._cuda_kernels", "runtime.cuda.device", "runtime.cuda.compile",
                "runtime.cuda.memory", "runtime.cuda.allocator", "runtime.cuda.launch", "runtime.cuda.ops",
                "runtime.cuda.pointwise", "runtime.cuda.nvrtc_check", "hashlib")

_SCRIPT = textwrap.dedent("""
    import json, os, sys
    os.environ.pop("OPGEN_EMULATE_CUDA", None)
    LAZY = {lazy!r}
    out = {{}}
    import generated as G
    out["after_import"] = [m for m in LAZY if m in sys.modules]
    x = G.tensor([1.0, 2.0, 3.0])
    y = (x * 2 + 1).sum()
    out["cpu_result"] = y.item()
    out["after_cpu_ops"] = [m for m in LAZY if m in sys.modules]
    from runtime.dispatcher import dump
    out["dump_before"] = dump("mul.Tensor")
    w = G.tensor([1.0, 2.0, 3.0], requires_grad=True)
    loss = (w * w).sum()
    loss.backward()
    out["grad"] = w.grad.tolist()
    out["grad_fn"] = type(loss.grad_fn).__name__
    out["autograd_loaded"] = "generated._autograd" in sys.modules
    cuda = ("generated._cuda", "runtime.cuda.")
    out["cuda_after_backward"] = [m for m in LAZY if m.startswith(cuda) and m in sys.modules]
    out["dump_after"] = dump("mul.Tensor")
    out["is_available"] = G.cuda.is_available()
    out["device_loaded"] = "runtime.cuda.device" in sys.modules
    out["dir_cuda"] = "memory_allocated" in dir(G.cuda) and "is_available" in dir(G.cuda)
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def fresh_process() -> dict:
    import json

    run = subprocess.run([sys.executable, "-c", _SCRIPT.format(lazy=LAZY_MODULES)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_import_loads_no_cuda_backend_and_no_autograd_kernels(fresh_process: dict) -> None:
    assert fresh_process["after_import"] == []
    assert fresh_process["after_cpu_ops"] == []
    assert fresh_process["cpu_result"] == 15.0


def test_first_autograd_call_loads_the_kernels_with_the_same_names(fresh_process: dict) -> None:
    assert fresh_process["grad"] == [2.0, 4.0, 6.0]
    assert fresh_process["grad_fn"] == "SumBackward0"
    assert fresh_process["autograd_loaded"]
    assert fresh_process["cuda_after_backward"] == []
    # the stand-ins print as the kernels they stand for, in the same order
    assert fresh_process["dump_before"] == fresh_process["dump_after"]
    assert "generated._autograd.mul_Tensor [kernel]" in fresh_process["dump_after"]


def test_cuda_queries_load_the_device_module_on_first_use(fresh_process: dict) -> None:
    assert fresh_process["is_available"] is False
    assert fresh_process["device_loaded"]
    assert fresh_process["dir_cuda"]


def _module(name: str, **functions: object) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(functions)
    return module


def test_on_first_call_loads_once_and_keeps_registrations_on_top(monkeypatch: pytest.MonkeyPatch) -> None:
    imports: list[str] = []
    fake = _module("fake_kernels", f_cpu=lambda x: ("real cpu", x), f_ag=lambda x: ("real autograd", x))

    def import_module(name: str) -> types.ModuleType:
        imports.append(name)
        return fake

    monkeypatch.setattr("runtime.first_call.importlib.import_module", import_module)
    d = Dispatcher()
    op = d.declare("f", "f(Tensor self) -> Tensor", (0,), deferred=True)
    assert op.table == []  # built by the register_all that follows
    d.register_all([("f", "CPU", d.on_first_call("fake_kernels", "f_cpu")),
                    ("f", "Autograd", d.on_first_call("fake_kernels", "f_ag"))])
    stub = op.kernels["CPU"]
    assert (stub.__module__, stub.__qualname__) == ("fake_kernels", "f_cpu")
    assert list(op.kernels) == ["CPU", "Autograd"]
    # a registration on top of the stand-in stays on top after the module loads
    undo = d.register("f", "Autograd", lambda x: ("mine", x))
    assert imports == []
    assert op.table[CPU_BIT](1) == ("real cpu", 1)
    assert imports == ["fake_kernels"]
    assert op.kernels["CPU"] is fake.f_cpu and op.table[CPU_BIT] is fake.f_cpu  # no stand-in left in the table
    assert op.table[CPU_BIT | AUTOGRAD_BIT](2) == ("mine", 2)
    undo()
    assert op.table[CPU_BIT | AUTOGRAD_BIT](3) == ("real autograd", 3)
    assert op.kernels["Autograd"] is fake.f_ag
    assert imports == ["fake_kernels"]
    assert stub(4) == ("real cpu", 4)  # a stand-in kept by a caller still runs the real kernel


def test_on_first_call_from_two_threads_runs_the_real_kernel_in_both(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _module("fake_kernels", g=lambda x: x + 1)
    monkeypatch.setattr("runtime.first_call.importlib.import_module", lambda name: fake)
    d = Dispatcher()
    op = d.declare("g", "g(Tensor self) -> Tensor", (0,))
    d.register_all([("g", "CPU", d.on_first_call("fake_kernels", "g"))])
    stub = op.table[CPU_BIT]
    results: list[int] = []
    threads = [threading.Thread(target=lambda i=i: results.append(stub(i))) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == list(range(1, 9))
    assert op.table[CPU_BIT] is fake.g


def test_deferred_op_left_unregistered_still_raises_dispatch_error() -> None:
    from runtime.dispatcher import DispatchError

    d = Dispatcher()
    lonely = d.declare("lonely", "lonely(Tensor self) -> Tensor", (0,), deferred=True)
    d.declare("other", "other(Tensor self) -> Tensor", (0,), deferred=True)
    d.register_all([("other", "CPU", lambda x: x)])
    with pytest.raises(DispatchError, match="no kernel for operator 'lonely' and dispatch key CPU"):
        lonely.table[CPU_BIT](None)
