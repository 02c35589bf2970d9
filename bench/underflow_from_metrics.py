#!/usr/bin/env python3
"""Underflow figures of a run from its --metrics JSONL histograms
(bench/loss_scale_modes.sh).

    underflow_from_metrics.py RUN.jsonl [--reference REF.jsonl --scale S] [--format fp16]

Prints two numbers:
  zero%   the run's gradient elements stored as zero, over every histogram
          it took: exact zeros plus what flushed at the run's own scale (a
          flushed value is stored as zero, so the run's histograms cannot
          tell the two apart; between runs of one model the difference is
          the flushing);
  under%  with --reference and --scale: of the reference run's gradient
          elements (a dynamic run, whose high scale flushes the least), those
          that flush at S: the whole binade at or below half the format's
          smallest subnormal once scaled (gpu_abi/scale_choice.h's rule).
"""
import argparse
import json
import math

SUB_EXP = {"fp16": -24, "bf16": -133, "fp32": -149}


def histograms(path):
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "histogram":
                yield r


def zero_percent(path):
    zeros = total = 0
    for h in histograms(path):
        n = sum(h["log2_bins"]) + h["zero"] + h["inf"] + h["nan"]
        zeros += h["zero"]
        total += n
    return 100.0 * zeros / total if total else float("nan")


def underflow_percent(path, scale, sub_exp):
    k = math.log2(scale)
    flushed = total = 0
    for h in histograms(path):
        e0 = h["min_exp"]
        for b, c in enumerate(h["log2_bins"]):
            if e0 + b + 1 <= sub_exp - 1 - k:
                flushed += c
        total += sum(h["log2_bins"]) + h["zero"] + h["inf"] + h["nan"]
    return 100.0 * flushed / total if total else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--reference")
    ap.add_argument("--scale", type=float)
    ap.add_argument("--format", default="fp16", choices=["fp16", "bf16", "fp32"])
    a = ap.parse_args()
    out = ["%.4f" % zero_percent(a.run)]
    if a.reference and a.scale:
        out.append("%.4f" % underflow_percent(a.reference, a.scale, SUB_EXP[a.format]))
    print(" ".join(out))


if __name__ == "__main__":
    main()
