#!/usr/bin/python3
"""Writes the first N training and M test images of an IDX data set (with
their labels) as .gz IDX files in OUT, for a shorter side-by-side run
(LeNet-5's rounds take minutes on a 2-core machine).

usage: idx_subset.py OUT [--train N] [--test M] [--data DIR]
"""
import argparse
import gzip
import os
import struct


def subset(src, dst, count):
    with gzip.open(src, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = list(struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim]))
    item = 1
    for d in dims[1:]:
        item *= d
    head = 4 + 4 * ndim
    dims[0] = min(count, dims[0])
    with gzip.open(dst, "wb") as f:
        f.write(data[:4] + struct.pack(">" + "I" * ndim, *dims) + data[head:head + dims[0] * item])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--train", type=int, default=6000)
    ap.add_argument("--test", type=int, default=1000)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for prefix, count in (("train", a.train), ("t10k", a.test)):
        for kind in ("images-idx3", "labels-idx1"):
            name = f"{prefix}-{kind}-ubyte.gz"
            subset(os.path.join(a.data, name), os.path.join(a.out, name), count)


if __name__ == "__main__":
    main()
