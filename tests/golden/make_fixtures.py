#!/usr/bin/env python3
"""Writes the golden fixtures for tests/golden/test_golden.cpp (llm.c's
test_gpt2 idea): one PyTorch fp32 run of each model on one fixed batch.

    python3 tests/golden/make_fixtures.py [out_dir [fixture ...]]

(fixture: mlp, lenet5, resbn; all three when none is named, so that one
can be added without rewriting the others' committed bytes.)

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

resbn.safetensors (a conv-BN-ReLU net with a residual add) holds
no AdamW run but BatchNorm's buffers besides (PyTorch's state_dict names):

    init.<p>, init.<bn>.running_mean/running_var/num_batches_tracked
    x [16, 3, 8, 8] (NCHW), labels, logits, loss, grad.<p>   as above
    forward.<bn>.*      the buffers after that one training-mode forward
    sgd.step3.<p>, sgd.step3.<bn>.*, sgd.losses [3]
    eval.logits         the model after the 3 steps, in eval mode (running
                        statistics), on the same x

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


class ResBN(nn.Module):
    """A conv-BN-ReLU stem and one residual block with BatchNorm (ResNet's
    basic block, same channels), then flatten and linear: 8x8x3 images,
    10 classes. The convolutions keep their biases (vkamp's conv2d has one);
    before a BatchNorm their gradient is 0 up to rounding. BatchNorm's
    weight and bias start at 1 + N(0, 0.1) and N(0, 0.1), not at 1 and 0,
    so that a kernel ignoring them cannot pass."""

    spec = "resbn"  # built as a graph by the test (test_golden.cpp resbn_graph)

    def __init__(self):
        super().__init__()
        self.conv0 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn0 = nn.BatchNorm2d(8)
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 8 * 8, 10)
        with torch.no_grad():
            for bn in (self.bn0, self.bn1, self.bn2):
                bn.weight.add_(0.1 * torch.randn(8))
                bn.bias.copy_(0.1 * torch.randn(8))

    def forward(self, x):
        h = F.relu(self.bn0(self.conv0(x)))
        y = F.relu(self.bn1(self.conv1(h)))
        y = F.relu(self.bn2(self.conv2(y)) + h)
        return self.fc(torch.flatten(y, 1))  # (c, h, w) order


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


def buffers(model, prefix):
    return [(prefix + n, b.detach().clone()) for n, b in model.named_buffers()]


def make_resbn(path):
    torch.manual_seed(SEED)
    init = ResBN()
    x = torch.rand((ROWS, 3, 8, 8), dtype=torch.float32)
    labels = torch.randint(0, 10, (ROWS,), dtype=torch.int64)

    model = ResBN()
    model.load_state_dict(init.state_dict())
    model.train()
    logits = model(x)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    grads = [("grad." + n, p.grad.detach().clone()) for n, p in model.named_parameters()]
    after_forward = buffers(model, "forward.")

    sgd_model = ResBN()
    sgd_model.load_state_dict(init.state_dict())
    sgd_model.train()
    sgd_losses = train(sgd_model, torch.optim.SGD(sgd_model.parameters(), **SGD), x, labels)
    assert sgd_losses[0].item() == loss.item()
    sgd_model.eval()
    with torch.no_grad():
        eval_logits = sgd_model(x)

    tensors = params(init, "init.") + buffers(init, "init.")
    tensors += [("x", x), ("labels", labels), ("logits", logits.detach()), ("loss", loss.detach().reshape(1))]
    tensors += grads + after_forward
    tensors += params(sgd_model, "sgd.step3.") + buffers(sgd_model, "sgd.step3.") + [("sgd.losses", sgd_losses)]
    tensors += [("eval.logits", eval_logits)]
    meta = {
        "vkamp.model": ResBN.spec,
        "writer": "tests/golden/make_fixtures.py",
        "torch": torch.__version__,
        "precision": "float32 (PyTorch CPU, 1 thread)",
        "seed": str(SEED),
        "rows": str(ROWS),
        "net": "conv0 3->8 k3p1, bn0, relu; conv1 8->8 k3p1, bn1, relu; conv2 8->8 k3p1, bn2, + (block input), "
               "relu; flatten (c, h, w); fc 512->10",
        "batch_norm": "nn.BatchNorm2d defaults: eps 1e-5, momentum 0.1, running_var unbiased",
        "loss": "mean softmax cross-entropy (F.cross_entropy)",
        "steps": str(STEPS),
        "sgd.lr": str(SGD["lr"]),
        "sgd.momentum": str(SGD["momentum"]),
        "sgd.rule": "torch.optim.SGD: v = momentum * v + g (v = g at the first step); w -= lr * v",
    }
    write_safetensors(path, tensors, meta)
    print(f"{path}: resbn, loss {loss.item():.6f}, sgd {sgd_losses.tolist()}, {os.path.getsize(path)} bytes")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
    only = set(sys.argv[2:]) or {"mlp", "lenet5", "resbn"}
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    if "mlp" in only:
        make(MLP, (ROWS, 784), os.path.join(out, "mlp.safetensors"))
    if "lenet5" in only:
        make(LeNet5, (ROWS, 1, 28, 28), os.path.join(out, "lenet5.safetensors"))
    if "resbn" in only:
        make_resbn(os.path.join(out, "resbn.safetensors"))


if __name__ == "__main__":
    main()
