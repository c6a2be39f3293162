"""A seq2seq GRU with additive attention, in the style of the translation tutorial: an encoder GRU, an
attention decoder (embedding, attention weights over the encoder outputs with bmm, GRU, log_softmax),
teacher forcing, SGD, NLLLoss; then greedy decoding."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SOS, HIDDEN, VOCAB, MAX_LEN = 0, 12, 10, 6


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)

    def forward(self, x):
        return self.gru(self.embedding(x))


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights, keys), weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)

    def forward(self, encoder_outputs, encoder_hidden, target=None):
        batch = encoder_outputs.size(0)
        decoder_input = torch.empty(batch, 1, dtype=torch.long).fill_(SOS)
        hidden, outputs, attentions = encoder_hidden, [], []
        for i in range(MAX_LEN):
            embedded = self.embedding(decoder_input)
            query = hidden.permute(1, 0, 2)
            context, attn = self.attention(query, encoder_outputs)
            output, hidden = self.gru(torch.cat((embedded, context), dim=2), hidden)
            output = self.out(output)
            outputs.append(output)
            attentions.append(attn)
            if target is not None:
                decoder_input = target[:, i].unsqueeze(1)
            else:
                _, topi = output.topk(1)
                decoder_input = topi.squeeze(-1).detach()
        return F.log_softmax(torch.cat(outputs, dim=1), dim=-1), hidden, torch.cat(attentions, dim=1)


rng = np.random.default_rng(1)
encoder, decoder = EncoderRNN(VOCAB, HIDDEN), AttnDecoderRNN(HIDDEN, VOCAB)
with torch.no_grad():
    for module in (encoder, decoder):
        for p in module.parameters():
            p.copy_(torch.tensor(rng.uniform(-0.3, 0.3, size=tuple(p.shape)).astype(np.float32)))
src = torch.tensor(rng.integers(1, VOCAB, size=(3, 5)))
tgt = torch.flip(torch.cat([src, src[:, :1]], 1), [1])      # learn to reverse
enc_opt = torch.optim.SGD(encoder.parameters(), lr=0.5, momentum=0.5)
dec_opt = torch.optim.SGD(decoder.parameters(), lr=0.5, momentum=0.5)
criterion = nn.NLLLoss()
losses = []
for _ in range(6):
    enc_opt.zero_grad()
    dec_opt.zero_grad()
    enc_out, enc_hidden = encoder(src)
    dec_out, _, _ = decoder(enc_out, enc_hidden, tgt)
    loss = criterion(dec_out.view(-1, dec_out.size(-1)), tgt.view(-1))
    loss.backward()
    enc_opt.step()
    dec_opt.step()
    losses.append(loss.item())

with torch.no_grad():
    enc_out, enc_hidden = encoder(src)
    dec_out, _, attn = decoder(enc_out, enc_hidden)
results = {"losses": losses, "decoded": dec_out.argmax(-1), "attention_row": attn[0, 0],
           "attention_sums": attn.sum(-1)}
