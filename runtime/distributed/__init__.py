"""`generated.distributed`: PyTorch's `torch.distributed` on MPI (CPU tensors, the emulated CUDA device) and
NCCL (CUDA tensors). Start the ranks with `python -m generated.distributed.run --nproc-per-node N script.py`
(or `mpiexec -n N python script.py`); each calls `init_process_group()`.

`all_gather_object` and `broadcast_object_list` pickle their objects: use them between trusted peers only.
"""

from runtime.distributed.collectives import (
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    broadcast_object_list,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from runtime.distributed.process_group import (
    GroupMember,
    ProcessGroup,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    new_group,
)
from runtime.distributed.reduce_op import Backend, ReduceOp
from runtime.distributed.work import DistBackendError, DistError, Work

group = GroupMember  # `dist.group.WORLD`, as in PyTorch

__all__ = [
    "Backend", "DistBackendError", "DistError", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all", "all_to_all_single", "barrier",
    "broadcast", "broadcast_object_list", "default_pg_timeout", "destroy_process_group", "gather", "get_backend",
    "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group",
    "init_process_group", "irecv", "is_available", "is_initialized", "is_mpi_available", "is_nccl_available",
    "isend", "new_group", "recv", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter", "send",
]
