# corpus: slow
"""A sequence classifier built from nn.TransformerEncoder with a padding mask: it learns whether a
variable-length sequence of tokens contains more 1s than 2s."""
import torch
from torch import nn

PAD = 0


class Classifier(nn.Module):
    def __init__(self, vocab=4, dim=32, max_len=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(dim, 2)

    def forward(self, ids):
        padding = ids == PAD
        x = self.embed(ids) + self.pos(torch.arange(ids.size(1)))
        x = self.encoder(x, src_key_padding_mask=padding)
        keep = (~padding).unsqueeze(-1).float()
        return self.head((x * keep).sum(1) / keep.sum(1))


def make_batch(n, max_len=12):
    lengths = torch.randint(4, max_len + 1, (n,))
    ids = torch.randint(1, 4, (n, max_len))
    ids[torch.arange(max_len).unsqueeze(0) >= lengths.unsqueeze(1)] = PAD
    labels = ((ids == 1).sum(1) > (ids == 2).sum(1)).long()
    return ids, labels


def main():
    torch.manual_seed(0)
    model = Classifier()
    print("encoder layers:", len(model.encoder.layers))
    ids, labels = make_batch(4)
    print("logits:", model(ids).shape, "padding positions:", (ids == PAD).dtype)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(140):
        ids, labels = make_batch(64)
        optimizer.zero_grad()
        loss = loss_fn(model(ids), labels)
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        ids, labels = make_batch(1000)
        accuracy = (model(ids).argmax(1) == labels).float().mean().item()
        # padding must not change the answer: append more padding and compare
        padded = torch.cat([ids, torch.full((1000, 4), PAD)], dim=1)
        same = torch.allclose(model(ids), model(padded), atol=1e-5)
    print("accuracy above 0.85:", accuracy > 0.85)
    print("stable under padding:", same)


if __name__ == "__main__":
    main()
