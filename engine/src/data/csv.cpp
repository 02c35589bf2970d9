// The CSV reader: a cursor hands out one record (row) at a time with the
// line it starts on, so every error can name its line even when a quoted
// field spans several; the table is built from the records after.
#include "vkamp/data/csv.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

#include "file_bytes.hpp"
#include "vkamp/data/class_ids.hpp"
#include "vkamp/data/data_error.hpp"

namespace vkamp::data {
namespace {


class CsvCursor {
 public:
  CsvCursor(std::string_view text, const std::string& label) : text_(text), label_(label) {}

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
      if (text_[pos_] == ',') {
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
    while (pos_ < text_.size() && text_[pos_] != ',' && !at_line_end()) ++pos_;
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
    if (pos_ < text_.size() && text_[pos_] != ',' && !at_line_end())
      throw DataError(label_ + ":" + std::to_string(line_) + ": after a closing quote comes '" + std::string(1, text_[pos_]) +
                      "'; a comma or the end of the line is expected");
  }

  std::string_view text_;
  const std::string& label_;
  size_t pos_ = 0, line_ = 1;
};

std::string header_list(const std::vector<std::string>& header) {
  std::string s;
  for (size_t i = 0; i < header.size(); ++i) s += (i ? ", '" : "'") + header[i] + "'";
  return s;
}

size_t column_index(const std::vector<std::string>& header, const std::string& name, const std::string& label) {
  size_t found = header.size();
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] != name) continue;
    if (found != header.size())
      throw DataError(label + ":1: column '" + name + "' appears more than once in the header");
    found = i;
  }
  if (found == header.size())
    throw DataError(label + ":1: no column '" + name + "' in the header (columns: " + header_list(header) + ")");
  return found;
}

// The whole field as strtod reads it, spaces around it allowed; "nan" and
// "inf" are numbers.
bool parse_number(const std::string& field, float& out) {
  const size_t first = field.find_first_not_of(" \t");
  if (first == std::string::npos) return false;
  const size_t last = field.find_last_not_of(" \t");
  const std::string trimmed = field.substr(first, last - first + 1);
  char* end = nullptr;
  const double v = std::strtod(trimmed.c_str(), &end);
  if (end != trimmed.c_str() + trimmed.size()) return false;
  out = static_cast<float>(v);
  return true;
}

float number_at(const std::string& field, const std::string& column, const std::string& where) {
  float v = 0;
  if (parse_number(field, v)) return v;
  if (field.find_first_not_of(" \t") == std::string::npos)
    throw DataError(where + ": column '" + column + "' is empty; a number is expected");
  throw DataError(where + ": column '" + column + "': '" + field + "' is not a number");
}

}  // namespace

LabeledData parse_csv(std::string_view text, const std::string& label, const LoadOptions& opt) {
  CsvCursor cursor(text, label);
  std::vector<std::string> header;
  size_t line = 0;
  if (!cursor.next(header, line))
    throw DataError(label + ": the file is empty; a header row of column names is expected");

  // Which columns are the label or targets; the rest, in order, are features
  // (or, when named, just those).
  auto present = [&](const std::string& name) { return std::find(header.begin(), header.end(), name) != header.end(); };
  std::vector<std::string> y_names = opt.task == Task::Classify ? std::vector<std::string>{opt.label} : opt.targets;
  if (y_names.size() == 1 && y_names[0].empty()) y_names.clear();
  const bool labeled = !opt.label_optional || y_names.empty() || std::all_of(y_names.begin(), y_names.end(), present);
  std::vector<size_t> y_columns;
  if (labeled && y_names.empty()) y_columns.push_back(header.size() - 1);
  if (labeled)
    for (const std::string& t : y_names) y_columns.push_back(column_index(header, t, label));
  std::vector<bool> is_y(header.size(), false);
  for (size_t c : y_columns) is_y[c] = true;
  std::vector<size_t> x_columns;
  LabeledData out;
  for (size_t c : y_columns) out.target_names.push_back(header[c]);
  if (!opt.features.empty()) {
    for (const std::string& f : opt.features) {
      const size_t c = column_index(header, f, label);
      if (is_y[c]) throw DataError(label + ":1: column '" + f + "' is both a feature and the label or a target");
      x_columns.push_back(c);
      out.feature_names.push_back(f);
    }
  } else {
    for (size_t c = 0; c < header.size(); ++c)
      if (!is_y[c]) {
        x_columns.push_back(c);
        out.feature_names.push_back(header[c]);
      }
  }
  if (x_columns.empty())
    throw DataError(label + ":1: no feature columns: the header has only the " +
                    std::string(opt.task == Task::Classify ? "label column" : "target columns") + " (" +
                    header_list(header) + ")");

  std::vector<std::string> fields, labels;
  std::vector<size_t> label_lines;
  uint64_t count = 0;
  while (cursor.next(fields, line)) {
    const std::string where = label + ":" + std::to_string(line);
    if (fields.size() != header.size())
      throw DataError(where + ": row has " + std::to_string(fields.size()) + " field" +
                      (fields.size() == 1 ? "" : "s") + ", the header has " + std::to_string(header.size()));
    for (size_t c : x_columns) out.data.x.push_back(number_at(fields[c], header[c], where));
    if (labeled && opt.task == Task::Classify) {
      labels.push_back(std::move(fields[y_columns[0]]));
      label_lines.push_back(line);
    } else if (labeled) {
      for (size_t c : y_columns) out.data.targets.push_back(number_at(fields[c], header[c], where));
    }
    if (++count > UINT32_MAX) throw DataError(where + ": more rows than vkamp takes (2^32 - 1)");
  }
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
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  return parse_csv(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path, opt);
}

}  // namespace vkamp::data
