"""The hand-written safetensors writer shared by the golden fixture scripts.

It lives apart from vkamp on purpose: the fixtures then also test vkamp's
reader against an independent writer (the standard library only: struct +
json). Both make_fixtures.py and make_gpt_fixture.py import it, so the files
they write follow one convention: tensors in the order given, contiguous,
little-endian, compact JSON header padded with spaces to a multiple of 8.
"""
import json
import os
import struct
import sys

import torch

DTYPES = {torch.float32: "F32", torch.int64: "I64", torch.float16: "F16", torch.bfloat16: "BF16"}


def write_safetensors(path, tensors, metadata):
    """tensors: list of (name, tensor); written in that order, contiguous."""
    header = {"__metadata__": metadata}
    blobs, offset = [], 0
    for name, t in tensors:
        t = t.detach().contiguous().cpu()
        # little-endian on every machine torch runs on here; numpy has no
        # bfloat16, so 16-bit tensors go out as their bits
        bits = t.view(torch.int16) if t.dtype in (torch.float16, torch.bfloat16) else t
        data = bits.numpy().tobytes()
        assert sys.byteorder == "little"
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)  # pad so the data section starts 8-aligned
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)
