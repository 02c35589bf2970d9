// The CSV reader: a cursor hands out one record (row) at a time with the
// line it starts on, so every error can name its line even when a quoted
// field spans several; the table is built from the records after.
#include "vkamp/data/csv.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "file_bytes.hpp"
#include "finite_values.hpp"
#include "vkamp/data/class_ids.hpp"
#include "vkamp/data/data_error.hpp"

namespace vkamp::data {
namespace {

// Excel and PowerShell write one at the start of a UTF-8 file; left in, it
// would become part of the first column's name.
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

std::string delimiter_text(char c) {
  if (c == ',') return "a comma";
  if (c == '\t') return "a tab";
  return std::string("'") + c + "'";
}

class CsvCursor {
 public:
  CsvCursor(std::string_view text, const std::string& label, char delimiter)
      : text_(text), label_(label), delimiter_(delimiter) {}

  // Skips up to `n` lines as they are, quotes and all (a count line before
  // the header is not CSV); returns how many there were.
  size_t skip_lines(size_t n) {
    size_t skipped = 0;
    while (skipped < n && pos_ < text_.size()) {
      const size_t end = text_.find('\n', pos_);
      pos_ = end == std::string_view::npos ? text_.size() : end + 1;
      ++line_;
      ++skipped;
    }
    return skipped;
  }

  // The next record's fields and the line it starts on; false at the end
  // (blank lines at the end of the file are not a record).
  bool next(std::vector<std::string>& fields, size_t& line) {
    if (text_.find_first_not_of("\r\n", pos_) == std::string_view::npos) return false;
    fields.clear();
    line = line_;
    while (true) {
      fields.emplace_back();
      std::string& field = fields.back();
      if (pos_ < text_.size() && text_[pos_] == '"')
        read_quoted(field);
      else
        read_plain(field);
      if (pos_ >= text_.size()) return true;
      if (text_[pos_] == delimiter_) {
        ++pos_;
        continue;
      }
      skip_line_end();
      return true;
    }
  }

 private:
  bool at_line_end() const {
    return text_[pos_] == '\n' || (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n');
  }
  void skip_line_end() {
    pos_ += text_[pos_] == '\r' ? 2 : 1;
    ++line_;
  }
  void read_plain(std::string& field) {
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != delimiter_ && !at_line_end()) ++pos_;
    field.assign(text_.substr(start, pos_ - start));
  }
  void read_quoted(std::string& field) {
    const size_t opened_on = line_;
    ++pos_;  // the opening quote
    while (true) {
      if (pos_ >= text_.size())
        throw DataError(label_ + ":" + std::to_string(opened_on) +
                        ": a quoted field opens here and never closes (a '\"' is missing)");
      const char c = text_[pos_++];
      if (c == '"') {
        if (pos_ < text_.size() && text_[pos_] == '"') {  // "" is a quote inside the field
          field += '"';
          ++pos_;
          continue;
        }
        break;
      }
      if (c == '\n') ++line_;
      field += c;
    }
    if (pos_ < text_.size() && text_[pos_] != delimiter_ && !at_line_end())
      throw DataError(label_ + ":" + std::to_string(line_) + ": after a closing quote comes '" + std::string(1, text_[pos_]) +
                      "'; " + delimiter_text(delimiter_) + " or the end of the line is expected");
  }

  std::string_view text_;
  const std::string& label_;
  char delimiter_;
  size_t pos_ = 0, line_ = 1;
};

// The column names, from the header row or (without one) c0, c1, ...;
// `where` is "data.csv:LINE" of the header, or of the first row.
struct Columns {
  std::vector<std::string> names;
  std::string where;
  bool from_header = true;
  std::string hint;  // said after a missing column's error (a header of numbers: --skip-rows 1?)

  std::string list() const {
    std::string s;
    for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
    return s;
  }

  size_t index(const std::string& name) const {
    size_t found = names.size();
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] != name) continue;
      if (found != names.size())
        throw DataError(where + ": column '" + name + "' appears more than once in the header");
      found = i;
    }
    if (found == names.size())
      throw DataError(where + ": no column '" + name + "' " +
                      (from_header ? "in the header (columns: " + list() + ")"
                                   : "(without a header the columns are named c0 .. c" +
                                         std::to_string(names.size() - 1) + ")") +
                      hint);
    return found;
  }
};

