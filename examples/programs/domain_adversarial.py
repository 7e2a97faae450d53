"""Domain-adversarial training with custom autograd Functions: a gradient reversal layer between the
feature extractor and a domain classifier, a straight-through estimator that binarises features in the
forward pass, tensor hooks and retain_grad to watch the reversed gradients, and the graph each builds
(grad_fn names, next_functions, saved tensors)."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import Function


class GradientReversal(Function):
    @staticmethod
    def forward(ctx, x, strength):
        ctx.strength = strength
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return -ctx.strength * grad_output, None


class StraightThroughSign(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (x.abs() <= 1).to(grad_output.dtype)


class RoundWithSetup(Function):
    """forward without ctx, and setup_context, as torch.func-ready Functions are written."""

    @staticmethod
    def forward(x, scale):
        return torch.round(x * scale) / scale

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.mark_non_differentiable()
        ctx.scale = inputs[1]

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


class DANN(nn.Module):
    def __init__(self, strength=0.5):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 8))
        self.label_head = nn.Linear(8, 2)
        self.domain_head = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
        self.strength = strength

    def forward(self, x):
        features = self.features(x)
        binary = StraightThroughSign.apply(features)
        reversed_features = GradientReversal.apply(features, self.strength)
        return self.label_head(features + 0.1 * binary), self.domain_head(reversed_features).squeeze(1)


def graph_walk():
    x = torch.tensor([0.5, -2.0, 1.5], requires_grad=True)
    y = StraightThroughSign.apply(x)
    z = GradientReversal.apply(x * 2, 3.0)
    print("y:", y)
    print("z:", z)
    print("names:", type(y.grad_fn).__name__, type(z.grad_fn).__name__, z.grad_fn.next_functions[0][0].name())
    print("saved tensors:", y.grad_fn.saved_tensors)
    (y.sum() + z.sum()).backward()
    print("x.grad:", x.grad)
    w = torch.tensor([1.26, -0.74], requires_grad=True)
    r = RoundWithSetup.apply(w, 2.0)
    print("round:", r, r.requires_grad)
    r.sum().backward()
    print("round grad:", w.grad)
    probe = (torch.randn(3, dtype=torch.float64, requires_grad=True),)
    print("gradcheck sees the reversal:", torch.autograd.gradcheck(
        lambda t: GradientReversal.apply(t, 1.0), probe, raise_exception=False))
    print("two reversals pass gradcheck:", torch.autograd.gradcheck(
        lambda t: GradientReversal.apply(GradientReversal.apply(t, 1.0), 1.0), probe))
    print("once_differentiable:", hasattr(torch.autograd.function, "once_differentiable"))


def main():
    torch.manual_seed(0)
    graph_walk()
    source = torch.randn(200, 2)
    source_labels = (source[:, 0] + source[:, 1] > 0).long()
    target = torch.randn(200, 2) * 1.3 + torch.tensor([0.8, -0.4])
    model = DANN()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
    seen = {}

    def remember(grad):
        seen["norm"] = grad.norm().item()

    for step in range(80):
        label_logits, domain_source = model(source)
        _, domain_target = model(target)
        label_loss = F.cross_entropy(label_logits, source_labels)
        domain_logits = torch.cat([domain_source, domain_target])
        domains = torch.cat([torch.zeros(200), torch.ones(200)])
        domain_loss = F.binary_cross_entropy_with_logits(domain_logits, domains)
        if step == 79:
            handle = domain_logits.register_hook(remember)
            domain_logits.retain_grad()
        optimizer.zero_grad()
        (label_loss + domain_loss).backward()
        optimizer.step()
    handle.remove()
    print("hook saw a gradient:", seen["norm"] > 0, "retained:", domain_logits.grad.shape)
    accuracy = (label_logits.argmax(1) == source_labels).float().mean().item()
    print("source accuracy above 0.85:", accuracy > 0.85)
    print("domain loss stays near chance (0.4..0.8):", 0.4 < domain_loss.item() < 0.8)
    print("label loss grad_fn:", label_loss.grad_fn.name(), "domain:", domain_loss.grad_fn.name())
    print("optimizer state keys:", sorted(optimizer.state_dict()["state"][0]))
    print("nesterov:", optimizer.param_groups[0]["nesterov"], optimizer.param_groups[0]["dampening"])


if __name__ == "__main__":
    main()
