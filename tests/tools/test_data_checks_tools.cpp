// vkamp-train and vkamp-predict on data as users bring it: bad
// values named as data problems with exit status 2 (a NaN cell, a feature
// past fp16's range, a regression target read as classes), standardized
// regression targets round-tripping through vkamp-predict in the targets'
// units, and CSV files as exported (a byte-order mark, a count line, gzip,
// tabs without a header). Each tool runs as a child process with the
// validation layer on.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/cli_test.hpp"
#include "tools/tool_runs.hpp"
#include "vkamp/io/safetensors.hpp"

namespace {

using Result = vkamp::test::ChildResult;
using vkamp::test::number_after;
using vkamp::test::rejected;
using vkamp::test::run_tool;

class DataChecksTools : public vkamp::test::TempDirTest {
 protected:
  // A learnable table: features f0..f3 ~ N(0, 1) times `scale` for f0, and
  // a class (cat, dog, eel) from a fixed linear map; `cell` replaces f1 of
  // row `bad_row` when given. Fields joined by `delimiter`; no header row
  // when `header` is false.
  std::string table(int rows, uint32_t seed, double scale = 1, int bad_row = -1, const std::string& cell = "",
                    char delimiter = ',', bool header = true) {
    std::mt19937 gen(seed);
    std::normal_distribution<double> n;
    const char* kinds[] = {"cat", "dog", "eel"};
    const std::string d(1, delimiter);
    std::ostringstream out;
    out.precision(9);
    if (header) out << "f0" << d << "f1" << d << "f2" << d << "f3" << d << "kind\n";
    for (int r = 0; r < rows; ++r) {
      double v[4];
      for (double& e : v) e = n(gen);
      const int kind = v[0] + v[1] > v[2] - v[3] ? (v[0] > 0 ? 0 : 1) : 2;
      out << v[0] * scale << d;
      if (r == bad_row) out << cell;
      else out << v[1];
      out << d << v[2] << d << v[3] << d << kinds[kind] << "\n";
    }
    return out.str();
  }
  std::string write(const char* name, const std::string& text) {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }
  std::string write_gz(const char* name, const std::string& text) {
    gzFile f = gzopen(path(name).c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, text.data(), unsigned(text.size())), int(text.size()));
    gzclose(f);
    return path(name);
  }
};

