#include "app/fashion_mnist.hpp"

#include <cstdint>
#include <filesystem>

#include "vkamp/data/data_error.hpp"
#include "vkamp/data/idx.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::app {

using data::ClassificationData;
using data::DataError;
using data::IdxArray;
using data::read_idx;

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string pick_file(const std::string& dir, const std::string& base) {
  const std::string prefix = dir.empty() ? std::string() : (ends_with(dir, "/") ? dir : dir + "/");
  const std::string gz = prefix + base + ".gz";
  const std::string plain = prefix + base;
  std::error_code ec;
  if (std::filesystem::exists(platform::path_from_utf8(gz), ec)) return gz;
  if (std::filesystem::exists(platform::path_from_utf8(plain), ec)) return plain;
  // Says what to fetch and where it goes, on any OS: the Windows package
  // may have been made without the data (scripts/package-windows.sh).
  throw DataError("cannot find " + gz + " or " + plain +
                  " (Fashion-MNIST: put its four IDX files, from "
                  "https://github.com/zalandoresearch/fashion-mnist, in " +
                  (dir.empty() ? std::string(".") : dir) +
                  ", or name their folder with --data; on Debian: apt install dataset-fashion-mnist)");
}
}  // namespace

ClassificationData load_fashion_mnist(const std::string& dir, bool test) {
  const std::string stem = test ? "t10k" : "train";
  const std::string images_path = pick_file(dir, stem + "-images-idx3-ubyte");
  const std::string labels_path = pick_file(dir, stem + "-labels-idx1-ubyte");
  IdxArray images = read_idx(images_path);
  IdxArray labels = read_idx(labels_path);

  if (images.dims.size() != 3)
    throw DataError(images_path + " has " + std::to_string(images.dims.size()) +
                    " dimensions; images must be N x H x W");
  if (labels.dims.size() != 1)
    throw DataError(labels_path + " has " + std::to_string(labels.dims.size()) +
                    " dimensions; labels must be 1-D");
  const uint32_t n = images.dims[0];
  if (labels.dims[0] != n)
    throw DataError(images_path + " holds " + std::to_string(n) + " images but " + labels_path +
                    " holds " + std::to_string(labels.dims[0]) + " labels");
  const uint64_t features = uint64_t{images.dims[1]} * images.dims[2];
  if (features == 0 || features > UINT32_MAX)
    throw DataError(images_path + " has images of " + std::to_string(images.dims[1]) + "x" +
                    std::to_string(images.dims[2]) + " pixels; that is not a usable size");

  constexpr uint32_t kClasses = 10;
  ClassificationData out;
  out.count = n;
  out.features = static_cast<uint32_t>(features);
  out.classes = kClasses;
  out.y.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (labels.data[i] >= kClasses)
      throw DataError(labels_path + ": label " + std::to_string(labels.data[i]) + " at index " +
                      std::to_string(i) + " is not below " + std::to_string(kClasses));
    out.y[i] = labels.data[i];
  }
  out.x.resize(images.data.size());
  for (size_t i = 0; i < images.data.size(); ++i) out.x[i] = images.data[i] / 255.f;
  return out;
}
}  // namespace vkamp::app
