"""NumPy interop: from_numpy shares memory, numpy() of detached tensors, dtype mapping, np ops on tensors."""

import numpy as np
import torch

arr = np.arange(6, dtype=np.float64).reshape(2, 3)
t = torch.from_numpy(arr)
arr[0, 0] = 100.0
back = t.numpy()
t2 = torch.tensor(arr)
arr[0, 1] = -5.0
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x * 2).sum()
y.backward()
int_arr = torch.from_numpy(np.array([1, 2, 3], dtype=np.int32))
f32 = torch.as_tensor(np.ones((2, 2), dtype=np.float32))
results = {
    "shared": t[0, 0].item(),
    "copied": t2[0, 1].item(),
    "back_type": type(back).__name__,
    "dtype64": t.dtype == torch.float64,
    "int32": int_arr.dtype == torch.int32,
    "f32": f32.dtype == torch.float32,
    "detach_numpy": x.detach().numpy().tolist(),
    "grad_numpy": x.grad.numpy().tolist(),
    "np_sum": float(np.sum(t.numpy())),
    "np_mean": float(np.asarray(t).mean()),
    "array_conv": np.array(torch.tensor([[1, 2], [3, 4]])).tolist(),
    "list_of_tensors": torch.stack([torch.tensor(v) for v in [1.0, 2.0]]),
    "tensor_from_list_np": torch.tensor([np.float32(1.5), np.float32(2.5)]).tolist(),
    "np_scalar": torch.tensor(np.float64(2.5)).item(),
    "item_type": type(torch.tensor([3]).item()).__name__,
    "float_item_type": type(torch.tensor(3.0).item()).__name__,
    "tolist_nested": torch.arange(4).reshape(2, 2).tolist(),
    "tolist_scalar": torch.tensor(7).tolist(),
    "bool_numpy": (torch.tensor([1, 0]) > 0).numpy().tolist(),
    "np_result_dtype": str(t.numpy().dtype),
    "from_np_int64": torch.from_numpy(np.array([5])).dtype == torch.long,
    "to_float_np": torch.tensor(arr).float().numpy().dtype == np.float32,
    "mixed": (torch.tensor([1.0, 2.0]) + torch.from_numpy(np.array([1.0, 1.0], dtype=np.float32))).tolist(),
}
