// The CSV reader: values and labels on fresh random tables the test writes,
// the quoting rules, and every error naming the file, line and column.
#include "vkamp/data/csv.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "data/data_files.hpp"
#include "support/numerics.hpp"
#include "vkamp/data/class_ids.hpp"
#include "vkamp/data/labeled_data.hpp"

namespace {

using vkamp::data::LabeledData;
using vkamp::data::LoadOptions;
using vkamp::data::Task;
using vkamp::test::data_rejected;

std::string number_text(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", double(v));  // 9 digits: every float round-trips
  return buf;
}

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<float>> x;    // feature columns only
  std::vector<std::string> labels;      // the last column
  std::string csv;
};

// `rows` rows of `features` random numbers and a label drawn from `names`.
Table random_table(std::mt19937_64& rng, size_t rows, size_t features, const std::vector<std::string>& names) {
  Table t;
  std::normal_distribution<float> normal(0.f, 100.f);
  std::uniform_int_distribution<size_t> pick(0, names.size() - 1);
  for (size_t j = 0; j < features; ++j) t.header.push_back("f" + std::to_string(j));
  t.header.push_back("label");
  for (size_t j = 0; j < t.header.size(); ++j) t.csv += (j ? "," : "") + t.header[j];
  t.csv += "\n";
  for (size_t i = 0; i < rows; ++i) {
    t.x.emplace_back();
    for (size_t j = 0; j < features; ++j) {
      t.x.back().push_back(normal(rng));
      t.csv += number_text(t.x.back().back()) + ",";
    }
    t.labels.push_back(names[pick(rng)]);
    t.csv += t.labels.back() + "\n";
  }
  return t;
}

void expect_x(const LabeledData& d, const Table& t) {
  ASSERT_EQ(d.data.count, t.x.size());
  ASSERT_EQ(d.data.features, t.x[0].size());
  for (size_t i = 0; i < t.x.size(); ++i)
    for (size_t j = 0; j < t.x[i].size(); ++j) ASSERT_EQ(d.data.x[i * d.data.features + j], t.x[i][j]) << i << "," << j;
}

LabeledData parse(const std::string& csv, const LoadOptions& opt = {}) {
  return vkamp::data::parse_csv(csv, "data.csv", opt);
}

TEST(Csv, IntegerLabelsAreTheirOwnClassIds) {
  std::mt19937_64& rng = vkamp::test::rng();  // seeded per test; VKAMP_TEST_SEED replays
  const Table t = random_table(rng, 50, 4, {"0", "1", "2", "5"});
  vkamp::test::ScratchDir dir;
  const LabeledData d = vkamp::data::load_labeled(dir.write("t.csv", t.csv), {});
  expect_x(d, t);
  for (size_t i = 0; i < t.labels.size(); ++i) EXPECT_EQ(d.data.labels[i], std::stoul(t.labels[i]));
  EXPECT_EQ(d.classes.back(), std::to_string(d.classes.size() - 1));  // "0" .. "max"
  EXPECT_EQ(d.outputs, d.classes.size());
  EXPECT_EQ(d.example_shape, std::vector<uint32_t>{4});
  EXPECT_EQ(d.feature_names, (std::vector<std::string>{"f0", "f1", "f2", "f3"}));
}

TEST(Csv, NamedLabelsAreNumberedInSortedOrder) {
  std::mt19937_64& rng = vkamp::test::rng();  // seeded per test; VKAMP_TEST_SEED replays
  const std::vector<std::string> names = {"virginica", "setosa", "versicolor", "10"};
  const Table t = random_table(rng, 60, 2, names);
  const LabeledData d = parse(t.csv);
  expect_x(d, t);
  std::vector<std::string> sorted = d.classes;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(d.classes, sorted);
  for (size_t i = 0; i < t.labels.size(); ++i) EXPECT_EQ(d.classes[d.data.labels[i]], t.labels[i]);
}

TEST(Csv, GivenClassesNumberTheLabels) {
  LoadOptions opt;
  opt.classes = {"b", "a", "c"};
  const LabeledData d = parse("x,y\n1,a\n2,c\n3,b\n", opt);
  EXPECT_EQ(d.data.labels, (std::vector<uint32_t>{1, 2, 0}));
  EXPECT_EQ(d.classes, opt.classes);
  EXPECT_EQ(d.outputs, 3u);
}

