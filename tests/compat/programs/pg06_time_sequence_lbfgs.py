"""The time-sequence-prediction example: two stacked LSTMCells unrolled over sine waves in float64
(`.double()`), hidden states made with torch.zeros(..., dtype=torch.double), outputs gathered with
torch.cat(...).squeeze(2)... as the example does with stack, future steps predicted from the model's own
output, trained with optim.LBFGS and a closure, then evaluated under no_grad."""

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Sequence(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm1 = nn.LSTMCell(1, 8)
        self.lstm2 = nn.LSTMCell(8, 8)
        self.linear = nn.Linear(8, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 8, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 8, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 8, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 8, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for _i in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


rng = np.random.default_rng(2)
T, L, N = 20, 24, 6
x = np.empty((N, L), "int64")
x[:] = np.array(range(L)) + rng.integers(-2 * T, 2 * T, N).reshape(N, 1)
data = np.sin(x / 1.0 / T).astype("float64")

input = torch.from_numpy(data[2:, :-1])
target = torch.from_numpy(data[2:, 1:])
test_input = torch.from_numpy(data[:2, :-1])
test_target = torch.from_numpy(data[:2, 1:])

seq = Sequence()
seq.double()
with torch.no_grad():
    for p in seq.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.35, 0.35, size=tuple(p.shape))))
criterion = nn.MSELoss()
optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=5)
closure_losses = []
step_losses = []
for _i in range(3):
    def closure():
        optimizer.zero_grad()
        out = seq(input)
        loss = criterion(out, target)
        closure_losses.append(loss.item())
        loss.backward()
        return loss
    step_losses.append(float(optimizer.step(closure)))
    with torch.no_grad():
        future = 5
        pred = seq(test_input, future=future)
        test_loss = criterion(pred[:, :-future], test_target).item()

results = {
    "dtype": str(pred.dtype).split(".")[-1],
    "pred_shape": list(pred.shape),
    "step_losses": step_losses,
    "n_closure_calls": len(closure_losses),
    "first_closure_losses": closure_losses[:4],
    "test_loss": test_loss,
    "future_tail": pred[:, -future:],
    "lbfgs_state_keys": sorted(optimizer.state[optimizer.param_groups[0]["params"][0]].keys()),
    "func_evals": optimizer.state[optimizer.param_groups[0]["params"][0]]["func_evals"],
}
