#!/usr/bin/python3
"""The PyTorch peer for the samples: the same network, batch, momentum SGD
and Fashion-MNIST data, on the CPU in fp32 (PyTorch's CPU AMP has no fp16
GradScaler path). Prints which BLAS PyTorch runs on and its threads
(peer_info.py), then one line: samples/s and test accuracy.

  --model mlp     fashion_mlp's 784-256-256-10 ReLU MLP
  --model lenet5  lenet5's LeNet-5: conv 5x5x6 pad 2, max pool 2, conv 5x5x16,
                  max pool 2, 120, 84, 10, ReLU

--threads sets PyTorch's intra-op (OpenMP) threads, 1 by default: OpenBLAS
runs the GEMMs on its own threads, one per core, either way, and on the
2-core machine 1 intra-op thread measured fastest (bench/NOTES.md, "PyTorch
on OpenBLAS").

--lr-schedule cosine anneals the learning rate to 0 over the run, per step,
as vkamp's cosine schedule does (no warm-up).

--device cuda (bench/gpu_vs_torch.sh) trains on the GPU under
torch.autocast("cuda", float16) with a GradScaler, the training and test
sets resident in GPU memory; the clock is read after torch.cuda.synchronize().
--max-steps N runs N steps, the data cycling, as vkamp (0: the epochs
decide). samples/s leaves out the first WARMUP_STEPS steps (allocator,
cuBLAS and cuDNN setup), as torch_charlm.py does.

usage: torch_peer.py [--model mlp|lenet5] [--epochs N] [--batch N] [--lr X] [--momentum X]
                     [--lr-schedule constant|cosine] [--threads N] [--seed N] [--data DIR]
                     [--device cpu|cuda] [--max-steps N]
"""
import argparse
import contextlib
import gzip
import os
import struct
import sys
import time

# OpenBLAS (Debian's torch reaches it through libblas.so.3) runs the GEMMs on
# its own pthreads, beside PyTorch's OpenMP threads. libgomp's default is to
# spin after each parallel region, and on a 2-core machine the spinning
# threads starve OpenBLAS's: measured 2,700 against 64,000 samples/s for the
# MLP. Passive waiting keeps the peer honest at any --threads.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402 (after the OpenMP setting, which libgomp reads on load)

from peer_info import blas_line, cuda_line, grad_scaler

WARMUP_STEPS = 5


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 8:
        sys.exit(f"torch_peer.py: {path} is not an unsigned-byte IDX file")
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    t = torch.frombuffer(bytearray(data[4 + 4 * ndim:]), dtype=torch.uint8)
    return t.reshape(dims)


def load(data_dir, prefix, image):
    def find(name):
        for p in (os.path.join(data_dir, name + ".gz"), os.path.join(data_dir, name)):
            if os.path.exists(p):
                return p
        sys.exit(f"torch_peer.py: cannot find {name} in {data_dir}")
    x = read_idx(find(f"{prefix}-images-idx3-ubyte")).float() / 255.0
    x = x.reshape(-1, 1, 28, 28) if image else x.reshape(-1, 784)
    y = read_idx(find(f"{prefix}-labels-idx1-ubyte")).long()
    return x, y


def network(name):
    nn = torch.nn
    if name == "mlp":
        return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["mlp", "lenet5"], default="mlp")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--lr-schedule", choices=["constant", "cosine"], default="constant")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--max-steps", type=int, default=0)
    a = ap.parse_args()
    cuda = a.device == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("torch_peer.py: --device cuda, but torch.cuda.is_available() is False")
    torch.set_num_threads(a.threads)
    print(cuda_line() if cuda else blas_line())
    torch.manual_seed(a.seed)
    image = a.model == "lenet5"
    xtr, ytr = (t.to(a.device) for t in load(a.data, "train", image))
    xte, yte = (t.to(a.device) for t in load(a.data, "t10k", image))
    model = network(a.model).to(a.device)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum)
    loss_fn = torch.nn.CrossEntropyLoss()
    per_epoch = len(xtr) // a.batch
    total = a.max_steps if a.max_steps > 0 else a.epochs * per_epoch  # as vkamp: --max-steps is the length
    if total <= WARMUP_STEPS:
        sys.exit(f"torch_peer.py: the run needs more than the {WARMUP_STEPS} untimed warm-up steps")
    sched = None
    if a.lr_schedule == "cosine":
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=total)
    scaler = grad_scaler() if cuda else None
    # The CPU run stays plain fp32, as before (no autocast context at all).
    autocast = torch.autocast("cuda", dtype=torch.float16) if cuda else contextlib.nullcontext()

    def sync():
        if cuda:
            torch.cuda.synchronize()

    step, t0 = 0, None
    while step < total:
        perm = torch.randperm(len(xtr), device=a.device)
        for s in range(min(per_epoch, total - step)):
            if step == WARMUP_STEPS:
                sync()
                t0 = time.perf_counter()
            idx = perm[s * a.batch:(s + 1) * a.batch]
            opt.zero_grad(set_to_none=True)
            with autocast:
                loss = loss_fn(model(xtr[idx]), ytr[idx])
            if scaler:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            if sched:
                sched.step()
            step += 1
    sync()
    secs = time.perf_counter() - t0
    with torch.no_grad():
        acc = (model(xte).argmax(1) == yte).float().mean().item()
    mode = "cuda autocast fp16 + GradScaler" if cuda else "cpu fp32"
    print(f"pytorch {torch.__version__} {mode} {a.model} {a.lr_schedule} lr: "
          f"{(total - WARMUP_STEPS) * a.batch / secs:.0f} samples/s, "
          f"test accuracy {100 * acc:.2f}%, {secs:.1f} s, {a.threads} threads")


if __name__ == "__main__":
    main()
