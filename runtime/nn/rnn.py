"""Recurrent layers: RNNCell, LSTMCell, GRUCell and the multi-layer RNN, LSTM and GRU (torch.nn's).

Parameter names, shapes, gate order and initialisation are PyTorch's, so a state_dict moves between the
two: `weight_ih_l{k}[_reverse]` (gates * hidden, input), `weight_hh_l{k}[_reverse]` (gates * hidden,
hidden), `bias_ih_*`, `bias_hh_*`, all U(-1/sqrt(hidden), 1/sqrt(hidden)). Gate rows: LSTM i, f, g, o;
GRU r, z, n with n = tanh(W_in x + b_in + r * (W_hn h + b_hn)) and h' = (1 - z) * n + z * h.
The sequence layers project the whole input sequence with one matrix product per layer and direction,
then step through time with the recurrent product.
"""

from __future__ import annotations

import math
from typing import Any

import runtime.nn.functional as F
import runtime.nn.init as init
from runtime import opcall
from runtime.nn.module import Module
from runtime.nn.parameter import Parameter
from runtime.nn.utils.rnn import PackedSequence, packed_steps
from runtime.tensor import Tensor

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _G() -> Any:
    return opcall.api


def _cell_step(mode: str, gi: Tensor, h: Tensor, c: Tensor | None, w_hh: Tensor,
               b_hh: Tensor | None, w_hr: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
    """One time step from the input projection `gi` (x W_ih^T + b_ih) and the previous state; an LSTM with
    projections (`w_hr`, proj_size) maps its new hidden state through W_hr."""
    G = _G()
    gh = F.linear(h, w_hh, b_hh)
    if mode == "LSTM":
        i, f, g, o = G.chunk(gi + gh, 4, -1)
        c = G.sigmoid(f) * c + G.sigmoid(i) * G.tanh(g)
        h = G.sigmoid(o) * G.tanh(c)
        return (h if w_hr is None else F.linear(h, w_hr)), c
    if mode == "GRU":
        ir, iz, in_ = G.chunk(gi, 3, -1)
        hr, hz, hn = G.chunk(gh, 3, -1)
        r, z = G.sigmoid(ir + hr), G.sigmoid(iz + hz)
        n = G.tanh(in_ + r * hn)
        return (1 - z) * n + z * h, None
    pre = gi + gh
    return (G.tanh(pre) if mode == "RNN_TANH" else G.relu(pre)), None


class RNNCellBase(Module):
    """The base of RNNCell, LSTMCell and GRUCell (torch.nn.RNNCellBase): weights, biases and their init."""

    mode = ""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        G = _G()
        gates = _GATES[self.mode]
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(G.empty(gates * hidden_size, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(G.empty(gates * hidden_size, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(G.empty(gates * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(G.empty(gates * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initialize every parameter uniformly in [-1/sqrt(hidden_size), 1/sqrt(hidden_size)]."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _prepare(self, input: Tensor, hx: Tensor | None) -> tuple[Tensor, Tensor, bool]:
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected "
                               f"{self.input_size}")
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        if hx is None:
            h = _G().zeros(x.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
        else:
            if hx.dim() != x.dim() - (0 if batched else 1):
                raise RuntimeError(f"{type(self).__name__}: Expected hidden to be {x.dim() - (0 if batched else 1)}D "
                                   f", got {hx.dim()}D instead")
            h = hx if batched else hx.unsqueeze(0)
        return x, h, batched

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(RNNCellBase):
    """One Elman RNN step h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh), act tanh or relu; forward(input, hx=None) ->
    h'."""
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, h, batched = self._prepare(input, hx)
        h, _ = _cell_step(self.mode, F.linear(x, self.weight_ih, self.bias_ih), h, None, self.weight_hh,
                          self.bias_hh)
        return h if batched else h.squeeze(0)


class GRUCell(RNNCellBase):
    """One GRU step (reset, update and new gates); forward(input, hx=None) -> h', hx zeros if None."""
    mode = "GRU"

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        x, h, batched = self._prepare(input, hx)
        h, _ = _cell_step("GRU", F.linear(x, self.weight_ih, self.bias_ih), h, None, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step (input, forget, cell and output gates); forward(input, (h, c)=None) -> (h', c')."""
    mode = "LSTM"

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        x, h, batched = self._prepare(input, None if hx is None else hx[0])
        if hx is None:
            c = _G().zeros_like(h)
        else:
            c = hx[1] if batched else hx[1].unsqueeze(0)
        h, c = _cell_step("LSTM", F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh)
        assert c is not None
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class RNNBase(Module):
    """Stacked (and optionally bidirectional) recurrent layers over a sequence."""

    mode = ""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be greater than 0")
        if not isinstance(num_layers, int) or num_layers <= 0:
            raise ValueError("num_layers must be greater than 0")
        if not isinstance(proj_size, int) or proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        G = _G()
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        self._real_hidden = proj_size if proj_size > 0 else hidden_size  # the size of h (c keeps hidden_size)
        gates = _GATES[mode]
        directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else self._real_hidden * directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gates * hidden_size, layer_input)),
                          ("weight_hh", (gates * hidden_size, self._real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gates * hidden_size,)), ("bias_hh", (gates * hidden_size,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for kind, shape in shapes:
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(G.empty(*shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(name)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-initialize every parameter uniformly in [-1/sqrt(hidden_size), 1/sqrt(hidden_size)]."""
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def flatten_parameters(self) -> None:
        """PyTorch packs the weights into one cuDNN buffer here; opgen keeps them apart, so nothing to do."""

    @property
    def _flat_weights(self) -> list[Tensor | None]:
        return [self._parameters.get(n) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Tensor]]:
        per = (4 if self.bias else 2) + (1 if self.proj_size else 0)
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i:i + per]] for i in range(0, len(names), per)]

    def _layer_params(self, layer: int, direction: int) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        suffix = "_reverse" if direction == 1 else ""
        get = self._parameters.get
        return (get(f"weight_ih_l{layer}{suffix}"), get(f"weight_hh_l{layer}{suffix}"),  # type: ignore[return-value]
                get(f"bias_ih_l{layer}{suffix}"), get(f"bias_hh_l{layer}{suffix}"))

    def _projection(self, layer: int, direction: int) -> Tensor | None:
        return self._parameters.get(f"weight_hr_l{layer}{'_reverse' if direction == 1 else ''}")

    def _run(self, input: Tensor, hx: Tensor | None, cx: Tensor | None) -> tuple[Tensor, Tensor, Tensor | None]:
        G = _G()
        if input.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.shape[-1]}")
        batched = input.dim() == 3
        x = input if batched else input.unsqueeze(1)
        if batched and self.batch_first:
            x = x.transpose(0, 1)
        seq_len, batch = x.shape[0], x.shape[1]
        directions = 2 if self.bidirectional else 1
        def state(t: Tensor | None, what: str, size: int) -> Tensor:
            state_shape = (self.num_layers * directions, batch, size)
            if t is None:
                return G.zeros(*state_shape, dtype=input.dtype, device=input.device)
            s = t if batched else t.unsqueeze(1)
            if tuple(s.shape) != state_shape:
                shown = list(state_shape) if batched else [state_shape[0], state_shape[2]]
                raise RuntimeError(f"Expected {what} size {tuple(shown)}, got {list(t.shape)}")
            return s

        h0 = state(hx, "hidden", self._real_hidden)
        c0 = state(cx, "hidden[1]", self.hidden_size) if self.mode == "LSTM" else None
        h_n, c_n = [], []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh = self._layer_params(layer, direction)
                w_hr = self._projection(layer, direction)
                k = layer * directions + direction
                h = h0[k]
                c = c0[k] if c0 is not None else None
                proj = F.linear(layer_in, w_ih, b_ih)                       # (L, N, gates * H)
                steps = range(seq_len - 1, -1, -1) if direction == 1 else range(seq_len)
                hs: list[Tensor] = [None] * seq_len  # type: ignore[list-item]
                for t in steps:
                    h, c = _cell_step(self.mode, proj[t], h, c, w_hh, b_hh, w_hr)
                    hs[t] = h
                outs.append(G.stack(hs, 0) if seq_len else
                            G.zeros(0, batch, self._real_hidden, dtype=x.dtype, device=x.device))
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            layer_in = outs[0] if directions == 1 else G.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        output = layer_in
        if batched and self.batch_first:
            output = output.transpose(0, 1)
        h_out = G.stack(h_n, 0)
        c_out = G.stack(c_n, 0) if c_n else None
        if not batched:
            output, h_out = output.squeeze(1), h_out.squeeze(1)
            c_out = c_out.squeeze(1) if c_out is not None else None
        return output, h_out, c_out

    def _run_packed(self, packed: PackedSequence, hx: Tensor | None,
                    cx: Tensor | None) -> tuple[PackedSequence, Tensor, Tensor | None]:
        """The layers over a PackedSequence: at step t only its first batch_sizes[t] (sorted) sequences move;
        a sequence's final state is the one it had at its own last step (Note in runtime/nn/utils/rnn.py)."""
        G = _G()
        data = packed.data
        if data.dim() != 2 or data.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{data.shape[-1]}")
        steps = list(packed_steps(packed))
        batch = steps[0][2] if steps else 0
        directions = 2 if self.bidirectional else 1
        def state(t: Tensor | None, what: str, size: int) -> Tensor:
            state_shape = (self.num_layers * directions, batch, size)
            if t is None:
                return G.zeros(*state_shape, dtype=data.dtype, device=data.device)
            if tuple(t.shape) != state_shape:
                raise RuntimeError(f"Expected {what} size {state_shape}, got {list(t.shape)}")
            # the caller's batch order -> the packed (sorted) order
            return t if packed.sorted_indices is None else t.index_select(1, packed.sorted_indices)

        h0 = state(hx, "hidden", self._real_hidden)
        c0 = state(cx, "hidden[1]", self.hidden_size) if self.mode == "LSTM" else None
        h_n, c_n = [], []
        layer_in = data
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh = self._layer_params(layer, direction)
                w_hr = self._projection(layer, direction)
                k = layer * directions + direction
                h, c = h0[k], (c0[k] if c0 is not None else None)
                proj = F.linear(layer_in, w_ih, b_ih)
                pieces: list[Tensor] = [None] * len(steps)  # type: ignore[list-item]
                for t, offset, bs in (reversed(steps) if direction == 1 else steps):
                    h_t, c_t = _cell_step(self.mode, proj[offset:offset + bs], h[:bs],
                                          c[:bs] if c is not None else None, w_hh, b_hh, w_hr)
                    pieces[t] = h_t
                    # rows past bs keep their state: finished (forward) or not yet started (reverse)
                    h = G.cat([h_t, h[bs:]], 0) if bs < batch else h_t
                    if c is not None:
                        c = G.cat([c_t, c[bs:]], 0) if bs < batch else c_t
                outs.append(G.cat(pieces, 0))
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            layer_in = outs[0] if directions == 1 else G.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        h_out = G.stack(h_n, 0)
        c_out = G.stack(c_n, 0) if c_n else None
        if packed.unsorted_indices is not None:
            h_out = h_out.index_select(1, packed.unsorted_indices)
            c_out = c_out.index_select(1, packed.unsorted_indices) if c_out is not None else None
        out = PackedSequence(layer_in, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
        return out, h_out, c_out

    def _dispatch(self, input: Any, hx: Tensor | None, cx: Tensor | None) -> tuple[Any, Tensor, Tensor | None]:
        if isinstance(input, PackedSequence):
            return self._run_packed(input, hx, cx)
        return self._run(input, hx, cx)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """A multi-layer Elman RNN over a sequence (tanh or relu); returns (output, h_n)."""
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size,
                         num_layers, bias, batch_first, dropout, bidirectional, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        output, h, _ = self._dispatch(input, hx, None)
        return output, h


class GRU(RNNBase):
    """A multi-layer gated recurrent unit over a sequence; returns (output, h_n)."""
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        output, h, _ = self._dispatch(input, hx, None)
        return output, h


class LSTM(RNNBase):
    """A multi-layer LSTM over a sequence; returns (output, (h_n, c_n))."""
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        h0, c0 = (None, None) if hx is None else hx
        output, h, c = self._dispatch(input, h0, c0)
        assert c is not None
        return output, (h, c)
