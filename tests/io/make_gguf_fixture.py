#!/usr/bin/env python3
# Writes tests/io/fixtures/values.gguf with llama.cpp's own GGUF writer
# (gguf-py, from llama.cpp's source; see DESIGN section 17 for where it
# comes from): one key of every value type, arrays of numbers and strings,
# a non-default alignment, and tensors of several ggml types whose values
# test_gguf.cpp knows. CI never runs this; the file it writes is committed.
#
#   /usr/bin/python3 tests/io/make_gguf_fixture.py /path/to/llama.cpp/gguf-py
import os
import sys

import numpy as np

sys.path.insert(0, sys.argv[1])
import gguf  # noqa: E402

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "values.gguf")
w = gguf.GGUFWriter(out, "llama")  # writes general.architecture
w.add_custom_alignment(64)
w.add_uint8("t.u8", 200)
w.add_int8("t.i8", -100)
w.add_uint16("t.u16", 60000)
w.add_int16("t.i16", -30000)
w.add_uint32("t.u32", 4000000000)
w.add_int32("t.i32", -2000000000)
w.add_float32("t.f32", 0.1)
w.add_uint64("t.u64", 1 << 40)
w.add_int64("t.i64", -(1 << 40))
w.add_float64("t.f64", 0.1)
w.add_bool("t.bool", True)
w.add_string("t.string", "naïve ▁token")
w.add_array("t.strings", ["a", "", "ü▁"])
w.add_array("t.numbers", [1, 2, 3])
w.add_array("t.floats", [0.5, -1.25])

# A 3 x 64 F32 matrix (rows fastest in GGUF: dims [64, 3]), i + 0.5 j.
f32 = np.array([[j + 0.5 * i for j in range(64)] for i in range(3)], dtype=np.float32)
w.add_tensor("m.f32", f32)
w.add_tensor("m.f16", f32.astype(np.float16))
q = gguf.quants.quantize(f32, gguf.GGMLQuantizationType.Q8_0)
w.add_tensor("m.q8_0", q, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
w.add_tensor("v.f32", np.arange(5, dtype=np.float32))
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_tensors_to_file()
w.close()
print("wrote", out, os.path.getsize(out), "bytes")
