"""Process groups: the default (world) group made by `init_process_group`, and sub-groups.

Note [Who forms the world]
MPI forms the world: the MPI launcher (`mpiexec`, a batch scheduler's `srun`, or opgen's own
`python -m generated.distributed.run`) starts the ranks and tells each its rank and the world size.
`init_process_group` reads them from MPI and checks them against what the program or the environment
says (`rank=`, `world_size=`, RANK / WORLD_SIZE as `env://` defines them): a disagreement, such as a
script started without the launcher that asks for 2 ranks, is an error that says how to launch it,
never a wait for peers that will not come. The NCCL backend bootstraps over the same MPI world: rank 0
makes the NCCL unique id and broadcasts it with MPI.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from runtime.distributed.mpi_backend import MPIComm, load_mpi
from runtime.distributed.reduce_op import Backend
from runtime.distributed.work import DistError, ProgressThread

default_pg_timeout = timedelta(minutes=30)


class ProcessGroup:
    """A set of ranks that run collectives together: PyTorch's ProcessGroup. `ranks` are global ranks
    in group order; `comm` is the backend's communicator (MPIComm, or NCCLComm for CUDA tensors)."""

    def __init__(self, backend: str, ranks: Sequence[int], comm: Any, name: str) -> None:
        self.backend = backend
        self.ranks = list(ranks)
        self.comm = comm
        self.group_name = name

    def rank(self) -> int:
        return int(self.comm.rank)

    def size(self) -> int:
        return int(self.comm.size)

    def name(self) -> str:
        return self.backend

    def group_rank(self, global_rank: int) -> int:
        """The rank within this group of a global rank (a ValueError for a rank outside it)."""
        try:
            return self.ranks.index(global_rank)
        except ValueError:
            raise ValueError(f"Global rank {global_rank} is not part of group {self.group_name!r} "
                             f"(ranks {self.ranks})") from None

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self.backend!r}, ranks={self.ranks}, name={self.group_name!r})"


