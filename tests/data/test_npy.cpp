// .npy, .npz and IDX through load_labeled: NumPy-written fixtures
// (make_npz_fixtures.py) against the values NumPy recorded, fresh random
// arrays the test writes itself, and every error naming the file and byte.
#include "support/test_paths.hpp"
#include "vkamp/data/npy.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "data/data_files.hpp"
#include "support/numerics.hpp"
#include "vkamp/data/labeled_data.hpp"
#include "vkamp/data/npz.hpp"

namespace {

using vkamp::data::LabeledData;
using vkamp::data::LoadOptions;
using vkamp::data::Task;
using vkamp::test::data_rejected;
using vkamp::test::npy_bytes;

const std::string kFixtures = VKAMP_TEST_DIR(VKAMP_DATA_FIXTURES);

std::string fixture(const std::string& name) { return kFixtures + "/" + name; }

const nlohmann::json& expected() {
  static const nlohmann::json j = nlohmann::json::parse(std::ifstream(fixture("expected.json")));
  return j;
}

std::vector<float> values(const std::string& file, const std::string& array) {
  return expected().at(file).at(array).at("values").get<std::vector<float>>();
}
std::vector<uint32_t> shape(const std::string& file, const std::string& array) {
  return expected().at(file).at(array).at("shape").get<std::vector<uint32_t>>();
}

TEST(NpyFixtures, Float32TableWithInt64Labels) {
  const LabeledData d = vkamp::data::load_labeled(fixture("table_f32.npz"), {});
  EXPECT_EQ(d.data.x, values("table_f32.npz", "x"));
  const std::vector<float> y = values("table_f32.npz", "y");
  ASSERT_EQ(d.data.labels.size(), y.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(float(d.data.labels[i]), y[i]);
  EXPECT_EQ(d.classes, (std::vector<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(d.outputs, 4u);
  EXPECT_EQ(d.example_shape, std::vector<uint32_t>{shape("table_f32.npz", "x")[1]});
  EXPECT_TRUE(d.feature_names.empty());
}

TEST(NpyFixtures, CompressedUint8ImagesAreScaledToUnit) {
  const LabeledData d = vkamp::data::load_labeled(fixture("images_u8.npz"), {});
  const std::vector<uint32_t> s = shape("images_u8.npz", "x");
  EXPECT_EQ(d.example_shape, (std::vector<uint32_t>{s[1], s[2], s[3]}));
  EXPECT_EQ(d.data.features, s[1] * s[2] * s[3]);
  const std::vector<float> pixels = values("images_u8.npz", "x");
  ASSERT_EQ(d.data.x.size(), pixels.size());
  for (size_t i = 0; i < pixels.size(); ++i) EXPECT_EQ(d.data.x[i], pixels[i] / 255.f);
  EXPECT_EQ(d.data.labels, (std::vector<uint32_t>{2, 0, 1}));
}

TEST(NpyFixtures, RegressionTargetsNByK) {
  LoadOptions opt;
  opt.task = Task::Regress;
  const LabeledData d = vkamp::data::load_labeled(fixture("regress.npz"), opt);
  EXPECT_EQ(d.data.x, values("regress.npz", "x"));
  EXPECT_EQ(d.data.targets, values("regress.npz", "y"));
  EXPECT_EQ(d.outputs, 2u);
  EXPECT_TRUE(d.data.labels.empty());
}

TEST(NpyFixtures, Float16AndHeaderVersions) {
  const LabeledData half = vkamp::data::load_labeled(fixture("half.npy"), {});
  EXPECT_EQ(half.data.x, values("half.npy", "x"));
  EXPECT_TRUE(half.data.labels.empty() && half.data.targets.empty() && half.classes.empty());
  for (const char* f : {"v2.npy", "v3.npy"}) {
    const vkamp::data::NpyArray a = vkamp::data::read_npy(fixture(f));
    EXPECT_EQ(a.dtype, vkamp::data::NpyType::I32) << f;
    EXPECT_EQ(a.to_floats(), values(f, "x")) << f;
  }
}

TEST(NpyFixtures, RefusedFiles) {
  EXPECT_TRUE(data_rejected([] { vkamp::data::read_npy(fixture("fortran.npy")); }, "fortran.npy: byte 10:",
                            "C order expected"));
  EXPECT_TRUE(data_rejected([] { vkamp::data::read_npy(fixture("big_endian.npy")); }, "big_endian.npy: byte 10:",
                            "dtype '>f4' is not read; accepted: '<f4', '<f8', '<f2', '|u1', '<i4', '<i8'"));
  // float64.npy, once refused here, is read as float32 (test_nonfinite.cpp).
  EXPECT_TRUE(data_rejected([] { vkamp::data::load_labeled(fixture("mismatched_n.npz"), {}); }, "mismatched_n.npz",
                            "x.npy holds 5 examples but " + fixture("mismatched_n.npz") + ": y.npy has shape (4,)"));
}

TEST(Npy, RandomArrayRoundTrips) {
  std::mt19937_64& rng = vkamp::test::rng();  // seeded per test; VKAMP_TEST_SEED replays
  const size_t n = 1 + rng() % 40, f = 1 + rng() % 9;
  std::vector<float> x(n * f);
  std::normal_distribution<float> normal(0.f, 1e3f);
  for (float& v : x) v = normal(rng);
  vkamp::test::ScratchDir dir;
  const std::string path = dir.write(
      "r.npy", npy_bytes("<f4", "(" + std::to_string(n) + ", " + std::to_string(f) + ")", x.data(), 4 * x.size()));
  const LabeledData d = vkamp::data::load_labeled(path, {});
  EXPECT_EQ(d.data.count, n);
  EXPECT_EQ(d.data.features, f);
  EXPECT_EQ(d.data.x, x);

  // Every cut of the file short of its end is refused as truncated (or as a
  // header that ends early), never read past.
  const std::vector<uint8_t> whole = npy_bytes("<f4", "(" + std::to_string(n) + ", " + std::to_string(f) + ")",
                                               x.data(), 4 * x.size());
  for (size_t cut : {size_t(3), size_t(9), size_t(40), whole.size() - 1}) {
    try {
      vkamp::data::parse_npy(whole.data(), cut, "cut.npy");
      ADD_FAILURE() << "accepted a file cut at " << cut;
    } catch (const vkamp::data::DataError& e) {
      EXPECT_NE(std::string(e.what()).find("cut.npy: byte "), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(data_rejected([&] { vkamp::data::parse_npy(whole.data(), whole.size() - 1, "cut.npy"); },
                            "cut.npy: byte " + std::to_string(whole.size() - 1) + ":", "truncated"));
}

TEST(NpyErrors, HeaderProblemsNameTheirByte) {
  const float v[2] = {1, 2};
  auto rejected = [&](const std::string& shape_tuple, const std::string& phrase) {
    const std::vector<uint8_t> b = npy_bytes("<f4", shape_tuple, v, sizeof v);
    return data_rejected([&] { vkamp::data::parse_npy(b.data(), b.size(), "h.npy"); }, "h.npy: byte ", phrase);
  };
  EXPECT_TRUE(rejected("(2, 1", "expected in the shape"));
  EXPECT_TRUE(rejected("(2, 5)", "truncated"));
  EXPECT_TRUE(rejected("(1,)", "trailing data"));
  EXPECT_TRUE(rejected("(99999999, 99999999)", "truncated"));
  EXPECT_TRUE(rejected("(18446744073709551615, 3)", "overflows"));
  std::vector<uint8_t> open_dict = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 12, 0};
  for (char c : std::string("{'descr': '<")) open_dict.push_back(uint8_t(c));
  EXPECT_TRUE(data_rejected([&] { vkamp::data::parse_npy(open_dict.data(), open_dict.size(), "o.npy"); },
                            "o.npy: byte 22:", "header ends before its dict closes"));
  const uint8_t not_npy[] = {'P', 'K', 3, 4, 0, 0, 0, 0};
  EXPECT_TRUE(data_rejected([&] { vkamp::data::parse_npy(not_npy, sizeof not_npy, "n.npy"); }, "n.npy: byte 0:",
                            "magic"));
}

TEST(NpyErrors, WrongShapesAndLabels) {
  vkamp::test::ScratchDir dir;
  const float v[3] = {1, 2, 3};
  const std::string flat = dir.write("flat.npy", npy_bytes("<f4", "(3,)", v, sizeof v));
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(flat, {}); }, flat, "shape (3,); x must be N x F"));
  const std::string three_d = dir.write("three.npy", npy_bytes("<f4", "(1, 3, 1)", v, sizeof v));
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(three_d, {}); }, three_d, "N x H x W x C"));

