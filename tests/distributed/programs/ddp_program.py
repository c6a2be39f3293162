"""DistributedDataParallel over N ranks against one process training on the concatenated batch.
Run under the launcher (python -m generated.distributed.run --nproc-per-node N PROGRAM)."""

import sys

import generated.distributed as dist
import numpy as np
from generated.nn.parallel import DistributedDataParallel as DDP
from generated.utils.data import DistributedSampler

import generated as G

device = sys.argv[1] if len(sys.argv) > 1 else "cpu"
dist.init_process_group()
r, n = dist.get_rank(), dist.get_world_size()
nn = G.nn


def model_fn() -> nn.Module:
    return nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 6 * 6, 16),
                         nn.Tanh(), nn.Linear(16, 4)).to(device)


G.manual_seed(7)
X, Y = G.randn(4 * n, 1, 6, 6, device=device), G.randn(4 * n, 4, device=device)
mine = slice(4 * r, 4 * r + 4)


def close(a: list[G.Tensor], b: list[G.Tensor], what: str, tol: float = 1e-6) -> None:
    worst = max(float((x.detach().cpu() - y.detach().cpu()).abs().max()) for x, y in zip(a, b, strict=True))
    assert worst <= tol, f"rank {r}: {what}: differs from one process by {worst}"


# 1. training: N ranks on 4 samples each == one process on all 4N (SGD with momentum, 4 steps)
G.manual_seed(r)  # different initial weights on every rank: DDP broadcasts rank 0's
local = model_fn()
ddp = DDP(local, bucket_cap_mb=0.001)  # small buckets: several all-reduces per backward
assert len(ddp.reducer.buckets) > 1
opt = G.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
for _ in range(4):
    loss = ((ddp(X[mine]) - Y[mine]) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
G.manual_seed(0)
ref = model_fn()
ref_opt = G.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
for _ in range(4):
    loss = ((ref(X) - Y) ** 2).mean()
    ref_opt.zero_grad()
    loss.backward()
    ref_opt.step()
close(list(local.parameters()), list(ref.parameters()), "DDP training")
assert list(ddp.state_dict())[0].startswith("module."), list(ddp.state_dict())

# 2. no_sync: two micro-batches accumulated locally, then one synchronised backward
half = [slice(4 * r, 4 * r + 2), slice(4 * r + 2, 4 * r + 4)]
ddp.zero_grad()
with ddp.no_sync():
    ((ddp(X[half[0]]) - Y[half[0]]) ** 2).sum().backward()
local_only = [p.grad.clone() for p in local.parameters()]
((ddp(X[half[1]]) - Y[half[1]]) ** 2).sum().backward()
ref.load_state_dict(local.state_dict())
ref.zero_grad()
((ref(X) - Y) ** 2).sum().backward()
close([p.grad for p in local.parameters()], [p.grad / n for p in ref.parameters()], "no_sync accumulation", 1e-5)
if n > 1:  # inside no_sync the gradients were this rank's alone
    ref.zero_grad()
    ((ref(X[half[0]]) - Y[half[0]]) ** 2).sum().backward()
    close(local_only, [p.grad for p in ref.parameters()], "no_sync keeps local gradients", 1e-5)


# 3. unused parameters
class TwoHeads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body, self.used, self.unused = nn.Linear(3, 3), nn.Linear(3, 1), nn.Linear(3, 1)

    def forward(self, x: G.Tensor) -> G.Tensor:
        return self.used(self.body(x))


G.manual_seed(1)
heads = DDP(TwoHeads().to(device), find_unused_parameters=True)
for _ in range(2):
    heads.zero_grad()
    heads(G.ones(2, 3, device=device) * (r + 1)).sum().backward()
assert heads.module.unused.weight.grad is None and heads.module.used.weight.grad is not None
strict = DDP(TwoHeads().to(device))
strict(G.ones(2, 3, device=device)).sum().backward()
try:
    strict(G.ones(2, 3, device=device))
except RuntimeError as e:
    assert "unused.weight" in str(e) and "find_unused_parameters" in str(e), e
else:
    raise AssertionError("an unused parameter without find_unused_parameters must be reported")

# 4. SyncBatchNorm == BatchNorm over the whole batch (outputs, input gradients, running statistics)
G.manual_seed(3)
Z = G.randn(3 * n, 4, 5, 5, device=device)
sync = nn.SyncBatchNorm(4).to(device)
zin = Z[3 * r:3 * r + 3].detach().requires_grad_()
out = sync(zin)
(out * out).sum().backward()
bn = nn.BatchNorm2d(4).to(device)
zall = Z.detach().requires_grad_()
ref_out = bn(zall)
(ref_out * ref_out).sum().backward()
close([out], [ref_out[3 * r:3 * r + 3]], "SyncBatchNorm output", 1e-5)
close([zin.grad], [zall.grad[3 * r:3 * r + 3]], "SyncBatchNorm input gradient", 1e-4)
close([sync.running_mean, sync.running_var], [bn.running_mean, bn.running_var], "SyncBatchNorm running stats", 1e-5)
converted = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2)))
assert isinstance(converted[1], nn.SyncBatchNorm)

# 5. DistributedSampler: the ranks' shares cover the dataset once, padded to equal lengths
data = list(range(10))
shares = [list(DistributedSampler(data, num_replicas=n, rank=k, seed=5)) for k in range(n)]
assert len({len(s) for s in shares}) == 1 and set().union(*shares) == set(data)
sampler = DistributedSampler(data, seed=5)
first = list(sampler)
sampler.set_epoch(1)
assert list(sampler) != first or len(data) <= n
dropped = [list(DistributedSampler(data, num_replicas=n, rank=k, shuffle=False, drop_last=True)) for k in range(n)]
assert sum(len(s) for s in dropped) == len(data) // n * n
order = np.concatenate([np.array(s) for s in dropped]) if n > 1 else np.array(dropped[0])
assert len(set(order.tolist())) == len(order)

dist.destroy_process_group()
print(f"rank {r} of {n}: DistributedDataParallel agrees with one process")
