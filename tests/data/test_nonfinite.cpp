// Non-finite values are data errors at load, in every reader that reads
// floats: NaN, infinities and numbers past float32's range (1e400 in a CSV
// cell, 1e300 in a float64 array), each naming the file and the line and
// column (CSV) or the index (NumPy), unless LoadOptions::allow_nonfinite.
// Also float64 arrays, read as float32 with one note per file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "data/data_files.hpp"
#include "support/numerics.hpp"
#include "support/test_paths.hpp"
#include "vkamp/data/csv.hpp"
#include "vkamp/data/labeled_arrays.hpp"
#include "vkamp/data/labeled_data.hpp"
#include "vkamp/data/npy.hpp"
#include "vkamp/float_formats.hpp"

namespace {

using vkamp::data::LabeledData;
using vkamp::data::LoadOptions;
using vkamp::data::NpyArray;
using vkamp::data::NpyType;
using vkamp::data::Task;
using vkamp::test::data_rejected;
using vkamp::test::npy_bytes;

LabeledData parse(const std::string& csv, const LoadOptions& opt = {}) {
  return vkamp::data::parse_csv(csv, "data.csv", opt);
}

// A table of `rows` rows "a,b,y" of small numbers, with `cell` put in
// column `column` of row `row` (0-based); returns the CSV.
std::string table_with(size_t rows, size_t row, size_t column, const std::string& cell) {
  std::string csv = "a,b,y\n";
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < 3; ++c)
      csv += (r == row && c == column ? cell : std::to_string(r + c)) + (c == 2 ? "\n" : ",");
  return csv;
}

struct Case {
  const char* cell;
  const char* reason;
};
const Case kCases[] = {
    {"nan", "is NaN"},           {"NaN", "is NaN"},       {"-nan", "is NaN"},
    {"inf", "is infinite"},      {"-Infinity", "is infinite"},
    {"1e400", "is beyond float32's range"}, {"-1e39", "is beyond float32's range"},
    {" 3.5e38 ", "is beyond float32's range"},
};

TEST(NonFinite, CsvCellsNameTheirLineAndColumn) {
  std::mt19937_64& rng = vkamp::test::rng();  // seeded per test; VKAMP_TEST_SEED replays
  for (const Case& c : kCases) {
    const size_t row = rng() % 30;
    const std::string where = "data.csv:" + std::to_string(row + 2) + ": column 'b': '";
    EXPECT_TRUE(data_rejected([&] { parse(table_with(30, row, 1, c.cell)); }, where + c.cell + "' " + c.reason,
                              "; features and targets must be finite numbers (--allow-nonfinite lets them through)"))
        << c.cell;
    // A regression target too.
    LoadOptions regress;
    regress.task = Task::Regress;
    EXPECT_TRUE(data_rejected([&] { parse(table_with(30, row, 2, c.cell), regress); },
                              "data.csv:" + std::to_string(row + 2) + ": column 'y'", c.reason))
        << c.cell;
  }
  // The largest float and tiny numbers are finite.
  const LabeledData edge = parse("a,y\n3.4028234e38,1\n-1e-50,2\n");
  EXPECT_EQ(edge.data.x[0], std::numeric_limits<float>::max());
  EXPECT_EQ(edge.data.x[1], -0.f);
}

TEST(NonFinite, AllowedThroughWhenAsked) {
  LoadOptions allow;
  allow.allow_nonfinite = true;
  const LabeledData d = parse("a,b,kind\nnan,1e400,x\n-inf,2,y\n", allow);
  EXPECT_TRUE(std::isnan(d.data.x[0]));
  EXPECT_EQ(d.data.x[1], INFINITY);
  EXPECT_EQ(d.data.x[2], -INFINITY);
  EXPECT_EQ(d.data.x[3], 2.f);
}