TEST(Csv, LabelColumnByName) {
  LoadOptions opt;
  opt.label = "kind";
  const LabeledData d = parse("w,kind,h\n1.5,cat,2\n-3,dog,4e2\n", opt);
  EXPECT_EQ(d.feature_names, (std::vector<std::string>{"w", "h"}));
  EXPECT_EQ(d.data.x, (std::vector<float>{1.5f, 2.f, -3.f, 400.f}));
  EXPECT_EQ(d.classes, (std::vector<std::string>{"cat", "dog"}));
  EXPECT_EQ(d.data.labels, (std::vector<uint32_t>{0, 1}));
}

TEST(Csv, RegressionTargets) {
  std::mt19937_64& rng = vkamp::test::rng();  // seeded per test; VKAMP_TEST_SEED replays
  std::normal_distribution<float> normal;
  std::string csv = "t1,a,t2,b\n";
  std::vector<float> x, targets;
  for (int i = 0; i < 30; ++i) {
    float r[4] = {normal(rng), normal(rng), normal(rng), normal(rng)};
    csv += number_text(r[0]) + "," + number_text(r[1]) + "," + number_text(r[2]) + "," + number_text(r[3]) + "\n";
    x.insert(x.end(), {r[1], r[3]});
    targets.insert(targets.end(), {r[2], r[0]});
  }
  LoadOptions opt;
  opt.task = Task::Regress;
  opt.targets = {"t2", "t1"};
  const LabeledData d = parse(csv, opt);
  EXPECT_EQ(d.data.x, x);
  EXPECT_EQ(d.data.targets, targets);
  EXPECT_EQ(d.outputs, 2u);
  EXPECT_TRUE(d.data.labels.empty());

  opt.targets.clear();  // the last column
  const LabeledData last = parse(csv, opt);
  EXPECT_EQ(last.outputs, 1u);
  EXPECT_EQ(last.feature_names, (std::vector<std::string>{"t1", "a", "t2"}));
}

TEST(Csv, QuotesCrlfAndABlankLastLine) {
  LoadOptions allow;  // nan and -inf are refused by default (test_nonfinite.cpp)
  allow.allow_nonfinite = true;
  const std::string csv =
      "\"x, first\",\"say \"\"hi\"\"\"\r\n"
      "\" 1.25 \",\"a, b\"\r\n"
      "nan,\"two\r\nlines\"\r\n"
      "-inf,\"\"\"\"\r\n"
      "\r\n";
  const LabeledData d = parse(csv, allow);
  EXPECT_EQ(d.feature_names, std::vector<std::string>{"x, first"});
  ASSERT_EQ(d.data.count, 3u);
  EXPECT_EQ(d.data.x[0], 1.25f);
  EXPECT_TRUE(std::isnan(d.data.x[1]));
  EXPECT_EQ(d.data.x[2], -INFINITY);
  EXPECT_EQ(d.classes, (std::vector<std::string>{"\"", "a, b", "two\r\nlines"}));
}

// A regression's target read as classes: numbers, with a fraction or with
// too many distinct values for the rows (continuous_label_reason).
TEST(Csv, ContinuousLabelsAreToldFromClasses) {
  std::mt19937_64& rng = vkamp::test::rng();  // seeded per test; VKAMP_TEST_SEED replays
  auto reason = [](const std::string& csv) {
    const LabeledData d = parse(csv);
    return vkamp::data::continuous_label_reason(d.classes, d.data.labels);
  };
  auto table = [&](size_t rows, size_t distinct, const std::string& suffix) {
    std::string csv = "a,target\n";
    for (size_t r = 0; r < rows; ++r)
      csv += "1," + std::to_string(25 + (r < distinct ? r : rng() % distinct)) + suffix + "\n";
    return csv;
  };
  // Diabetes-like: 214 distinct whole numbers over 442 rows.
  EXPECT_EQ(reason(table(442, 214, "")), "214 distinct values over 442 rows");
  EXPECT_EQ(reason(table(442, 214, ".0")), "214 distinct values over 442 rows") << "as NumPy writes them";
  EXPECT_EQ(reason("a,y\n1,0\n2,1.5\n3,0\n"), "'1.5' is not a whole number");
  // Classes: few values, many values with enough rows each, or names.
  EXPECT_EQ(reason(table(300, 3, "")), "");
  EXPECT_EQ(reason(table(300, 3, ".0")), "");
  EXPECT_EQ(reason(table(1000, 100, "")), "") << "100 classes of 10 rows";
  EXPECT_EQ(reason(table(250, 50, "")), "") << "at most 50 distinct values are classes";
  std::string names = "a,kind\n";
  for (int r = 0; r < 200; ++r) names += "1,species" + std::to_string(r) + "\n";
  EXPECT_EQ(reason(names), "");
}

