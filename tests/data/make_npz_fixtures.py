#!/usr/bin/python3
# Writes the .npy/.npz fixtures for test_npy.cpp with NumPy itself (an
# independent writer), plus expected.json: each file's arrays as NumPy sees
# them (dtype, shape, values in C order). Run once with Debian's
# /usr/bin/python3 (python3-numpy); the outputs are committed and the tests
# read them without NumPy.
import json
import os

import numpy as np

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(11)
expected = {}


def record(name, **arrays):
    expected[name] = {
        key: {"dtype": a.dtype.str, "shape": list(a.shape), "values": [float(v) for v in a.ravel(order="C")]}
        for key, a in arrays.items()
    }


# float32 N x F with int64 class ids (np.savez: stored members)
x = rng.standard_normal((7, 3)).astype(np.float32)
y = rng.integers(0, 4, size=7).astype(np.int64)
y[0] = 3  # so the classes are 0..3 whatever the draw
np.savez(os.path.join(out, "table_f32.npz"), x=x, y=y)
record("table_f32.npz", x=x, y=y)

# uint8 N x H x W x C images with uint8 labels, deflated
x = rng.integers(0, 256, size=(3, 4, 5, 2), dtype=np.uint8)
y = np.array([2, 0, 1], dtype=np.uint8)
np.savez_compressed(os.path.join(out, "images_u8.npz"), x=x, y=y)
record("images_u8.npz", x=x, y=y)

# regression: y is N x 2 float32, deflated
x = rng.standard_normal((6, 2)).astype(np.float32)
y = rng.standard_normal((6, 2)).astype(np.float32)
np.savez_compressed(os.path.join(out, "regress.npz"), x=x, y=y)
record("regress.npz", x=x, y=y)

# float16 x only, as a .npy (prediction inputs)
x = (rng.standard_normal((4, 3)) * 10).astype(np.float16)
np.save(os.path.join(out, "half.npy"), x)
record("half.npy", x=x)

# int32 x in header versions 2 and 3
x = rng.integers(-1000, 1000, size=(2, 5)).astype(np.int32)
for version in (2, 3):
    with open(os.path.join(out, f"v{version}.npy"), "wb") as f:
        np.lib.format.write_array(f, x, version=(version, 0))
record("v2.npy", x=x)
record("v3.npy", x=x)

# Files the reader must refuse; and float64.npy, NumPy's default dtype,
# which it reads as float32 with a note.
np.save(os.path.join(out, "fortran.npy"), np.asfortranarray(rng.standard_normal((3, 4)).astype(np.float32)))
np.save(os.path.join(out, "big_endian.npy"), rng.standard_normal((2, 2)).astype(">f4"))
np.save(os.path.join(out, "float64.npy"), rng.standard_normal((2, 2)))
np.savez(os.path.join(out, "mismatched_n.npz"), x=np.zeros((5, 3), np.float32), y=np.zeros(4, np.int64))

with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump(expected, f, indent=1)
    f.write("\n")
