#!/usr/bin/python3
"""Writes tests/quant/fixtures/ggml_blocks.bin.gz from ggml's own code.

ggml's quantizer (ggml_quantize_chunk, no importance matrix: the
quantize_row_*_ref functions) and its dequantizers (dequantize_row_*,
ggml_fp16_to_fp32_row, ggml_bf16_to_fp32_row), called through ctypes in the
prebuilt libggml-base.so that node-llama-cpp 3.21.1 brings. CI never runs
this; the output is committed. Run: /usr/bin/python3 tests/quant/make_fixtures.py

Layout (little-endian, gzip-compressed):
  "VKQF", u32 version 1, u32 rows R, u32 values per row N
  R * N f32: the input rows (fixed seed)
  u32 type count, then per type:
    u32 ggml type id, u32 bytes per row B
    R * B bytes: ggml's quantization of each row
    R * N f32: ggml's dequantization of those bytes
    B bytes: random blocks (every fp16 scale a finite value, some subnormal)
    N f32: ggml's dequantization of those
"""
import ctypes
import gzip
import os
import struct

import numpy as np

LIB = "/work/llamacpp/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-base.so"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "ggml_blocks.bin.gz")
N = 256  # one K block, eight 32-value blocks

# id: (name, block values, block bytes, offsets of the fp16 scales in a block)
TYPES = {
    0: ("f32", 1, 4, []),
    1: ("f16", 1, 2, []),
    30: ("bf16", 1, 2, []),
    2: ("q4_0", 32, 18, [0]),
    3: ("q4_1", 32, 20, [0, 2]),
    6: ("q5_0", 32, 22, [0]),
    7: ("q5_1", 32, 24, [0, 2]),
    8: ("q8_0", 32, 34, [0]),
    12: ("q4_K", 256, 144, [0, 2]),
    13: ("q5_K", 256, 176, [0, 2]),
    14: ("q6_K", 256, 210, [208]),
}

ggml = ctypes.CDLL(LIB)
ggml.ggml_quantize_chunk.restype = ctypes.c_size_t
ggml.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                     ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]


def ptr(a):
    return a.ctypes.data_as(ctypes.c_void_p)


def dequantize(tid, raw):
    out = np.zeros(N, dtype=np.float32)
    if tid == 0:
        return np.frombuffer(raw.tobytes(), dtype=np.float32).copy()
    fn = {1: "ggml_fp16_to_fp32_row", 30: "ggml_bf16_to_fp32_row"}.get(tid, "dequantize_row_" + TYPES[tid][0])
    getattr(ggml, fn)(ptr(raw), ptr(out), ctypes.c_int64(N))
    return out


def quantize(tid, row):
    name, bv, bb, _ = TYPES[tid]
    raw = np.zeros(N // bv * bb, dtype=np.uint8)
    written = ggml.ggml_quantize_chunk(tid, ptr(row), ptr(raw), 0, 1, N, None)
    assert written == raw.size, (name, written)
    return raw


def input_rows(rng):
    rows = []
    rows.append(rng.standard_normal(N))  # plain weights
    # Mixed: each 32-value chunk at its own magnitude (1e-4 .. 1e4), signs
    # mixed, one chunk all zero and a few zeros elsewhere.
    mixed = rng.standard_normal(N) * np.repeat(10.0 ** rng.uniform(-4, 4, N // 32), 32)
    mixed[64:96] = 0
    mixed[rng.choice(N, 8, replace=False)] = 0
    rows.append(mixed)
    rows.append(rng.standard_normal(N) * 1e-6)  # fp16-subnormal scales
    # All positive (the K types' min > 0 path) with one large chunk.
    pos = rng.uniform(0.5, 2.0, N)
    pos[160:192] *= 1e4
    rows.append(pos)
    rows.append(np.zeros(N))  # every block zero
    return [np.ascontiguousarray(r, dtype=np.float32) for r in rows]


def random_half(rng, exponent):
    return (int(rng.integers(0, 2)) << 15) | (exponent << 10) | int(rng.integers(0, 1024))


def random_blocks(rng, tid):
    name, bv, bb, scales = TYPES[tid]
    raw = rng.integers(0, 256, N // bv * bb, dtype=np.uint8)
    if tid in (1, 30):
        h = raw.view(np.uint16)
        h[:4] = [0x7C00, 0xFC01, 0x7E00, 0x0001] if tid == 1 else [0x7F80, 0xFF81, 0x7FC0, 0x0001]
    for b in range(N // bv):
        for i, off in enumerate(scales):
            # Block 0 subnormal scales; the others any finite exponent.
            e = 0 if b == 0 else int(rng.integers(0, 31))
            struct.pack_into("<H", raw, b * bb + off, random_half(rng, e))
    return raw


def main():
    rng = np.random.default_rng(20261206)
    rows = input_rows(rng)
    out = bytearray(b"VKQF" + struct.pack("<III", 1, len(rows), N))
    for r in rows:
        out += r.tobytes()
    out += struct.pack("<I", len(TYPES))
    for tid, (name, bv, bb, _) in TYPES.items():
        out += struct.pack("<II", tid, N // bv * bb)
        quantized = [quantize(tid, r) for r in rows]
        for q in quantized:
            out += q.tobytes()
        for q in quantized:
            out += dequantize(tid, q).tobytes()
        raw = random_blocks(rng, tid)
        out += raw.tobytes() + dequantize(tid, raw).tobytes()
    with open(OUT, "wb") as f:
        f.write(gzip.compress(bytes(out), 9, mtime=0))
    print(f"{OUT}: {len(out)} bytes")


if __name__ == "__main__":
    main()
