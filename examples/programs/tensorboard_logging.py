"""A training script that logs to TensorBoard: scalars, a scalar group, histograms of the weights,
an image grid, text and hyperparameters with their final metrics, written by SummaryWriter into a
temporary directory and read back with TensorBoard's own EventAccumulator."""
import tempfile

import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from torch import nn
from torch.utils.tensorboard import SummaryWriter


def make_data(generator):
    x = torch.randn(200, 3, generator=generator)
    y = (x @ torch.tensor([1.5, -2.0, 0.5]) > 0).long()
    return x, y


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(5)
    x, y = make_data(generator)
    model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)

    logdir = tempfile.mkdtemp()
    with SummaryWriter(log_dir=logdir, flush_secs=1) as writer:
        for epoch in range(30):
            logits = model(x)
            loss = nn.functional.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            accuracy = (logits.argmax(1) == y).float().mean()
            writer.add_scalar("train/loss", loss.item(), epoch)
            writer.add_scalar("train/accuracy", accuracy, epoch)
            writer.add_scalar("lr", scheduler.get_last_lr()[0], epoch)
            if epoch % 10 == 0:
                writer.add_scalars("weights", {"first": model[0].weight.norm(), "last": model[2].weight.norm()}, epoch)
                writer.add_histogram("first_layer", model[0].weight, epoch)
        images = torch.sigmoid(model[0].weight.detach()).view(8, 1, 1, 3).expand(8, 3, 4, 3)
        writer.add_images("weights_as_images", images, 0, dataformats="NCHW")
        writer.add_text("notes", "a tiny **classifier**", 0)
        writer.add_hparams({"lr": 0.5, "hidden": 8, "optimizer": "SGD"},
                           {"hparam/final_loss": loss.item()}, run_name="hparams")
        print("log_dir is the one given:", writer.get_logdir() == logdir)

    events = EventAccumulator(logdir, size_guidance={"scalars": 0, "histograms": 0})
    events.Reload()
    tags = events.Tags()
    print("scalar tags:", sorted(tags["scalars"]))
    print("histogram tags:", tags["histograms"], "image tags:", tags["images"])
    losses = events.Scalars("train/loss")
    print("logged steps:", len(losses), losses[0].step, losses[-1].step)
    print("first and last loss:", round(losses[0].value, 4), round(losses[-1].value, 4))
    print("read back equals the tensor:", abs(losses[-1].value - loss.item()) < 1e-6)
    print("lr schedule:", sorted({round(e.value, 4) for e in events.Scalars("lr")}))
    accuracy = events.Scalars("train/accuracy")
    print("accuracy rose:", accuracy[0].value, "->", accuracy[-1].value)

    histogram = events.Histograms("first_layer")[-1]
    print("histogram step and count:", histogram.step, histogram.histogram_value.num)
    value = histogram.histogram_value
    print("histogram min/max:", round(value.min, 4), round(value.max, 4), "sum of squares:", round(value.sum_squares, 4))
    print("histogram buckets:", len(value.bucket), [int(c) for c in value.bucket if c][:8])
    image = events.Images("weights_as_images")[0]
    print("image grid size:", image.width, image.height, "bytes are a PNG:", image.encoded_image_string[1:4])
    text = events.Tensors("notes/text_summary")[0]
    print("text:", text.tensor_proto.string_val)

    hparams = EventAccumulator(f"{logdir}/hparams")
    hparams.Reload()
    final = hparams.Scalars("hparam/final_loss")[0]
    print("hparams run:", hparams.Tags()["scalars"], round(final.value, 4))

    # add_scalars writes each member into a run of its own, beside the main one
    group = EventAccumulator(f"{logdir}/weights_first")
    group.Reload()
    print("group run:", group.Tags()["scalars"], [e.step for e in group.Scalars("weights")])


if __name__ == "__main__":
    main()