  LoadOptions regress;
  regress.task = Task::Regress;
  EXPECT_NO_THROW(vkamp::data::load_labeled(fixture("table_f32.npz"), regress));  // int labels as targets
  EXPECT_TRUE(data_rejected([] { vkamp::data::load_labeled(fixture("regress.npz"), {}); }, "regress.npz: y.npy",
                            "class ids must be integers"));
  LoadOptions two_classes;
  two_classes.classes = {"0", "1"};
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(fixture("table_f32.npz"), two_classes); },
                            "table_f32.npz: y.npy: index 0:", "label '3' is not one of the 2 classes"));
  LoadOptions other_key;
  other_key.x_key = "features";
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(fixture("table_f32.npz"), other_key); },
                            "table_f32.npz", "no member 'features.npy' (members: 'x.npy', 'y.npy')"));
  const std::string junk = dir.write("junk.npz", std::string("not a zip at all"));
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(junk, {}); }, junk, "not a readable .npz"));
}

TEST(Npz, CutArchivesAreRefused) {
  std::ifstream in(fixture("images_u8.npz"), std::ios::binary);
  const std::vector<uint8_t> whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (size_t cut = 0; cut < whole.size(); cut += 7)
    EXPECT_THROW(vkamp::data::parse_npz(whole.data(), cut, "cut.npz", {"x", "y"}), vkamp::data::DataError) << cut;
}

