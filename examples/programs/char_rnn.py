"""A character-level language model with nn.RNN: one-hot characters in, next character out, trained
with truncated backpropagation through time, then sampled from."""
import torch
import torch.nn.functional as F
from torch import nn

TEXT = ("the quick brown fox jumps over the lazy dog. " * 3 +
        "pack my box with five dozen liquor jugs. " * 3)


class CharRNN(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.vocab = vocab
        self.rnn = nn.RNN(vocab, hidden, batch_first=True, nonlinearity="tanh")
        self.head = nn.Linear(hidden, vocab)

    def forward(self, ids, state=None):
        out, state = self.rnn(F.one_hot(ids, self.vocab).float(), state)
        return self.head(out), state


def main():
    torch.manual_seed(0)
    chars = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in TEXT])
    print("vocabulary:", len(chars), "text length:", len(data))

    model = CharRNN(len(chars), 96)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    seq_len, batch = 24, 16
    losses = []
    for step in range(150):
        starts = torch.randint(0, len(data) - seq_len - 1, (batch,))
        x = torch.stack([data[s:s + seq_len] for s in starts])
        y = torch.stack([data[s + 1:s + seq_len + 1] for s in starts])
        logits, _ = model(x)
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        losses.append(loss.item())
    print("initial loss near log(vocab):", abs(losses[0] - torch.log(torch.tensor(len(chars) * 1.0)).item()) < 0.5)
    print("loss fell below 1.0:", sum(losses[-10:]) / 10 < 1.0)

    model.eval()
    with torch.no_grad():
        ids = torch.tensor([[stoi[c] for c in "the quick "]])
        logits, state = model(ids)
        print("hidden state:", state.shape)
        out = []
        for _ in range(30):
            probs = F.softmax(logits[:, -1] / 0.5, dim=-1)
            nxt = torch.multinomial(probs, 1)
            out.append(chars[nxt.item()])
            logits, state = model(nxt, state)
        greedy_ids, state = ids, None
        logits, state = model(greedy_ids)
        greedy = []
        for _ in range(5):
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            greedy.append(chars[nxt.item()])
            logits, state = model(nxt, state)
    print("sampled 30 characters from the vocabulary:", len(out) == 30 and set(out) <= set(chars))
    print("greedy continuation:", "".join(greedy) == "brown")


if __name__ == "__main__":
    main()
