"""A sequence classifier over variable-length inputs: pad_sequence, pack_padded_sequence (unsorted lengths),
a 2-layer bidirectional LSTM, pad_packed_sequence, mean over the valid steps plus the final hidden states;
Adam with ReduceLROnPlateau."""
import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence


class Classifier(nn.Module):
    def __init__(self, n_in=3, hidden=6, n_out=2):
        super().__init__()
        self.lstm = nn.LSTM(n_in, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.head = nn.Linear(4 * hidden, n_out)

    def forward(self, padded, lengths):
        packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
        self.lstm.flatten_parameters()
        out, (h, c) = self.lstm(packed)
        out, out_lengths = pad_packed_sequence(out, batch_first=True)
        mean = out.sum(1) / out_lengths.unsqueeze(1).float()
        final = torch.cat([h[-2], h[-1]], dim=1)
        return self.head(torch.cat([mean, final], dim=1)), out_lengths


rng = np.random.default_rng(3)
model = Classifier()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.uniform(-0.4, 0.4, size=tuple(p.shape)).astype(np.float32)))
lengths = [4, 7, 2, 5, 7]
sequences = [torch.tensor(rng.standard_normal((n, 3)).astype(np.float32)) for n in lengths]
labels = torch.tensor([0, 1, 0, 1, 1])
padded = pad_sequence(sequences, batch_first=True)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=0, factor=0.5)
criterion = nn.CrossEntropyLoss()
losses, lrs = [], []
for step in range(6):
    optimizer.zero_grad()
    logits, out_lengths = model(padded, torch.tensor(lengths))
    loss = criterion(logits, labels)
    loss.backward()
    optimizer.step()
    scheduler.step(1.0 if step % 2 else 2.0)
    losses.append(loss.item())
    lrs.append(optimizer.param_groups[0]["lr"])
with torch.no_grad():
    logits, out_lengths = model(padded, torch.tensor(lengths))
results = {"losses": losses, "lrs": lrs, "logits": logits, "out_lengths": out_lengths,
           "padded_shape": list(padded.shape)}
