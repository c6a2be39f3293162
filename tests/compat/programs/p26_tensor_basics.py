"""Tensor basics a tutorial starts with: creation, dtypes, conversions, type checks, item/tolist."""

import numpy as np
import torch

a = torch.tensor([[1, 2, 3], [4, 5, 6]])
b = torch.arange(6, dtype=torch.float).reshape(2, 3)
c = torch.zeros_like(b)
d = torch.ones(2, 3, dtype=torch.float64)
e = torch.full((2, 2), 7.5)
f = torch.linspace(0, 1, steps=5)
g = torch.eye(3)
h = torch.empty(2, 3).fill_(2.0)
results = {
    "a_dtype_is_long": a.dtype == torch.long,
    "a_dtype_is_int64": a.dtype == torch.int64,
    "b_is_float": b.dtype == torch.float32,
    "float_alias": torch.float == torch.float32,
    "double_alias": torch.double == torch.float64,
    "d_is_fp": d.is_floating_point(),
    "a_is_fp": a.is_floating_point(),
    "is_tensor": torch.is_tensor(a),
    "isinstance": isinstance(b, torch.Tensor),
    "numel": torch.numel(b),
    "numel_m": b.numel(),
    "dim": b.dim(),
    "ndim": b.ndim,
    "size1": b.size(1),
    "size_neg": b.size(-1),
    "shape": list(b.shape),
    "len": len(b),
    "long": b.long(),
    "float": a.float(),
    "to64": a.to(torch.float64),
    "type32": b.type(torch.int32),
    "type32_dtype": b.type(torch.int32).dtype == torch.int32,
    "half_back": b.half().float(),
    "int": b.int(),
    "double": b.double().dtype == torch.float64,
    "bool": b.bool(),
    "to_dtype_kw": b.to(dtype=torch.int16).dtype == torch.int16,
    "c": c,
    "d": d,
    "e": e,
    "f": f,
    "g": g,
    "h": h,
    "item": b[1, 2].item(),
    "tolist": a.tolist(),
    "device": str(b.device),
    "device_eq": b.device == torch.device("cpu"),
    "device_type": b.device.type,
    "cuda": torch.cuda.is_available() in (True, False),
    "zeros_tuple": torch.zeros((2, 1)).shape == (2, 1),
    "np_roundtrip": torch.from_numpy(np.array([1.5, 2.5])).numpy().tolist(),
    "as_tensor": torch.as_tensor([1, 2]).dtype == torch.int64,
    "element_size": b.element_size(),
    "rand_shape": list(torch.rand(3, 4).shape),
    "randn_like": list(torch.randn_like(b).shape),
    "randint": torch.randint(0, 5, (10,)).max().item() < 5,
    "ones_like_dtype": torch.ones_like(a, dtype=torch.float32).dtype == torch.float,
    "get_default": torch.get_default_dtype() == torch.float32,
    "sum_dtype": a.sum().dtype == torch.int64,
    "mean_float": b.mean().item(),
    "is_contig": b.is_contiguous(),
    "t_contig": b.t().is_contiguous(),
    "stride": list(b.stride()),
    "new_zeros": b.new_zeros(2).tolist(),
    "new_tensor": b.new_tensor([1, 2]).dtype == torch.float32,
    "new_ones": b.new_ones((1, 2)).tolist(),
    "new_full": b.new_full((2,), 3.0).tolist(),
    "scalar_tensor": torch.tensor(3.5).item(),
    "scalar_dim": torch.tensor(3.5).dim(),
    "int_of": int(torch.tensor(4)),
    "float_of": float(torch.tensor([2.5])),
    "bool_of": bool(torch.tensor(1)),
}
