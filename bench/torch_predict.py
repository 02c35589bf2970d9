#!/usr/bin/env python3
"""Loads a model vkamp-train saved into a PyTorch nn.Sequential and scores it
on a CSV, as an independent check that the file means what vkamp says:
    /usr/bin/python3 bench/torch_predict.py MODEL.safetensors DATA.csv
Needs python3-torch (Debian), nothing else: the safetensors file is read with
struct and json. MLP model strings only (784-256r-256r-10); the metadata
gives the feature columns, the label column, the classes and the
standardization (app/saved_model.hpp). Prints the accuracy (or the
mean squared error) in fp32."""
import csv
import json
import struct
import sys

import torch


def read_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    dtypes = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
    tensors = {}
    for name, t in header.items():
        begin, end = t["data_offsets"]
        raw = bytearray(data[begin:end])
        tensors[name] = torch.frombuffer(raw, dtype=dtypes[t["dtype"]]).reshape(t["shape"]).float()
    return tensors, meta


def sequential_for(model, tensors):
    """'6-64r-64r-3' -> Linear, ReLU, Linear, ReLU, Linear, with fcN's weights."""
    acts = {"r": torch.nn.ReLU, "t": torch.nn.Tanh, "g": lambda: torch.nn.GELU(approximate="tanh"),
            "i": torch.nn.Sigmoid, "w": torch.nn.SiLU}
    items = model.split("-")
    width = int(items[0])
    layers, state = [], {}
    for i, item in enumerate(items[1:], start=1):
        act = item[-1] if item[-1] in acts else None
        out = int(item[:-1] if act else item)
        state[f"{len(layers)}.weight"] = tensors[f"fc{i}.weight"]
        state[f"{len(layers)}.bias"] = tensors[f"fc{i}.bias"]
        layers.append(torch.nn.Linear(width, out))
        if act:
            layers.append(acts[act]())
        width = out
    net = torch.nn.Sequential(*layers)
    net.load_state_dict(state)
    return net.eval()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tensors, meta = read_safetensors(sys.argv[1])
    net = sequential_for(meta["vkamp.model"], tensors)
    features = json.loads(meta["vkamp.features"])
    with open(sys.argv[2], newline="") as f:
        rows = list(csv.DictReader(f))
    x = torch.tensor([[float(r[c]) for c in features] for r in rows], dtype=torch.float32)
    if "vkamp.standardize" in meta:
        st = json.loads(meta["vkamp.standardize"])
        x = (x - torch.tensor(st["mean"])) / torch.tensor(st["std"])
    with torch.no_grad():
        out = net(x)
    if meta["vkamp.task"] == "classify":
        classes = json.loads(meta["vkamp.classes"])
        want = torch.tensor([classes.index(r[meta["vkamp.label"]]) for r in rows])
        acc = (out.argmax(1) == want).double().mean().item()
        print(f"PyTorch {torch.__version__} (fp32): accuracy {100 * acc:.2f}% over {len(rows)} rows")
    else:
        targets = json.loads(meta["vkamp.targets"])
        y = torch.tensor([[float(r[c]) for c in targets] for r in rows])
        print(f"PyTorch {torch.__version__} (fp32): mse {((out - y) ** 2).mean().item():.6g} over {len(rows)} rows")


if __name__ == "__main__":
    main()
