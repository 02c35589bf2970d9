// libFuzzer target for the CSV reader: any bytes must parse or raise
// data::DataError, never crash or throw anything else. The first byte also
// picks the options, so one corpus reaches every column-selection path.
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "vkamp/data/csv.hpp"
#include "vkamp/data/data_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vkamp::data::LoadOptions opt;
  switch (size ? data[0] % 4 : 0) {
    case 0: break;  // classify by the last column, classes from the file
    case 1:
      opt.label = "b";
      opt.classes = {"0", "1", "a"};
      break;
    case 2: opt.task = vkamp::data::Task::Regress; break;
    case 3:
      opt.task = vkamp::data::Task::Regress;
      opt.targets = {"a", "c"};
      break;
  }
  try {
    (void)vkamp::data::parse_csv(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.csv", opt);
  } catch (const vkamp::data::DataError&) {
    // A clear error is the right answer to a bad file.
  } catch (const std::exception&) {
    std::abort();  // anything else is a bug the fuzzer should report
  }
  return 0;
}
