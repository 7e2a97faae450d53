# corpus: slow
"""Classifying variable-length sequences with an LSTM over packed batches: pad_sequence,
pack_padded_sequence with unsorted lengths, pad_packed_sequence, and the final hidden state
of each sequence whatever its length."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence


class SequenceClassifier(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.lstm = nn.LSTM(1, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 2)

    def forward(self, padded, lengths):
        packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
        _, (h, _) = self.lstm(packed)
        return self.head(h[-1])


def make_batch(n):
    lengths = torch.randint(2, 15, (n,))
    sequences = [torch.randn(int(length), 1) for length in lengths]
    labels = torch.tensor([int(s.sum() > 0) for s in sequences])
    return pad_sequence(sequences, batch_first=True), lengths, labels


def main():
    torch.manual_seed(0)
    a, b, c = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0]), torch.tensor([5.0, 6.0])
    padded = pad_sequence([a, b, c], batch_first=True, padding_value=-1.0)
    print(padded)
    packed = pack_padded_sequence(padded.unsqueeze(-1), torch.tensor([3, 1, 2]), batch_first=True,
                                  enforce_sorted=False)
    print("packed data:", packed.data.squeeze(-1), "batch sizes:", packed.batch_sizes)
    print("sorted indices:", packed.sorted_indices, "unsorted:", packed.unsorted_indices)
    unpacked, lengths = pad_packed_sequence(packed, batch_first=True)
    print("unpacked:", unpacked.squeeze(-1), lengths)

    # the last hidden state of a packed batch equals running each sequence alone
    lstm = nn.LSTM(1, 4, batch_first=True)
    _, (h, _) = lstm(packed)
    alone = torch.stack([lstm(s.view(1, -1, 1))[1][0][0, 0] for s in (a, b, c)])
    print("packed final states equal per-sequence runs:", torch.allclose(h[0], alone, atol=1e-6))

    model = SequenceClassifier()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(150):
        x, lengths, y = make_batch(32)
        optimizer.zero_grad()
        F.cross_entropy(model(x, lengths), y).backward()
        optimizer.step()
    with torch.no_grad():
        x, lengths, y = make_batch(500)
        accuracy = (model(x, lengths).argmax(1) == y).float().mean().item()
    print("sign-of-sum accuracy above 0.85:", accuracy > 0.85)


if __name__ == "__main__":
    main()
