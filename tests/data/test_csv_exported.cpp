// CSV files as spreadsheets and libraries export them: a UTF-8 byte-order
// mark, gzip, tabs or semicolons, no header, and lines before the header
// (scikit-learn's count line). Each variant of a fresh random table must
// read as the plain file does, and errors must still name the file's own
// line numbers.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "data/data_files.hpp"
#include "support/numerics.hpp"
#include "vkamp/data/csv.hpp"
#include "vkamp/data/labeled_data.hpp"

namespace {

using vkamp::data::LabeledData;
using vkamp::data::LoadOptions;
using vkamp::data::Task;
using vkamp::test::data_rejected;

const std::string kBom = "\xEF\xBB\xBF";

// `rows` rows of three random features and a class, as text with
// `delimiter`, with or without the header "a,b,c,kind".
std::string random_table(std::mt19937_64& rng, size_t rows, char delimiter, bool header = true) {
  std::normal_distribution<float> normal(0.f, 50.f);
  const char* kinds[] = {"cat", "dog", "eel"};
  std::string d(1, delimiter), csv = header ? "a" + d + "b" + d + "c" + d + "kind\n" : "";
  char buf[32];
  for (size_t i = 0; i < rows; ++i) {
    for (int j = 0; j < 3; ++j) {
      std::snprintf(buf, sizeof buf, "%.9g", double(normal(rng)));
      csv += buf + d;
    }
    csv += std::string(kinds[rng() % 3]) + "\n";
  }
  return csv;
}

void expect_same(const LabeledData& got, const LabeledData& want) {
  EXPECT_EQ(got.data.count, want.data.count);
  EXPECT_EQ(got.data.x, want.data.x);
  EXPECT_EQ(got.data.labels, want.data.labels);
  EXPECT_EQ(got.classes, want.classes);
}

// `text` gzip-compressed into `path`, as gzip(1) would write it.
std::string write_gz(const vkamp::test::ScratchDir& dir, const std::string& name, const std::string& text) {
  const std::string path = (dir.path / name).string();
  gzFile f = gzopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(gzwrite(f, text.data(), unsigned(text.size())), int(text.size()));
  gzclose(f);
  return path;
}

LabeledData parse(const std::string& csv, const LoadOptions& opt = {}) {
  return vkamp::data::parse_csv(csv, "data.csv", opt);
}

TEST(CsvExported, ByteOrderMarkIsDropped) {
  std::mt19937_64& rng = vkamp::test::rng();  // seeded per test; VKAMP_TEST_SEED replays
  const std::string csv = random_table(rng, 20, ',');
  const LabeledData plain = parse(csv);
  const LabeledData marked = parse(kBom + csv);
  expect_same(marked, plain);
  EXPECT_EQ(marked.feature_names, (std::vector<std::string>{"a", "b", "c"})) << "no BOM in the first name";

  // A model trained on the marked file finds its columns in a clean one.
  LoadOptions by_name;
  by_name.features = marked.feature_names;
  by_name.classes = marked.classes;
  expect_same(parse(csv, by_name), plain);
}

TEST(CsvExported, GzipReadsAsThePlainFile) {
  std::mt19937_64& rng = vkamp::test::rng();
  const std::string csv = kBom + random_table(rng, 200, ',');
  vkamp::test::ScratchDir dir;
  const std::string gz = write_gz(dir, "t.csv.gz", csv);
  expect_same(vkamp::data::load_labeled(gz, {}), parse(csv));
  EXPECT_EQ(vkamp::data::load_labeled(write_gz(dir, "UPPER.CSV.GZ", csv), {}).data.count, 200u);

  // Cut short, it is an error naming the file, not a shorter table.
  std::ifstream in(gz, std::ios::binary);
  std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cut = dir.write("cut.csv.gz", whole.substr(0, whole.size() / 2));
  EXPECT_TRUE(data_rejected([&] { vkamp::data::load_labeled(cut, {}); }, cut, "truncated"));
  const std::string junk = dir.write("junk.csv.gz", std::string("\x1f\x8b\x08\x00 not deflate data at all", 30));
  EXPECT_THROW(vkamp::data::load_labeled(junk, {}), vkamp::data::DataError);
}

TEST(CsvExported, TabsAndSemicolons) {
  std::mt19937_64& rng = vkamp::test::rng();
  const std::string comma = random_table(rng, 30, ',');
  for (char delimiter : {'\t', ';'}) {
    std::string other = comma;
    for (char& c : other)
      if (c == ',') c = delimiter;
    LoadOptions opt;
    opt.delimiter = delimiter;
    expect_same(parse(other, opt), parse(comma));
    // Read with the default comma, the whole line is one column: refused,
    // since a table needs a feature.
    EXPECT_THROW(parse(other), vkamp::data::DataError);
  }
  LoadOptions tabs;
  tabs.delimiter = '\t';
  const LabeledData quoted = parse("\"x\ty\"\tkind\n1.5\t\"a, b\"\n", tabs);
  EXPECT_EQ(quoted.feature_names, std::vector<std::string>{"x\ty"});
  EXPECT_EQ(quoted.classes, std::vector<std::string>{"a, b"});
  EXPECT_TRUE(data_rejected([&] { parse("a\tb\n1\t\"x\",\n", tabs); }, "data.csv:2:",
                            "after a closing quote comes ','; a tab or the end of the line is expected"));
}

TEST(CsvExported, DelimiterAsAFlagGivesIt) {
  EXPECT_EQ(vkamp::data::csv_delimiter("\\t"), '\t');
  EXPECT_EQ(vkamp::data::csv_delimiter("tab"), '\t');
  EXPECT_EQ(vkamp::data::csv_delimiter("\t"), '\t');
  EXPECT_EQ(vkamp::data::csv_delimiter(";"), ';');
  EXPECT_EQ(vkamp::data::csv_delimiter("|"), '|');
  EXPECT_FALSE(vkamp::data::csv_delimiter(""));
  EXPECT_FALSE(vkamp::data::csv_delimiter(";;"));
  EXPECT_FALSE(vkamp::data::csv_delimiter("\""));
  EXPECT_FALSE(vkamp::data::csv_delimiter("\n"));
}

TEST(CsvExported, NoHeaderNamesTheColumnsByPosition) {
  std::mt19937_64& rng = vkamp::test::rng();
  const std::string body = random_table(rng, 25, ',', /*header=*/false);
  LoadOptions opt;
  opt.header = false;
  const LabeledData d = parse(body, opt);
  expect_same(d, parse("a,b,c,kind\n" + body));
  EXPECT_EQ(d.feature_names, (std::vector<std::string>{"c0", "c1", "c2"}));
  EXPECT_EQ(d.target_names, std::vector<std::string>{"c3"});

  LoadOptions regress = opt;
  regress.task = Task::Regress;
  regress.targets = {"c1"};
  regress.features = {"c0"};
  const LabeledData r = parse("1,2,x\n3,4,y\n", regress);
  EXPECT_EQ(r.data.x, (std::vector<float>{1, 3}));
  EXPECT_EQ(r.data.targets, (std::vector<float>{2, 4}));
  // The first row is a row: its line is 1, and a bad cell there says so.
  EXPECT_TRUE(data_rejected([&] { parse("1,x,a\n2,3,b\n", opt); }, "data.csv:1:", "column 'c1': 'x' is not a number"));
  EXPECT_TRUE(data_rejected([&] { parse("1,2,a\n2,b\n", opt); }, "data.csv:2:", "the first row has 3"));
  LoadOptions named = opt;
  named.label = "kind";
  EXPECT_TRUE(data_rejected([&] { parse("1,2,a\n", named); }, "data.csv:1:",
                            "no column 'kind' (without a header the columns are named c0 .. c2)"));
}

TEST(CsvExported, SkippedLinesBeforeTheHeaderStillCount) {
  std::mt19937_64& rng = vkamp::test::rng();
  const std::string table = random_table(rng, 40, ',');
  // scikit-learn's layout: a count line with the class names, then the table.
  const std::string sklearn = "40,3,cat,dog,eel\n" + table;
  LoadOptions skip;
  skip.skip_rows = 1;
  expect_same(parse(sklearn, skip), parse(table));
  // BOM, then the count line: the mark belongs to the file, not the line.
  expect_same(parse(kBom + sklearn, skip), parse(table));
  // Its own data files have no header after the count line.
  LoadOptions bare = skip;
  bare.header = false;
  const std::string body = table.substr(table.find('\n') + 1);
  expect_same(parse("40,3,cat,dog,eel\n" + body, bare), parse(table));

  // A bad cell on the 3rd data row is on line 5 of the file: count line,
  // header, two rows before it.
  std::string bad = "note: exported 2026\n" + std::string("a,b,c,kind\n") + "1,2,3,x\n4,5,6,y\n7,oops,9,z\n";
  EXPECT_TRUE(data_rejected([&] { parse(bad, skip); }, "data.csv:5:", "column 'b': 'oops' is not a number"));
  EXPECT_TRUE(data_rejected([&] { parse("x\n\"a\nb\",kind\n", skip); }, "data.csv:", "no data rows"));
  // Read without skipping, the count line is taken for the header, and the
  // first row's error says what the numbers there likely are.
  EXPECT_TRUE(data_rejected([&] { parse("150,4,setosa,versicolor\n5.1,3.5,1.4,0.2,0\n"); }, "data.csv:2:",
                            "(the header, data.csv:1, is numbers, not column names: a count line to skip with "
                            "--skip-rows 1?)"));
  EXPECT_TRUE(data_rejected([&] { parse("150,4,a,b\nx,3.5,1.4,0\n"); }, "data.csv:2:", "--skip-rows 1?"));
  LoadOptions too_many;
  too_many.skip_rows = 3;
  EXPECT_TRUE(data_rejected([&] { parse("one\ntwo\n", too_many); }, "data.csv",
                            "the file has 2 lines, fewer than the 3 to skip"));
  too_many.skip_rows = 2;
  EXPECT_TRUE(data_rejected([&] { parse("one\ntwo\n", too_many); }, "data.csv", "nothing after the 2 skipped lines"));
}

TEST(CsvExported, EverythingAtOnce) {
  // A semicolon file from a spreadsheet, with a BOM and a title line, gzipped.
  std::mt19937_64& rng = vkamp::test::rng();
  std::string table = random_table(rng, 60, ';');
  vkamp::test::ScratchDir dir;
  const std::string gz = write_gz(dir, "export.csv.gz", kBom + "Sales export\r\n" + table);
  LoadOptions opt;
  opt.delimiter = ';';
  opt.skip_rows = 1;
  const LabeledData d = vkamp::data::load_labeled(gz, opt);
  LoadOptions semi;
  semi.delimiter = ';';
  expect_same(d, parse(table, semi));
  EXPECT_EQ(d.feature_names[0], "a");
}

}  // namespace
