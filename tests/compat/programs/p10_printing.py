"""Module reprs exactly as PyTorch prints them."""
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(16)
        self.attn = nn.MultiheadAttention(16, 4, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Dropout(0.1), nn.Linear(32, 16))

    def forward(self, x):
        return x


model = nn.Sequential(
    nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True), nn.MaxPool2d(2),
    nn.Conv2d(8, 8, kernel_size=(3, 5), stride=2, bias=False), nn.AvgPool2d(2), nn.AdaptiveAvgPool2d((1, 1)),
    nn.Flatten(), nn.Linear(8, 10), nn.Softmax(dim=1),
)
stack = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)] + [nn.ReLU()])
heads = nn.ModuleDict({"cls": nn.Linear(4, 2), "reg": nn.Identity()})
misc = nn.Sequential(nn.Embedding(100, 8, padding_idx=0), nn.LSTM(8, 16, num_layers=2, batch_first=True),
                     nn.GRU(4, 4, bidirectional=True), nn.RNN(3, 3, nonlinearity="relu"), nn.LSTMCell(3, 4),
                     nn.RNNCell(2, 2, bias=False), nn.GroupNorm(2, 8), nn.BatchNorm1d(8, momentum=None, affine=False),
                     nn.Sigmoid(), nn.Tanh(), nn.LogSoftmax(dim=-1), nn.Identity())
losses = [nn.MSELoss(), nn.L1Loss(), nn.CrossEntropyLoss(), nn.NLLLoss(), nn.BCELoss(), nn.BCEWithLogitsLoss(),
          nn.SmoothL1Loss(), nn.HuberLoss(), nn.KLDivLoss(reduction="batchmean")]
results = {"model": repr(model), "list": repr(stack), "dict": repr(heads), "block": repr(Block()),
           "misc": repr(misc), "losses": [repr(x) for x in losses], "str_equals_repr": str(model) == repr(model)}
