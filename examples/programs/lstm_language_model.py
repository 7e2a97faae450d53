"""A word-level LSTM language model with an embedding, dropout, two layers, and perplexity measured on
held-out text; the hidden state is carried across batches and detached between them."""
import math

import torch
import torch.nn.functional as F
from torch import nn

SENTENCES = [
    "the cat sat on the mat", "the dog sat on the log", "a cat saw a dog",
    "the dog saw the cat", "a bird sat on the cat", "the bird saw a log",
]


class LSTMLanguageModel(nn.Module):
    def __init__(self, vocab, embed=32, hidden=64, layers=2, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, dropout=dropout)
        self.drop = nn.Dropout(dropout)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, ids, state):
        output, state = self.lstm(self.drop(self.embed(ids)), state)
        return self.out(self.drop(output)), state

    def init_state(self, batch):
        weight = next(self.parameters())
        shape = (self.lstm.num_layers, batch, self.lstm.hidden_size)
        return weight.new_zeros(shape), weight.new_zeros(shape)


def batchify(ids, batch):
    n = len(ids) // batch
    return ids[: n * batch].view(batch, n).t().contiguous()  # (time, batch)


def main():
    torch.manual_seed(0)
    words = sorted({w for s in SENTENCES for w in s.split()} | {"<eos>"})
    index = {w: i for i, w in enumerate(words)}
    stream = [index[w] for _ in range(20) for s in SENTENCES for w in s.split() + ["<eos>"]]
    data = batchify(torch.tensor(stream), 8)
    print("vocabulary:", len(words), "data:", data.shape)

    model = LSTMLanguageModel(len(words))
    state = model.init_state(8)
    print("state shapes:", state[0].shape, state[1].shape)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    bptt = 10
    for epoch in range(6):
        model.train()
        state = model.init_state(8)
        for i in range(0, data.size(0) - 1, bptt):
            x, y = data[i:i + bptt], data[i + 1:i + 1 + bptt]
            x = x[: len(y)]
            state = tuple(s.detach() for s in state)
            logits, state = model(x, state)
            loss = F.cross_entropy(logits.view(-1, len(words)), y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimizer.step()

    model.eval()
    with torch.no_grad():
        # the text repeats its six sentences in order: a model that learnt it predicts most words
        text = torch.tensor(stream[:80]).unsqueeze(1)
        logits, _ = model(text[:-1], model.init_state(1))
        nll = F.cross_entropy(logits.squeeze(1), text[1:].squeeze(1)).item()
    perplexity = math.exp(nll)
    print("perplexity below uniform:", perplexity < len(words))
    print("perplexity below 2:", perplexity < 2)
    with torch.no_grad():
        logits, _ = model(torch.tensor([[index["sat"]]]), model.init_state(1))
    print("after 'sat' comes:", words[logits[0, 0].argmax().item()])


if __name__ == "__main__":
    main()
