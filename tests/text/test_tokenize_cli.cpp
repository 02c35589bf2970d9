// vkamp-tokenize as a filter: lines in, ids out (and back with --decode),
// checked against the ids Hugging Face gives (the llama2 and gpt2
// fixtures) and, for a .gguf file, those llama.cpp gives (fixtures/gguf);
// bad input exits 2 naming the line.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <zlib.h>

#include <fstream>
#include <sstream>
#include <string>

#include "support/child_process.hpp"
#include "support/gguf_writer.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_paths.hpp"

namespace vkamp::test {
namespace {

std::string program() { return VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/vkamp-tokenize"; }
std::string fixture(const std::string& name) { return VKAMP_TEST_DIR(VKAMP_TEXT_FIXTURES) + "/" + name; }

std::string ids_line(const nlohmann::json& ids) {
  std::string s;
  for (const auto& id : ids) s += (s.empty() ? "" : " ") + std::to_string(id.get<int>());
  return s;
}

// The fixture's one-line cases: the text, its ids with and without BOS.
struct Lines {
  std::string text, ids, ids_plain, decoded_plain;
};

Lines one_line_cases(const std::string& name) {
  std::ifstream in(fixture(name) + "/expected.json");
  const auto expected = nlohmann::json::parse(in);
  Lines l;
  for (const auto& c : expected["cases"]) {
    const std::string text = c["text"];
    if (text.find_first_of("\r\n") != std::string::npos) continue;
    l.text += text + "\n";
    l.ids += ids_line(c["ids"]) + "\n";
    l.ids_plain += ids_line(c["ids_plain"]) + "\n";
    l.decoded_plain += c["decoded_plain"].get<std::string>() + "\n";
  }
  return l;
}

ChildResult tokenize(const ScratchDir& dir, const std::string& input, const std::string& args) {
  const std::string file = dir.write("input.txt", input);
  return run_child(program() + " " + args + " < " + file);
}

TEST(TokenizeCli, PrintsTheIdsHuggingFaceGives) {
  ScratchDir dir("vkamp-tokenize");
  for (const char* name : {"llama2", "gpt2"}) {
    SCOPED_TRACE(name);
    const Lines l = one_line_cases(name);
    const ChildResult with_bos = tokenize(dir, l.text, "--model " + fixture(name));
    EXPECT_EQ(with_bos.status, 0) << with_bos.output;
    EXPECT_EQ(with_bos.output, l.ids);
    const ChildResult plain = tokenize(dir, l.text, "--model " + fixture(name) + " --no-special");
    EXPECT_EQ(plain.output, l.ids_plain);
    const ChildResult back = tokenize(dir, l.ids_plain, "--model " + fixture(name) + " --decode");
    EXPECT_EQ(back.status, 0) << back.output;
    EXPECT_EQ(back.output, l.decoded_plain);
  }
}

// The gzip'd GGUF fixture NAME, decompressed into `dir`; its path.
std::string gguf_fixture(const ScratchDir& dir, const std::string& name) {
  gzFile in = gzopen(fixture("gguf/" + name + ".gz").c_str(), "rb");
  EXPECT_NE(in, nullptr) << name;
  std::string bytes;
  char buf[1 << 16];
  for (int n; in && (n = gzread(in, buf, sizeof buf)) > 0;) bytes.append(buf, std::size_t(n));
  if (in) gzclose(in);
  return dir.write(name, bytes);
}

TEST(TokenizeCli, GgufFilePrintsTheIdsLlamaCppGives) {
  ScratchDir dir("vkamp-tokenize");
  const std::string model = gguf_fixture(dir, "ggml-vocab-llama-spm.gguf");
  std::ifstream in(fixture("gguf/llama_cpp.json"));
  const auto cases = nlohmann::json::parse(in)["llama-spm"];
  std::string text, ids, ids_bos, decoded, decoded_plain;
  for (const auto& c : cases) {
    const std::string t = c["text"];
    const std::string d = c["decoded"], p = c["decoded_plain"];
    if ((t + d + p).find_first_of("\r\n") != std::string::npos) continue;
    text += t + "\n";
    ids += ids_line(c["ids"]) + "\n";
    ids_bos += "1" + std::string(c["ids"].empty() ? "" : " ") + ids_line(c["ids"]) + "\n";  // add_bos_token: true
    decoded += d + "\n";
    decoded_plain += p + "\n";
  }
  ASSERT_GT(cases.size(), 30u);
  const ChildResult with_bos = tokenize(dir, text, "--model " + model);
  EXPECT_EQ(with_bos.status, 0) << with_bos.output;
  EXPECT_EQ(with_bos.output, ids_bos);
  EXPECT_EQ(tokenize(dir, text, "--model " + model + " --no-special").output, ids);
  EXPECT_EQ(tokenize(dir, ids, "--model " + model + " --decode").output, decoded);
  EXPECT_EQ(tokenize(dir, ids, "--model " + model + " --decode --no-special").output, decoded_plain);
}

TEST(TokenizeCli, BadGgufExitsTwoNamingTheKey) {
  ScratchDir dir("vkamp-tokenize");
  const std::string bad = dir.write("bad.gguf", GgufWriter()
                                                    .string("tokenizer.ggml.model", "gpt2")
                                                    .strings("tokenizer.ggml.tokens", {"a", "b", "ab"})
                                                    .strings("tokenizer.ggml.merges", {"a b"})
                                                    .string("tokenizer.ggml.pre", "no-such-pre")
                                                    .bytes());
  const ChildResult r = tokenize(dir, "ab\n", "--model " + bad);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find(bad + ": tokenizer.ggml.pre: the pre-tokenizer \"no-such-pre\""), std::string::npos)
      << r.output;
  const ChildResult missing = tokenize(dir, "", "--model " + dir.file("none.gguf"));
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_NE(missing.output.find("none.gguf"), std::string::npos) << missing.output;
}

TEST(TokenizeCli, CrLfLinesAndSpecialTokens) {
  ScratchDir dir("vkamp-tokenize");
  const ChildResult r = tokenize(dir, "Hello world\r\n<s>Hello</s>\n", "--model " + fixture("llama2"));
  EXPECT_EQ(r.output, "1 15043 3186\n1 1 15043 2\n");
  const ChildResult d = tokenize(dir, "1 15043 3186 2\n", "--model " + fixture("llama2") + " --decode --no-special");
  EXPECT_EQ(d.output, "Hello world\n");
}

TEST(TokenizeCli, BadInputExitsTwoNamingTheLine) {
  ScratchDir dir("vkamp-tokenize");
  const ChildResult utf8 = tokenize(dir, "fine\nbad \xFF byte\n", "--model " + fixture("gpt2"));
  EXPECT_EQ(utf8.status, 2) << utf8.output;
  EXPECT_NE(utf8.output.find("line 2"), std::string::npos) << utf8.output;
  EXPECT_NE(utf8.output.find("not valid UTF-8"), std::string::npos) << utf8.output;
  const ChildResult word = tokenize(dir, "1 2\n3 x4\n", "--model " + fixture("gpt2") + " --decode");
  EXPECT_EQ(word.status, 2) << word.output;
  EXPECT_NE(word.output.find("line 2: \"x4\" is not a token id"), std::string::npos) << word.output;
  const ChildResult id = tokenize(dir, "99999999\n", "--model " + fixture("gpt2") + " --decode");
  EXPECT_EQ(id.status, 2) << id.output;
  EXPECT_NE(id.output.find("token id 99999999"), std::string::npos) << id.output;
  const ChildResult folder = tokenize(dir, "", "--model " + dir.file("nothing"));
  EXPECT_EQ(folder.status, 2) << folder.output;
  EXPECT_NE(folder.output.find("not a folder"), std::string::npos) << folder.output;
  const ChildResult none = tokenize(dir, "", "");
  EXPECT_EQ(none.status, 2) << none.output;
  EXPECT_NE(none.output.find("--model PATH is required"), std::string::npos) << none.output;
}

// --chat: one conversation rendered with a chat template (jinja2's text,
// from make_chat_fixtures.py), its ids and targets (@huggingface/tokenizers
// and TRL's split, from make_chat_token_fixtures.mjs). Qwen2.5's template
// writes no BOS or date, so the llama3 folder's own special tokens do not
// change its text.
TEST(TokenizeCli, ChatRendersAConversationAsTransformersDoes) {
  ScratchDir dir("vkamp-tokenize");
  std::ifstream r_in(fixture("chat_renders.json")), t_in(fixture("chat_tokens.json"));
  const auto renders = nlohmann::ordered_json::parse(r_in), tokens = nlohmann::ordered_json::parse(t_in);
  const std::string qwen = fixture("chat_templates/Qwen-Qwen2.5-7B-Instruct.jinja");
  const std::string model = "--model " + fixture("llama3") + " --chat-template " + qwen;
  int compared = 0;
  for (const char* conversation : {"system_user_assistant", "non_ascii"}) {
    SCOPED_TRACE(conversation);
    const std::string file = dir.write("chat.json", renders["conversations"][conversation].dump());
    for (const auto& c : renders["cases"]) {
      if (c["template"] != "Qwen-Qwen2.5-7B-Instruct.jinja") continue;
      for (const auto& r : c["renders"]) {
        if (r["conversation"] != conversation || r["tools"].get<bool>()) continue;
        const bool agp = r["add_generation_prompt"];
        const ChildResult out = run_child(program() + " " + model + " --chat " + file + (agp ? " --add-generation-prompt" : ""));
        EXPECT_EQ(out.status, 0) << out.output;
        EXPECT_EQ(out.output, r["text"].get<std::string>());
        ++compared;
      }
    }
    for (const auto& c : tokens["cases"]) {
      if (c["template"] != "Qwen-Qwen2.5-7B-Instruct.jinja" || c["conversation"] != conversation) continue;
      std::string ids, mask;
      for (std::size_t k = 0; k < c["ids"].size(); ++k) {
        ids += (k ? " " : "") + std::to_string(c["ids"][k].get<int>());
        mask += (k ? " " : "") + std::to_string(c["target"][k].get<int>());
      }
      const ChildResult out = run_child(program() + " " + model + " --chat " + file + " --ids --mask");
      EXPECT_EQ(out.status, 0) << out.output;
      EXPECT_EQ(out.output, ids + "\n" + mask + "\n");
      ++compared;
    }
  }
  EXPECT_EQ(compared, 6);  // two conversations: with and without the generation prompt, and their ids
  // The folder's own template (tokenizer_config.json) with its own BOS.
  const std::string file = dir.write("chat.json", std::string(R"([{"role": "user", "content": "Hi"}])"));
  const ChildResult own = run_child(program() + " --model " + fixture("llama3") + " --chat " + file);
  EXPECT_EQ(own.status, 0) << own.output;
  EXPECT_EQ(own.output,
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(TokenizeCli, ChatBadInputExitsTwo) {
  ScratchDir dir("vkamp-tokenize");
  const std::string chat = dir.write("chat.json", std::string(R"([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])"));
  auto expect_two = [](const ChildResult& r, const std::string& says) {
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << r.output;
  };
  expect_two(run_child(program() + " --model " + fixture("llama2") + " --chat " + chat), "has no chat template");
  expect_two(run_child(program() + " --model " + fixture("llama3") + " --chat " + chat + " --chat-template " +
                       fixture("chat_templates/google-gemma-2-2b-it.jinja")),
             "refuses the conversation: \"System role not supported\"");
  expect_two(run_child(program() + " --model " + fixture("llama3") + " --chat " + dir.write("bad.json", std::string("[{\"role\": "))),
             "not valid JSON");
  expect_two(run_child(program() + " --model " + fixture("llama3") + " --chat " + dir.file("missing.json")),
             "cannot be opened");
  expect_two(run_child(program() + " --model " + fixture("llama3") + " --chat " + chat + " --chat-template " +
                       dir.write("t.jinja", std::string("{{ messages|wordcount }}"))),
             "the filter 'wordcount' is not supported");
  expect_two(run_child(program() + " --model " + fixture("llama3") + " --ids"), "go with --chat");
}

// The one parser's behaviour (tests/tools/test_every_cli.cpp checks it for
// the programs with --device; this one has no device).
TEST(TokenizeCli, VersionAndMisspeltFlag) {
  const ChildResult v = run_child(program() + " --version");
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.output.rfind("vkamp-tokenize ", 0), 0u) << v.output;
  const ChildResult m = run_child(program() + " --modle x");
  EXPECT_EQ(m.status, 2) << m.output;
  EXPECT_NE(m.output.find("did you mean --model?"), std::string::npos) << m.output;
}

TEST(TokenizeCli, HelpNamesEveryFlag) {
  const ChildResult r = run_child(program() + " --help");
  EXPECT_EQ(r.status, 0);
  for (const char* flag : {"usage: vkamp-tokenize", "--model PATH", "--decode", "--no-special", "--chat FILE.json",
                           "--chat-template FILE", "--add-generation-prompt", "--ids", "--mask"})
    EXPECT_NE(r.output.find(flag), std::string::npos) << r.output;
}

}  // namespace
}  // namespace vkamp::test
