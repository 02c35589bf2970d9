// libFuzzer target for the safetensors reader and the PyTorch-layout import:
// any byte string must either parse or raise io::FormatError, never crash,
// read out of bounds (ASan) or throw anything else. scripts/fuzz.sh builds
// it with clang's libFuzzer; the replay test (replay_main.cpp) runs the
// committed corpus through it in every ctest run.
//
// The import lays parameters out through the graph model, whose op table
// reaches the GPU kernels (ops/, Vulkan, the embedded shaders): more of the
// engine than scripts/fuzz.sh builds outside CMake. So the libFuzzer build
// (VKAMP_FUZZ_READER_ONLY) fuzzes the reader alone, and the import runs in
// the CMake-built replay of the corpus.
#include <cstdint>
#include <cstdlib>
#include <exception>

#include "vkamp/io/safetensors.hpp"
#ifndef VKAMP_FUZZ_READER_ONLY
#include "vkamp/models/model_spec.hpp"
#include "vkamp/io/torch_layout.hpp"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    vkamp::io::TensorFile f = vkamp::io::parse_safetensors(data, size, "fuzz input");
    for (const auto& t : f.tensors) (void)f.floats(t.name, "fuzz input");
#ifndef VKAMP_FUZZ_READER_ONLY
    // A conv, a flatten and a Linear: every reordering the import does.
    static const vkamp::models::ModelSpec spec = vkamp::models::parse_model("4x4x2-c3k3p1r-f-5");
    (void)vkamp::io::import_torch_tensors(spec, f, "fuzz input");
#endif
  } catch (const vkamp::io::FormatError&) {
    // A clear error is the right answer to a bad file.
  } catch (const std::exception&) {
    std::abort();  // anything else is a bug the fuzzer should report
  }
  return 0;
}
