"""Sharing a model through torch.hub: a repository directory with a hubconf.py (dependencies, an entry
point with keyword arguments and a private function), loaded with source="local"; the
weights fine-tuned, saved with torch.save, and loaded back with torch.load(weights_only=True)."""
import io
import os
import pickle
import tempfile
import textwrap

import torch
from torch import nn

HUBCONF = '''
dependencies = ["torch"]

import torch
from torch import nn


class TinyRegressor(nn.Module):
    def __init__(self, features, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def tiny_regressor(features=4, hidden=16, pretrained=False):
    """A two-layer regressor; pretrained=True loads the weights stored beside this file."""
    torch.manual_seed(1)
    model = TinyRegressor(features, hidden)
    if pretrained:
        import os
        path = os.path.join(os.path.dirname(__file__), "weights.pt")
        model.load_state_dict(torch.load(path, weights_only=True))
    return model


def _private_builder():
    return None
'''


class Opaque:
    """Any class of the program's own."""

    def __init__(self):
        self.payload = [1, 2, 3]


def main():
    torch.manual_seed(0)
    repo = tempfile.mkdtemp()
    with open(os.path.join(repo, "hubconf.py"), "w") as f:
        f.write(textwrap.dedent(HUBCONF))

    model = torch.hub.load(repo, "tiny_regressor", source="local", features=3, hidden=8)
    print("loaded:", type(model).__name__, model.net[0])

    # fine-tune it on a known function
    x = torch.randn(256, 3)
    y = x[:, 0] - 2 * x[:, 1] + x[:, 2] ** 2
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    for step in range(200):
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"fine-tuned loss: {loss.item():.4f}")

    # save the weights beside the hubconf, as a "pretrained" checkpoint, and the optimizer state elsewhere
    torch.save(model.state_dict(), os.path.join(repo, "weights.pt"))
    buffer = io.BytesIO()
    torch.save({"optimizer": optimizer.state_dict(), "step": 200, "note": "adam"}, buffer)
    buffer.seek(0)
    checkpoint = torch.load(buffer, weights_only=True)
    print("optimizer checkpoint keys:", sorted(checkpoint), checkpoint["step"], checkpoint["note"])
    print("adam state of the first weight:", sorted(checkpoint["optimizer"]["state"][0]))
    print("step counter:", checkpoint["optimizer"]["state"][0]["step"])

    pretrained = torch.hub.load(repo, "tiny_regressor", source="local", features=3, hidden=8, pretrained=True)
    with torch.no_grad():
        same = torch.equal(pretrained(x), model(x))
    print("pretrained entry point gives the fine-tuned model:", same)
    state = torch.load(os.path.join(repo, "weights.pt"), weights_only=True)
    print("state dict:", [(k, tuple(v.shape), v.dtype) for k, v in state.items()])

    # weights_only refuses arbitrary objects; a class local to a function cannot even be saved
    class Local:
        pass

    try:
        torch.save({"object": Local()}, io.BytesIO())
    except (AttributeError, pickle.PicklingError) as error:
        print("a local class cannot be pickled:", type(error).__name__)
    bad = io.BytesIO()
    torch.save({"object": Opaque()}, bad)
    bad.seek(0)
    try:
        torch.load(bad, weights_only=True)
    except pickle.UnpicklingError as error:
        print("weights_only refuses a custom class:", "Opaque" in str(error))
    bad.seek(0)
    print("a trusted file loads with weights_only=False:", torch.load(bad, weights_only=False)["object"].payload)
    bad.seek(0)
    with torch.serialization.safe_globals([Opaque]):
        print("or with the class allowed:", type(torch.load(bad, weights_only=True)["object"]).__name__)

    # mapping a loaded tensor and loading into a model with a missing key
    partial = {k: v for k, v in state.items() if not k.startswith("net.2")}
    result = pretrained.load_state_dict(partial, strict=False)
    print("missing keys:", result.missing_keys, "unexpected:", result.unexpected_keys)
    try:
        pretrained.load_state_dict(partial)
    except RuntimeError as error:
        print("strict load fails:", str(error).splitlines()[0])


if __name__ == "__main__":
    main()
