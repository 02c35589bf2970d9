// vkamp-train and vkamp-predict as a user runs them, on tables this test
// writes: train in fp16 with dynamic loss scaling, save, and predict the
// same held-out accuracy from the saved file; unlabeled inputs with their
// columns in another order; regression; and bad input (exit status 2,
// with the file and line). Each runs as a child process with the
// validation layer on; a validation message fails the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_paths.hpp"
#include "support/cli_test.hpp"
#include "tools/tool_runs.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/platform.hpp"

namespace {

namespace fs = std::filesystem;
using Result = vkamp::test::ChildResult;
using vkamp::test::rejected;

using vkamp::test::number_after;
using vkamp::test::run_tool;

// Rows of 5 features on very different scales (so --standardize matters),
// labelled by the arg-max of a fixed linear map, with string classes.
struct Table {
  std::vector<std::vector<double>> x;
  std::vector<int> y;
};
const char* kClasses[] = {"dog", "cat", "eel"};  // numbered in sorted order: cat, dog, eel
const double kScale[] = {1, 100, 0.01, 1000, 1};

Table make_table(int rows, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> n;
  const double w[3][5] = {{1, -2, 0.5, 1, 0}, {-1, 1, 2, 0, 1}, {0.5, 0.5, -1, -2, 1}};
  Table t;
  for (int r = 0; r < rows; ++r) {
    std::vector<double> v(5);
    for (double& e : v) e = n(gen);
    int best = 0;
    double top = -1e300;
    for (int c = 0; c < 3; ++c) {
      double s = 0;
      for (int i = 0; i < 5; ++i) s += w[c][i] * v[i];
      if (s > top) top = s, best = c;
    }
    for (int i = 0; i < 5; ++i) v[i] *= kScale[i];
    t.x.push_back(v);
    t.y.push_back(best);
  }
  return t;
}

// columns: the feature order to write (0..4), and whether to write the label.
void write_csv(const std::string& path, const Table& t, std::vector<int> columns = {0, 1, 2, 3, 4},
               bool label = true) {
  std::ofstream f(vkamp::platform::path_from_utf8(path), std::ios::binary);
  for (size_t i = 0; i < columns.size(); ++i) f << (i ? "," : "") << "f" << columns[i];
  if (label) f << ",kind";
  f << "\n";
  f.precision(9);
  for (size_t r = 0; r < t.x.size(); ++r) {
    for (size_t i = 0; i < columns.size(); ++i) f << (i ? "," : "") << t.x[r][columns[i]];
    if (label) f << "," << kClasses[t.y[r]];
    f << "\n";
  }
}

class UserDataTools : public vkamp::test::TempDirTest {};

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(vkamp::platform::path_from_utf8(path), std::ios::binary);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// Names as a user writes them, in UTF-8 (wide at the Windows API): a CSV
// named données.csv in a folder "Zoë runs" trains, saves over an older
// file, predicts, and resumes from its checkpoint, saved over again.
TEST_F(UserDataTools, NonAsciiFolderAndFileNamesTrainSavePredictAndResume) {
  const std::string dir = path("Zoë runs");
  std::filesystem::create_directories(vkamp::platform::path_from_utf8(dir));
  const std::string csv = dir + "/données.csv", weights = dir + "/modèle.safetensors", ck = dir + "/état.ckpt";
  write_csv(csv, make_table(600, 3));
  std::ofstream(vkamp::platform::path_from_utf8(weights)) << "an older file, replaced";
  const std::string args = "--no-progress --train '" + csv + "' --val-split 0.25 --label kind --epochs 2 --save '" +
                           weights + "' --checkpoint '" + ck + "' --checkpoint-every 5";
  Result tr = run_tool("vkamp-train", args);
  ASSERT_EQ(tr.status, 0) << tr.output;
  EXPECT_NE(tr.output.find("données.csv"), std::string::npos) << "the name as the user wrote it:\n" << tr.output;
  EXPECT_EQ(vkamp::io::read_safetensors(weights).metadata.at("vkamp.label"), "kind");
  Result pr = run_tool("vkamp-predict", "--weights '" + weights + "' --data '" + csv + "' --out '" + dir + "/prédictions.csv'");
  ASSERT_EQ(pr.status, 0) << pr.output;
  EXPECT_EQ(read_lines(dir + "/prédictions.csv").size(), 601u);
  Result again = run_tool("vkamp-train", args + " --epochs 3 --resume");
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_NE(again.output.find("epoch 3/3"), std::string::npos) << again.output;
  const std::vector<std::string> left = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(vkamp::platform::path_from_utf8(dir)))
      names.push_back(vkamp::platform::utf8_from_path(e.path().filename()));
    std::sort(names.begin(), names.end());
    return names;
  }();
  EXPECT_EQ(left, (std::vector<std::string>{"données.csv", "modèle.safetensors", "prédictions.csv", "état.ckpt"}))
      << "no temporary file is left behind";
}

