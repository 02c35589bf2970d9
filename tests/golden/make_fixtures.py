#!/usr/bin/env python3
"""Writes the golden fixtures for tests/golden/test_golden.cpp (llm.c's
test_gpt2 idea): one PyTorch fp32 run of each model on one fixed batch.

    python3 tests/golden/make_fixtures.py [out_dir]

Needs Debian's python3-torch (1.13, CPU). Only this script needs it; the
committed fixtures are what the C++ test (and CI) reads.

Each fixture is a safetensors file written by hand with the standard
library (struct + json, safetensors_writer.py), independently of vkamp's
writer, holding:

    init.<p>            the initial parameters (PyTorch names and layouts)
    x, labels           the batch (x in [0, 1), like pixels; labels I64)
    logits, loss        the forward at the initial parameters (loss [1])
    grad.<p>            d loss / d p at the initial parameters
    sgd.step3.<p>       after 3 steps of SGD with momentum, from init
    sgd.losses [3]      the loss before each of those steps
    adamw.step3.<p>     after 3 steps of AdamW, from init
    adamw.losses [3]

The loss is the mean softmax cross-entropy; every step uses the same batch.
Everything is computed in float32, as an ordinary PyTorch run is, on one
thread (so the summation order, and the bits, do not depend on the machine's
core count). Hyperparameters are in __metadata__.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from safetensors_writer import write_safetensors

SEED = 20240601
ROWS = 16
SGD = dict(lr=0.05, momentum=0.9)
ADAMW = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1)
STEPS = 3


class MLP(nn.Module):
    """fashion_mlp's model, vkamp "784-256r-256r-10"."""

    spec = "784-256r-256r-10"

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 256)
        self.fc3 = nn.Linear(256, 10)

    def forward(self, x):
        x = x.reshape(x.shape[0], -1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class LeNet5(nn.Module):
    """vkamp "28x28x1-c6k5p2r-m2-c16k5r-m2-f-120r-84r-10"."""

    spec = "28x28x1-c6k5p2r-m2-c16k5r-m2-f-120r-84r-10"

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)  # (c, h, w) order
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def params(model, prefix):
    return [(prefix + n, p.detach().clone()) for n, p in model.named_parameters()]


def train(model, opt, x, labels):
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), labels)
        losses.append(loss.item())
        loss.backward()
        opt.step()
    return torch.tensor(losses, dtype=torch.float32)


def make(cls, x_shape, path):
    torch.manual_seed(SEED)
    init = cls()
    x = torch.rand(x_shape, dtype=torch.float32)
    labels = torch.randint(0, 10, (ROWS,), dtype=torch.int64)

    model = cls()
    model.load_state_dict(init.state_dict())
    logits = model(x)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    grads = [("grad." + n, p.grad.detach().clone()) for n, p in model.named_parameters()]

    sgd_model = cls()
    sgd_model.load_state_dict(init.state_dict())
    sgd_losses = train(sgd_model, torch.optim.SGD(sgd_model.parameters(), **SGD), x, labels)
    adamw_model = cls()
    adamw_model.load_state_dict(init.state_dict())
    adamw_losses = train(adamw_model, torch.optim.AdamW(adamw_model.parameters(), **ADAMW), x, labels)
    assert abs(sgd_losses[0].item() - loss.item()) == 0 and abs(adamw_losses[0].item() - loss.item()) == 0

    tensors = params(init, "init.") + [("x", x), ("labels", labels), ("logits", logits.detach()),
                                       ("loss", loss.detach().reshape(1))] + grads
    tensors += params(sgd_model, "sgd.step3.") + [("sgd.losses", sgd_losses)]
    tensors += params(adamw_model, "adamw.step3.") + [("adamw.losses", adamw_losses)]
    meta = {
        "vkamp.model": cls.spec,
        "writer": "tests/golden/make_fixtures.py",
        "torch": torch.__version__,
        "precision": "float32 (PyTorch CPU, 1 thread)",
        "seed": str(SEED),
        "rows": str(ROWS),
        "loss": "mean softmax cross-entropy (F.cross_entropy)",
        "steps": str(STEPS),
        "sgd.lr": str(SGD["lr"]),
        "sgd.momentum": str(SGD["momentum"]),
        "sgd.rule": "torch.optim.SGD: v = momentum * v + g (v = g at the first step); w -= lr * v",
        "adamw.lr": str(ADAMW["lr"]),
        "adamw.beta1": str(ADAMW["betas"][0]),
        "adamw.beta2": str(ADAMW["betas"][1]),
        "adamw.eps": str(ADAMW["eps"]),
        "adamw.weight_decay": str(ADAMW["weight_decay"]),
        "adamw.rule": "torch.optim.AdamW: w *= 1 - lr * wd, then Adam with bias correction",
    }
    write_safetensors(path, tensors, meta)
    print(f"{path}: {cls.spec}, loss {loss.item():.6f}, sgd {sgd_losses.tolist()}, "
          f"adamw {adamw_losses.tolist()}, {os.path.getsize(path)} bytes")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    make(MLP, (ROWS, 784), os.path.join(out, "mlp.safetensors"))
    make(LeNet5, (ROWS, 1, 28, 28), os.path.join(out, "lenet5.safetensors"))


if __name__ == "__main__":
    main()