TEST(NonFinite, ArraysNameTheIndexRowAndColumn) {
  std::mt19937_64& rng = vkamp::test::rng();
  vkamp::test::ScratchDir dir;
  const size_t rows = 7, cols = 4, at = rng() % (rows * cols);
  const std::string where = "index " + std::to_string(at) + " (row " + std::to_string(at / cols) + ", column " +
                            std::to_string(at % cols) + "): ";
  const std::string shape = "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";

  std::vector<float> f32(rows * cols, 0.5f);
  f32[at] = NAN;
  const std::string nan_path = dir.write("nan.npy", npy_bytes("<f4", shape, f32.data(), 4 * f32.size()));
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(nan_path, {}); }, nan_path + ": " + where, "nan is NaN"));

  std::vector<uint16_t> f16(rows * cols, vkamp::f32_to_fp16(1.f));
  f16[at] = 0xFC00;  // -inf
  const std::string inf_path = dir.write("inf.npy", npy_bytes("<f2", shape, f16.data(), 2 * f16.size()));
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(inf_path, {}); }, inf_path + ": " + where, "-inf is infinite"));

  std::vector<double> f64(rows * cols, 2.0);
  f64[at] = -1e300;
  const std::string big_path = dir.write("big.npy", npy_bytes("<f8", shape, f64.data(), 8 * f64.size()));
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(big_path, {}); }, big_path + ": " + where,
                            "-1e+300 is beyond float32's range"));

  LoadOptions allow;
  allow.allow_nonfinite = true;
  EXPECT_EQ(vkamp::data::load_labeled(big_path, allow).data.x[at], -INFINITY);

  // Regression targets, N x K: the index counts K per row.
  NpyArray x{NpyType::F32, {3, 1}, {}}, y{NpyType::F32, {3, 2}, {}};
  const float xs[3] = {1, 2, 3}, ys[6] = {1, 2, 3, INFINITY, 5, 6};
  x.bytes.assign(reinterpret_cast<const uint8_t*>(xs), reinterpret_cast<const uint8_t*>(xs) + sizeof xs);
  y.bytes.assign(reinterpret_cast<const uint8_t*>(ys), reinterpret_cast<const uint8_t*>(ys) + sizeof ys);
  LoadOptions regress;
  regress.task = Task::Regress;
  EXPECT_TRUE(data_rejected([&] { vkamp::data::labeled_from_arrays(x, &y, "d.npz: x.npy", "d.npz: y.npy", regress); },
                            "d.npz: y.npy: index 3 (row 1, column 1): ", "inf is infinite"));
}

TEST(Float64, ArraysAreReadAsFloat32WithOneNote) {
  std::mt19937_64& rng = vkamp::test::rng();
  std::normal_distribution<double> normal(0, 1e3);
  const size_t rows = 1 + rng() % 20, cols = 1 + rng() % 5;
  std::vector<double> v(rows * cols);
  for (double& e : v) e = normal(rng);
  vkamp::test::ScratchDir dir;
  const std::string path = dir.write(
      "x.npy", npy_bytes("<f8", "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")", v.data(), 8 * v.size()));
  const LabeledData d = vkamp::data::load_labeled(path, {});
  ASSERT_EQ(d.data.x.size(), v.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(d.data.x[i], static_cast<float>(v[i])) << i;
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0], path + ": float64 values read as float32");
  EXPECT_TRUE(vkamp::data::load_labeled(dir.write("f.npy", npy_bytes("<f4", "(1, 1)", "\0\0\0\0", 4)), {})
                  .notes.empty());
}

TEST(Float64, NumPysOwnFileReads) {
  // np.save of rng.standard_normal((2, 2)): float64, NumPy's default.
  const std::string path = VKAMP_TEST_DIR(VKAMP_DATA_FIXTURES) + std::string("/float64.npy");
  const NpyArray a = vkamp::data::read_npy(path);
  EXPECT_EQ(a.dtype, NpyType::F64);
  const std::vector<float> f = a.to_floats();
  ASSERT_EQ(f.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(f[i], static_cast<float>(a.at(i)));
    EXPECT_LT(std::fabs(a.at(i)), 10.0) << "standard normal values";
  }
  EXPECT_EQ(vkamp::data::load_labeled(path, {}).notes.size(), 1u);
}

TEST(Float64, NpzTargetsAndLabels) {
  NpyArray x{NpyType::F64, {2, 1}, {}}, y{NpyType::F64, {2}, {}};
  const double xs[2] = {0.25, 1e-3}, ys[2] = {1.5, 2.5};
  x.bytes.assign(reinterpret_cast<const uint8_t*>(xs), reinterpret_cast<const uint8_t*>(xs) + sizeof xs);
  y.bytes.assign(reinterpret_cast<const uint8_t*>(ys), reinterpret_cast<const uint8_t*>(ys) + sizeof ys);
  LoadOptions regress;
  regress.task = Task::Regress;
  const LabeledData d = vkamp::data::labeled_from_arrays(x, &y, "d.npz: x.npy", "d.npz: y.npy", regress);
  EXPECT_EQ(d.data.x, (std::vector<float>{0.25f, 1e-3f}));
  EXPECT_EQ(d.data.targets, (std::vector<float>{1.5f, 2.5f}));
  // Class ids must still be integers.
  EXPECT_TRUE(data_rejected([&] { vkamp::data::labeled_from_arrays(x, &y, "d.npz: x.npy", "d.npz: y.npy", {}); },
                            "d.npz: y.npy", "dtype '<f8'; class ids must be integers"));
}

}  // namespace