TEST_F(UserDataTools, CsvClassifierTrainsInFp16AndPredictReproducesItsAccuracy) {
  write_csv(path("train.csv"), make_table(2000, 1));
  write_csv(path("test.csv"), make_table(500, 2));
  Result tr = run_tool("vkamp-train", "--no-progress --train " + path("train.csv") + " --test " + path("test.csv") +
                                          " --label kind --standardize --precision float16 --loss-scale dynamic "
                                          "--epochs 6 --save " + path("m.safetensors"));
  ASSERT_EQ(tr.status, 0) << tr.output;
  EXPECT_EQ(tr.output.find("validation"), std::string::npos) << tr.output;
  const std::string trained = number_after(tr.output, "held-out accuracy ");
  ASSERT_FALSE(trained.empty()) << tr.output;
  EXPECT_GT(std::stod(trained), 85.0) << "the table is learnable: " << tr.output;

  const vkamp::io::TensorFile saved = vkamp::io::read_safetensors(path("m.safetensors"));
  EXPECT_EQ(saved.metadata.at("vkamp.classes"), R"(["cat","dog","eel"])");
  EXPECT_EQ(saved.metadata.at("vkamp.label"), "kind");
  EXPECT_EQ(saved.metadata.at("vkamp.precision"), "fp16");
  ASSERT_TRUE(saved.metadata.count("vkamp.standardize"));
  const auto st = nlohmann::json::parse(saved.metadata.at("vkamp.standardize"));
  ASSERT_EQ(st.at("mean").size(), 5u);
  EXPECT_NEAR(st.at("std")[3].get<double>(), 1000, 100) << "column f3 has std about 1000";

  Result pr = run_tool("vkamp-predict", "--weights " + path("m.safetensors") + " --data " + path("test.csv") +
                                            " --out " + path("pred.csv"));
  ASSERT_EQ(pr.status, 0) << pr.output;
  EXPECT_EQ(number_after(pr.output, "accuracy "), trained) << tr.output << pr.output;

  const auto lines = read_lines(path("pred.csv"));
  ASSERT_EQ(lines.size(), 501u);
  EXPECT_EQ(lines[0], "class,p_cat,p_dog,p_eel");
  for (size_t r = 1; r < lines.size(); ++r) {
    std::istringstream in(lines[r]);
    std::string cls, p;
    std::getline(in, cls, ',');
    double sum = 0, top = -1;
    int best = -1;
    for (int c = 0; std::getline(in, p, ','); ++c) {
      const double v = std::stod(p);
      sum += v;
      if (v > top) top = v, best = c;
    }
    EXPECT_NEAR(sum, 1.0, 1e-6) << "row " << r;
    EXPECT_EQ(cls, std::vector<std::string>({"cat", "dog", "eel"})[best]) << "row " << r;
  }

  // The same rows without labels and with the columns in another order:
  // the saved feature names put them back, so the predictions are the same.
  write_csv(path("shuffled.csv"), make_table(500, 2), {3, 0, 4, 2, 1}, /*label=*/false);
  Result un = run_tool("vkamp-predict", "--weights " + path("m.safetensors") + " --data " + path("shuffled.csv") +
                                            " --out " + path("pred2.csv"));
  ASSERT_EQ(un.status, 0) << un.output;
  EXPECT_NE(un.output.find("no labels"), std::string::npos) << un.output;
  EXPECT_EQ(read_lines(path("pred2.csv")), lines);
}

