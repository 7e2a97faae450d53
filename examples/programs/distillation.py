# corpus: slow
"""Knowledge distillation: a large teacher trained on the digits, then a small student trained to
match the teacher's softened probabilities with KL divergence at a temperature, beside the usual
cross-entropy on the labels."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main():
    torch.manual_seed(0)
    images, digit = load_digits(return_X_y=True)
    x, y = torch.from_numpy(images).float() / 16, torch.from_numpy(digit)
    train, test = (torch.from_numpy(part) for part in
                   train_test_split(np.arange(len(y)), train_size=1200, stratify=digit, random_state=0))

    teacher = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 256), nn.ReLU(),
                            nn.Linear(256, 10))
    optimizer = torch.optim.Adam(teacher.parameters(), lr=1e-3)
    for epoch in range(12):
        teacher.train()
        for idx in train[torch.randperm(len(train))].split(64):
            optimizer.zero_grad()
            F.cross_entropy(teacher(x[idx]), y[idx]).backward()
            optimizer.step()
    print("teacher accuracy above 0.93:", accuracy(teacher, x[test], y[test]) > 0.93)

    # the loss on explicit numbers first
    student_logits = torch.tensor([[1.0, 2.0, 0.5]])
    teacher_logits = torch.tensor([[0.5, 2.5, 0.0]])
    kl = F.kl_div(F.log_softmax(student_logits / 2, dim=1), F.log_softmax(teacher_logits / 2, dim=1),
                  reduction="batchmean", log_target=True)
    print("kl at T=2:", round(kl.item(), 6))

    student = nn.Sequential(nn.Linear(64, 16), nn.ReLU(), nn.Linear(16, 10))
    teacher.eval()
    with torch.no_grad():
        soft_targets = F.softmax(teacher(x) / 4.0, dim=1)
    optimizer = torch.optim.Adam(student.parameters(), lr=3e-3)
    temperature, alpha = 4.0, 0.7
    for epoch in range(20):
        student.train()
        for idx in train[torch.randperm(len(train))].split(64):
            logits = student(x[idx])
            distill = F.kl_div(F.log_softmax(logits / temperature, dim=1), soft_targets[idx],
                               reduction="batchmean") * temperature ** 2
            loss = alpha * distill + (1 - alpha) * F.cross_entropy(logits, y[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    print("student parameters:", sum(p.numel() for p in student.parameters()),
          "teacher:", sum(p.numel() for p in teacher.parameters()))
    print("student accuracy above 0.9:", accuracy(student, x[test], y[test]) > 0.9)


if __name__ == "__main__":
    main()
