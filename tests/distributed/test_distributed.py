"""generated.distributed and DistributedDataParallel, run as real MPI jobs of 1-3 ranks through the
launcher (`python -m generated.distributed.run`); each rank checks its results against NumPy or against
one process training on the concatenated batch (tests/distributed/programs/*_program.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mpi4py")
ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = ROOT / "tests" / "distributed" / "programs"


def launch(nproc: int, program: str, *args: str, env: dict[str, str] | None = None,
           timeout: float = 240) -> tuple[int, str, float]:
    """Run a program of tests/distributed/programs under the launcher; (exit status, output, seconds)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "generated.distributed.run", "--nproc-per-node", str(nproc),
                           str(PROGRAMS / program), *args], cwd=ROOT, env=full_env, capture_output=True, text=True,
                          timeout=timeout)
    return proc.returncode, proc.stdout + proc.stderr, time.monotonic() - start


@pytest.mark.parametrize("nproc", [1, 2, 3])
def test_every_collective_agrees_with_numpy(nproc: int) -> None:
    code, out, _ = launch(nproc, "collectives_program.py")
    assert code == 0, out
    assert out.count("collectives agree with NumPy") == nproc, out


@pytest.mark.parametrize("nproc", [2, 3])
def test_ddp_matches_one_process_on_the_whole_batch(nproc: int) -> None:
    code, out, _ = launch(nproc, "ddp_program.py")
    assert code == 0, out
    assert out.count("DistributedDataParallel agrees with one process") == nproc, out


@pytest.mark.cuda
def test_collectives_and_ddp_on_the_emulated_device() -> None:
    from runtime.cuda import is_emulated

    if not is_emulated():
        pytest.skip("the MPI backend moves host memory: on a real GPU the NCCL backend serves CUDA tensors")
    for program in ("collectives_program.py", "ddp_program.py"):
        code, out, _ = launch(2, program, "cuda", env={"OPGEN_EMULATE_CUDA": "1"})
        assert code == 0, out


def test_a_rank_that_hangs_fails_the_job_within_the_timeout() -> None:
    code, out, seconds = launch(2, "faults_program.py", "hang", env={"FAULT_TIMEOUT": "2"})
    assert code != 0
    assert "timed out" in out and "all_reduce" in out, out
    assert seconds < 45, seconds


def test_a_killed_rank_ends_the_job() -> None:
    code, out, seconds = launch(2, "faults_program.py", "kill", env={"FAULT_TIMEOUT": "20"})
    assert code != 0, out
    assert "ended without an error" not in out
    assert seconds < 45, seconds


def test_mismatched_shapes_are_reported_naming_the_ranks() -> None:
    code, out, _ = launch(2, "faults_program.py", "mismatch", env={"OPGEN_DISTRIBUTED_DEBUG": "DETAIL"})
    assert code == 0, out
    assert out.count("refused") == 2 and "ranks [1] differ from rank 0" in out, out


def test_uneven_inputs_end_with_an_error_not_a_hang() -> None:
    code, out, seconds = launch(2, "faults_program.py", "uneven", env={"FAULT_TIMEOUT": "2"})
    assert code != 0
    assert "timed out" in out, out
    assert seconds < 45, seconds


def run_single(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120)


def test_refusals_without_a_job() -> None:
    """Errors that need no peers: a world the launcher did not start, a collective before init, bad
    tensors, the NCCL backend without a GPU, a second init."""
    code = r'''
import generated as G, generated.distributed as dist
def refused(kind, fn, *words):
    try:
        fn()
    except kind as e:
        assert all(w in str(e) for w in words), (str(e), words)
        return
    raise AssertionError(f"not refused: {words}")
refused(ValueError, lambda: dist.all_reduce(G.ones(2)), "init_process_group")
refused(ValueError, lambda: dist.init_process_group(world_size=2), "world_size is 2", "generated.distributed.run")
refused(ValueError, lambda: dist.init_process_group(backend="gloo"), "gloo")
refused(RuntimeError, lambda: dist.init_process_group(backend="nccl"), "GPU")
dist.init_process_group()
refused(ValueError, lambda: dist.init_process_group(), "twice")
refused(ValueError, lambda: dist.all_reduce(G.ones(4, 4).t()), "contiguous")
nccl_group = dist.ProcessGroup("nccl", [0], object(), "fake")  # a CPU tensor never reaches NCCL
refused(ValueError, lambda: dist.all_reduce(G.ones(2), group=nccl_group), "nccl", "cpu")
refused(TypeError, lambda: dist.all_reduce([1.0]), "Tensor")
refused(ValueError, lambda: dist.all_reduce(G.ones(2, dtype=G.int64), op=dist.ReduceOp.AVG), "AVG")
refused(ValueError, lambda: dist.all_gather([G.ones(2), G.ones(2)], G.ones(2)), "1 tensors")
refused(ValueError, lambda: dist.broadcast(G.ones(2), src=3), "rank 3")
t = G.tensor([1.0, 2.0])
dist.all_reduce(t)
assert t.tolist() == [1.0, 2.0] and dist.get_world_size() == 1
dist.destroy_process_group()
print("refusals ok")
'''
    proc = run_single(code)
    assert proc.returncode == 0 and "refusals ok" in proc.stdout, proc.stdout + proc.stderr


def test_post_accumulate_grad_hook_runs_after_the_gradient_is_stored() -> None:
    import generated as G

    w = G.randn(3, requires_grad=True)
    seen: list[list[float]] = []
    handle = w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
    (w * 2).sum().backward()
    (w * 3).sum().backward()
    assert seen == [[2.0] * 3, [5.0] * 3]
    handle.remove()
    (w * 1).sum().backward()
    assert len(seen) == 2
    with pytest.raises(RuntimeError):
        (w * 2).register_post_accumulate_grad_hook(lambda p: None)


def test_launcher_sets_torchrun_variables_and_runs_modules() -> None:
    proc = subprocess.run([sys.executable, "-m", "generated.distributed.run", "--dry-run", "--nproc-per-node", "4",
                           "-m", "demo.train", "--epochs", "1"], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    words = proc.stdout.split()
    assert words[words.index("-n") + 1] == "4"
    assert words[-4:] == ["-m", "demo.train", "--epochs", "1"]
