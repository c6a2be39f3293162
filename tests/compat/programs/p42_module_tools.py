"""Module tools: ModuleList/ModuleDict, register_buffer, named_modules, apply with nn.init, children,
parameters counting, requires_grad_(False) freezing, forward hooks capturing activations, repr."""

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(d, d) for _ in range(2)])
        self.heads = nn.ModuleDict({"a": nn.Linear(d, 1), "b": nn.Linear(d, 2)})
        self.register_buffer("scale", torch.tensor([2.0]))
        self.norm = nn.LayerNorm(d)

    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        x = self.norm(x) * self.scale
        return {k: h(x) for k, h in self.heads.items()}


def init(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.weight, 0.1)
        nn.init.zeros_(m.bias)


net = Block(3)
net.apply(init)
acts = {}
handle = net.layers[0].register_forward_hook(lambda mod, inp, out: acts.setdefault("l0", out.detach().clone()))
x = torch.tensor([[1.0, -2.0, 0.5], [0.0, 1.0, 3.0]])
out = net(x)
handle.remove()
net(x)
for p in net.layers.parameters():
    p.requires_grad_(False)
trainable = sum(p.numel() for p in net.parameters() if p.requires_grad)
(out["a"].sum() + out["b"].pow(2).sum()).backward()
results = {
    "a": out["a"],
    "b": out["b"],
    "act": acts["l0"],
    "n_hooks_fired": len(acts),
    "trainable": trainable,
    "module_names": [n for n, _ in net.named_modules()],
    "children": [type(c).__name__ for c in net.children()],
    "buffers": [n for n, _ in net.named_buffers()],
    "state_keys": list(net.state_dict().keys()),
    "param_names": [n for n, _ in net.named_parameters()],
    "head_grad": net.heads["a"].weight.grad,
    "layer_grad_none": net.layers[0].weight.grad is None,
    "repr": repr(net.heads["b"]),
    "repr_ln": repr(net.norm),
    "len_list": len(net.layers),
    "keys": list(net.heads.keys()),
    "in_dict": "a" in net.heads,
    "seq_repr": repr(nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Dropout(0.5))),
}
