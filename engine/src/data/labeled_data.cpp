// load_labeled: the reader by file name. IDX images reuse the array path
// (labeled_arrays.cpp) so images from IDX and from NumPy come out the same.
#include "vkamp/data/labeled_data.hpp"

#include <algorithm>
#include <cctype>

#include "file_bytes.hpp"
#include "vkamp/data/csv.hpp"
#include "vkamp/data/labeled_arrays.hpp"
#include "vkamp/data/npy.hpp"
#include "vkamp/data/npz.hpp"
#include "vkamp/data/data_error.hpp"
#include "vkamp/data/idx.hpp"

namespace vkamp::data {
namespace {


bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

NpyArray idx_as_array(data::IdxArray idx) {
  NpyArray a;
  a.dtype = NpyType::U8;
  a.shape.assign(idx.dims.begin(), idx.dims.end());
  a.bytes = std::move(idx.data);
  return a;
}

// NumPy writes float64 unless told otherwise: it is read as float32 (what
// vkamp computes in at most), and said so once per file. `arrays` are the
// members of an .npz by name, or the one array of an .npy with no name.
void note_float64(const std::string& path, const std::vector<std::pair<std::string, const NpyArray*>>& arrays,
                  LabeledData& out) {
  std::vector<std::string> wide;
  for (const auto& [name, a] : arrays)
    if (a && a->dtype == NpyType::F64) wide.push_back(name);
  if (wide.empty()) return;
  std::string which = wide[0].empty() ? "float64 values" : wide[0];
  for (size_t i = 1; i < wide.size(); ++i) which += " and " + wide[i];
  if (!wide[0].empty()) which += std::string(wide.size() > 1 ? " are" : " is") + " float64,";
  out.notes.push_back(path + ": " + which + " read as float32");
}

LabeledData load_idx_pair(const std::string& images_path, const LoadOptions& opt) {
  std::string labels_path = images_path;
  labels_path.replace(labels_path.rfind("images-idx3"), 11, "labels-idx1");
  NpyArray images = idx_as_array(data::read_idx(images_path));
  if (images.shape.size() == 3) images.shape.push_back(1);  // N x H x W: one channel
  if (images.shape.size() != 4)
    throw DataError(images_path + ": " + std::to_string(images.shape.size()) +
                    " dimensions; images are N x H x W (or N x H x W x C)");
  const NpyArray labels = idx_as_array(data::read_idx(labels_path));
  if (labels.shape.size() != 1)
    throw DataError(labels_path + ": " + std::to_string(labels.shape.size()) + " dimensions; labels are 1-D");
  return labeled_from_arrays(images, &labels, images_path, labels_path, opt);
}

// Every reader by file name; load_labeled adds what they all report.
LabeledData read_labeled(const std::string& path, const LoadOptions& opt) {
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ends_with(lower, ".csv") || ends_with(lower, ".csv.gz")) return read_csv(path, opt);
  if (ends_with(lower, ".npy")) {
    const NpyArray x = read_npy(path);
    LabeledData out = labeled_from_arrays(x, nullptr, path, "", opt);
    note_float64(path, {{"", &x}}, out);
    return out;
  }
  if (ends_with(lower, ".npz")) {
    const std::vector<uint8_t> bytes = read_file_bytes(path);
    const auto arrays = opt.label_optional ? parse_npz(bytes.data(), bytes.size(), path, {opt.x_key}, {opt.y_key})
                                           : parse_npz(bytes.data(), bytes.size(), path, {opt.x_key, opt.y_key});
    const auto y = arrays.find(opt.y_key);
    const NpyArray* y_array = y == arrays.end() ? nullptr : &y->second;
    LabeledData out = labeled_from_arrays(arrays.at(opt.x_key), y_array, path + ": " + opt.x_key + ".npy",
                                          path + ": " + opt.y_key + ".npy", opt);
    note_float64(path, {{opt.x_key + ".npy", &arrays.at(opt.x_key)}, {opt.y_key + ".npy", y_array}}, out);
    return out;
  }
  if (path.find("images-idx3") != std::string::npos) return load_idx_pair(path, opt);
  if (ends_with(lower, ".txt"))
    throw DataError(path + ": a .txt file is a token source for text models, not labeled data");
  throw DataError(path + ": unknown kind of data file; expected .csv, .csv.gz, .npy, .npz or an IDX images file "
                  "(...-images-idx3-ubyte[.gz])");
}

}  // namespace

LabeledData load_labeled(const std::string& path, const LoadOptions& opt) {
  LabeledData out = read_labeled(path, opt);
  if (out.dropped_unlabelled)
    out.notes.push_back(path + ": " + std::to_string(out.dropped_unlabelled) + " row" +
                        (out.dropped_unlabelled == 1 ? "" : "s") + " without a " +
                        (opt.task == Task::Classify ? "label" : "target") + " left out (--drop-unlabelled)");
  return out;
}

}  // namespace vkamp::data
