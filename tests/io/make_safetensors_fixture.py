#!/usr/bin/env python3
"""Writes fixtures/independent.safetensors with Python's standard library only,
as a writer independent of vkamp's. test_safetensors.cpp reads it and checks
every value below. The data is laid out in the reverse of the header's
order, so the reader must follow data_offsets rather than assume an order.

Run once from this directory: python3 make_safetensors_fixture.py
"""
import json
import struct

# name -> (dtype, shape, little-endian bytes)
def bf16(x):
    # The upper half of the float32 bits; the values below are exact in bf16.
    return struct.pack("<I", struct.unpack("<I", struct.pack("<f", x))[0])[2:]

tensors = {
    "fc1.weight": ("F32", [2, 3], struct.pack("<6f", -1.0, -0.5, 0.0, 0.5, 1.0, 1.5)),
    "fc1.bias": ("F16", [2], struct.pack("<2e", 0.25, -3.0)),
    "bf": ("BF16", [3], b"".join(bf16(x) for x in (1.5, -2.0, 96.0))),
    "scalar": ("F32", [], struct.pack("<f", 3.25)),
    "empty": ("F32", [0, 4], b""),
    "ids": ("I64", [3], struct.pack("<3q", 1, -2, 3)),
}

offsets = {}
data = b""
for name in reversed(list(tensors)):
    offsets[name] = [len(data), len(data) + len(tensors[name][2])]
    data += tensors[name][2]
header = {"__metadata__": {"format": "pt", "source": "make_safetensors_fixture.py"}}
for name, (dtype, shape, _) in tensors.items():
    header[name] = {"dtype": dtype, "shape": shape, "data_offsets": offsets[name]}
text = json.dumps(header).encode("utf-8")  # ", " and ": " separators, unlike vkamp's writer
text += b" " * (-(8 + len(text)) % 8)
with open("fixtures/independent.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + data)
