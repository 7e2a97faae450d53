# corpus: slow
"""Mixed-precision training on the CPU: autocast to float16 for the forward pass, a GradScaler that
is enabled only where a GPU exists, and float32 master weights."""
import torch
from torch import nn


def main():
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.amp.GradScaler(device, enabled=torch.cuda.is_available())
    print("scaler enabled:", scaler.is_enabled())

    a = torch.randn(8, 16)
    with torch.autocast(device_type="cpu", dtype=torch.float16):
        out = model(a)
        summed = out.float().sum()
        print("inside autocast:", out.dtype, torch.is_autocast_enabled("cpu"), summed.dtype)
        print("matmul dtype:", (a @ a.t()).dtype, "addition keeps float32:", (a + a).dtype)
    print("outside autocast:", model(a).dtype, torch.is_autocast_enabled("cpu"))
    with torch.autocast("cpu", enabled=False):
        print("disabled autocast:", model(a).dtype)

    x = torch.randn(512, 16)
    labels = (x[:, :4].argmax(1))
    losses = []
    for step in range(150):
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device, dtype=torch.float16):
            logits = model(x)
            loss = nn.functional.cross_entropy(logits.float(), labels)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    print("weights stay float32:", {p.dtype for p in model.parameters()} == {torch.float32})
    print("gradients are float32:", model[0].weight.grad.dtype)
    print("scale (disabled scaler keeps 1.0):", scaler.get_scale())
    print("loss fell by two thirds:", losses[-1] < losses[0] / 3)
    accuracy = (model(x).argmax(1) == labels).float().mean().item()
    print("accuracy above 0.9:", accuracy > 0.9)
    print("state dict of a disabled scaler:", scaler.state_dict())


if __name__ == "__main__":
    main()
