"""torch.nn.functional odds and ends: pad (constant, cropping), normalize, relu/leaky_relu in place, one_hot,
adaptive pooling with None, max_pool2d with indices, avg_pool2d stride None, Unflatten; values and gradients."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

rng = np.random.default_rng(25)
x = torch.tensor(rng.normal(size=(2, 3, 4, 5)), dtype=torch.float32, requires_grad=True)
padded = F.pad(x, (1, 2, 0, 1), value=0.5)
cropped = F.pad(x, (-1, 1, 2, -2))
normed = F.normalize(x.flatten(1), p=2.0, dim=1)
pooled, idx = F.max_pool2d(x, 2, return_indices=True)
avg = F.avg_pool2d(x, kernel_size=2)
adaptive = F.adaptive_avg_pool2d(x, (None, 2))
unflat = nn.Unflatten(1, (3, 20))(x.reshape(2, 60))
total = (padded ** 2).sum() + cropped.sum() + (normed * torch.arange(60.0)).sum() + pooled.sum() * 2 + avg.sum() \
    + adaptive.pow(2).sum() + unflat.sum()
total.backward()
y = torch.tensor([-1.0, 0.5, -0.25])
F.relu(y, inplace=True)
z = torch.tensor([-1.0, 0.5, -0.25])
F.leaky_relu(z, 0.3, inplace=True)
results = {"padded_shape": list(padded.shape), "padded": padded[0, 0], "cropped_shape": list(cropped.shape),
           "cropped": cropped[1, 2], "normed": normed[:, :5], "pooled": pooled[0, 0], "indices": idx[1, 2],
           "avg": avg[1, 1], "adaptive": adaptive[0, 1], "unflat_shape": list(unflat.shape), "x_grad": x.grad[0, 0],
           "relu_inplace": y, "leaky_inplace": z, "one_hot": F.one_hot(torch.tensor([2, 0, 1])),
           "repr": repr(nn.Unflatten(1, (3, 20)))}
