# corpus: slow
"""A BERT-style masked language model on digit palindromes of different lengths: padded
batches with pad_sequence, nn.TransformerEncoder with a key_padding_mask, 15% of the tokens
replaced by [MASK] with a seeded Generator, and CrossEntropyLoss(ignore_index=-100) so only the
masked positions are scored; the output layer shares the embedding matrix."""
import torch
from torch import nn
from torch.nn.utils.rnn import pad_sequence

PAD, MASK, CLS = 0, 1, 2
DIGITS = [str(d) for d in range(10)]
VOCAB = ["[PAD]", "[MASK]", "[CLS]", "="] + DIGITS


def make_sentences(n, generator):
    """'digits=reversed digits', one token per character: every digit can be read off its mirror."""
    sentences = []
    for _ in range(n):
        length = int(torch.randint(2, 6, (1,), generator=generator))
        digits = torch.randint(0, 10, (length,), generator=generator).tolist()
        text = "".join(map(str, digits)) + "=" + "".join(map(str, reversed(digits)))
        sentences.append(torch.tensor([CLS] + [VOCAB.index(ch) for ch in text]))
    return sentences


def mask_tokens(ids, generator, rate=0.15):
    """Pick maskable positions (not padding, not [CLS]); the labels there are the originals, -100 elsewhere."""
    maskable = ids > CLS
    chosen = (torch.rand(ids.shape, generator=generator) < rate) & maskable
    labels = torch.where(chosen, ids, torch.full_like(ids, -100))
    return ids.masked_fill(chosen, MASK), labels


class MaskedLM(nn.Module):
    def __init__(self, vocab, dim=32, heads=4, layers=2, context=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=PAD)
        self.position = nn.Embedding(context, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=64, dropout=0.0, batch_first=True,
                                           activation="gelu", norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, vocab, bias=False)
        self.out.weight = self.embed.weight  # tied

    def forward(self, ids):
        positions = torch.arange(ids.size(1)).expand_as(ids)
        x = self.embed(ids) + self.position(positions)
        hidden = self.encoder(x, src_key_padding_mask=ids.eq(PAD))
        return self.out(self.norm(hidden))


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(7)
    sentences = make_sentences(512, generator)
    lengths = torch.tensor([len(s) for s in sentences])
    print("lengths:", lengths.min().item(), "to", lengths.max().item(), "counts", torch.bincount(lengths).tolist())
    batch = pad_sequence(sentences[:3], batch_first=True, padding_value=PAD)
    print("a padded batch:\n", batch)

    model = MaskedLM(len(VOCAB))
    print("tied weights:", model.out.weight is model.embed.weight)
    print("padding row is zero:", model.embed.weight[PAD].abs().sum().item())
    criterion = nn.CrossEntropyLoss(ignore_index=-100)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01)

    for step in range(200):
        start = (step * 32) % len(sentences)
        ids = pad_sequence(sentences[start:start + 32], batch_first=True, padding_value=PAD)
        inputs, labels = mask_tokens(ids, generator)
        logits = model(inputs)
        loss = criterion(logits.view(-1, len(VOCAB)), labels.view(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 50 == 49:
            print(f"step {step + 1}: loss {loss.item():.4f}, scored {int((labels != -100).sum())} tokens")

    # the loss is the mean over the scored positions only
    flat_logits, flat_labels = logits.view(-1, len(VOCAB)), labels.view(-1)
    kept = flat_labels != -100
    by_hand = nn.functional.cross_entropy(flat_logits[kept], flat_labels[kept])
    print("ignore_index drops the rest:", torch.allclose(loss, by_hand))
    print("loss grad_fn:", type(loss.grad_fn).__name__)

    # padding never changes what the real tokens see
    model.eval()
    one = sentences[0].unsqueeze(0)
    padded = torch.cat([one, torch.zeros(1, 3, dtype=torch.long)], dim=1)
    with torch.no_grad():
        alone, with_padding = model(one), model(padded)[:, :one.size(1)]
    print("key_padding_mask hides the padding:", torch.allclose(alone, with_padding, atol=1e-5))

    # fill in the whole mirrored half of unseen sentences
    test = make_sentences(64, generator)
    ids = pad_sequence(test, batch_first=True, padding_value=PAD)
    answer_start = torch.tensor([s.tolist().index(VOCAB.index("=")) + 1 for s in test])
    positions = torch.arange(ids.size(1)).expand_as(ids)
    answer = (positions >= answer_start[:, None]) & (ids != PAD)
    with torch.no_grad():
        predicted = model(ids.masked_fill(answer, MASK)).argmax(-1)
    accuracy = (predicted[answer] == ids[answer]).float().mean()
    print(f"answer digits recovered: {accuracy.item():.4f}")
    print("example:", "".join(VOCAB[i] for i in ids[0][1:].tolist() if i != PAD), "->",
          "".join(VOCAB[i] for i in predicted[0][answer[0]].tolist()))


if __name__ == "__main__":
    main()
