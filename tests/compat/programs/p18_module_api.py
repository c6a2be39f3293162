"""The Module API: named_parameters, named_modules, named_buffers, children, apply, ModuleDict, ParameterList,
ParameterDict, state_dict keys, train/eval, requires_grad_ and load_state_dict's errors."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 4)])
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 1), "b": nn.Sequential(nn.Linear(4, 2), nn.BatchNorm1d(2))})
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(4)), nn.Parameter(torch.full((4,), 2.0))])
        self.extra = nn.ParameterDict({"shift": nn.Parameter(torch.zeros(4))})
        self.register_buffer("step", torch.tensor(0))
        self.register_buffer("tmp", torch.zeros(1), persistent=False)

    def forward(self, x):
        for block, s in zip(self.blocks, self.scales, strict=False):
            x = torch.relu(block(x)) * s + self.extra["shift"]
        return self.heads["a"](x), self.heads["b"](x)


def init_weights(m):
    if isinstance(m, nn.Linear):
        with torch.no_grad():
            m.weight.fill_(0.1)
            m.bias.fill_(-0.05)


net = Net()
net.apply(init_weights)
x = torch.tensor([[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 0.0, 2.0], [0.1, 0.2, 0.3, 0.4]])
a, b = net(x)
(a.sum() + b.pow(2).sum()).backward()
results = {
    "param_names": [n for n, _ in net.named_parameters()],
    "param_shapes": [list(p.shape) for p in net.parameters()],
    "module_names": [n for n, _ in net.named_modules()],
    "module_types": [type(m).__name__ for m in net.modules()],
    "buffer_names": [n for n, _ in net.named_buffers()],
    "children": [type(c).__name__ for c in net.children()],
    "state_keys": list(net.state_dict().keys()),
    "out_a": a, "out_b": b, "grad_scale0": net.scales[0].grad, "grad_shift": net.extra["shift"].grad,
    "len_list": len(net.blocks), "dict_keys": list(net.heads.keys()), "in_dict": "a" in net.heads,
}
net.eval()
results["eval_flags"] = [m.training for m in net.modules()]
net.train()
results["train_flags"] = all(m.training for m in net.modules())
net.requires_grad_(False)
results["frozen"] = [p.requires_grad for p in net.parameters()]
fresh = Net()
result = fresh.load_state_dict(net.state_dict())
results["load_missing"] = list(result.missing_keys)
results["loaded_equal"] = fresh.blocks[0].weight.tolist() == net.blocks[0].weight.tolist()
bad = {k: v for k, v in net.state_dict().items() if k != "step"}
bad["unexpected.weight"] = torch.zeros(1)
try:
    fresh.load_state_dict(bad)
    results["strict_error"] = "none"
except RuntimeError as e:
    results["strict_error"] = str(e).splitlines()[0]
nonstrict = fresh.load_state_dict(bad, strict=False)
results["nonstrict"] = [list(nonstrict.missing_keys), list(nonstrict.unexpected_keys)]
results["sliced"] = len(net.blocks[:1])
