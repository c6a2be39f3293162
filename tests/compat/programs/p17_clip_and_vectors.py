"""nn.utils: clip_grad_norm_ (returns the total norm, inf norm too), clip_grad_value_, parameters_to_vector and
vector_to_parameters."""
import torch
import torch.nn as nn
from torch.nn.utils import clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters

model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
with torch.no_grad():
    vec = torch.linspace(-1.0, 1.0, sum(p.numel() for p in model.parameters()))
    vector_to_parameters(vec, model.parameters())
x = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
results = {"roundtrip": parameters_to_vector(model.parameters()).tolist() == vec.tolist(),
           "first_weight": model[0].weight}


def grads():
    model.zero_grad()
    (model(x) ** 2).sum().backward()


grads()
before = parameters_to_vector(p.grad for p in model.parameters())
total = clip_grad_norm_(model.parameters(), max_norm=1.0)
after = parameters_to_vector(p.grad for p in model.parameters())
results["total_norm"] = total.item()
results["norm_after"] = after.norm().item()
results["clipped"] = after[:5]
grads()
results["inf_norm"] = clip_grad_norm_(model.parameters(), max_norm=0.5, norm_type=float("inf")).item()
results["inf_after"] = parameters_to_vector(p.grad for p in model.parameters()).abs().max().item()
grads()
results["no_clip_needed"] = clip_grad_norm_(model.parameters(), max_norm=1e6).item()
results["unchanged"] = parameters_to_vector(p.grad for p in model.parameters()).tolist() == before.tolist()
clip_grad_value_(model.parameters(), clip_value=0.25)
results["value_clipped"] = parameters_to_vector(p.grad for p in model.parameters())[:8]
results["single_tensor"] = clip_grad_norm_(model[0].weight, 0.1).item()
results["vector_len"] = parameters_to_vector(model.parameters()).shape[0]