// The whole field as strtod reads it, spaces around it allowed; nullopt
// when it is not a number. `overflowed`: too large even for a double.
std::optional<double> parse_number(const std::string& field, bool& overflowed) {
  const size_t first = field.find_first_not_of(" \t");
  if (first == std::string::npos) return std::nullopt;
  const size_t last = field.find_last_not_of(" \t");
  const std::string trimmed = field.substr(first, last - first + 1);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(trimmed.c_str(), &end);
  if (end != trimmed.c_str() + trimmed.size()) return std::nullopt;
  overflowed = errno == ERANGE && std::isinf(v);
  return v;
}

float number_at(const std::string& field, const std::string& column, const std::string& where, bool allow_nonfinite) {
  bool overflowed = false;
  const std::optional<double> v = parse_number(field, overflowed);
  if (!v) {
    if (field.find_first_not_of(" \t") == std::string::npos)
      throw DataError(where + ": column '" + column + "' is empty; a number is expected");
    throw DataError(where + ": column '" + column + "': '" + field + "' is not a number");
  }
  const float f = to_float32(*v);
  if (std::isfinite(f) || allow_nonfinite) return f;
  throw DataError(where + ": column '" + column + "': '" + field + "' " + nonfinite_reason(*v, overflowed) + "; " +
                  kNonfiniteAdvice);
}

bool ends_with_gz(const std::string& path) {
  if (path.size() < 3) return false;
  std::string tail = path.substr(path.size() - 3);
  std::transform(tail.begin(), tail.end(), tail.begin(), [](unsigned char c) { return std::tolower(c); });
  return tail == ".gz";
}

}  // namespace

std::optional<char> csv_delimiter(std::string_view text) {
  if (text == "\\t" || text == "tab" || text == "TAB") return '\t';
  if (text.size() != 1 || text[0] == '"' || text[0] == '\n' || text[0] == '\r') return std::nullopt;
  return text[0];
}

