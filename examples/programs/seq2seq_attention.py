# corpus: slow
"""A GRU encoder-decoder with additive (Bahdanau) attention that learns to reverse digit sequences,
trained with teacher forcing and decoded greedily."""
import torch
import torch.nn.functional as F
from torch import nn

SOS, VOCAB, LENGTH = 10, 11, 6


class Encoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * hidden, hidden)

    def forward(self, src):
        outputs, last = self.gru(self.embed(src))
        state = torch.tanh(self.bridge(torch.cat([last[0], last[1]], dim=1)))
        return outputs, state.unsqueeze(0)


class AttentionDecoder(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, hidden)
        self.key = nn.Linear(2 * hidden, hidden, bias=False)
        self.query = nn.Linear(hidden, hidden, bias=False)
        self.score = nn.Linear(hidden, 1, bias=False)
        self.gru = nn.GRU(3 * hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, VOCAB)

    def forward(self, token, state, encoder_outputs):
        energy = torch.tanh(self.key(encoder_outputs) + self.query(state[-1]).unsqueeze(1))
        weights = F.softmax(self.score(energy).squeeze(2), dim=1)
        context = torch.bmm(weights.unsqueeze(1), encoder_outputs)
        output, state = self.gru(torch.cat([self.embed(token), context], dim=2), state)
        return self.out(output.squeeze(1)), state, weights


def run(encoder, decoder, src, target=None):
    encoder_outputs, state = encoder(src)
    token = torch.full((src.size(0), 1), SOS, dtype=torch.long)
    logits, attention = [], []
    for t in range(LENGTH):
        step_logits, state, weights = decoder(token, state, encoder_outputs)
        logits.append(step_logits)
        attention.append(weights)
        token = target[:, t:t + 1] if target is not None else step_logits.argmax(1, keepdim=True)
    return torch.stack(logits, 1), torch.stack(attention, 1)


def main():
    torch.manual_seed(0)
    encoder, decoder = Encoder(48), AttentionDecoder(48)
    params = list(encoder.parameters()) + list(decoder.parameters())
    optimizer = torch.optim.Adam(params, lr=5e-3)
    for step in range(140):
        src = torch.randint(0, 10, (64, LENGTH))
        target = src.flip(1)
        logits, _ = run(encoder, decoder, src, target)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), target.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()

    with torch.no_grad():
        src = torch.randint(0, 10, (500, LENGTH))
        logits, attention = run(encoder, decoder, src)
        predicted = logits.argmax(2)
    print("logits:", logits.shape, "attention:", attention.shape)
    print("attention rows sum to one:", torch.allclose(attention.sum(2), torch.ones(500, LENGTH)))
    token_accuracy = (predicted == src.flip(1)).float().mean().item()
    print("token accuracy above 0.9:", token_accuracy > 0.9)


if __name__ == "__main__":
    main()
