// libFuzzer target for the CSV reader: any bytes must parse or raise
// data::DataError, never crash or throw anything else. The first byte also
// picks the options, so one corpus reaches every column-selection path and
// the exported-file options (delimiter, no header, skipped lines).
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "vkamp/data/csv.hpp"
#include "vkamp/data/data_error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vkamp::data::LoadOptions opt;
  switch (size ? data[0] % 8 : 0) {
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
    case 4:  // as exported: tabs, no header
      opt.delimiter = '\t';
      opt.header = false;
      break;
    case 5:
      opt.skip_rows = 1;
      opt.allow_nonfinite = true;
      break;
    case 6:
      opt.delimiter = ';';
      opt.skip_rows = 2;
      opt.label = "c1";
      opt.header = false;
      break;
    case 7:
      opt.task = vkamp::data::Task::Regress;
      opt.header = false;
      opt.targets = {"c0"};
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
