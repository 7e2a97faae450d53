"""A language model whose output layer shares its weight with the input embedding: one Parameter seen
by two modules, counted once, updated once, and kept tied through a save and load."""
import io

import torch
import torch.nn.functional as F
from torch import nn


class TiedLM(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.decoder = nn.Linear(dim, vocab)
        self.decoder.weight = self.embed.weight

    def forward(self, ids):
        out, _ = self.rnn(self.embed(ids))
        return self.decoder(out)


def main():
    torch.manual_seed(0)
    vocab, dim = 20, 16
    model = TiedLM(vocab, dim)
    print("same parameter object:", model.decoder.weight is model.embed.weight)
    names = [name for name, _ in model.named_parameters()]
    print("named parameters:", names)
    print("unique parameter count:", sum(p.numel() for p in model.parameters()))
    print("state_dict keeps both names:", [k for k in model.state_dict() if k.endswith("weight") and "rnn" not in k])

    pattern = torch.arange(vocab).repeat(10)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    for step in range(120):
        start = torch.randint(0, len(pattern) - 17, (16,))
        x = torch.stack([pattern[s:s + 16] for s in start])
        y = torch.stack([pattern[s + 1:s + 17] for s in start])
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1))
        loss.backward()
        optimizer.step()
    print("still tied after training:", torch.equal(model.decoder.weight, model.embed.weight))
    print("learnt the successor rule:", loss.item() < 0.2)

    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    fresh = TiedLM(vocab, dim)
    fresh.load_state_dict(torch.load(buffer))
    print("tied after loading:", fresh.decoder.weight is fresh.embed.weight)
    with torch.no_grad():
        fresh.embed.weight[0].zero_()
    print("a change through one module shows in the other:", fresh.decoder.weight[0].abs().sum().item() == 0.0)
    with torch.no_grad():
        prediction = model(torch.tensor([[3, 4, 5]])).argmax(-1)
    print("predicts the next ids:", prediction)


if __name__ == "__main__":
    main()
