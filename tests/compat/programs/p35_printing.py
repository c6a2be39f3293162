"""Printing: print(tensor), repr, f-strings with format specs, str of shapes and dtypes of small tensors."""

import contextlib
import io

import torch

buf = io.StringIO()
a = torch.tensor([[1.0, 2.5], [-3.0, 4.125]])
b = torch.tensor([1, 2, 3])
c = torch.tensor(0.5)
with contextlib.redirect_stdout(buf):
    print(a)
    print(b)
    print(c)
    print(torch.zeros(2, 2, dtype=torch.int64))
    print(torch.tensor([True, False]))
    print(torch.tensor([1e-5, 1.0]))
    print(torch.tensor([1e6, 2.0]))
    print(torch.tensor([0.1234567, 2.0]))
loss = torch.tensor(0.123456)
results = {
    "printed": buf.getvalue().replace("torch", "T").replace("opgen", "T"),
    "fmt": f"{loss:.3f}",
    "fmt_e": f"{loss.item():.2e}",
    "fmt_item": f"loss={loss.item():.4f}",
    "repr_grad": repr(torch.tensor([1.0], requires_grad=True)).replace("torch", "T").replace("opgen", "T"),
    "str_equal_repr": str(a) == repr(a),
    "len_repr": len(repr(torch.arange(5))),
    "shape_list": list(a.shape),
    "shape_tuple": tuple(a.size()),
}
