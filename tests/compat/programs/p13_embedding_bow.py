"""A bag-of-words classifier: Embedding with padding_idx, mean pooling, Linear; trained with Adagrad."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class BagOfWords(nn.Module):
    def __init__(self, vocab, dim, classes):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.out = nn.Linear(dim, classes)

    def forward(self, tokens):
        mask = (tokens != 0).float().unsqueeze(-1)
        summed = (self.emb(tokens) * mask).sum(dim=1)
        return self.out(summed / mask.sum(dim=1).clamp(min=1.0))


rng = np.random.default_rng(13)
tokens = torch.tensor(rng.integers(0, 20, size=(12, 6)))
tokens[:, -2:] = 0
labels = (tokens[:, 0] % 3)
model = BagOfWords(20, 8, 3)
with torch.no_grad():
    model.emb.weight.copy_(torch.tensor(rng.normal(size=(20, 8))))
    model.emb.weight[0].zero_()
    model.out.weight.copy_(torch.tensor(rng.normal(scale=0.3, size=(3, 8))))
    model.out.bias.zero_()
opt = torch.optim.Adagrad(model.parameters(), lr=0.3, lr_decay=0.01, initial_accumulator_value=0.1)
losses = []
for _ in range(10):
    opt.zero_grad()
    loss = F.cross_entropy(model(tokens), labels)
    loss.backward()
    opt.step()
    losses.append(loss.item())

emb = nn.Embedding(5, 3, padding_idx=-1)
idx = torch.tensor([[0, 4, 2], [4, 4, 1]])
out = emb(idx)
out.sum().backward()
results = {"losses": losses, "pad_row_grad_zero": emb.weight.grad[4].abs().sum().item() == 0.0,
           "padding_idx": emb.padding_idx, "pad_row": model.emb.weight[0],
           "f_embedding": F.embedding(torch.tensor([1, 0]), torch.arange(6.0).reshape(3, 2)),
           "pretrained": nn.Embedding.from_pretrained(torch.eye(3))(torch.tensor([2, 0])),
           "pretrained_frozen": not nn.Embedding.from_pretrained(torch.eye(3)).weight.requires_grad,
           "grad_counts": emb.weight.grad[:, 0], "repr": repr(emb)}