LabeledData parse_csv(std::string_view text, const std::string& label, const LoadOptions& opt) {
  if (text.substr(0, kUtf8Bom.size()) == kUtf8Bom) text.remove_prefix(kUtf8Bom.size());
  CsvCursor cursor(text, label, opt.delimiter);
  const size_t skipped = cursor.skip_lines(opt.skip_rows);
  std::vector<std::string> first;
  size_t line = 0;
  if (!cursor.next(first, line)) {
    if (opt.skip_rows && skipped < opt.skip_rows)
      throw DataError(label + ": the file has " + std::to_string(skipped) + " line" + (skipped == 1 ? "" : "s") +
                      ", fewer than the " + std::to_string(opt.skip_rows) + " to skip before the header");
    if (opt.skip_rows)
      throw DataError(label + ": nothing after the " + std::to_string(skipped) + " skipped lines; " +
                      (opt.header ? "a header row of column names" : "rows of numbers") + " is expected");
    throw DataError(label + ": the file is empty; " +
                    (opt.header ? "a header row of column names is expected" : "rows of numbers are expected"));
  }
  Columns header;
  header.where = label + ":" + std::to_string(line);
  header.from_header = opt.header;
  if (opt.header) {
    header.names = std::move(first);
    first.clear();
  } else {
    for (size_t c = 0; c < first.size(); ++c) header.names.push_back("c" + std::to_string(c));
  }

  // scikit-learn's files open with a count line ("150,4,setosa,...") where a
  // header is expected: a named column is then missing, or the first row
  // fails, and either message says why.
  bool overflowed = false;
  if (opt.header && header.names.size() >= 2 && parse_number(header.names[0], overflowed) &&
      parse_number(header.names[1], overflowed))
    header.hint = " (the header, " + header.where + ", is numbers, not column names: a count line to skip with "
                  "--skip-rows 1?)";

  // Which columns are the label or targets; the rest, in order, are features
  // (or, when named, just those).
  const std::vector<std::string>& names = header.names;
  auto present = [&](const std::string& name) { return std::find(names.begin(), names.end(), name) != names.end(); };
  std::vector<std::string> y_names = opt.task == Task::Classify ? std::vector<std::string>{opt.label} : opt.targets;
  if (y_names.size() == 1 && y_names[0].empty()) y_names.clear();
  const bool labeled = !opt.label_optional || y_names.empty() || std::all_of(y_names.begin(), y_names.end(), present);
  std::vector<size_t> y_columns;
  if (labeled && y_names.empty()) y_columns.push_back(names.size() - 1);
  if (labeled)
    for (const std::string& t : y_names) y_columns.push_back(header.index(t));
  std::vector<bool> is_y(names.size(), false);
  for (size_t c : y_columns) is_y[c] = true;
  std::vector<size_t> x_columns;
  LabeledData out;
  for (size_t c : y_columns) out.target_names.push_back(names[c]);
  if (!opt.features.empty()) {
    for (const std::string& f : opt.features) {
      const size_t c = header.index(f);
      if (is_y[c])
        throw DataError(header.where + ": column '" + f + "' is both a feature and the label or a target");
      x_columns.push_back(c);
      out.feature_names.push_back(f);
    }
  } else {
    for (size_t c = 0; c < names.size(); ++c)
      if (!is_y[c]) {
        x_columns.push_back(c);
        out.feature_names.push_back(names[c]);
      }
  }
  if (x_columns.empty())
    throw DataError(header.where + ": no feature columns: the " + (opt.header ? "header" : "first row") +
                    " has only the " + (opt.task == Task::Classify ? "label column" : "target columns") + " (" +
                    header.list() + ")");

  std::vector<std::string> labels;
  std::vector<size_t> label_lines;
  uint64_t count = 0;
  // A row whose label (or a target) cell is blank has no label: an error
  // naming the cell, or (drop_unlabelled) left out once its features read.
  auto unlabelled_column = [&](const std::vector<std::string>& fields) -> const std::string* {
    if (!labeled) return nullptr;
    for (size_t c : y_columns)
      if (is_blank_label(fields[c])) return &names[c];
    return nullptr;
  };
  auto read_row = [&](std::vector<std::string>& fields, size_t row_line) {
    const std::string where = label + ":" + std::to_string(row_line);
    if (fields.size() != names.size())
      throw DataError(where + ": row has " + std::to_string(fields.size()) + " field" +
                      (fields.size() == 1 ? "" : "s") + ", the " + (opt.header ? "header has " : "first row has ") +
                      std::to_string(names.size()));
    const std::string* blank = unlabelled_column(fields);
    if (blank && !opt.drop_unlabelled)
      throw DataError(where + ": column '" + *blank + "' is empty; " +
                      (opt.task == Task::Classify ? std::string(kUnlabelledAdvice)
                                                  : "a target is expected (--drop-unlabelled leaves rows without "
                                                    "one out and counts them)"));
    const size_t row_start = out.data.x.size();
    for (size_t c : x_columns) out.data.x.push_back(number_at(fields[c], names[c], where, opt.allow_nonfinite));
    if (blank) {
      out.data.x.resize(row_start);
      ++out.dropped_unlabelled;
      return;
    }
    if (labeled && opt.task == Task::Classify) {
      labels.push_back(std::move(fields[y_columns[0]]));
      label_lines.push_back(row_line);
    } else if (labeled) {
      for (size_t c : y_columns)
        out.data.targets.push_back(number_at(fields[c], names[c], where, opt.allow_nonfinite));
    }
    if (++count > UINT32_MAX) throw DataError(where + ": more rows than vkamp takes (2^32 - 1)");
  };
  // A count line read as the header: the first row fails, and says why.
  auto add_row = [&](std::vector<std::string>& fields, size_t row_line) {
    try {
      read_row(fields, row_line);
    } catch (const DataError& e) {
      if (count > 0 || header.hint.empty()) throw;
      throw DataError(std::string(e.what()) + header.hint);
    }
  };
  if (!opt.header) add_row(first, line);
  for (std::vector<std::string> fields; cursor.next(fields, line);) add_row(fields, line);
  if (count == 0 && out.dropped_unlabelled)
    throw DataError(label + ": every one of its " + std::to_string(out.dropped_unlabelled) + " rows has an empty " +
                    (opt.task == Task::Classify ? "label" : "target") + "; there are no rows to use");
  if (count == 0) throw DataError(label + ": no data rows after the header");

  out.data.count = static_cast<uint32_t>(count);
  out.data.features = static_cast<uint32_t>(x_columns.size());
  out.example_shape = {out.data.features};
  if (!labeled) {
    out.classes = opt.classes;
    out.outputs = static_cast<uint32_t>(opt.task == Task::Classify ? opt.classes.size() : y_names.size());
  } else if (opt.task == Task::Classify) {
    ClassIds ids = number_classes(labels, opt.classes,
                                  [&](size_t i) { return label + ":" + std::to_string(label_lines[i]); });
    out.data.labels = std::move(ids.ids);
    out.classes = std::move(ids.classes);
    out.outputs = static_cast<uint32_t>(out.classes.size());
  } else {
    out.outputs = static_cast<uint32_t>(y_columns.size());
  }
  return out;
}

LabeledData read_csv(const std::string& path, const LoadOptions& opt) {
  const std::vector<uint8_t> bytes = ends_with_gz(path) ? read_gzip_bytes(path) : read_file_bytes(path);
  return parse_csv(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path, opt);
}

}  // namespace vkamp::data
