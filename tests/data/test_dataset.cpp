// Host datasets: IDX reading (plain and gzip), Fashion-MNIST when installed,
// and the synthetic regression generator.
#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "app/data_paths.hpp"
#include "support/scratch_dir.hpp"
#include "vkamp/data/data_error.hpp"
#include "vkamp/data/dataset.hpp"
#include "vkamp/data/idx.hpp"
#include "app/fashion_mnist.hpp"

namespace fs = std::filesystem;
using vkamp::data::DataError;
using vkamp::data::IdxArray;
using vkamp::data::read_idx;
using vkamp::test::ScratchDir;

namespace {

std::vector<uint8_t> idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data,
                               uint8_t type = 0x08) {
  std::vector<uint8_t> b = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(d >> s));
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

void write_plain(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << path;
}

void write_gz(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile g = gzopen(path.c_str(), "wb");
  ASSERT_NE(g, nullptr) << path;
  if (!bytes.empty()) {
    ASSERT_EQ(gzwrite(g, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  }
  ASSERT_EQ(gzclose(g), Z_OK);
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<uint8_t> pattern(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 37 + 11);
  return v;
}

// Runs read_idx and returns the DataError message, or "" when it read.
std::string idx_error(const std::string& path) {
  try {
    read_idx(path);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Idx, ReadsPlainFile) {
  const ScratchDir dir;
  const std::string path = dir.file("a-idx3-ubyte");
  const std::vector<uint8_t> data = pattern(2 * 3 * 4);
  write_plain(path, idx_bytes({2, 3, 4}, data));
  IdxArray a = read_idx(path);
  EXPECT_EQ(a.dims, (std::vector<uint32_t>{2, 3, 4}));
  EXPECT_EQ(a.data, data);
}

TEST(Idx, ReadsGzipFile) {
  const ScratchDir dir;
  const std::string path = dir.file("a-idx1-ubyte.gz");
  const std::vector<uint8_t> data = pattern(1000);
  write_gz(path, idx_bytes({1000}, data));
  // It really is compressed: the file on disk is not the IDX bytes.
  EXPECT_NE(read_file(path), idx_bytes({1000}, data));
  IdxArray a = read_idx(path);
  EXPECT_EQ(a.dims, std::vector<uint32_t>{1000});
  EXPECT_EQ(a.data, data);
}

TEST(Idx, ReadsLargeGzipFileAndBigEndianDims) {
  const ScratchDir dir;
  const std::string path = dir.file("big.gz");
  // 300 x 257 x 65: dims above 255 check the big-endian decoding, and the
  // ~5 MB of data spans many gzread calls.
  const std::vector<uint8_t> data = pattern(size_t{300} * 257 * 65);
  write_gz(path, idx_bytes({300, 257, 65}, data));
  IdxArray a = read_idx(path);
  EXPECT_EQ(a.dims, (std::vector<uint32_t>{300, 257, 65}));
  EXPECT_EQ(a.data, data);
}

TEST(Idx, ReadsEmptyArray) {
  const ScratchDir dir;
  const std::string path = dir.file("empty");
  write_plain(path, idx_bytes({0, 28, 28}, {}));
  IdxArray a = read_idx(path);
  EXPECT_EQ(a.dims, (std::vector<uint32_t>{0, 28, 28}));
  EXPECT_TRUE(a.data.empty());
}

TEST(Idx, TruncatedPlainFileNamesTheFile) {
  const ScratchDir dir;
  const std::string path = dir.file("cut-idx3-ubyte");
  const std::vector<uint8_t> full = idx_bytes({4, 5, 6}, pattern(120));
  // Every cut: inside the magic, inside the dims, inside the data.
  for (size_t len = 0; len < full.size(); ++len) {
    write_plain(path, std::vector<uint8_t>(full.begin(), full.begin() + static_cast<long>(len)));
    std::string err = idx_error(path);
    ASSERT_FALSE(err.empty()) << "cut at " << len << " read";
    EXPECT_NE(err.find(path), std::string::npos) << err;
    EXPECT_NE(err.find("truncated"), std::string::npos) << "cut at " << len << ": " << err;
  }
}

TEST(Idx, TruncatedGzipFileNamesTheFile) {
  const ScratchDir dir;
  // The IDX content is cut short, then compressed properly.
  const std::string short_gz = dir.file("short.gz");
  std::vector<uint8_t> full = idx_bytes({100, 10}, pattern(1000));
  write_gz(short_gz, std::vector<uint8_t>(full.begin(), full.end() - 10));
  std::string err = idx_error(short_gz);
  EXPECT_NE(err.find(short_gz), std::string::npos) << err;
  EXPECT_NE(err.find("truncated"), std::string::npos) << err;

  // The compressed stream itself is cut off.
  const std::string good_gz = dir.file("good.gz");
  write_gz(good_gz, idx_bytes({100, 100}, pattern(10000)));
  std::vector<uint8_t> gz = read_file(good_gz);
  const std::string cut_gz = dir.file("cut.gz");
  write_plain(cut_gz, std::vector<uint8_t>(gz.begin(), gz.begin() + static_cast<long>(gz.size() / 2)));
  err = idx_error(cut_gz);
  EXPECT_NE(err.find(cut_gz), std::string::npos) << err;
  EXPECT_NE(err.find("truncated"), std::string::npos) << err;
}

TEST(Idx, TrailingDataIsAnError) {
  const ScratchDir dir;
  const std::string path = dir.file("long");
  std::vector<uint8_t> b = idx_bytes({3}, {1, 2, 3});
  b.push_back(4);
  write_plain(path, b);
  std::string err = idx_error(path);
  EXPECT_NE(err.find("trailing data"), std::string::npos) << err;
  EXPECT_NE(err.find(path), std::string::npos) << err;
}

TEST(Idx, MissingFileNamesTheFile) {
  const ScratchDir dir;
  for (const std::string name : {"nothing-here", "nothing-here.gz"}) {
    const std::string path = dir.file(name);
    std::string err = idx_error(path);
    EXPECT_NE(err.find(path), std::string::npos) << err;
    EXPECT_NE(err.find("No such file"), std::string::npos) << err;
  }
}

TEST(Idx, WrongMagicIsNotAnIdxFile) {
  const ScratchDir dir;
  const std::string path = dir.file("text");
  const std::string text = "hello, this is not IDX";
  write_plain(path, std::vector<uint8_t>(text.begin(), text.end()));
  std::string err = idx_error(path);
  EXPECT_NE(err.find("not an IDX file"), std::string::npos) << err;
  EXPECT_NE(err.find(path), std::string::npos) << err;

  write_plain(path, idx_bytes({}, {}));  // zero dims
  EXPECT_FALSE(idx_error(path).empty());
}

TEST(Idx, WrongTypeIsNamed) {
  const ScratchDir dir;
  const std::string path = dir.file("floats");
  write_plain(path, idx_bytes({2}, pattern(8), 0x0D));  // 0x0D: float
  std::string err = idx_error(path);
  EXPECT_NE(err.find("0x0d"), std::string::npos) << err;
  EXPECT_NE(err.find(path), std::string::npos) << err;
}

TEST(Idx, AbsurdDimsDoNotAllocate) {
  const ScratchDir dir;
  const std::string path = dir.file("absurd");
  // Claims 4G x 4G x 4G bytes (overflows) and then 4 GB with 10 bytes present.
  write_plain(path, idx_bytes({0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}, pattern(10)));
  EXPECT_FALSE(idx_error(path).empty());
  write_plain(path, idx_bytes({0xFFFFFFFFu}, pattern(10)));
  EXPECT_NE(idx_error(path).find("truncated"), std::string::npos) << idx_error(path);
  const std::string gz = dir.file("absurd.gz");
  write_gz(gz, idx_bytes({0xFFFFFFFFu}, pattern(10)));
  EXPECT_NE(idx_error(gz).find("truncated"), std::string::npos) << idx_error(gz);
}

TEST(Dataset, LoadsSmallFashionMnistLayoutPlainAndGzip) {
  const ScratchDir dir;
  // Train as .gz, test as plain files: both names are looked for.
  const uint32_t n = 7;
  std::vector<uint8_t> pixels = pattern(n * 28 * 28);
  std::vector<uint8_t> labels = {0, 1, 2, 9, 3, 3, 8};
  write_gz(dir.file("train-images-idx3-ubyte.gz"), idx_bytes({n, 28, 28}, pixels));
  write_gz(dir.file("train-labels-idx1-ubyte.gz"), idx_bytes({n}, labels));
  write_plain(dir.file("t10k-images-idx3-ubyte"), idx_bytes({2, 4, 5}, pattern(40)));
  write_plain(dir.file("t10k-labels-idx1-ubyte"), idx_bytes({2}, {5, 6}));

  auto train = vkamp::app::load_fashion_mnist(dir.path.string(), false);
  EXPECT_EQ(train.count, n);
  EXPECT_EQ(train.features, 784u);
  EXPECT_EQ(train.classes, 10u);
  ASSERT_EQ(train.x.size(), size_t{n} * 784);
  for (size_t i = 0; i < pixels.size(); ++i) ASSERT_EQ(train.x[i], pixels[i] / 255.f) << i;
  EXPECT_EQ(train.y, (std::vector<uint32_t>{0, 1, 2, 9, 3, 3, 8}));

  auto test = vkamp::app::load_fashion_mnist(dir.path.string(), true);
  EXPECT_EQ(test.count, 2u);
  EXPECT_EQ(test.features, 20u);
  EXPECT_EQ(test.y, (std::vector<uint32_t>{5, 6}));
}

TEST(Dataset, RejectsBadFashionMnistLayouts) {
  const ScratchDir dir;
  const std::string d = dir.path.string();
  // Nothing there.
  EXPECT_THROW(vkamp::app::load_fashion_mnist(d, false), DataError);

  write_plain(dir.file("train-images-idx3-ubyte"), idx_bytes({3, 2, 2}, pattern(12)));
  // Label count differs from the image count.
  write_plain(dir.file("train-labels-idx1-ubyte"), idx_bytes({2}, {1, 2}));
  EXPECT_THROW(vkamp::app::load_fashion_mnist(d, false), DataError);
  // A label of 10.
  write_plain(dir.file("train-labels-idx1-ubyte"), idx_bytes({3}, {1, 10, 2}));
  try {
    vkamp::app::load_fashion_mnist(d, false);
    FAIL() << "a label of 10 was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("label 10"), std::string::npos) << e.what();
  }
  // Labels that are not 1-D.
  write_plain(dir.file("train-labels-idx1-ubyte"), idx_bytes({3, 1}, {1, 2, 3}));
  EXPECT_THROW(vkamp::app::load_fashion_mnist(d, false), DataError);
  // Images that are not 3-D.
  write_plain(dir.file("train-labels-idx1-ubyte"), idx_bytes({3}, {1, 2, 3}));
  write_plain(dir.file("train-images-idx3-ubyte"), idx_bytes({3, 4}, pattern(12)));
  EXPECT_THROW(vkamp::app::load_fashion_mnist(d, false), DataError);
  // And the fixed-up set loads.
  write_plain(dir.file("train-images-idx3-ubyte"), idx_bytes({3, 2, 2}, pattern(12)));
  EXPECT_EQ(vkamp::app::load_fashion_mnist(d, false).count, 3u);
}

namespace {
void check_real_fashion_mnist(bool test) {
  const std::string dir = vkamp::app::default_fashion_mnist_dir();
  auto data = vkamp::app::load_fashion_mnist(dir, test);
  const uint32_t n = test ? 10000 : 60000;
  EXPECT_EQ(data.count, n);
  EXPECT_EQ(data.features, 784u);
  EXPECT_EQ(data.classes, 10u);
  ASSERT_EQ(data.x.size(), size_t{n} * 784);
  ASSERT_EQ(data.y.size(), n);
  std::array<uint32_t, 10> per_class{};
  for (uint32_t label : data.y) {
    ASSERT_LT(label, 10u);
    ++per_class[label];
  }
  for (uint32_t c = 0; c < 10; ++c) EXPECT_EQ(per_class[c], n / 10) << "class " << c;
  float lo = 1, hi = 0;
  double sum = 0;
  for (float v : data.x) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  EXPECT_EQ(lo, 0.f);
  EXPECT_EQ(hi, 1.f);
  // Fashion-MNIST's mean pixel is about 0.286.
  EXPECT_NEAR(sum / double(data.x.size()), 0.286, 0.01);
}
}  // namespace

TEST(Dataset, LoadsRealFashionMnistTrain) {
  if (!fs::is_directory(vkamp::app::default_fashion_mnist_dir()))
    GTEST_SKIP() << vkamp::app::default_fashion_mnist_dir()
                 << " is missing (apt install dataset-fashion-mnist)";
  check_real_fashion_mnist(false);
}

TEST(Dataset, LoadsRealFashionMnistTest) {
  if (!fs::is_directory(vkamp::app::default_fashion_mnist_dir()))
    GTEST_SKIP() << vkamp::app::default_fashion_mnist_dir()
                 << " is missing (apt install dataset-fashion-mnist)";
  check_real_fashion_mnist(true);
}

TEST(Regression, DeterministicPerSeed) {
  auto a = vkamp::data::make_regression(200, 5, 1234, 0.1f);
  auto b = vkamp::data::make_regression(200, 5, 1234, 0.1f);
  EXPECT_EQ(a.count, 200u);
  EXPECT_EQ(a.features, 5u);
  ASSERT_EQ(a.x.size(), 1000u);
  ASSERT_EQ(a.y.size(), 200u);
  ASSERT_EQ(a.w_true.size(), 5u);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.y, b.y);
  EXPECT_EQ(a.w_true, b.w_true);
  EXPECT_EQ(a.b_true, b.b_true);
}

TEST(Regression, DifferentAcrossSeeds) {
  auto a = vkamp::data::make_regression(100, 4, 1, 0.0f);
  auto b = vkamp::data::make_regression(100, 4, 2, 0.0f);
  EXPECT_NE(a.x, b.x);
  EXPECT_NE(a.y, b.y);
  EXPECT_NE(a.w_true, b.w_true);
}

TEST(Regression, ExactWithoutNoise) {
  const uint32_t n = 500, f = 7;
  auto d = vkamp::data::make_regression(n, f, 99, 0.0f);
  for (float v : d.x) {
    ASSERT_GE(v, -1.f);
    ASSERT_LE(v, 1.f);
  }
  EXPECT_GE(d.b_true, -1.f);
  EXPECT_LE(d.b_true, 1.f);
  for (uint32_t i = 0; i < n; ++i) {
    // The documented rule: summed in double in feature order, rounded once.
    double s = 0;
    for (uint32_t j = 0; j < f; ++j) s += double{d.x[size_t{i} * f + j]} * double{d.w_true[j]};
    s += d.b_true;
    ASSERT_EQ(d.y[i], static_cast<float>(s)) << "example " << i;
  }
  // And x spreads over the range rather than sitting in a corner.
  double mean = 0, sq = 0;
  for (float v : d.x) {
    mean += v;
    sq += double{v} * v;
  }
  mean /= double(d.x.size());
  sq /= double(d.x.size());
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(sq, 1.0 / 3.0, 0.03);  // variance of U(-1, 1)
}

TEST(Regression, NoiseChangesOnlyY) {
  auto clean = vkamp::data::make_regression(2000, 3, 7, 0.0f);
  auto noisy = vkamp::data::make_regression(2000, 3, 7, 0.5f);
  EXPECT_EQ(clean.x, noisy.x);
  EXPECT_EQ(clean.w_true, noisy.w_true);
  EXPECT_EQ(clean.b_true, noisy.b_true);
  double sq = 0;
  for (size_t i = 0; i < clean.y.size(); ++i) sq += std::pow(double{noisy.y[i]} - clean.y[i], 2);
  // The residual's standard deviation is the noise level.
  EXPECT_NEAR(std::sqrt(sq / double(clean.y.size())), 0.5, 0.05);
}
