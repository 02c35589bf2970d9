#!/usr/bin/python3
"""The PyTorch side of bench/loss_scale_modes.sh (the loss-scale modes side by side), for a CUDA
GPU: lenet5 (torch_peer.py's network, Fashion-MNIST, momentum SGD with the
cosine schedule, batch 64) under torch.autocast("cuda", float16) with
GradScaler's defaults (2^16, x2 every 2000 clean steps, /2 on an
overflow), for --steps steps. Prints one table row in loss_scale_modes.sh's
columns: skipped steps (those where the scale fell), final scale, test
accuracy, and the parameter-gradient elements that are exactly zero after
unscaling (zero %; autocast keeps fp32 parameter gradients, so the fp16
flushes are those inside the backward pass that zero a gradient). The
underflow column is left empty: PyTorch keeps no gradient in fp16 to count.

charlm's peer is torch_charlm.py --device cuda (its validation loss); it
does not count skipped steps.

usage: torch_loss_scale.py [--steps N] [--lr X] [--seed N] [--data DIR]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_info import grad_scaler  # noqa: E402
from torch_peer import load, network  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_loss_scale.py: needs a CUDA GPU (fp16 autocast and GradScaler are CUDA's)")
    torch.manual_seed(a.seed)
    xtr, ytr = (t.cuda() for t in load(a.data, "train", True))
    xte, yte = (t.cuda() for t in load(a.data, "t10k", True))
    model = network("lenet5").cuda()
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=a.steps)
    loss_fn = torch.nn.CrossEntropyLoss()
    scaler = grad_scaler()
    skipped, zeros, elements, step = 0, 0, 0, 0
    per_epoch = len(xtr) // a.batch
    while step < a.steps:
        perm = torch.randperm(len(xtr), device="cuda")
        for s in range(min(per_epoch, a.steps - step)):
            idx = perm[s * a.batch:(s + 1) * a.batch]
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = loss_fn(model(xtr[idx]), ytr[idx])
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            for p in model.parameters():
                zeros += int((p.grad == 0).sum())
                elements += p.grad.numel()
            before = scaler.get_scale()
            scaler.step(opt)
            scaler.update()
            skipped += scaler.get_scale() < before
            sched.step()
            step += 1
    with torch.no_grad():
        acc = (model(xte).argmax(1) == yte).float().mean().item()
    print("| lenet5 | PyTorch GradScaler defaults | %d | - | %g | acc %.2f%% | %.4f | - |"
          % (skipped, scaler.get_scale(), 100 * acc, 100.0 * zeros / max(elements, 1)))


if __name__ == "__main__":
    main()
