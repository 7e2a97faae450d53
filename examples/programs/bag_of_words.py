"""A fastText-style text classifier: tokenised sentences flattened into one id tensor with offsets,
nn.EmbeddingBag averaging each sentence's embeddings, and a linear layer on top; sentiment of tiny
made-up reviews, with a vocabulary built from the training text."""
import torch
from torch import nn
from torch.utils.data import DataLoader

GOOD = ["great", "lovely", "excellent", "fun", "wonderful", "superb"]
BAD = ["awful", "boring", "terrible", "dull", "poor", "bad"]
FILLER = ["the", "film", "was", "really", "plot", "acting", "a", "very", "story", "and"]


def make_reviews(n, generator):
    reviews = []
    for _ in range(n):
        label = int(torch.randint(0, 2, (1,), generator=generator))
        words = [FILLER[int(i)] for i in torch.randint(0, len(FILLER), (int(torch.randint(3, 8, (1,), generator=generator)),), generator=generator)]
        cue = GOOD if label else BAD
        words.insert(int(torch.randint(0, len(words), (1,), generator=generator)), cue[int(torch.randint(0, 6, (1,), generator=generator))])
        reviews.append((" ".join(words), label))
    return reviews


def collate(batch, vocab):
    ids, offsets, labels = [], [0], []
    for text, label in batch:
        tokens = [vocab.get(w, 0) for w in text.split()]
        ids.extend(tokens)
        offsets.append(offsets[-1] + len(tokens))
        labels.append(label)
    return torch.tensor(ids), torch.tensor(offsets[:-1]), torch.tensor(labels)


class FastText(nn.Module):
    def __init__(self, vocab_size, dim, classes):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.fc = nn.Linear(dim, classes)

    def forward(self, ids, offsets):
        return self.fc(self.bag(ids, offsets))


def main():
    torch.manual_seed(0)
    bag = nn.EmbeddingBag(4, 2, mode="sum")
    with torch.no_grad():
        bag.weight.copy_(torch.arange(8.0).view(4, 2))
    print(bag(torch.tensor([0, 1, 2, 3, 3]), torch.tensor([0, 2])))
    print(nn.EmbeddingBag(4, 2, mode="max", _weight=torch.arange(8.0).view(4, 2))(torch.tensor([[0, 3], [1, 2]])))

    generator = torch.Generator().manual_seed(1)
    train = make_reviews(400, generator)
    test = make_reviews(200, generator)
    vocab = {"<unk>": 0}
    for text, _ in train:
        for word in text.split():
            vocab.setdefault(word, len(vocab))
    print("vocabulary covers the cue words:", all(w in vocab for w in GOOD + BAD))
    loader = DataLoader(train, batch_size=32, shuffle=True, collate_fn=lambda b: collate(b, vocab))
    ids, offsets, labels = next(iter(loader))
    print("one batch:", ids.dim(), offsets.shape, labels.shape, ids.dtype)

    model = FastText(len(vocab), 16, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=2.0)
    for epoch in range(15):
        for ids, offsets, labels in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(ids, offsets), labels).backward()
            optimizer.step()
    ids, offsets, labels = collate(test, vocab)
    with torch.no_grad():
        accuracy = (model(ids, offsets).argmax(1) == labels).float().mean().item()
    print("test accuracy above 0.95:", accuracy > 0.95)
    with torch.no_grad():
        ids, offsets, _ = collate([("the film was superb", 1), ("a dull story", 0)], vocab)
        print("predictions:", model(ids, offsets).argmax(1))


if __name__ == "__main__":
    main()
