# corpus: slow
"""A tiny sequence recogniser trained with CTC, then pruned: frames of noisy one-hot "sounds" with
repeats and silences, a Conv1d front end and a bidirectional GRU, nn.CTCLoss with per-sequence
lengths, greedy decoding (collapse repeats, drop blanks); then torch.nn.utils.prune (global L1
unstructured over several layers, masks as buffers and forward pre-hooks, prune.remove) and a short
fine-tune that keeps the pruned weights at zero."""
import torch
import torch.nn.utils.prune as prune
from torch import nn

BLANK, SYMBOLS = 0, 4  # classes: blank and symbols 1..4


def make_utterance(generator):
    """A label sequence of 2 to 4 symbols, each held for 2 or 3 frames, with silent frames between some."""
    length = int(torch.randint(2, 5, (1,), generator=generator))
    labels = torch.randint(1, SYMBOLS + 1, (length,), generator=generator)
    frames = []
    for label in labels.tolist():
        frames += [label] * int(torch.randint(2, 4, (1,), generator=generator))
        frames += [BLANK] * int(torch.randint(0, 2, (1,), generator=generator))
    features = nn.functional.one_hot(torch.tensor(frames), SYMBOLS + 1).float()
    return features + 0.3 * torch.randn(features.shape, generator=generator), labels


class Recogniser(nn.Module):
    def __init__(self, hidden=24):
        super().__init__()
        self.conv = nn.Conv1d(SYMBOLS + 1, hidden, kernel_size=3, padding=1)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, SYMBOLS + 1)

    def forward(self, x):
        h = torch.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)
        h, _ = self.rnn(h)
        return self.out(h).log_softmax(-1)


def greedy_decode(log_probs, lengths):
    best = log_probs.argmax(-1)
    decoded = []
    for row, length in zip(best, lengths.tolist()):
        collapsed = torch.unique_consecutive(row[:length])
        decoded.append(collapsed[collapsed != BLANK].tolist())
    return decoded


def batch_of(utterances):
    features = nn.utils.rnn.pad_sequence([u[0] for u in utterances], batch_first=True)
    input_lengths = torch.tensor([len(u[0]) for u in utterances])
    targets = torch.cat([u[1] for u in utterances])
    target_lengths = torch.tensor([len(u[1]) for u in utterances])
    return features, input_lengths, targets, target_lengths


def train(model, data, steps, ctc, optimizer):
    for step in range(steps):
        features, input_lengths, targets, target_lengths = batch_of(data[(step * 16) % len(data):][:16])
        log_probs = model(features).transpose(0, 1)  # CTC wants (time, batch, classes)
        loss = ctc(log_probs, targets, input_lengths, target_lengths)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss


def accuracy(model, data):
    features, input_lengths, targets, target_lengths = batch_of(data)
    with torch.no_grad():
        decoded = greedy_decode(model(features), input_lengths)
    truths = [t.tolist() for t in targets.split(target_lengths.tolist())]
    return sum(d == t for d, t in zip(decoded, truths)) / len(truths), decoded[:3], truths[:3]


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(6)
    data = [make_utterance(generator) for _ in range(160)]
    test = [make_utterance(generator) for _ in range(40)]
    features, input_lengths, targets, target_lengths = batch_of(data[:4])
    print("batch:", features.shape, input_lengths.tolist(), target_lengths.tolist())

    model = Recogniser()
    ctc = nn.CTCLoss(blank=BLANK, zero_infinity=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    loss = train(model, data, 100, ctc, optimizer)
    print(f"CTC loss after training: {loss.item():.4f}", loss.grad_fn.name())
    exact, decoded, truths = accuracy(model, test)
    print(f"sequences decoded exactly: {exact:.4f}")
    print("decoded:", decoded, "truth:", truths)

    # prune 60% of the weights across the conv, the GRU's input weights and the output layer, by magnitude
    targets_to_prune = [(model.conv, "weight"), (model.rnn, "weight_ih_l0"), (model.out, "weight")]
    prune.global_unstructured(targets_to_prune, pruning_method=prune.L1Unstructured, amount=0.6)
    print("pruned parameters:", sorted(n for n, _ in model.named_parameters() if n.endswith("_orig")))
    print("mask buffers:", sorted(n for n, _ in model.named_buffers()))
    print("conv has a pre-hook:", len(model.conv._forward_pre_hooks), prune.is_pruned(model))
    total = sum(getattr(m, name).numel() for m, name in targets_to_prune)
    zeros = sum(int((getattr(m, name) == 0).sum()) for m, name in targets_to_prune)
    print(f"global sparsity: {zeros / total:.4f}")
    print(f"after pruning: {accuracy(model, test)[0]:.4f}")

    optimizer = torch.optim.Adam(model.parameters(), lr=0.005)
    loss = train(model, data, 40, ctc, optimizer)
    print(f"fine-tuned: loss {loss.item():.4f}, exact {accuracy(model, test)[0]:.4f}")
    still = sum(int((getattr(m, name) == 0).sum()) for m, name in targets_to_prune)
    print("pruned weights stay zero:", still == zeros)

    for module, name in targets_to_prune:
        prune.remove(module, name)
    print("after remove:", prune.is_pruned(model), sorted(n for n, _ in model.named_parameters())[:3])
    state = model.state_dict()
    print("state dict holds plain weights:", "conv.weight" in state and "conv.weight_mask" not in state)


if __name__ == "__main__":
    main()
