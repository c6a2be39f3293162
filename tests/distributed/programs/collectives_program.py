"""Every collective on every rank, checked against a NumPy reference computed from the same seeds.
Run under the launcher (python -m generated.distributed.run --nproc-per-node N PROGRAM)."""

import sys

import generated.distributed as dist
import numpy as np

import generated as G

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
dist.init_process_group()
r, n = dist.get_rank(), dist.get_world_size()
assert dist.is_initialized() and dist.get_backend() == "mpi"


def data(rank: int, shape: tuple[int, ...], dtype: str = "float64") -> np.ndarray:
    return np.random.default_rng(100 + rank).standard_normal(shape).astype(dtype)


def T(a: np.ndarray) -> G.Tensor:
    return G.tensor(a, device=device)


def same(t: G.Tensor, want: np.ndarray, what: str) -> None:
    got = t.cpu().numpy()
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=f"rank {r}: {what}")


everyone = [data(k, (3, 5)) for k in range(n)]
refs = {dist.ReduceOp.SUM: np.sum, dist.ReduceOp.PRODUCT: np.prod, dist.ReduceOp.MIN: np.min,
        dist.ReduceOp.MAX: np.max, dist.ReduceOp.AVG: np.mean}
for op, ref in refs.items():
    for dtype in ("float32", "float64"):
        t = T(everyone[r].astype(dtype))
        dist.all_reduce(t, op=op)
        same(t, ref(np.stack([e.astype(dtype) for e in everyone]), axis=0).astype(dtype), f"all_reduce {op} {dtype}")
ints = [(np.arange(6) * (k + 1)).astype(np.int64) for k in range(n)]
t = T(ints[r])
dist.all_reduce(t, op=dist.ReduceOp.BXOR)
same(t, np.bitwise_xor.reduce(np.stack(ints)), "all_reduce BXOR int64")
t = T(ints[r].astype(np.int32))
dist.all_reduce(t)
same(t, np.sum(np.stack(ints), axis=0).astype(np.int32), "all_reduce SUM int32")
b = T(np.array([r == 0, False, True]))
dist.all_reduce(b)
same(b, np.array([True, False, True]), "all_reduce bool")
if device == "cpu":
    h = G.tensor(everyone[r].astype(np.float16))
    dist.all_reduce(h)
    same(h, np.sum(np.stack([e.astype(np.float16).astype(np.float32) for e in everyone]), 0).astype(np.float16),
         "all_reduce float16")

# async: overlap two operations, then wait
w1 = dist.all_reduce(T(everyone[r]), async_op=True)
x = T(everyone[r])
w2 = dist.broadcast(x, src=n - 1, async_op=True)
assert w1.wait() and w2.wait() and w1.is_completed() and w2.is_success()
same(x, everyone[n - 1], "broadcast async")

x = T(everyone[r])
dist.reduce(x, dst=0)
same(x, np.sum(np.stack(everyone), 0) if r == 0 else everyone[r], "reduce")

lst = [T(np.zeros((3, 5))) for _ in range(n)]
dist.all_gather(lst, T(everyone[r]))
for k in range(n):
    same(lst[k], everyone[k], f"all_gather[{k}]")
out = T(np.zeros((3 * n, 5)))
dist.all_gather_into_tensor(out, T(everyone[r]))
same(out, np.concatenate(everyone), "all_gather_into_tensor")

big = [data(k, (2 * n, 4)) for k in range(n)]
out = T(np.zeros((2, 4)))
dist.reduce_scatter_tensor(out, T(big[r]))
same(out, np.sum(np.stack(big), 0)[2 * r:2 * r + 2], "reduce_scatter_tensor")

g = [T(np.zeros((3, 5))) for _ in range(n)] if r == n - 1 else None
dist.gather(T(everyone[r]), g, dst=n - 1)
if r == n - 1:
    for k in range(n):
        same(g[k], everyone[k], f"gather[{k}]")
s = T(np.zeros((3, 5)))
dist.scatter(s, [T(e) for e in everyone] if r == 0 else None, src=0)
same(s, everyone[r], "scatter")

# all_to_all_single with uneven splits: rank k sends k+1 rows to every rank
rows = [np.full((n * (k + 1), 2), 10 * k + np.arange(n).repeat(k + 1)[:, None], dtype=np.float64) for k in range(n)]
recv = T(np.zeros((sum(k + 1 for k in range(n)), 2)))
dist.all_to_all_single(recv, T(rows[r]), output_split_sizes=[k + 1 for k in range(n)],
                       input_split_sizes=[r + 1] * n)
want = np.concatenate([np.full((k + 1, 2), 10 * k + r, dtype=np.float64) for k in range(n)])
same(recv, want, "all_to_all_single")

# point to point in a ring, both directions at once (non-blocking: no deadlock)
if n > 1:
    right, left = (r + 1) % n, (r - 1) % n
    inbox = T(np.zeros(4))
    sends = dist.isend(T(np.full(4, float(r))), dst=right)
    recvd = dist.irecv(inbox, src=left)
    sends.wait()
    recvd.wait()
    same(inbox, np.full(4, float(left)), "isend/irecv ring")
    if r == 0:
        for _ in range(1, n):
            box = T(np.zeros(2))
            sender = dist.recv(box)
            same(box, np.full(2, float(sender)), "recv from any")
    else:
        dist.send(T(np.full(2, float(r))), dst=0)


objs = [None] * n
dist.all_gather_object(objs, {"rank": r, "name": f"worker{r}"})
assert objs == [{"rank": k, "name": f"worker{k}"} for k in range(n)], objs
items = [f"from {r}", r] if r == 0 else [None, None]
dist.broadcast_object_list(items, src=0)
assert items == ["from 0", 0], items

evens = dist.new_group([k for k in range(n) if k % 2 == 0])
if r % 2 == 0:
    t = T(np.array([float(r)]))
    dist.all_reduce(t, group=evens)
    same(t, np.array([float(sum(k for k in range(n) if k % 2 == 0))]), "all_reduce on a sub-group")
    assert dist.get_world_size(evens) == len(range(0, n, 2))
else:
    assert evens is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(evens) == -1
dist.barrier()
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"rank {r} of {n}: collectives agree with NumPy")
