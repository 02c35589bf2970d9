#!/usr/bin/python3
"""The PyTorch peer of the resnet sample: the same network (models/resnet.hpp:
a conv-BN-ReLU stem, one basic block per stage with 1x1 conv-BN projection
shortcuts, global average pooling, a linear classifier; every conv with a
bias, as vkamp's), the same recipe (batch 128, SGD with momentum 0.9 and
weight decay 5e-4 on every parameter, the learning rate annealed per step
to 0 by a cosine over the run, no warm-up) and Fashion-MNIST scaled to
[0, 1]. On the CPU in fp32 (PyTorch's CPU AMP has no fp16 GradScaler path).
Prints the test accuracy after every epoch (model.eval(): BatchNorm's
running statistics), then one line: samples/s and the final test accuracy.

--vkamp-weights FILE instead evaluates the weights the resnet sample
exported (--save) on the test set: the file loads with load_state_dict
(strict) into this model, BatchNorm's running statistics included, so the
accuracy it prints is the one vkamp reported, within fp16 rounding.

usage: torch_resnet.py [--widths 8,16,32] [--stem-stride 2] [--epochs N] [--batch N]
                       [--lr X] [--momentum X] [--weight-decay X] [--threads N] [--seed N]
                       [--data DIR] [--max-steps N] [--vkamp-weights FILE]
"""
import argparse
import json
import os
import struct
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as torch_peer.py: no spinning OpenMP threads

import torch  # noqa: E402
from torch import nn  # noqa: E402

from peer_info import blas_line  # noqa: E402
from torch_peer import load  # noqa: E402


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, 0), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + (x if self.downsample is None else self.downsample(x)))


class ResNet(nn.Module):
    def __init__(self, widths, stem_stride, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, widths[0], 3, stem_stride, 1)
        self.bn1 = nn.BatchNorm2d(widths[0])
        cin = widths[0]
        for s, w in enumerate(widths):
            setattr(self, f"layer{s + 1}", nn.Sequential(BasicBlock(cin, w, 1 if s == 0 else 2)))
            cin = w
        self.stages = len(widths)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        for s in range(self.stages):
            x = getattr(self, f"layer{s + 1}")(x)
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


def read_safetensors(path):
    """The tensors of a .safetensors file (F32, F16, BF16, I64), by name."""
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    dtypes = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "I64": torch.int64}
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        raw = bytearray(blob[8 + n + a:8 + n + b])
        v = torch.frombuffer(raw, dtype=dtypes[t["dtype"]]) if raw else torch.empty(0, dtype=dtypes[t["dtype"]])
        out[name] = v.reshape(t["shape"]).clone()
    return out


def accuracy(model, x, y, batch=1000):
    model.eval()
    with torch.no_grad():
        right = sum((model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum().item() for i in range(0, len(x), batch))
    model.train()
    return right / len(x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--widths", default="8,16,32")
    ap.add_argument("--stem-stride", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--max-steps", type=int, default=0)
    ap.add_argument("--vkamp-weights")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    model = ResNet([int(w) for w in a.widths.split(",")], a.stem_stride)
    xte, yte = load(a.data, "t10k", True)
    if a.vkamp_weights:
        model.load_state_dict(read_safetensors(a.vkamp_weights), strict=True)
        print(f"pytorch {torch.__version__}: {a.vkamp_weights} loads (strict) and scores "
              f"test accuracy {100 * accuracy(model, xte, yte):.2f}%")
        return
    print(blas_line())
    xtr, ytr = load(a.data, "train", True)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum, weight_decay=a.weight_decay)
    per_epoch = len(xtr) // a.batch
    total = a.max_steps if a.max_steps > 0 else a.epochs * per_epoch  # as vkamp: --max-steps is the length
    epochs = -(-total // per_epoch)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total)
    loss_fn = nn.CrossEntropyLoss()
    step, t0, acc = 0, time.perf_counter(), 0.0
    for epoch in range(epochs):
        perm = torch.randperm(len(xtr))
        for s in range(min(per_epoch, total - step)):
            idx = perm[s * a.batch:(s + 1) * a.batch]
            opt.zero_grad(set_to_none=True)
            loss_fn(model(xtr[idx]), ytr[idx]).backward()
            opt.step()
            sched.step()
            step += 1
        acc = accuracy(model, xte, yte)
        print(f"epoch {epoch + 1}/{epochs}  test accuracy {100 * acc:.2f}%", flush=True)
    secs = time.perf_counter() - t0
    print(f"pytorch {torch.__version__} cpu fp32 resnet {a.widths} stem stride {a.stem_stride}: "
          f"{step * a.batch / secs:.0f} samples/s (evaluations included), test accuracy {100 * acc:.2f}%, "
          f"{secs:.1f} s, {a.threads} threads")


if __name__ == "__main__":
    sys.exit(main())