TEST_F(UserDataTools, RegressionOnTwoTargetColumns) {
  std::mt19937 gen(5);
  std::normal_distribution<double> n;
  std::ofstream f(path("reg.csv"));
  f << "a,b,c,y1,y2\n";
  for (int r = 0; r < 1500; ++r) {
    const double a = n(gen), b = n(gen), c = n(gen);
    f << a << "," << b << "," << c << "," << (0.5 * a - b) << "," << (c + 0.25 * a) << "\n";
  }
  f.close();
  Result tr = run_tool("vkamp-train", "--no-progress --train " + path("reg.csv") +
                                          " --task regress --target y1,y2 --val-split 0.2 --model 3-2 --epochs 10 "
                                          "--lr 0.05 --save " + path("r.safetensors"));
  ASSERT_EQ(tr.status, 0) << tr.output;
  const std::string mse = number_after(tr.output, "held-out mse ");
  ASSERT_FALSE(mse.empty()) << tr.output;
  // A linear model fits a linear map up to the fp16 outputs' rounding:
  // |y| < 4 rounds to within 2^-11 * 4 = 2e-3, a squared error of 4e-6;
  // 1e-4 leaves room for the fit itself (10 epochs measured 1.6e-7).
  EXPECT_LT(std::stod(mse), 1e-4) << tr.output;
  Result pr = run_tool("vkamp-predict", "--weights " + path("r.safetensors") + " --data " + path("reg.csv") +
                                            " --out " + path("out.npy"));
  ASSERT_EQ(pr.status, 0) << pr.output;
  EXPECT_LT(std::stod(number_after(pr.output, "mse ")), 1e-4) << pr.output;
  EXPECT_EQ(fs::file_size(path("out.npy")), 128u + 1500 * 2 * 4) << "a 1500 x 2 float32 .npy";
}

TEST_F(UserDataTools, TrainsOnAnNpzFile) {
  Result tr = run_tool("vkamp-train", "--no-progress --train " + VKAMP_TEST_DIR(VKAMP_DATA_FIXTURES) +
                                          "/images_u8.npz --epochs 1 --batch 2");
  ASSERT_EQ(tr.status, 0) << tr.output;
  EXPECT_EQ(tr.output.find("validation"), std::string::npos) << tr.output;
}

TEST_F(UserDataTools, BadInputIsAClearErrorWithExitStatusTwo) {
  write_csv(path("ok.csv"), make_table(100, 3));
  {
    std::ofstream f(path("ragged.csv"));
    f << "a,b,kind\n1,2,x\n3,4\n";
  }
  {
    std::ofstream f(path("word.csv"));
    f << "a,b,kind\n1,2,x\n3,four,y\n";
  }
  const std::string ok = " --no-progress --train " + path("ok.csv");
  EXPECT_TRUE(rejected(run_tool("vkamp-train", "--no-progress"), "--train FILE is required"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", "--no-progress --train " + path("ragged.csv")), "ragged.csv:3"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", "--no-progress --train " + path("word.csv")), "'four' is not a number"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", ok + " --label nosuch"), "no column 'nosuch'"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", ok + " --model 7-3"), "has 5 features"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", ok + " --model 5-4"), "3 classes"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", ok + " --val-split 0.2 --test " + path("ok.csv")), "give one"));
  EXPECT_TRUE(rejected(run_tool("vkamp-train", ok + " --train-typo x"), "unknown flag"));
  EXPECT_TRUE(rejected(run_tool("fashion_mlp", "--no-progress --train " + path("ok.csv")), "unknown flag"))
      << "the samples bring their own data";
  EXPECT_TRUE(rejected(run_tool("vkamp-predict", "--weights " + path("none.safetensors") + " --data " + path("ok.csv")),
                       "none.safetensors"));
  EXPECT_TRUE(rejected(run_tool("vkamp-predict", "--data " + path("ok.csv")), "--weights FILE is required"));
}

}  // namespace