TEST_F(DataChecksTools, NonFiniteCellsAreDataErrors) {
  // Row 37 is on line 39: the header, then rows from line 2.
  const std::string nan = write("nan.csv", table(100, 1, 1, 37, "nan"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", "--no-progress --train " + nan + " --standardize"),
                       "nan.csv:39: column 'f1': 'nan' is NaN"));
  const std::string big = write("big.csv", table(100, 1, 1, 0, "1e400"));
  const Result r = run_tool("vkamp-train", "--no-progress --train " + big);
  EXPECT_TRUE(rejected(r, "big.csv:2: column 'f1': '1e400' is beyond float32's range"));
  EXPECT_NE(r.output.find("--allow-nonfinite"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("loss scale"), std::string::npos) << "a data problem, not an overflow: " << r.output;
}

TEST_F(DataChecksTools, FailFastOnNonFiniteDataBlamesTheData) {
  // Let through on purpose, a NaN makes --standardize's mean NaN and so
  // every input: the loss is never finite, and the message says so.
  const std::string nan = write("nan.csv", table(200, 2, 1, 5, "nan"));
  const Result r = run_tool("vkamp-train", "--no-progress --train " + nan +
                                               " --allow-nonfinite --standardize --initial-loss-scale 8"
                                               " --min-loss-scale 2 --fail-after-overflows 5");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("the loss was not finite at any step, from step 0 on"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the data is the likely cause"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("lower the learning rate"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("validation"), std::string::npos) << r.output;
}

TEST_F(DataChecksTools, FeaturePastFp16StopsTheRunAndNamesTheColumn) {
  const std::string wide = write("wide.csv", table(300, 3, 4e4));  // |f0| up to ~1.5e5
  const std::string args = "--no-progress --train " + wide + " --max-steps 2 --val-split 0.2";
  const Result r = run_tool("vkamp-train", args + " --precision float16");
  EXPECT_TRUE(rejected(r, "wide.csv: column 'f0' reaches"));
  EXPECT_NE(r.output.find("past the largest fp16 value (65504)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Pass --standardize"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--precision bf16"), std::string::npos) << r.output;
  // Either remedy trains.
  const Result scaled = run_tool("vkamp-train", args + " --precision float16 --standardize");
  EXPECT_EQ(scaled.status, 0) << scaled.output;
  const Result bf16 = run_tool("vkamp-train", args + " --precision bf16");
  EXPECT_EQ(bf16.status, 0) << bf16.output;

  // A regression target past fp16: --standardize-target is the remedy.
  std::ostringstream reg;
  reg << "a,price\n";
  for (int i = 0; i < 200; ++i) reg << (i % 7) << "," << (50000 + 300 * i) << "\n";
  const std::string prices = write("prices.csv", reg.str());
  EXPECT_TRUE(rejected(run_tool("vkamp-train", "--no-progress --train " + prices + " --task regress --epochs 1"),
                       "prices.csv: target column 'price' reaches 109700"));
  const Result fixed = run_tool("vkamp-train", "--no-progress --train " + prices +
                                                   " --task regress --standardize-target --epochs 1");
  EXPECT_EQ(fixed.status, 0) << fixed.output;
}

TEST_F(DataChecksTools, ContinuousLabelsAreRefusedWithoutTask) {
  std::mt19937 gen(4);
  std::ostringstream whole, fractional;
  whole << "bmi,bp,target\n";
  fractional << "bmi,bp,target\n";
  for (int i = 0; i < 300; ++i) {
    whole << i % 11 << "," << i % 13 << "," << 25 + gen() % 320 << "\n";
    fractional << i % 11 << "," << i % 13 << "," << (i % 3) + 0.5 << "\n";
  }
  const std::string w = write("diabetes.csv", whole.str()), f = write("halves.csv", fractional.str());
  const Result r = run_tool("vkamp-train", "--no-progress --train " + w);
  EXPECT_TRUE(rejected(r, "diabetes.csv: the label column 'target' looks like a regression's target, not classes"));
  EXPECT_NE(r.output.find("distinct values over 300 rows"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Pass --task regress"), std::string::npos) << r.output;
  EXPECT_TRUE(rejected(run_tool("vkamp-train", "--no-progress --train " + f), "'0.5' is not a whole number"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", "--no-progress --train " + f + " --label target"),
                       "Pass --task regress --target target"));
  // Told, both train: as classes, and as a regression.
  const Result classes = run_tool("vkamp-train", "--no-progress --train " + f + " --task classify --epochs 1");
  EXPECT_EQ(classes.status, 0) << classes.output;
  const Result regress = run_tool("vkamp-train", "--no-progress --train " + w + " --task regress --epochs 1 "
                                                 "--standardize-target");
  EXPECT_EQ(regress.status, 0) << regress.output;
  EXPECT_TRUE(rejected(run_tool("vkamp-train", "--no-progress --train " + f + " --standardize-target"),
                       "--standardize-target scales regression targets: add --task regress"));
}

TEST_F(DataChecksTools, StandardizedTargetsRoundTripThroughPredict) {
  // Prices around 5000: y = 5000 + 1000 (0.5 a - b + 0.25 c).
  std::mt19937 gen(6);
  std::normal_distribution<double> n;
  auto rows = [&](int count) {
    std::ostringstream f;
    f.precision(9);
    f << "a,b,c,price\n";
    for (int r = 0; r < count; ++r) {
      const double a = n(gen), b = n(gen), c = n(gen);
      f << a << "," << b << "," << c << "," << 5000 + 1000 * (0.5 * a - b + 0.25 * c) << "\n";
    }
    return f.str();
  };
  const std::string train = write("train.csv", rows(1500)), test = write("test.csv", rows(300));
  const Result tr = run_tool("vkamp-train", "--no-progress --train " + train + " --test " + test +
                                                " --task regress --standardize-target --model 3-1 --epochs 10 "
                                                "--lr 0.05 --save " + path("r.safetensors"));
  ASSERT_EQ(tr.status, 0) << tr.output;
  const std::string held_out = number_after(tr.output, "held-out mse ");
  ASSERT_TRUE(!held_out.empty() && (std::isdigit(static_cast<unsigned char>(held_out[0])) || held_out[0] == '-')) << tr.output;
  EXPECT_NE(tr.output.find("on the standardized targets)"), std::string::npos) << tr.output;
  // The per-epoch lines' val mse is on the standardized targets: said before them.
  const size_t said = tr.output.find("per-epoch val mse is on the standardized targets");
  ASSERT_NE(said, std::string::npos) << tr.output;
  const size_t first_epoch_line = tr.output.find("  val mse ");
  ASSERT_NE(first_epoch_line, std::string::npos) << tr.output;
  EXPECT_LT(said, first_epoch_line) << tr.output;
  // The model is linear: it fits up to the fp16 outputs' rounding, about
  // 2^-11 of a standardized output, a few units in the targets' own (whose
  // standard deviation is about 1146).
  EXPECT_LT(std::stod(held_out), 50.0) << tr.output;

  const vkamp::io::TensorFile saved = vkamp::io::read_safetensors(path("r.safetensors"));
  ASSERT_TRUE(saved.metadata.count("vkamp.standardize_target")) << "the scaling travels with the weights";
  const auto st = nlohmann::json::parse(saved.metadata.at("vkamp.standardize_target"));
  EXPECT_NEAR(st.at("mean")[0].get<double>(), 5000, 100);
  EXPECT_NEAR(st.at("std")[0].get<double>(), 1146, 60);

  const Result pr = run_tool("vkamp-predict", "--weights " + path("r.safetensors") + " --data " + test + " --out " +
                                                  path("out.csv"));
  ASSERT_EQ(pr.status, 0) << pr.output;
  ASSERT_FALSE(number_after(pr.output, "mse ").empty()) << pr.output;
  const double predicted_mse = std::stod(number_after(pr.output, "mse "));
  EXPECT_NEAR(predicted_mse, std::stod(held_out), 1e-3 * std::stod(held_out) + 1e-6) << tr.output << pr.output;

  // The written outputs are prices, each within a few units of its row's.
  std::ifstream out(path("out.csv")), in(test);
  std::string got, want;
  std::getline(out, got);
  std::getline(in, want);
  EXPECT_EQ(got, "price");
  int checked = 0;
  while (std::getline(out, got) && std::getline(in, want)) {
    const double price = std::stod(want.substr(want.rfind(',') + 1));
    EXPECT_NEAR(std::stod(got), price, 30.0) << "row " << checked;
    ++checked;
  }
  EXPECT_EQ(checked, 300);
}

TEST_F(DataChecksTools, ExportedCsvTrainsAndPredicts) {
  // As a spreadsheet exports it: a byte-order mark, then a count line as in
  // scikit-learn's files, then the header; --skip-rows applies to --test too.
  const std::string bom = "\xEF\xBB\xBF";
  const std::string train = write("train.csv", bom + "900,4,cat,dog,eel\n" + table(900, 7));
  const std::string test = write("test.csv", bom + "400,4,cat,dog,eel\n" + table(400, 8));
  const std::string clean = write("clean.csv", table(400, 8));
  const std::string args = "--no-progress --train " + train + " --skip-rows 1 --epochs 10 --test ";
  // A test file without the count line loses its header to --skip-rows:
  // its first row's numbers are no column names the model knows.
  EXPECT_TRUE(rejected(run_tool("vkamp-train", args + clean), "clean.csv:2: no column 'kind' in the header"));
  const Result tr = run_tool("vkamp-train", args + test + " --save " + path("m.safetensors"));
  ASSERT_EQ(tr.status, 0) << tr.output;
  const std::string accuracy = number_after(tr.output, "held-out accuracy ");
  ASSERT_FALSE(accuracy.empty()) << tr.output;
  EXPECT_GT(std::stod(accuracy), 70.0) << "the table is learnable: " << tr.output;
  const vkamp::io::TensorFile saved = vkamp::io::read_safetensors(path("m.safetensors"));
  EXPECT_EQ(saved.metadata.at("vkamp.features"), R"(["f0","f1","f2","f3"])") << "no BOM in a saved name";

  // A clean file, and the same rows exported again (BOM, count line, gzip).
  const std::string w = "--weights " + path("m.safetensors") + " --data ";
  const Result plain = run_tool("vkamp-predict", w + clean);
  ASSERT_EQ(plain.status, 0) << plain.output;
  EXPECT_EQ(number_after(plain.output, "accuracy "), accuracy) << plain.output;
  const std::string gz = write_gz("test.csv.gz", bom + "400,4,cat,dog,eel\n" + table(400, 8));
  const Result zipped = run_tool("vkamp-predict", w + gz + " --skip-rows 1");
  ASSERT_EQ(zipped.status, 0) << zipped.output;
  EXPECT_EQ(number_after(zipped.output, "accuracy "), accuracy) << zipped.output;
  // Skipped lines still count in an error's line number.
  const std::string bad = write("bad.csv", "300,4\n" + table(300, 8, 1, 2, "oops"));
  EXPECT_TRUE(rejected(run_tool("vkamp-predict", w + bad + " --skip-rows 1"), "bad.csv:5: column 'f1': 'oops'"));
  EXPECT_TRUE(rejected(run_tool("vkamp-predict", w + bad + " --skip-rows x"), "--skip-rows"));

  // Tabs and no header: the columns are c0 .. c4, the class the last.
  const std::string tabs = write("tabs.tsv.csv", table(600, 9, 1, -1, "", '\t', false));
  const Result tt = run_tool("vkamp-train", "--no-progress --train " + tabs + " --delimiter tab --no-header "
                                                "--val-split 0.2 --epochs 2 --save " + path("t.safetensors"));
  ASSERT_EQ(tt.status, 0) << tt.output;
  const vkamp::io::TensorFile tab_saved = vkamp::io::read_safetensors(path("t.safetensors"));
  EXPECT_EQ(tab_saved.metadata.at("vkamp.features"), R"(["c0","c1","c2","c3"])");
  EXPECT_EQ(tab_saved.metadata.at("vkamp.label"), "c4");
  const Result tp = run_tool("vkamp-predict", "--weights " + path("t.safetensors") + " --data " + tabs +
                                                  " --delimiter '\\t' --no-header");
  ASSERT_EQ(tp.status, 0) << tp.output;
  EXPECT_NE(tp.output.find("accuracy "), std::string::npos) << tp.output;
  // Read with commas, the tab file is one column per line: refused.
  EXPECT_EQ(run_tool("vkamp-predict", "--weights " + path("t.safetensors") + " --data " + tabs + " --no-header").status,
            2);
}

}  // namespace
