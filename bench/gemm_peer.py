#!/usr/bin/python3
"""The GEMM peer for `vkamp-bench gemm --peer`: one form and shape of a
linear layer's GEMM through torch.mm on the CPU in fp32, timed as
vkamp-bench times its own (warm-up, then the median per call of R calls x N
timed runs, R chosen so that one run takes about 20 ms). Prints one line:
  ms=<median per call> r=<R> n=<N>

  --form forward  Y  = X W^T    (batch x in) (out x in)^T
  --form dx       dX = dY W     (batch x out) (out x in)
  --form dw       dW = dY^T X   (batch x out)^T (batch x in)

usage: gemm_peer.py --form F --batch B --in I --out O [--repeats N] [--threads T]
"""
import argparse
import os
import statistics
import time

import torch

TARGET_RUN_S = 0.020
MAX_CALLS = 256


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--form", choices=["forward", "dx", "dw"], required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--in", dest="fan_in", type=int, required=True)
    ap.add_argument("--out", type=int, required=True)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(12345)
    x = torch.randn(a.batch, a.fan_in)
    w = torch.randn(a.out, a.fan_in)
    dy = torch.randn(a.batch, a.out)
    # The transposed operands are views, as in nn.Linear's forward and
    # autograd's backward: torch.mm hands BLAS the transpose flag, no copy.
    lhs, rhs = {"forward": (x, w.t()), "dx": (dy, w), "dw": (dy.t(), x)}[a.form]
    out = torch.empty(lhs.shape[0], rhs.shape[1])

    def run(calls):
        t0 = time.perf_counter()
        for _ in range(calls):
            torch.mm(lhs, rhs, out=out)
        return (time.perf_counter() - t0) / calls

    probe = run(1)  # warm-up: first-call allocation and thread start
    probe = run(1)
    calls = int(min(max(TARGET_RUN_S / max(probe, 1e-9), 1), MAX_CALLS))
    run(calls)  # warm-up run at the timed length
    per_call = [run(calls) for _ in range(a.repeats)]
    print(f"ms={1e3 * statistics.median(per_call):.6f} r={calls} n={a.repeats}")


if __name__ == "__main__":
    main()
