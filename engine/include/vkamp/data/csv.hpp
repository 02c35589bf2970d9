// CSV tables (RFC 4180, mostly): a header row of column names, comma
// separated, fields optionally in double quotes with "" for a quote inside
// (a quoted field may span lines), CRLF or LF line ends, a blank last line
// allowed. Feature and target columns must be numbers as strtod reads them,
// the whole field ("nan" and "inf" are numbers; "" and "abc" are errors).
#pragma once
#include <string>
#include <string_view>

#include "vkamp/data/labeled_data.hpp"

namespace vkamp::data {

// `label` names the file in errors ("data.csv:17: ...", lines 1-based).
LabeledData parse_csv(std::string_view text, const std::string& label, const LoadOptions& opt);
LabeledData read_csv(const std::string& path, const LoadOptions& opt);

}  // namespace vkamp::data