TEST(CsvErrors, EmptyFileAndHeaderOnly) {
  vkamp::test::ScratchDir dir;
  const std::string empty = dir.write("empty.csv", std::string());
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(empty, {}); }, empty, "empty"));
  const std::string header = dir.write("header.csv", std::string("a,b\n"));
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(header, {}); }, header, "no data rows"));
}

TEST(CsvErrors, RaggedRowNamesItsLine) {
  EXPECT_TRUE(data_rejected([] { parse("a,b,c\n1,2,x\n3,4\n"); }, "data.csv:3:", "row has 2 fields, the header has 3"));
  // A quoted field over two lines: the next row's line still counts them.
  EXPECT_TRUE(data_rejected([] { parse("a,b\n1,\"p\nq\"\n2,r,s\n"); }, "data.csv:4:", "row has 3 fields"));
}

TEST(CsvErrors, NonNumericFeatureNamesLineAndColumn) {
  EXPECT_TRUE(data_rejected([] { parse("a,b,c\n1,2,x\n3,abc,y\n"); }, "data.csv:3:", "column 'b': 'abc' is not a number"));
  EXPECT_TRUE(data_rejected([] { parse("a,b,c\n1,,x\n"); }, "data.csv:2:", "column 'b' is empty"));
  EXPECT_TRUE(data_rejected([] { parse("a,b,c\n1,2.5x,x\n"); }, "data.csv:2:", "'2.5x' is not a number"));
  LoadOptions regress;
  regress.task = Task::Regress;
  EXPECT_TRUE(data_rejected([&] { parse("a,t\n1,2\n1,none\n", regress); }, "data.csv:3:", "column 't'"));
}

TEST(CsvErrors, MissingLabelColumnListsTheHeader) {
  LoadOptions opt;
  opt.label = "species";
  EXPECT_TRUE(data_rejected([&] { parse("a,b,kind\n1,2,x\n", opt); }, "data.csv:1:",
                            "no column 'species' in the header (columns: 'a', 'b', 'kind')"));
  LoadOptions regress;
  regress.task = Task::Regress;
  regress.targets = {"b", "price"};
  EXPECT_TRUE(data_rejected([&] { parse("a,b\n1,2\n", regress); }, "data.csv:1:", "no column 'price'"));
  EXPECT_TRUE(data_rejected([] { parse("label\n1\n"); }, "data.csv:1:", "no feature columns"));
}

TEST(CsvErrors, UnknownClassWithAGivenList) {
  LoadOptions opt;
  opt.classes = {"cat", "dog"};
  EXPECT_TRUE(data_rejected([&] { parse("a,kind\n1,dog\n2,cat\n3,emu\n", opt); }, "data.csv:4:",
                            "label 'emu' is not one of the 2 classes"));
}

TEST(CsvErrors, BadQuoting) {
  EXPECT_TRUE(data_rejected([] { parse("a,b\n1,\"open\n2,3\n"); }, "data.csv:2:", "never closes"));
  EXPECT_TRUE(data_rejected([] { parse("a,b\n1,\"x\"y\n"); }, "data.csv:2:", "after a closing quote comes 'y'"));
}

TEST(CsvErrors, HugeIntegerLabelIsNotFourBillionClasses) {
  EXPECT_TRUE(data_rejected([] { parse("a,b\n1,3\n2,4000000000\n"); }, "data.csv:3:", "too large a class id"));
}

}  // namespace
