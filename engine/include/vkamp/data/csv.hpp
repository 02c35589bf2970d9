// CSV tables (RFC 4180, mostly): a header row of column names, comma
// separated, fields optionally in double quotes with "" for a quote inside
// (a quoted field may span lines), CRLF or LF line ends, a blank last line
// allowed. Feature and target columns must be numbers as strtod reads them,
// the whole field ("" and "abc" are errors; "nan", "inf" and numbers past
// float32's range are errors unless LoadOptions::allow_nonfinite).
//
// As files are exported: a UTF-8 byte-order mark at the start is dropped,
// LoadOptions picks another delimiter (a tab, ';'), a file without a header
// (columns c0, c1, ...) and lines to skip before the header; a name ending
// in .gz is inflated first.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "vkamp/data/labeled_data.hpp"

namespace vkamp::data {

// `label` names the file in errors ("data.csv:17: ...", lines 1-based,
// counted from the file's first line, skipped lines included).
LabeledData parse_csv(std::string_view text, const std::string& label, const LoadOptions& opt);
// data.csv, or data.csv.gz inflated.
LabeledData read_csv(const std::string& path, const LoadOptions& opt);

// A delimiter as a flag gives it: one character, or "\t" / "tab" for a tab.
// nullopt for anything else, and for a quote or a line end.
std::optional<char> csv_delimiter(std::string_view text);

}  // namespace vkamp::data
