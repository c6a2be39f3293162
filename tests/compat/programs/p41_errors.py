"""What a user meets when things go wrong: the exception types PyTorch raises for common mistakes."""

import torch
import torch.nn as nn


def kind(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


a = torch.ones(2, 3)
b = torch.ones(4, 5)


def _twice():
    x = torch.ones(2, requires_grad=True)
    y = (x.exp()).sum()
    y.backward()
    y.backward()


results = {
    "matmul_shape": kind(lambda: a @ b),
    "add_shape": kind(lambda: a + b),
    "view_bad": kind(lambda: a.view(4, 2)),
    "index_oob": kind(lambda: a[5]),
    "dim_oob": kind(lambda: a.sum(dim=3)),
    "cat_mismatch": kind(lambda: torch.cat([a, b])),
    "item_many": kind(lambda: a.item()),
    "bool_many": kind(lambda: bool(a)),
    "int_grad": kind(lambda: torch.ones(2, dtype=torch.long).requires_grad_()),
    "backward_twice": kind(lambda: _twice()),
    "nonscalar_backward": kind(lambda: (torch.ones(2, requires_grad=True) * 2).backward()),
    "numpy_grad": kind(lambda: torch.ones(2, requires_grad=True).numpy()),
    "linear_shape": kind(lambda: nn.Linear(3, 2)(torch.ones(2, 4))),
    "ce_target": kind(lambda: nn.functional.cross_entropy(torch.ones(2, 3), torch.tensor([0, 5]))),
    "reshape_bad": kind(lambda: a.reshape(7)),
    "squeeze_ok": kind(lambda: a.squeeze(0)),
    "transpose_oob": kind(lambda: a.transpose(0, 2)),
    "gather_dtype": kind(lambda: a.gather(1, torch.tensor([[0.0]]))),
    "stack_shape": kind(lambda: torch.stack([a, b])),
    "alpha_int": kind(lambda: torch.add(torch.tensor([1]), torch.tensor([2]), alpha=0.5)),
    "leaf_inplace": kind(lambda: torch.ones(2, requires_grad=True).add_(1)),
    "expand_bad": kind(lambda: a.expand(3, 3)),
    "tensor_ragged": kind(lambda: torch.tensor([[1, 2], [3]])),
    "randint_bad": kind(lambda: torch.randint(5, 2, (3,))),
    "load_missing": kind(lambda: nn.Linear(2, 2).load_state_dict({"weight": torch.ones(2, 2)})),
    "not_module": kind(lambda: nn.Sequential(nn.Linear(2, 2))(torch.ones(3, 3))),
    "div_zero_float": (torch.tensor([1.0]) / 0).item(),
    "chunk_zero": kind(lambda: a.chunk(0)),
    "split_ok": [list(t.shape) for t in a.split(2, dim=1)],
    "one_hot_neg": kind(lambda: nn.functional.one_hot(torch.tensor([-1]))),
}
