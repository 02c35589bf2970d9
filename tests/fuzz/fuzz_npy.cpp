// libFuzzer target for the NumPy readers: inputs starting "PK" go through
// the .npz path (libzip, then the members as .npy), the rest through the
// .npy parser; whatever parses is then made into LabeledData both ways
// (classify and regress). Anything but a DataError is a bug.
#include <cstdint>
#include <cstdlib>
#include <exception>

#include "vkamp/data/labeled_arrays.hpp"
#include "vkamp/data/npy.hpp"
#include "vkamp/data/npz.hpp"
#include "vkamp/data/data_error.hpp"

namespace {

void as_labeled(const vkamp::data::NpyArray& x, const vkamp::data::NpyArray* y) {
  for (vkamp::data::Task task : {vkamp::data::Task::Classify, vkamp::data::Task::Regress}) {
    vkamp::data::LoadOptions opt;
    opt.task = task;
    try {
      (void)vkamp::data::labeled_from_arrays(x, y, "fuzz: x.npy", "fuzz: y.npy", opt);
    } catch (const vkamp::data::DataError&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    if (size >= 2 && data[0] == 'P' && data[1] == 'K') {
      const auto arrays = vkamp::data::parse_npz(data, size, "fuzz.npz", {"x", "y"});
      as_labeled(arrays.at("x"), &arrays.at("y"));
    } else {
      const vkamp::data::NpyArray a = vkamp::data::parse_npy(data, size, "fuzz.npy");
      as_labeled(a, nullptr);
      as_labeled(a, &a);
    }
  } catch (const vkamp::data::DataError&) {
    // A clear error is the right answer to a bad file.
  } catch (const std::exception&) {
    std::abort();  // anything else is a bug the fuzzer should report
  }
  return 0;
}