class GroupMember:
    """PyTorch's sentinels: `GroupMember.WORLD` is the default group once initialised, and
    `NON_GROUP_MEMBER` is what `new_group` returns on ranks outside the new group."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = object()


class _World:
    """The process's distributed state: the default group, the progress thread, whether any operation
    timed out (Note [One thread talks to the communication library])."""

    def __init__(self) -> None:
        self.default: ProcessGroup | None = None
        self.progress: ProgressThread | None = None
        self.timeout = default_pg_timeout.total_seconds()
        self.broken = False
        self.groups = 0
        self.abort_registered = False

    def mark_broken(self) -> None:
        self.broken = True


_world = _World()


def _abort_if_broken() -> None:
    """At exit: a process whose communicator has an operation that never completed would hang in
    MPI_Finalize; abort the job instead (the launcher then ends every rank and reports the failure)."""
    if _world.broken:
        MPI = load_mpi()
        MPI.COMM_WORLD.Abort(1)


def is_available() -> bool:
    """Whether the distributed package can run here (mpi4py is installed)."""
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


def is_initialized() -> bool:
    return _world.default is not None


def is_mpi_available() -> bool:
    return is_available()


def is_nccl_available() -> bool:
    from runtime.distributed.nccl_backend import nccl_available

    return nccl_available()


def default_group() -> ProcessGroup:
    if _world.default is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return _world.default


def resolve(group: Any) -> ProcessGroup:
    """The group a collective runs on: the default one for None or GroupMember.WORLD."""
    if group is None or group is GroupMember.WORLD:
        return default_group()
    if group is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("this rank is not a member of the group it passed (new_group returned "
                         "GroupMember.NON_GROUP_MEMBER here)")
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup made by new_group, or None, not {type(group).__name__}")
    return group


def _env_int(*names: str) -> int | None:
    for name in names:
        value = os.environ.get(name)
        if value not in (None, ""):
            try:
                return int(value)
            except ValueError:
                raise ValueError(f"environment variable {name}={value!r} is not an integer") from None
    return None


def _check_world(what: str, given: int, mpi_value: int, mpi_size: int) -> None:
    if given != mpi_value:
        raise ValueError(
            f"{what} is {given}, but MPI started this process as rank {mpi_value} of {mpi_size}: start the ranks "
            "with the MPI launcher, e.g. `python -m generated.distributed.run --nproc-per-node N script.py` or "
            "`mpiexec -n N python script.py`, and leave rank and world_size to it (Note [Who forms the world])")


def init_process_group(backend: str | None = None, init_method: str | None = None, timeout: timedelta | None = None,
                       world_size: int = -1, rank: int = -1, store: Any = None, group_name: str = "",
                       pg_options: Any = None, device_id: Any = None) -> None:
    """Join the default process group (PyTorch's signature). `backend` is "mpi" (CPU tensors and the
    emulated CUDA device; the default) or "nccl" (CUDA tensors); the MPI launcher forms the world."""
    if _world.default is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend or Backend.MPI)
    if init_method is not None and not (init_method.startswith("env://") or init_method.startswith("mpi://")):
        raise ValueError(f"init_method {init_method!r}: opgen's process groups are formed by the MPI launcher; use "
                         "init_method=None or 'env://' and start the ranks with python -m generated.distributed.run "
                         "or mpiexec")
    if store is not None:
        raise ValueError("store= is not supported: the MPI launcher forms the world (Note [Who forms the world])")
    if timeout is not None and not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {type(timeout).__name__}")
    MPI = load_mpi()
    world = MPI.COMM_WORLD
    mpi_rank, mpi_size = world.Get_rank(), world.Get_size()
    env_rank, env_size = _env_int("RANK"), _env_int("WORLD_SIZE")
    for what, value, mpi_value in (("rank", rank, mpi_rank), ("world_size", world_size, mpi_size)):
        if value not in (-1, None):
            _check_world(what, int(value), mpi_value, mpi_size)
    if env_rank is not None:
        _check_world("RANK (environment)", env_rank, mpi_rank, mpi_size)
    if env_size is not None:
        _check_world("WORLD_SIZE (environment)", env_size, mpi_size, mpi_size)
    _world.timeout = (timeout or default_pg_timeout).total_seconds()
    if _world.progress is None:
        _world.progress = ProgressThread()
    if not _world.abort_registered:
        atexit.register(_abort_if_broken)  # runs before mpi4py's own finalize (registered earlier)
        _world.abort_registered = True
    _world.broken = False
    mpi = MPIComm(world, _world.progress, _world.timeout, _world.mark_broken)
    comm: Any = mpi
    if name == Backend.NCCL:
        from runtime.distributed.nccl_backend import NCCLComm

        comm = NCCLComm.create(mpi, device_id)
    _world.default = ProcessGroup(name, range(mpi_size), comm, group_name or "default_pg")
    _world.default.mpi = mpi  # type: ignore[attr-defined]
    GroupMember.WORLD = _world.default


def destroy_process_group(group: Any = None) -> None:
    """Leave a group (the default one: every group, and the package can be initialised again)."""
    if group is None or group is GroupMember.WORLD:
        pg = default_group()
        pg.comm.barrier().wait()
        _world.default = None
        GroupMember.WORLD = None
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    pg = resolve(group)
    if hasattr(pg.comm, "free"):
        pg.comm.free()


def new_group(ranks: Sequence[int] | None = None, timeout: timedelta | None = None, backend: str | None = None,
              pg_options: Any = None, use_local_synchronization: bool = False, group_desc: str | None = None) -> Any:
    """A group of the given global ranks (every rank of the default group calls it, in the same order);
    ranks outside it get `GroupMember.NON_GROUP_MEMBER`."""
    world = default_group()
    size = world.size()
    members = list(range(size)) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(members)) != len(members):
        raise ValueError(f"new_group: ranks {list(ranks or [])} contain duplicates")
    bad = [r for r in members if not 0 <= r < size]
    if bad:
        raise ValueError(f"new_group: ranks {bad} are not in the world of {size} ranks")
    me = world.rank()
    mpi: MPIComm = world.mpi  # type: ignore[attr-defined]
    comm = mpi.split(0 if me in members else None, members.index(me) if me in members else 0)
    _world.groups += 1
    if comm is None:
        return GroupMember.NON_GROUP_MEMBER
    seconds = timeout.total_seconds() if timeout is not None else _world.timeout
    sub = MPIComm(comm, mpi.progress, seconds, _world.mark_broken)
    kind = Backend(backend) if backend else world.backend
    if kind == Backend.NCCL:
        from runtime.distributed.nccl_backend import NCCLComm

        pg = ProcessGroup(kind, members, NCCLComm.create(sub, None), group_desc or f"group{_world.groups}")
    else:
        pg = ProcessGroup(kind, members, sub, group_desc or f"group{_world.groups}")
    pg.mpi = sub  # type: ignore[attr-defined]
    return pg


def get_rank(group: Any = None) -> int:
    """This process's rank in `group` (-1 when it is not a member), as PyTorch."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).rank()


def get_world_size(group: Any = None) -> int:
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return resolve(group).size()


def get_backend(group: Any = None) -> str:
    return resolve(group).backend


def get_process_group_ranks(group: Any) -> list[int]:
    return list(resolve(group).ranks)


def get_global_rank(group: Any, group_rank: int) -> int:
    ranks = resolve(group).ranks
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group (size {len(ranks)})")
    return ranks[group_rank]


def get_group_rank(group: Any, global_rank: int) -> int:
    return resolve(group).group_rank(global_rank)


__all__ = ["DistError", "GroupMember", "ProcessGroup", "default_pg_timeout", "destroy_process_group",
           "get_backend", "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank",
           "get_world_size", "init_process_group", "is_available", "is_initialized", "is_mpi_available",
           "is_nccl_available", "new_group"]
