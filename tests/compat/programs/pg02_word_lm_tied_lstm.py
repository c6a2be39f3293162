"""The word-language-model example's training loop with an LSTM: encoder Embedding, a 2-layer nn.LSTM, a
decoder whose weight is tied to the encoder's, init_hidden through weight.new_zeros, batchify/get_batch,
repackage_hidden between batches, clip_grad_norm_, the manual SGD update p.data.add_(p.grad, alpha=-lr),
evaluation under no_grad with perplexity, and the lr annealed when validation loss stops improving."""

import math

import numpy as np
import torch
import torch.nn as nn


class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.0, tie_weights=False):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError("When using the tied flag, nhid must be equal to emsize")
            self.decoder.weight = self.encoder.weight
        self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))
        return weight.new_zeros(self.nlayers, bsz, self.nhid)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


bptt = 5


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


ntokens = 12
rng = np.random.default_rng(3)
corpus = torch.from_numpy(rng.integers(0, ntokens, size=130))
train_data = batchify(corpus[:100], 4)
val_data = batchify(corpus[100:], 2)

model = RNNModel("LSTM", ntokens, 8, 8, 2, tie_weights=True)
with torch.no_grad():
    for _name, p in model.named_parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.3, 0.3, size=tuple(p.shape)).astype(np.float32)))
criterion = nn.NLLLoss()
tied = model.decoder.weight is model.encoder.weight
n_params = sum(p.numel() for p in model.parameters())


def evaluate(data_source):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(2)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, bptt):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


lr, clip = 2.0, 0.25
best_val_loss = None
history = []
for _epoch in range(1, 4):
    model.train()
    total_loss = 0.0
    hidden = model.init_hidden(4)
    n_batches = 0
    for i in range(0, train_data.size(0) - 1, bptt):
        n_batches += 1
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
    val_loss = evaluate(val_data)
    history.append([total_loss / n_batches, val_loss, math.exp(val_loss), lr])
    if not best_val_loss or val_loss < best_val_loss:
        best_val_loss = val_loss
    else:
        lr /= 4.0

results = {
    "tied": tied,
    "n_params": n_params,
    "history": history,
    "train_shape": list(train_data.shape),
    "encoder_row0": model.encoder.weight[0],
    "hidden_shapes": [list(h.shape) for h in hidden],
}
