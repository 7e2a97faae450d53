"""Image augmentation and a spatial transformer on scikit-learn's 8x8 digits: flips, rolls, rotations,
padding modes, resizing with each interpolate mode, affine_grid and grid_sample for rotations and
crops, and a small localisation network that learns to undo a known shift."""
import math

import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn


def show(name, tensor, digits=4):
    print(f"{name}: {tuple(tensor.shape)}", [round(v, digits) for v in tensor.flatten().tolist()[:8]])


def augmentations():
    image = torch.arange(16.0).view(1, 1, 4, 4)
    print("flip:", torch.flip(image, dims=[3])[0, 0, 0].tolist(), image.fliplr()[0, 0, 0].tolist())
    print("roll:", torch.roll(image, shifts=(1, -1), dims=(2, 3))[0, 0, :2].tolist())
    print("rot90:", torch.rot90(image, 1, dims=(2, 3))[0, 0, 0].tolist(),
          torch.rot90(image, -1, dims=(2, 3))[0, 0, 0].tolist())
    for mode in ("constant", "reflect", "replicate", "circular"):
        padded = F.pad(image, (1, 2, 2, 1), mode=mode)
        print(f"pad {mode}:", tuple(padded.shape), padded[0, 0, 0].tolist(), padded[0, 0, :, 0].tolist())
    print(nn.ReflectionPad2d(1)(image)[0, 0, 0], nn.ZeroPad2d((1, 0, 0, 0))(image).shape)
    for mode, corners in (("nearest", None), ("nearest-exact", None), ("bilinear", False), ("bilinear", True),
                          ("bicubic", False), ("area", None)):
        resized = F.interpolate(image, size=(6, 5), mode=mode, align_corners=corners)
        show(f"resize {mode} {corners}", resized)
    show("downscale antialias", F.interpolate(image, scale_factor=0.5, mode="bilinear", antialias=True))
    show("scale 1.5 nearest", F.interpolate(image, scale_factor=1.5, mode="nearest"))
    show("upsample module", nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)(image))
    show("adaptive avg", F.adaptive_avg_pool2d(image, (3, 3)))
    show("adaptive max", F.adaptive_max_pool2d(image, 3))
    show("avg pool ceil", F.avg_pool2d(image, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False))
    pooled, indices = F.max_pool2d(image, 2, return_indices=True)
    show("unpool", F.max_unpool2d(pooled, indices, 2))


def grids():
    image = torch.arange(16.0).view(1, 1, 4, 4)
    identity = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    for corners in (False, True):
        grid = F.affine_grid(identity, (1, 1, 4, 4), align_corners=corners)
        same = F.grid_sample(image, grid, align_corners=corners)
        print(f"identity grid align_corners={corners}:", grid[0, 0, :2].tolist(), torch.allclose(same, image))
    angle = math.pi / 6
    rotation = torch.tensor([[[math.cos(angle), -math.sin(angle), 0.1], [math.sin(angle), math.cos(angle), -0.2]]])
    grid = F.affine_grid(rotation, (1, 1, 4, 4), align_corners=False)
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            sampled = F.grid_sample(image, grid, mode=mode, padding_mode=padding, align_corners=False)
            show(f"rotate {mode} {padding}", sampled)
    zoom = torch.tensor([[[0.5, 0.0, 0.25], [0.0, 0.5, -0.25]]])
    show("crop and zoom", F.grid_sample(image, F.affine_grid(zoom, (1, 1, 2, 2), align_corners=True),
                                        align_corners=True))


class ShiftUndoer(nn.Module):
    def __init__(self):
        super().__init__()
        self.locate = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 2))
        nn.init.zeros_(self.locate[-1].weight)
        nn.init.zeros_(self.locate[-1].bias)

    def forward(self, images):
        shift = self.locate(images)
        eye = torch.eye(2).expand(images.shape[0], 2, 2)
        theta = torch.cat([eye, shift.unsqueeze(-1)], dim=2)
        grid = F.affine_grid(theta, images.shape, align_corners=False)
        return F.grid_sample(images, grid, padding_mode="border", align_corners=False), shift


def learn_to_unshift():
    torch.manual_seed(0)
    images = torch.tensor(load_digits().images[:256], dtype=torch.float32).unsqueeze(1) / 16.0
    shifts = (torch.rand(256, 2) - 0.5) * 0.5
    theta = torch.cat([torch.eye(2).expand(256, 2, 2), -shifts.unsqueeze(-1)], dim=2)
    moved = F.grid_sample(images, F.affine_grid(theta, images.shape, align_corners=False),
                          padding_mode="border", align_corners=False)
    model = ShiftUndoer()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    first = None
    for step in range(60):
        restored, predicted = model(moved)
        loss = F.mse_loss(restored, images)
        first = loss.item() if first is None else first
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print("restoring loss fell:", loss.item() < 0.9 * first)
    image = torch.rand(1, 1, 4, 4, dtype=torch.float64, requires_grad=True)
    grid = (torch.rand(1, 3, 3, 2, dtype=torch.float64) * 2 - 1).requires_grad_()
    print("grid_sample gradcheck:", torch.autograd.gradcheck(
        lambda i, g: F.grid_sample(i, g, align_corners=False), (image, grid)))


def main():
    augmentations()
    grids()
    learn_to_unshift()


if __name__ == "__main__":
    main()
