#!/usr/bin/python3
"""The PyTorch peer for fashion_mlp: the same 784-256-256-10 ReLU MLP, batch,
momentum SGD and Fashion-MNIST data, on the CPU in fp32 (PyTorch's CPU AMP
has no fp16 GradScaler path). Prints one line: samples/s and test accuracy.

usage: torch_mlp.py [--epochs N] [--batch N] [--lr X] [--threads N] [--data DIR]
"""
import argparse
import gzip
import os
import struct
import sys
import time

import torch


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 8:
        sys.exit(f"torch_mlp.py: {path} is not an unsigned-byte IDX file")
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    t = torch.frombuffer(bytearray(data[4 + 4 * ndim:]), dtype=torch.uint8)
    return t.reshape(dims)


def load(data_dir, prefix):
    def find(name):
        for p in (os.path.join(data_dir, name + ".gz"), os.path.join(data_dir, name)):
            if os.path.exists(p):
                return p
        sys.exit(f"torch_mlp.py: cannot find {name} in {data_dir}")
    x = read_idx(find(f"{prefix}-images-idx3-ubyte")).reshape(-1, 784).float() / 255.0
    y = read_idx(find(f"{prefix}-labels-idx1-ubyte")).long()
    return x, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    xtr, ytr = load(a.data, "train")
    xte, yte = load(a.data, "t10k")
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                torch.nn.ReLU(), torch.nn.Linear(256, 10))
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    steps = len(xtr) // a.batch
    t0 = time.perf_counter()
    for _ in range(a.epochs):
        perm = torch.randperm(len(xtr))
        for s in range(steps):
            idx = perm[s * a.batch:(s + 1) * a.batch]
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xtr[idx]), ytr[idx])
            loss.backward()
            opt.step()
    secs = time.perf_counter() - t0
    with torch.no_grad():
        acc = (model(xte).argmax(1) == yte).float().mean().item()
    print(f"pytorch {torch.__version__} cpu fp32: {a.epochs * steps * a.batch / secs:.0f} samples/s, "
          f"test accuracy {100 * acc:.2f}%, {secs:.1f} s, {a.threads} threads")


if __name__ == "__main__":
    main()