// An IDX pair (the Fashion-MNIST layout) through load_labeled.
TEST(Idx, ImagesFileFindsItsLabels) {
  std::mt19937_64& rng = vkamp::test::rng();  // seeded per test; VKAMP_TEST_SEED replays
  const uint8_t n = 5, h = 3, w = 2;
  std::vector<uint8_t> images = {0, 0, 8, 3, 0, 0, 0, n, 0, 0, 0, h, 0, 0, 0, w};
  std::vector<uint8_t> labels = {0, 0, 8, 1, 0, 0, 0, n};
  std::vector<uint8_t> pixels, ids;
  for (int i = 0; i < n * h * w; ++i) pixels.push_back(uint8_t(rng()));
  for (int i = 0; i < n; ++i) ids.push_back(uint8_t(rng() % 7));
  ids[0] = 6;
  images.insert(images.end(), pixels.begin(), pixels.end());
  labels.insert(labels.end(), ids.begin(), ids.end());
  vkamp::test::ScratchDir dir;
  const std::string path = dir.write("train-images-idx3-ubyte", images);
  dir.write("train-labels-idx1-ubyte", labels);
  const LabeledData d = vkamp::data::load_labeled(path, {});
  EXPECT_EQ(d.example_shape, (std::vector<uint32_t>{h, w, 1}));
  for (size_t i = 0; i < pixels.size(); ++i) EXPECT_EQ(d.data.x[i], pixels[i] / 255.f);
  EXPECT_EQ(d.data.labels, std::vector<uint32_t>(ids.begin(), ids.end()));
  EXPECT_EQ(d.classes.size(), 7u);
  EXPECT_EQ(d.outputs, 7u);

  dir.write("train-labels-idx1-ubyte", std::vector<uint8_t>{0, 0, 8, 1, 0, 0, 0, 4, 1, 2, 3, 4});
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(path, {}); }, "train-images-idx3-ubyte",
                            "holds 5 examples but"));
}

TEST(LoadLabeled, ExtensionPicksTheReader) {
  EXPECT_TRUE(data_rejected([] { vkamp::data::load_labeled("story.txt", {}); }, "story.txt", "token source"));
  EXPECT_TRUE(data_rejected([] { vkamp::data::load_labeled("data.parquet", {}); }, "data.parquet",
                            "expected .csv, .csv.gz, .npy, .npz"));
  EXPECT_TRUE(data_rejected([] { vkamp::data::load_labeled("/nonexistent/d.csv", {}); }, "/nonexistent/d.csv",
                            "cannot open"));
}

}  // namespace
