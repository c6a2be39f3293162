"""RNN, LSTM and GRU: layers, batch_first, bidirectional, given h0/c0; outputs, final states and gradients."""
import numpy as np
import torch
import torch.nn as nn


def fill_(model, seed, scale=0.4):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, p in model.named_parameters():
            p.copy_(torch.tensor(rng.uniform(-scale, scale, size=tuple(p.shape))))


rng = np.random.default_rng(5)
x = torch.tensor(rng.normal(size=(3, 4, 5)), dtype=torch.float32)   # batch 3, length 4, features 5
results = {}

lstm = nn.LSTM(5, 6, num_layers=2, batch_first=True, bidirectional=True)
fill_(lstm, 50)
h0 = torch.tensor(rng.normal(size=(4, 3, 6)), dtype=torch.float32)
c0 = torch.tensor(rng.normal(size=(4, 3, 6)), dtype=torch.float32)
out, (hn, cn) = lstm(x, (h0, c0))
out.sum().backward()
results["lstm_names"] = [n for n, _ in lstm.named_parameters()]
results["lstm_out"] = out[:, -1]
results["lstm_hn"] = hn
results["lstm_cn"] = cn[0]
results["lstm_grad"] = lstm.weight_hh_l1_reverse.grad[:3]

gru = nn.GRU(5, 4, num_layers=1)
fill_(gru, 51)
seq = x.transpose(0, 1)                                            # (length, batch, features)
out, hn = gru(seq)
results["gru_out"] = out[-1]
results["gru_hn_equals_last"] = (hn[0] - out[-1]).abs().max().item() < 1e-6
(out ** 2).mean().backward()
results["gru_grad_bias"] = gru.bias_hh_l0.grad

rnn = nn.RNN(5, 3, num_layers=2, nonlinearity="relu", batch_first=True)
fill_(rnn, 52)
out, hn = rnn(x[0])                                                 # unbatched (length, features)
results["rnn_unbatched_shapes"] = [list(out.shape), list(hn.shape)]
results["rnn_out"] = out
results["param_counts"] = [sum(p.numel() for p in m.parameters()) for m in (lstm, gru, rnn)]
results["reprs"] = [repr(lstm), repr(gru), repr(rnn)]
