"""Shape manipulation: view/reshape, permute, transpose, squeeze, unsqueeze, cat/stack/split/chunk, expand."""

import numpy as np
import torch

x = torch.tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
parts = torch.split(x, 2, dim=2)
parts2 = x.split([1, 2], dim=1)
chunks = torch.chunk(x, 3, dim=1)
u = torch.unbind(x, dim=0)
b = torch.tensor([1.0, 2.0, 3.0])
results = {
    "view": x.view(6, 4),
    "view_neg": list(x.view(-1, 12).shape),
    "reshape": x.reshape(4, -1),
    "flatten": x.flatten(),
    "flatten1": list(x.flatten(1).shape),
    "flatten_se": list(torch.flatten(x, start_dim=0, end_dim=1).shape),
    "permute": x.permute(2, 0, 1),
    "permute_tuple": list(x.permute((1, 0, 2)).shape),
    "transpose": x.transpose(0, 2),
    "T2": x[0].T,
    "mT": list(x.mT.shape),
    "squeeze": list(x[:, :1].squeeze().shape),
    "squeeze1": list(x[:, :1].squeeze(1).shape),
    "unsqueeze": list(x.unsqueeze(-1).shape),
    "unsqueeze0": list(torch.unsqueeze(b, 0).shape),
    "cat": torch.cat([x, x], dim=1),
    "cat_neg": list(torch.cat((x, x), -1).shape),
    "stack": list(torch.stack([b, b, b], dim=1).shape),
    "stack0": torch.stack((b, b * 2)),
    "split": [list(p.shape) for p in parts],
    "split_list": [p.tolist() for p in parts2],
    "chunk": [list(c.shape) for c in chunks],
    "unbind": [t.sum().item() for t in u],
    "expand": b.expand(2, 3),
    "expand_neg": list(b.unsqueeze(0).expand(4, -1).shape),
    "expand_as": b.expand_as(torch.zeros(2, 3)),
    "view_as": b.view_as(torch.zeros(3, 1)),
    "reshape_as": list(x.reshape_as(torch.zeros(4, 6)).shape),
    "repeat": b.repeat(2, 2),
    "tile": torch.tile(b, (2,)),
    "repeat_interleave": b.repeat_interleave(2),
    "rep_int_t": torch.repeat_interleave(torch.tensor([1, 2]), torch.tensor([1, 3])),
    "flip": torch.flip(x[0], dims=[0]),
    "fliplr": torch.fliplr(x[0]),
    "roll": torch.roll(b, 1),
    "roll2": x[0].roll(shifts=1, dims=1),
    "movedim": list(x.movedim(0, -1).shape),
    "hstack": torch.hstack([b, b]),
    "vstack": torch.vstack([b, b]),
    "contiguous": x.transpose(0, 1).contiguous().is_contiguous(),
    "narrow": x.narrow(2, 1, 2)[0],
    "unfold": b.unfold(0, 2, 1),
    "tril": torch.tril(x[0]),
    "triu": x[0].triu(1),
    "diag": torch.diag(b),
    "diagonal": torch.diagonal(x[0]),
    "size_tuple": x.size() == (2, 3, 4),
    "size_unpack": [*x.shape],
    "numel_shape": x.shape.numel(),
    "atleast": list(torch.atleast_2d(b).shape),
    "swapaxes": list(x.swapaxes(0, 1).shape),
    "broadcast_to": list(torch.broadcast_to(b, (2, 3)).shape),
    "meshgrid": [t.tolist() for t in torch.meshgrid(b[:2], b, indexing="ij")],
}
