// libFuzzer target for the safetensors reader and the PyTorch-layout import:
// any byte string must either parse or raise io::FormatError, never crash,
// read out of bounds (ASan) or throw anything else. scripts/fuzz.sh builds
// it with clang's libFuzzer; the replay test (replay_main.cpp) runs the
// committed corpus through it in every ctest run.
#include <cstdint>
#include <cstdlib>
#include <exception>

#include "vkamp/io/safetensors.hpp"
#include "vkamp/train/model_spec.hpp"
#include "vkamp/train/torch_layout.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A conv, a flatten and a Linear: every reordering the import does.
  static const vkamp::train::ModelSpec spec = vkamp::train::parse_model("4x4x2-c3k3p1r-f-5");
  try {
    vkamp::io::TensorFile f = vkamp::io::parse_safetensors(data, size, "fuzz input");
    for (const auto& t : f.tensors) (void)f.floats(t.name, "fuzz input");
    (void)vkamp::train::import_torch_tensors(spec, f, "fuzz input");
  } catch (const vkamp::io::FormatError&) {
    // A clear error is the right answer to a bad file.
  } catch (const std::exception&) {
    std::abort();  // anything else is a bug the fuzzer should report
  }
  return 0;
}
