"""Module hooks: forward pre-hooks that change the input, forward hooks that read or replace the output,
full backward hooks that see (and scale) gradients, and removing hooks with their handles."""
import numpy as np
import torch
import torch.nn as nn


def fill_(model, seed, scale=0.5):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            p.copy_(torch.tensor(rng.uniform(-scale, scale, size=tuple(p.shape))))


model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
fill_(model, 90)
x = torch.tensor([[1.0, -2.0, 0.5], [0.3, 0.1, -0.7]], requires_grad=True)
seen = {}


def save_output(name):
    def hook(module, args, output):
        seen[name] = output.detach().clone()
    return hook


handles = [model[i].register_forward_hook(save_output(f"layer{i}")) for i in range(3)]
pre = model[0].register_forward_pre_hook(lambda module, args: (args[0] * 2,))
grads = {}


def backward_hook(module, grad_input, grad_output):
    grads["grad_input"] = grad_input[0].detach().clone()
    grads["grad_output"] = grad_output[0].detach().clone()
    return (grad_input[0] * 10,)


bh = model[1].register_full_backward_hook(backward_hook)
out = model(x)
out.sum().backward()
results = {"out": out, "layer0": seen["layer0"], "layer1": seen["layer1"], "layer2": seen["layer2"],
           "grad_input": grads["grad_input"], "grad_output": grads["grad_output"], "x_grad": x.grad,
           "w0_grad": model[0].weight.grad}

for h in handles:
    h.remove()
pre.remove()
bh.remove()
seen.clear()
x.grad = None
model.zero_grad()
out2 = model(x)
out2.sum().backward()
results["after_remove_seen"] = len(seen)
results["after_remove_out"] = out2
results["after_remove_x_grad"] = x.grad

replaced = model.register_forward_hook(lambda m, a, o: o * 0 + 1)
results["replaced"] = model(x)
replaced.remove()
counter = []
model.register_full_backward_hook(lambda m, gi, go: counter.append([g is None for g in gi]))
model(torch.ones(1, 3)).sum().backward()
results["hook_without_input_grad"] = counter
