// llama_tiny and vkamp-finetune from the command line: llama_tiny's whole
// path (a random Llama in Hugging Face's layout, LoRA on the bundled text,
// the validation loss lower after than before, the adapters in PEFT's
// layout), vkamp-finetune on the folder it wrote (--max-steps 0 only
// evaluates and writes nothing; prompt/completion lines train on the
// completions; --max-steps past an epoch cycles the data; a --synthetic dry
// run's memory line), and bad input (a vocabulary the folder disagrees on
// among it), each refused with exit status 2 naming what is wrong.
// Each run is a child process with the validation layer on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "golden/gguf_adapter_fixture.hpp"
#include "support/cli_test.hpp"
#include "support/test_paths.hpp"
#include "vkamp/io/gguf.hpp"
#include "vkamp/io/safetensors.hpp"
#include "vkamp/models/gguf_model.hpp"
#include "vkamp/models/peft_adapter.hpp"
#include "vkamp/platform.hpp"

namespace {

namespace fs = std::filesystem;
using vkamp::test::rejected;
using Result = vkamp::test::ChildResult;

Result run_tool(const std::string& tool, const std::string& args) {
  return vkamp::test::run_child("VKAMP_VALIDATION=1 " + VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/" + tool +
                                " --no-progress " + args);
}

// "validation loss X before fine-tuning" and "validation loss Y after N steps".
double loss_before(const std::string& out) {
  const size_t at = out.find("validation loss ");
  return at == std::string::npos ? std::nan("") : std::strtod(out.c_str() + at + 16, nullptr);
}
double loss_after(const std::string& out) {
  const size_t at = out.rfind("validation loss ");
  if (at == std::string::npos || out.find(" after ", at) == std::string::npos) return std::nan("");
  return std::strtod(out.c_str() + at + 16, nullptr);
}

// The base folder llama_tiny writes, made once per process (--max-steps 0:
// it only evaluates) for the runs of vkamp-finetune on it.
class FineTuneCli : public vkamp::test::TempDirTest {
 protected:
  static void SetUpTestSuite() {
    tiny_dir_ = new fs::path(fs::temp_directory_path() / ("vkamp-llama-tiny-" + std::to_string(vkamp::platform::process_id())));
    tiny_ = new Result(run_tool("llama_tiny", "--out " + tiny_dir_->string() + " --max-steps 0 --seq-len 32"));
  }
  static void TearDownTestSuite() {
    fs::remove_all(*tiny_dir_);
    delete tiny_dir_;
    delete tiny_;
  }
  static const Result& tiny() { return *tiny_; }
  static std::string base() { return tiny_dir_->string() + "/base"; }
  std::string write(const char* name, const std::string& text) {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }

 private:
  static inline fs::path* tiny_dir_ = nullptr;
  static inline Result* tiny_ = nullptr;
};

TEST_F(FineTuneCli, LlamaTinyLowersTheValidationLossAndWritesPeftAdapters) {
  const Result r = run_tool("llama_tiny", "--out " + path("tiny") + " --max-steps 8 --eval-every 8 --seq-len 32 --lr 1e-2");
  ASSERT_EQ(r.status, 0) << r.output;
  const double before = loss_before(r.output), after = loss_after(r.output);
  EXPECT_TRUE(std::isfinite(before) && std::isfinite(after)) << r.output;
  EXPECT_LT(after, before) << r.output;
  EXPECT_EQ(r.output.find("validation error"), std::string::npos) << r.output;
  for (const char* f : {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"})
    EXPECT_TRUE(fs::exists(fs::path(path("tiny")) / "base" / f)) << f;
  const std::string adapter = path("tiny") + "/adapter";
  const vkamp::io::TensorFile a = vkamp::io::read_safetensors(adapter + "/adapter_model.safetensors");
  const vkamp::io::Tensor* q = a.find("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight");
  ASSERT_TRUE(q) << "PEFT's names";
  EXPECT_EQ(q->shape, (std::vector<uint64_t>{8, 64}));
  EXPECT_EQ(a.tensors.size(), 2u * 2 * 7);  // 2 layers, 7 projections, A and B
  nlohmann::json c;
  std::ifstream(adapter + "/adapter_config.json") >> c;
  EXPECT_EQ(c["peft_type"], "LORA");
  EXPECT_EQ(c["r"], 8);
  // The folder as llama_tiny names it, in the OS's separators (\\ on Windows).
  EXPECT_EQ(fs::path(c["base_model_name_or_path"].get<std::string>()).lexically_normal(),
            (fs::path(path("tiny")) / "base").lexically_normal());
}

TEST_F(FineTuneCli, MaxStepsZeroOnlyEvaluatesAndJsonLinesTrain) {
  ASSERT_EQ(tiny().status, 0) << tiny().output;
  EXPECT_TRUE(std::isnan(loss_after(tiny().output))) << "llama_tiny --max-steps 0 trained:\n" << tiny().output;
  EXPECT_FALSE(fs::exists(fs::path(base()).parent_path() / "adapter")) << "--max-steps 0 wrote adapters";
  std::string lines;
  for (int i = 0; i < 60; ++i)
    lines += "{\"text\": \"Line " + std::to_string(i) + ": the program is free software, and you may share it.\"}\n";
  const std::string data = write("lines.jsonl", lines);
  const Result r = run_tool("vkamp-finetune", "--model " + base() + " --data " + data + " --seq-len 32 --max-steps 0");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("60 documents"), std::string::npos) << r.output;
  EXPECT_TRUE(std::isfinite(loss_before(r.output))) << r.output;
  EXPECT_TRUE(std::isnan(loss_after(r.output))) << "it trained:\n" << r.output;
  const Result t = run_tool("vkamp-finetune", "--model " + base() + " --data " + data +
                                                  " --seq-len 32 --max-steps 3 --lora-targets q,v --out " + path("ad"));
  ASSERT_EQ(t.status, 0) << t.output;
  const vkamp::io::TensorFile a = vkamp::io::read_safetensors(path("ad") + "/adapter_model.safetensors");
  EXPECT_EQ(a.tensors.size(), 2u * 2 * 2);  // q and v only
}

// QLoRA over a Hugging Face folder: the frozen base quantized into Q8_0
// blocks at load, kept so on the device, and the adapters still learn.
// K types need rows of 256, which the tiny model's are not: as llama.cpp's
// quantizer, q4_k falls back to q5_0 for rows of 64, and rows of 176 (no
// whole 32-value blocks) stay in the run's format; both are said.
TEST_F(FineTuneCli, QuantizeHoldsTheBaseInBlocksAndTheAdaptersLearn) {
  ASSERT_EQ(tiny().status, 0) << tiny().output;
  std::string lines;
  for (int i = 0; i < 60; ++i)
    lines += "{\"text\": \"Line " + std::to_string(i) + ": the program is free software, and you may share it.\"}\n";
  const std::string data = write("q.jsonl", lines);
  const Result r = run_tool("vkamp-finetune", "--model " + base() + " --data " + data +
                                                  " --seq-len 32 --max-steps 8 --eval-every 8 --lr 1e-2 --quantize q8_0 --out " +
                                                  path("q8"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("q8_0 blocks"), std::string::npos) << r.output;
  const double before = loss_before(r.output), after = loss_after(r.output);
  ASSERT_TRUE(std::isfinite(before) && std::isfinite(after)) << r.output;
  EXPECT_LT(after, before) << r.output;
  const Result k = run_tool("vkamp-finetune", "--model " + base() + " --data " + data +
                                                  " --seq-len 32 --max-steps 0 --quantize q4_k");
  ASSERT_EQ(k.status, 0) << k.output;
  EXPECT_NE(k.output.find("q5_0 blocks"), std::string::npos) << k.output;
  EXPECT_NE(k.output.find("matrices in q5_0: their rows are not whole q4_k blocks"), std::string::npos) << k.output;
  EXPECT_NE(k.output.find("matrices stay fp16: their rows are not whole q4_k blocks"), std::string::npos) << k.output;
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", "--model " + base() + " --data " + data + " --quantize q3_k"),
                       "--quantize q3_k"));
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", "--model " + base() + " --data " + data +
                                                      " --quantize q8_0 --lora-rank 0 --out " + path("full")),
                       "needs a frozen base"));
}

// Prompt/completion lines: the loss is on the completions alone. Here every
// completion is the same answer to a varied question, which one epoch
// learns as far as the random model's frozen lm_head lets it: the
// validation loss (over the answers) fell from 8.51 to 7.26, more than a
// nat; and the data line says how few of the tokens are targets.
TEST_F(FineTuneCli, PromptCompletionLinesTrainOnTheCompletions) {
  ASSERT_EQ(tiny().status, 0) << tiny().output;
  std::string lines;
  for (int i = 0; i < 60; ++i)
    lines += "{\"prompt\": \"Question " + std::to_string(i * 37 % 101) +
             ": may you share the program and change it?\", \"completion\": \" Yes.\"}\n";
  const std::string data = write("qa.jsonl", lines);
  const Result r = run_tool("vkamp-finetune", "--model " + base() + " --data " + data +
                                                  " --seq-len 32 --eval-every 9 --lr 1e-2 --out " +
                                                  path("qa"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("60 documents"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("completion targets"), std::string::npos) << r.output;
  const double before = loss_before(r.output), after = loss_after(r.output);
  ASSERT_TRUE(std::isfinite(before) && std::isfinite(after)) << r.output;
  EXPECT_LT(after, before - 0.5) << r.output;
}

// "messages" lines rendered with a real chat template (Qwen2.5's ChatML,
// from llama.cpp's models/templates), the loss on the assistant's turns:
// the same answer to varied questions, some with a system prompt. One
// epoch lowered the validation loss (over the answers and their
// <|im_end|>) from 8.42 to 7.31 on lavapipe. The run's first lines show the
// first conversation with its targets marked; --train-on all marks all of it.
std::string chat_template(const std::string& name) {
  return VKAMP_TEST_DIR(VKAMP_TEXT_FIXTURES) + "/chat_templates/" + name;
}

std::string conversations(int n) {
  std::string lines;
  for (int i = 0; i < n; ++i)
    lines += std::string("{\"messages\": [") +
             (i % 3 == 0 ? "{\"role\": \"system\", \"content\": \"Answer as the license says.\"}, " : "") +
             "{\"role\": \"user\", \"content\": \"Question " + std::to_string(i * 37 % 101) +
             ": may you share the program and change it?\"}, {\"role\": \"assistant\", \"content\": \"Yes.\"}]}\n";
  return lines;
}

TEST_F(FineTuneCli, MessagesLinesTrainOnTheAssistantsTurns) {
  ASSERT_EQ(tiny().status, 0) << tiny().output;
  const std::string data = write("chat.jsonl", conversations(60));
  const std::string qwen = " --chat-template " + chat_template("Qwen-Qwen2.5-7B-Instruct.jinja");
  const Result r = run_tool("vkamp-finetune", "--model " + base() + " --data " + data + qwen +
                                                  " --seq-len 32 --eval-every 9 --lr 1e-2 --out " + path("chat"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("60 documents"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("60 conversations"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("chat.jsonl:1 as the model reads it, the loss on [[ ]] (the assistant's turns: found by "
                          "rendering the conversation's beginnings, as TRL does):\n<|im_start|>system\nAnswer as the "
                          "license says.<|im_end|>\n<|im_start|>user\nQuestion 0: may you share the program and change "
                          "it?<|im_end|>\n<|im_start|>assistant\n[[Yes.<|im_end|>\n]]\n"),
            std::string::npos)
      << r.output;
  const double before = loss_before(r.output), after = loss_after(r.output);
  ASSERT_TRUE(std::isfinite(before) && std::isfinite(after)) << r.output;
  EXPECT_LT(after, before - 0.5) << r.output;
  // vkamp-generate --chat renders an unseen question as training rendered them, and the tuned model answers.
  const std::string generate = "VKAMP_VALIDATION=1 " + VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/vkamp-generate --model " +
                               base() + " --adapter " + path("chat") + qwen + " --temperature 0 --max-new 3 ";
  const Result reply = vkamp::test::run_child(generate + "--chat --prompt \"Question 5: may you share the program and change it?\" 2> " +
                                              path("stderr.txt"));
  ASSERT_EQ(reply.status, 0) << reply.output;
  EXPECT_EQ(reply.output.rfind("Yes.", 0), 0u) << reply.output;  // the reply alone, not the rendered prompt
  std::ifstream said(path("stderr.txt"));
  const std::string notes((std::istreambuf_iterator<char>(said)), std::istreambuf_iterator<char>());
  EXPECT_NE(notes.find("(the chat template's rendering)"), std::string::npos) << notes;
  const std::string messages = write("m.json", "[{\"role\": \"system\", \"content\": \"Answer as the license says.\"}, "
                                               "{\"role\": \"user\", \"content\": \"Question 9: may you share the program and change it?\"}]");
  const Result conversation = vkamp::test::run_child(generate + "--messages " + messages + " 2> " + path("stderr2.txt"));
  ASSERT_EQ(conversation.status, 0) << conversation.output;
  EXPECT_EQ(conversation.output.rfind("Yes.", 0), 0u) << conversation.output;
  // Every token a target; and a template with {% generation %} markers (LFM2.5) says so.
  const Result all = run_tool("vkamp-finetune", "--model " + base() + " --data " + data + qwen +
                                                    " --seq-len 32 --max-steps 0 --train-on all");
  ASSERT_EQ(all.status, 0) << all.output;
  EXPECT_NE(all.output.find("(--train-on all):\n[[<|im_start|>system\n"), std::string::npos) << all.output;
  EXPECT_EQ(all.output.find("of them targets"), std::string::npos) << all.output;
  const Result marked = run_tool("vkamp-finetune", "--model " + base() + " --data " + data + " --chat-template " +
                                                       chat_template("LFM2.5-8B-A1B.jinja") + " --seq-len 32 --max-steps 0");
  ASSERT_EQ(marked.status, 0) << marked.output;
  EXPECT_NE(marked.output.find("the template's {% generation %} spans"), std::string::npos) << marked.output;
  EXPECT_NE(marked.output.find("):\n<s><|im_start|>system\n"), std::string::npos) << marked.output;  // its own BOS, once
  EXPECT_NE(marked.output.find("<|im_start|>assistant\n[[Yes.<|im_end|>\n]]"), std::string::npos) << marked.output;
}

// llama_tiny on its bundled conversations (examples/llama_tiny/chat.jsonl)
// with the chat template it writes beside its model (TinyLlama-1.1B-Chat's):
// 20 steps lowered the validation loss over the assistant's turns from 8.40
// to 7.69 on lavapipe.
TEST_F(FineTuneCli, LlamaTinyFineTunesOnItsBundledConversations) {
  const Result r = run_tool("llama_tiny", "--out " + path("tiny-chat") + " --data " + VKAMP_TEST_DIR(VKAMP_EXAMPLES_DIR) +
                                              "/llama_tiny/chat.jsonl --max-steps 20 --eval-every 10 --lr 1e-2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("30 conversations"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("<|assistant|>\n[[Yes. You may convey verbatim copies of the program's source code as you "
                          "receive it.</s>\n]]"),
            std::string::npos)
      << r.output;
  const double before = loss_before(r.output), after = loss_after(r.output);
  ASSERT_TRUE(std::isfinite(before) && std::isfinite(after)) << r.output;
  EXPECT_LT(after, before - 0.4) << r.output;
}

TEST_F(FineTuneCli, BadMessagesExitTwoNamingTheLine) {
  ASSERT_EQ(tiny().status, 0) << tiny().output;
  const std::string m = " --model " + base() + " --max-steps 0 --seq-len 32 --chat-template " +
                        chat_template("google-gemma-2-2b-it.jinja") + " --data ";
  const std::string good = "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": \"Yo\"}]}\n";
  auto bad = [&](const char* name, const std::string& line, const std::string& says) {
    const Result r = run_tool("vkamp-finetune", m + write(name, good + line));
    EXPECT_TRUE(rejected(r, std::string(name) + ":2: "));
    EXPECT_TRUE(rejected(r, says));
  };
  bad("notlist.jsonl", "{\"messages\": {\"role\": \"user\"}}\n", "\"messages\" is not a list");
  bad("notobject.jsonl", "{\"messages\": [\"hi\"]}\n", "messages[0] is not an object");
  bad("norole.jsonl", "{\"messages\": [{\"content\": \"x\"}]}\n", "messages[0]: \"role\" is missing or not a string");
  bad("parts.jsonl", "{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\"}]}]}\n",
      "messages[0]: \"content\" is missing or not a string");
  bad("role.jsonl", "{\"messages\": [{\"role\": \"robot\", \"content\": \"x\"}]}\n", "messages[0]: unknown role \"robot\"");
  bad("emptyconv.jsonl", "{\"messages\": []}\n", "the conversation is empty");
  bad("refused.jsonl",
      "{\"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}, "
      "{\"role\": \"assistant\", \"content\": \"A\"}]}\n",
      "refuses the conversation: \"System role not supported\"");
  bad("noassistant.jsonl", "{\"messages\": [{\"role\": \"user\", \"content\": \"U\"}]}\n",
      "the conversation has no assistant turn");
  bad("mixed.jsonl", "{\"text\": \"t\", \"messages\": []}\n", "has \"messages\" and \"text\"");
  // Qwen3's template drops earlier turns' thinking, so a second turn's
  // rendering does not begin the whole's: the split is refused, not guessed;
  // with the loss on every token no split is needed.
  const std::string two_turns = write("two.jsonl", good + "{\"messages\": [{\"role\": \"user\", \"content\": \"A\"}, "
                                                          "{\"role\": \"assistant\", \"content\": \"B\"}, {\"role\": "
                                                          "\"user\", \"content\": \"C\"}, {\"role\": \"assistant\", "
                                                          "\"content\": \"D\"}]}\n");
  const std::string qwen3 = " --model " + base() + " --max-steps 0 --seq-len 8 --chat-template " +
                            chat_template("Qwen-Qwen3-0.6B.jinja") + " --data " + two_turns;
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", qwen3), "two.jsonl:2: chat template"));
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", qwen3), "is not a beginning of the whole conversation's"));
  const Result all = run_tool("vkamp-finetune", qwen3 + " --train-on all --val-fraction 0.4");
  EXPECT_EQ(all.status, 0) << all.output;
  // No template: a copy of the folder without llama_tiny's, and none given.
  fs::copy(base(), path("plain"));
  fs::remove(path("plain") + "/chat_template.jinja");
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", " --model " + path("plain") + " --max-steps 0 --data " + write("plain.jsonl", good)),
                       "plain.jsonl:1: \"messages\" data needs a chat template"));
  EXPECT_TRUE(rejected(vkamp::test::run_child("VKAMP_VALIDATION=1 " + VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) +
                                              "/vkamp-generate --model " + path("plain") + " --chat --prompt hi"),
                       "has no chat template"));
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", " --model " + base() + " --max-steps 0 --train-on some --data " +
                                                      write("p.jsonl", good)),
                       "--train-on"));
}

// --save-best: --out and --merge get the adapters of the best evaluation,
// not the last. Training on " Yes." while the validating part (the file's
// end) answers " No, never." makes the validation loss rise at the end
// (on lavapipe: 8.2053 at step 12 of 18, 8.2708 at the end); the merged
// folder gives back the best evaluation's loss, up to its fp16 rounding.
TEST_F(FineTuneCli, SaveBestWritesTheAdaptersOfTheBestEvaluation) {
  ASSERT_EQ(tiny().status, 0) << tiny().output;
  std::string lines;
  for (int i = 0; i < 60; ++i)
    lines += "{\"prompt\": \"Question " + std::to_string(i * 37 % 101) +
             ": may you share the program and change it?\", \"completion\": \"" + (i < 52 ? " Yes." : " No, never.") +
             "\"}\n";
  const std::string data = write("yn.jsonl", lines);
  const Result r = run_tool("vkamp-finetune", "--model " + base() + " --data " + data +
                                                  " --seq-len 32 --epochs 2 --eval-every 3 --lr 1e-2 --save-best --out " +
                                                  path("ad") + " --merge " + path("merged"));
  ASSERT_EQ(r.status, 0) << r.output;
  double best = INFINITY;
  for (size_t at = r.output.find("  val loss "); at != std::string::npos; at = r.output.find("  val loss ", at + 1))
    best = std::min(best, std::strtod(r.output.c_str() + at + 11, nullptr));
  const double last = loss_after(r.output);
  ASSERT_GT(last - best, 0.02) << "the last evaluation is no longer worse than the best:\n" << r.output;
  char said[64];
  std::snprintf(said, sizeof said, "--save-best: the adapters of val loss %.4f", best);
  EXPECT_NE(r.output.find(said), std::string::npos) << r.output;
  const Result back = run_tool("vkamp-finetune", "--model " + path("merged") + " --data " + data + " --seq-len 32 --max-steps 0");
  ASSERT_EQ(back.status, 0) << back.output;
  EXPECT_NEAR(loss_before(back.output), best, 0.01) << r.output << back.output;
}

// --merge's folder and a --lora-rank 0 run's folder are model folders that
// load back (as Hugging Face's would) and give the validation loss the run
// ended with, up to the 16-bit rounding of the written weights.
TEST_F(FineTuneCli, MergedAndFullyTunedFoldersLoadBackWithTheLossTheRunEndedWith) {
  ASSERT_EQ(tiny().status, 0) << tiny().output;
  const std::string data = base() + "/../text.txt", common = " --data " + data + " --seq-len 32 --lr 1e-2 --max-steps 3";
  for (const std::string& run : {std::string(" --out ") + path("ad") + " --merge " + path("merged"),
                                 std::string(" --lora-rank 0 --out ") + path("full")}) {
    SCOPED_TRACE(run);
    const Result r = run_tool("vkamp-finetune", "--model " + base() + common + run);
    ASSERT_EQ(r.status, 0) << r.output;
    const std::string folder = run.find("merge") != std::string::npos ? path("merged") : path("full");
    for (const char* f : {"config.json", "model.safetensors", "tokenizer.json", "chat_template.jinja"})
      EXPECT_TRUE(fs::exists(fs::path(folder) / f)) << f;
    const Result back = run_tool("vkamp-finetune", "--model " + folder + " --data " + data + " --seq-len 32 --max-steps 0");
    ASSERT_EQ(back.status, 0) << back.output;
    // fp16 weights: each rounded by 2^-11 relative, moving the loss by far
    // less than 0.01 nats here; an unmerged or wrongly merged adapter moves
    // it by the run's whole change.
    EXPECT_NEAR(loss_before(back.output), loss_after(r.output), 0.01) << r.output << back.output;
    EXPECT_GT(std::abs(loss_after(r.output) - loss_before(r.output)), 0.02) << "the run must change the loss";
  }
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", "--model " + base() + common + " --lora-rank 0 --out " + path("x") +
                                                      " --merge " + path("y")),
                       "nothing to merge"));
}

// A GGUF base (llama.cpp's own F16 file, tests/golden/fixtures/gguf): --out
// also gets adapter.gguf, llama.cpp's keys over the run's PEFT adapters
// (test_gguf_golden.cpp checks llama.cpp applies such a file as vkamp does),
// and --merge FILE.gguf an F16 GGUF that loads back with the loss the run
// ended with (with --merge-type base, a quantized base's own types, which
// loads back); --merge DIR, --lora-rank 0 or an unknown --merge-type on a
// GGUF base exits 2.
TEST_F(FineTuneCli, GgufBaseWritesAdapterGgufAndMergesIntoGguf) {
  const std::string model = std::string(VKAMP_GGUF_FIXTURES) + "/llama_f16.gguf";
  std::string text;
  for (int i = 0; i < 40; ++i) text += "the cat sat on the mat, and the dog ran in the fog " + std::to_string(i) + ".\n";
  const std::string data = write("gguf.txt", text), common = " --data " + data + " --seq-len 32 --lr 1e-2";
  const Result r = run_tool("vkamp-finetune", "--model " + model + common + " --max-steps 3 --lora-rank 4 --out " +
                                                  path("ad") + " --merge " + path("merged.gguf"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("adapter.gguf"), std::string::npos) << r.output;

  const vkamp::io::GgufFile a = vkamp::io::GgufFile::open(path("ad") + "/adapter.gguf");
  EXPECT_EQ(a.string("general.type"), "adapter");
  EXPECT_EQ(a.string("adapter.type"), "lora");
  EXPECT_EQ(a.string("general.architecture"), "llama");
  EXPECT_EQ(a.number("adapter.lora.alpha"), 32.0);
  EXPECT_EQ(a.tensors().size(), 2u * 7);  // one layer, every projection, A and B
  const vkamp::io::TensorFile peft = vkamp::io::read_safetensors(path("ad") + "/adapter_model.safetensors");
  const std::string stem = "base_model.model.model.layers.0.";
  for (const auto& [gguf, hf] : {std::pair{"blk.0.attn_q.weight.lora_a", "self_attn.q_proj.lora_A.weight"},
                                 std::pair{"blk.0.attn_v.weight.lora_b", "self_attn.v_proj.lora_B.weight"},
                                 std::pair{"blk.0.ffn_down.weight.lora_b", "mlp.down_proj.lora_B.weight"}}) {
    const vkamp::io::GgufTensor* t = a.find_tensor(gguf);
    ASSERT_TRUE(t) << gguf;
    const std::vector<float> want = peft.floats(stem + hf, "adapter_model.safetensors");
    ASSERT_EQ(t->elements(), want.size()) << gguf;
    EXPECT_EQ(0, std::memcmp(t->data, want.data(), want.size() * 4)) << gguf << ": the trained values, as PEFT's";
  }

  const vkamp::io::GgufFile merged = vkamp::io::GgufFile::open(path("merged.gguf"));
  EXPECT_EQ(merged.unsigned_integer("general.file_type"), 1u);
  const Result back = run_tool("vkamp-finetune", "--model " + path("merged.gguf") + common + " --max-steps 0");
  ASSERT_EQ(back.status, 0) << back.output;
  // fp16 weights, as the folder test above: the loss moves far below 0.01.
  EXPECT_NEAR(loss_before(back.output), loss_after(r.output), 0.01) << r.output << back.output;
  EXPECT_GT(std::abs(loss_after(r.output) - loss_before(r.output)), 0.02) << "the run must change the loss";

  // A quantized base merged in its own types (--merge-type base).
  const std::string q4 = std::string(VKAMP_GGUF_FIXTURES) + "/llama_q4_k_m.gguf";
  const Result rq = run_tool("vkamp-finetune", "--model " + q4 + common + " --max-steps 2 --lora-rank 4 --out " +
                                                   path("adq") + " --merge " + path("mq.gguf") + " --merge-type base");
  ASSERT_EQ(rq.status, 0) << rq.output;
  const vkamp::io::GgufFile base_q = vkamp::io::GgufFile::open(q4), merged_q = vkamp::io::GgufFile::open(path("mq.gguf"));
  ASSERT_EQ(merged_q.tensors().size(), base_q.tensors().size());
  for (size_t i = 0; i < base_q.tensors().size(); ++i)
    EXPECT_EQ(merged_q.tensors()[i].type, base_q.tensors()[i].type) << base_q.tensors()[i].name;
  const Result back_q = run_tool("vkamp-finetune", "--model " + path("mq.gguf") + common + " --max-steps 0");
  EXPECT_EQ(back_q.status, 0) << back_q.output;

  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", "--model " + model + common + " --max-steps 1 --out " + path("x") +
                                                      " --merge " + path("folder")),
                       "merges into a GGUF file"));
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", "--model " + model + common + " --max-steps 1 --out " + path("x") +
                                                      " --merge " + path("m2.gguf") + " --merge-type q4_k"),
                       "--merge-type q4_k: f16 or base"));
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", "--model " + model + common + " --max-steps 1 --lora-rank 0 --out " +
                                                      path("x")),
                       "LoRA adapters only"));
}

// llama.cpp loads vkamp's adapter.gguf and generates what vkamp-generate
// generates with the same adapter: make_gguf_fixtures.py had llama.cpp
// tokenize "the cat sat on the mat" and decode 6 greedy tokens on each F16
// fixture with <model>_adapter.gguf applied; vkamp-generate, given the same
// adapter as a PEFT folder (which it folds in) and the same text, in fp32,
// gives those tokens. No step is a near tie: llama.cpp's lead at each is at
// least 8 RMS errors of the golden test's bound (llamacpp_bound, 4.3e-5 of
// the logits' mean square on these files), checked here. Without the
// adapter llama's tokens differ from the third on; qwen2's (one token
// repeated) do not depend on it, and check the tokenizer and the base.
TEST_F(FineTuneCli, VkampGenerateWithTheAdapterGivesLlamaCppsGreedyTokens) {
  const vkamp::io::TensorFile runs = vkamp::io::read_safetensors(std::string(VKAMP_GGUF_FIXTURES) + "/llamacpp.safetensors");
  for (const std::string name : {"llama", "qwen2"}) {
    SCOPED_TRACE(name);
    const std::string model = std::string(VKAMP_GGUF_FIXTURES) + "/" + name + "_f16.gguf";
    const vkamp::io::GgufFile f = vkamp::io::GgufFile::open(model);
    const vkamp::models::LoraConfig lc = vkamp::test::fixture_lora();
    const vkamp::graph::Graph g = vkamp::models::llama_graph(vkamp::models::read_gguf_config(f), 8, lc);
    vkamp::models::write_peft_adapter(path(name.c_str()), g, lc, model, [&](const std::string& adapter) {
      return vkamp::test::adapter_fixture_values(g.tensor(adapter));
    });
    const std::vector<float> z = runs.floats(name + "_f16+adapter.text.logits", "llamacpp.safetensors");
    const vkamp::io::Tensor* ids_t = runs.find(name + "_f16+adapter.text.ids");
    ASSERT_TRUE(ids_t);
    std::vector<int64_t> ids(ids_t->elements());
    std::memcpy(ids.data(), ids_t->data.data(), ids.size() * 8);
    const size_t V = z.size() / ids.size(), generated = 6, prompt = ids.size() - generated;
    double ms = 0;
    for (float v : z) ms += double(v) * v / z.size();
    std::string want;
    for (size_t p = prompt - 1; p + 1 < ids.size(); ++p) {
      std::vector<float> row(z.begin() + p * V, z.begin() + (p + 1) * V);
      std::partial_sort(row.begin(), row.begin() + 2, row.end(), std::greater<float>());
      EXPECT_GT(row[0] - row[1], 8 * std::sqrt(4.4e-5 * ms)) << "a near tie at position " << p;
      want += (want.empty() ? "" : " ") + std::to_string(ids[p + 1]);
    }
    // The adapter as a PEFT folder, and as the GGUF file llama.cpp loaded.
    for (const std::string adapter : {path(name.c_str()), std::string(VKAMP_GGUF_FIXTURES) + "/" + name + "_adapter.gguf"}) {
      const Result r = vkamp::test::run_child("VKAMP_VALIDATION=1 " + VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) +
                                              "/vkamp-generate --model " + model + " --adapter " + adapter +
                                              " --prompt 'the cat sat on the mat' --max-new-tokens 6 --temperature 0"
                                              " --precision fp32 --ids");
      ASSERT_EQ(r.status, 0) << r.output;
      std::string got, line;
      for (size_t at = 0; at <= r.output.size(); ++at) {  // the last line of digits and spaces alone
        if (at == r.output.size() || r.output[at] == '\n') {
          if (!line.empty() && line.find_first_not_of("0123456789 ") == std::string::npos) got = line;
          line.clear();
        } else {
          line += r.output[at];
        }
      }
      EXPECT_EQ(got, want) << adapter << "\n" << r.output;
    }
  }
  // An adapter file made for the other base is refused, naming it.
  const std::string llama = std::string(VKAMP_GGUF_FIXTURES) + "/llama_f16.gguf";
  const std::string qwen_adapter = std::string(VKAMP_GGUF_FIXTURES) + "/qwen2_adapter.gguf";
  EXPECT_TRUE(rejected(vkamp::test::run_child(VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/vkamp-generate --model " + llama +
                                              " --adapter " + qwen_adapter + " --prompt hi --max-new-tokens 2"),
                       qwen_adapter + ": general.architecture is qwen2, but the model is llama"));
}

// vkamp-generate --model streams tokens from a Llama folder: greedy (--temperature 0) gives the
// same ids on every run, an adapter folded in at load gives the ids of the
// folder --merge wrote (the same weights, rounded alike), and bad input
// exits 2.
TEST_F(FineTuneCli, GenerateFromTheFolderWithItsAdapterAsFromTheMergedFolder) {
  ASSERT_EQ(tiny().status, 0) << tiny().output;
  const std::string data = base() + "/../text.txt";
  const Result tuned = run_tool("vkamp-finetune", "--model " + base() + " --data " + data +
                                                      " --seq-len 32 --lr 3e-2 --max-steps 4 --out " + path("ad") +
                                                      " --merge " + path("merged"));
  ASSERT_EQ(tuned.status, 0) << tuned.output;
  auto generate = [&](const std::string& args) {
    return vkamp::test::run_child("VKAMP_VALIDATION=1 " + VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) +
                                  "/vkamp-generate --prompt 'This License' --max-new-tokens 12 --temperature 0 --ids " +
                                  args);
  };
  // The line of ids (stdout and stderr come interleaved): the last line of
  // digits and spaces alone.
  auto ids_of = [](const Result& r) {
    std::string last, line;
    for (size_t at = 0; at <= r.output.size(); ++at) {
      if (at == r.output.size() || r.output[at] == '\n') {
        if (!line.empty() && line.find_first_not_of("0123456789 ") == std::string::npos) last = line;
        line.clear();
      } else {
        line += r.output[at];
      }
    }
    return last;
  };
  const Result plain = generate("--model " + base()), again = generate("--model " + base());
  const Result folded = generate("--model " + base() + " --adapter " + path("ad"));
  const Result merged = generate("--model " + path("merged"));
  for (const Result* r : {&plain, &again, &folded, &merged}) ASSERT_EQ(r->status, 0) << r->output;
  const std::string ids = ids_of(plain);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), ' '), 11) << plain.output;
  EXPECT_EQ(ids_of(again), ids) << "greedy decoding is repeatable";
  EXPECT_EQ(ids_of(folded), ids_of(merged)) << folded.output << merged.output;
  EXPECT_NE(plain.output.find("This License"), std::string::npos) << "the prompt is printed first";
  EXPECT_TRUE(rejected(generate("--model " + base() + " --max-new-tokens 600"), "past max_position_embeddings 512"));
  EXPECT_TRUE(rejected(generate("--adapter " + path("ad") + " --weights x"), "--adapter goes with --model DIR|FILE.gguf"));
  EXPECT_TRUE(rejected(generate("--model " + base() + " --weights x"), "one of them"));
  EXPECT_TRUE(rejected(generate("--model " + base() + " --adapter " + path("nowhere")), "adapter_config.json"));
}

// A run cut at a checkpoint and resumed ends with the same adapters, bit
// for bit, as the run that did not stop (the base is read from --model
// again; the checkpoint holds the adapters, AdamW's state and the scaler;
// lora_dropout's masks are counter-based, so the resumed steps draw the same).
TEST_F(FineTuneCli, AResumedRunWritesTheSameAdaptersBitForBit) {
  ASSERT_EQ(tiny().status, 0) << tiny().output;
  const std::string common =
      "--model " + base() + " --data " + base() + "/../text.txt --seq-len 32 --lr 1e-2 --lora-dropout 0.1 ";
  const Result whole = run_tool("vkamp-finetune", common + "--max-steps 6 --out " + path("whole"));
  const Result first = run_tool("vkamp-finetune", common + "--max-steps 3 --checkpoint " + path("ck.bin") + " --out " + path("half"));
  const Result rest = run_tool("vkamp-finetune", common + "--max-steps 6 --checkpoint " + path("ck.bin") +
                                                     " --resume --out " + path("resumed"));
  for (const Result* r : {&whole, &first, &rest}) ASSERT_EQ(r->status, 0) << r->output;
  auto bytes = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::string a = bytes(path("whole") + "/adapter_model.safetensors");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, bytes(path("resumed") + "/adapter_model.safetensors"));
  EXPECT_NE(a, bytes(path("half") + "/adapter_model.safetensors")) << "3 steps and 6 must differ";
}

// --max-steps is the run's length, over --epochs: past one epoch the data
// cycles, and the header names the epochs that takes. --epochs alone still
// sets the length.
TEST_F(FineTuneCli, MaxStepsPastOneEpochRunsExactlyThoseSteps) {
  ASSERT_EQ(tiny().status, 0) << tiny().output;
  std::string text;
  for (int i = 0; i < 60; ++i) text += "Line " + std::to_string(i) + ": the program is free software.\n";
  const std::string common = "--model " + base() + " --data " + write("short.txt", text) + " --seq-len 32 --batch 8 ";
  const Result r = run_tool("vkamp-finetune", common + "--epochs 2 --max-steps 10 --out " + path("a"));
  ASSERT_EQ(r.status, 0) << r.output;
  // "N train / M validation sequences", 8 to an update.
  const size_t train_at = r.output.rfind(' ', r.output.find(" train / ") - 1) + 1;
  const unsigned per_epoch = unsigned(std::strtoul(r.output.c_str() + train_at, nullptr, 10)) / 8;
  ASSERT_TRUE(per_epoch > 0 && per_epoch < 5) << "10 steps must take more than 2 epochs:\n" << r.output;
  const size_t epochs_at = r.output.find(", 10 steps (--max-steps; ");
  ASSERT_NE(epochs_at, std::string::npos) << r.output;
  EXPECT_NEAR(std::strtod(r.output.c_str() + epochs_at + 25, nullptr), 10.0 / per_epoch, 0.05) << r.output;
  EXPECT_NE(r.output.find(" after 10 steps "), std::string::npos) << r.output;
  const Result e = run_tool("vkamp-finetune", common + "--epochs 2 --out " + path("b"));
  ASSERT_EQ(e.status, 0) << e.output;
  const std::string steps = std::to_string(2 * per_epoch) + " steps";
  EXPECT_NE(e.output.find(", 2 epochs (" + steps + "), "), std::string::npos) << e.output;
  EXPECT_NE(e.output.find(" after " + steps + " "), std::string::npos) << e.output;
}

// The memory line, and beside the activations what the other setting of
// --recompute would plan: less with it.
TEST_F(FineTuneCli, ASyntheticDryRunPrintsTheMemorySplit) {
  const Result r = run_tool("vkamp-finetune", "--synthetic llama-tiny --dry-run --seq-len 32");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("frozen base"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("at most"), std::string::npos) << r.output;
  const Result again = run_tool("vkamp-finetune", "--synthetic llama-tiny --dry-run --seq-len 32 --recompute");
  ASSERT_EQ(again.status, 0) << again.output;
  auto mib = [](const std::string& out, const std::string& before) {
    const size_t at = out.find(before);
    return at == std::string::npos ? std::nan("") : std::strtod(out.c_str() + at + before.size(), nullptr);
  };
  // "activations A (U without reuse: fp16 U; B with --recompute)"
  auto other = [](const std::string& out, const std::string& after) {
    const size_t at = out.find(after);
    return at == std::string::npos ? std::nan("") : std::strtod(out.c_str() + out.rfind("; ", at) + 2, nullptr);
  };
  const double plain = mib(r.output, " activations "), recomputed = mib(again.output, " activations ");
  EXPECT_LT(recomputed, plain) << again.output;
  EXPECT_EQ(other(r.output, " with --recompute)"), recomputed) << r.output;
  EXPECT_EQ(other(again.output, " without --recompute)"), plain) << again.output;
}

// --recompute runs each block's forward again in the backward: the same
// kernels on the same inputs, so the adapters are the same bits (with
// lora_dropout's masks drawn again).
TEST_F(FineTuneCli, ARecomputedRunWritesTheSameAdaptersBitForBit) {
  ASSERT_EQ(tiny().status, 0) << tiny().output;
  const std::string common =
      "--model " + base() + " --data " + base() + "/../text.txt --seq-len 32 --lr 1e-2 --lora-dropout 0.1 --max-steps 3 ";
  const Result plain = run_tool("vkamp-finetune", common + "--out " + path("plain"));
  const Result again = run_tool("vkamp-finetune", common + "--recompute --out " + path("recomputed"));
  for (const Result* r : {&plain, &again}) ASSERT_EQ(r->status, 0) << r->output;
  auto bytes = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::string a = bytes(path("plain") + "/adapter_model.safetensors");
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, bytes(path("recomputed") + "/adapter_model.safetensors"));
}

TEST_F(FineTuneCli, BadInputExitsTwoNamingIt) {
  ASSERT_EQ(tiny().status, 0) << tiny().output;
  const std::string m = " --model " + base();
  const std::string bad_json = write("bad.jsonl", "{\"text\": \"fine\"}\n{\"text\": oops}\n");
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", m + " --data " + bad_json + " --max-steps 0"), "bad.jsonl:2: not JSON"));
  const std::string half = write("half.jsonl", "{\"prompt\": \"Q\", \"completion\": \"A\"}\n{\"prompt\": \"Q\"}\n");
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", m + " --data " + half + " --max-steps 0"),
                       "half.jsonl:2: has \"prompt\" without \"completion\""));
  const std::string both = write("both.jsonl", "{\"text\": \"T\", \"completion\": \"A\"}\n");
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", m + " --data " + both + " --max-steps 0"),
                       "both.jsonl:1: has \"text\" and \"prompt\"/\"completion\""));
  const std::string empty = write("empty.jsonl", "{\"prompt\": \"Q\", \"completion\": \"\"}\n");
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", m + " --data " + empty + " --max-steps 0"),
                       "empty.jsonl:1: the completion is empty"));
  const std::string number = write("number.jsonl", "{\"prompt\": \"Q\", \"completion\": 4}\n");
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", m + " --data " + number + " --max-steps 0"),
                       "number.jsonl:1: \"completion\" is not a string"));
  const std::string neither = write("neither.jsonl", "{\"body\": \"x\"}\n");
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", m + " --data " + neither + " --max-steps 0"),
                       "neither.jsonl:1: has neither \"text\""));
  const std::string text = write("t.txt", "a short text");
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", m + " --data " + text + " --max-steps 0"), "fewer than a sequence"));
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", m + " --data " + path("absent.txt") + " --max-steps 0"), "cannot open"));
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", m + " --synthetic llama-tiny --dry-run"), "--model and --synthetic"));
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", "--synthetic llama-huge --dry-run"), "unknown shape 'llama-huge'"));
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", m + " --lora-targets q,w"), "unknown projection 'w_proj'"));
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", m + " --data " + bad_json), "--out DIR is required"));
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", "--data " + text), "--model DIR|FILE.gguf is required"));
  // Another architecture, named with the supported ones (in a copy of the folder).
  fs::copy(base(), path("other"));
  nlohmann::json c;
  std::ifstream(path("other") + "/config.json") >> c;
  c["architectures"] = {"GPT2LMHeadModel"};
  std::ofstream(path("other") + "/config.json") << c.dump();
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", "--model " + path("other") + " --data " + text + " --max-steps 0"),
                       "architecture GPT2LMHeadModel is not supported (supported: LlamaForCausalLM"));
}

// A folder that disagrees with itself on the vocabulary exits 2 naming the
// tensor and both sizes: config.json's vocab_size below the tokenizer's ids
// (llama_tiny's 4487), and an lm_head with other rows than the embedding.
TEST_F(FineTuneCli, AFolderThatDisagreesOnTheVocabularyExitsTwo) {
  ASSERT_EQ(tiny().status, 0) << tiny().output;
  const std::string data = " --data " + base() + "/../text.txt --seq-len 32 --max-steps 0";
  fs::copy(base(), path("small"));
  nlohmann::json c;
  std::ifstream(path("small") + "/config.json") >> c;
  c["vocab_size"] = 4000;
  std::ofstream(path("small") + "/config.json") << c.dump();
  const std::string below = "config.json: vocab_size 4000 is below the 4487 ids of ";
  const std::string no_row = "tokenizer.json: model.embed_tokens.weight [4000, 64] has no row for ids 4000 to 4486";
  const Result tune = run_tool("vkamp-finetune", "--model " + path("small") + data);
  EXPECT_TRUE(rejected(tune, below));
  EXPECT_TRUE(rejected(tune, no_row));
  EXPECT_TRUE(rejected(vkamp::test::run_child("VKAMP_VALIDATION=1 " + VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) +
                                              "/vkamp-generate --prompt x --model " + path("small")),
                       no_row));
  fs::copy(base(), path("head"));
  const std::string weights = path("head") + "/model.safetensors";
  vkamp::io::TensorFile f = vkamp::io::read_safetensors(weights);
  for (vkamp::io::Tensor& t : f.tensors)
    if (t.name == "lm_head.weight") {  // its first 4000 rows
      t.data.resize(t.data.size() / t.shape[0] * 4000);
      t.shape[0] = 4000;
    }
  vkamp::io::write_safetensors(weights, f);
  const std::string disagree = "model.safetensors: the embedding and lm_head disagree on the vocabulary: "
                               "model.embed_tokens.weight is [4487, 64] but lm_head.weight is [4000, 64]";
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", "--model " + path("head") + data), disagree));
  // Tied, the lm_head a folder holds anyway is otherwise not read: it must agree too.
  std::ifstream(path("head") + "/config.json") >> c;
  c["tie_word_embeddings"] = true;
  std::ofstream(path("head") + "/config.json") << c.dump();
  EXPECT_TRUE(rejected(run_tool("vkamp-finetune", "--model " + path("head") + data), disagree));
}

}  // namespace

namespace {

// The number after `label` in the memory line ("planned 1234.56 before ...").
double mib_after(const std::string& out, const std::string& label) {
  const size_t at = out.find(label);
  return at == std::string::npos ? std::nan("") : std::strtod(out.c_str() + at + label.size(), nullptr);
}

}  // namespace

// Qwen2.5-0.5B's shape trained for real on the device's own limits (on
// lavapipe: 128 MiB a binding, its 272 MiB embedding and 148 MiB logits
// over it, 2 GiB an allocation and a heap), the validation layer on; the
// measured peak within 10% of the plan. Minutes on lavapipe: label large
// (ctest -L large), run by its own entry with --gtest_also_run_disabled_tests.
TEST(LargeFineTune, DISABLED_QwenShapeTrainsWithinItsDeviceLimits) {
  const Result r = run_tool("vkamp-finetune", "--synthetic qwen2.5-0.5b --max-steps 2 --batch 2 --profile");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("vkamp: validation"), std::string::npos) << r.output;
  const double planned = mib_after(r.output, "; planned "), peak = mib_after(r.output, " now, ");
  ASSERT_GT(planned, 900) << r.output;
  EXPECT_LE(peak, 1.1 * planned) << r.output;
  EXPECT_NE(r.output.find("frozen base 942."), std::string::npos) << r.output;
}

// TinyLlama-1.1B's shape over a Q4_K base (QLoRA) trained for two steps:
// the 590 MiB base held in blocks, every projection, the embedding and the
// lm_head read through the GEMM's and the gather's dequantization, the
// validation layer on, the peak within 10% of the plan. Label large: 7.5
// minutes on lavapipe (2 cores), with its optimization passes (ctest's
// entry sets GALLIVM_PERF empty; under the test main's "nopt" it ran past
// 30 minutes).
TEST(LargeFineTune, DISABLED_TinyLlamaOverAQ4KBaseTrains) {
  const Result r = run_tool("vkamp-finetune", "--synthetic tinyllama-1.1b --quantize q4_k --seq-len 32 --batch 1 "
                                              "--recompute --max-steps 2 --profile");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.find("vkamp: validation"), std::string::npos) << r.output;
  const double planned = mib_after(r.output, "; planned "), peak = mib_after(r.output, " now, ");
  EXPECT_LE(peak, 1.1 * planned) << r.output;
  EXPECT_NE(r.output.find("frozen base 590."), std::string::npos) << r.output;
  EXPECT_TRUE(std::isfinite(loss_after(r.output))) << r.output;
}

// Memory plans of a quantized base (dry runs, nothing trained): Llama-3.1-8B
// in Q4_K at 1,024 tokens fits an 8 GB card (at most 7 GiB), TinyLlama in
// Q4_K at 512 tokens 1.5 GiB.
TEST(FineTuneMemory, QuantizedBasesPlanWithinTheirTargets) {
  const Result big = run_tool("vkamp-finetune", "--synthetic llama-3.1-8b --quantize q4_k --seq-len 1024 --batch 1 "
                                                "--recompute --dry-run");
  EXPECT_EQ(big.status, 2) << big.output;  // lavapipe's 2 GiB heap: planned, not allocated
  const size_t at = big.output.find("the run needs ");
  ASSERT_NE(at, std::string::npos) << big.output;
  const double needs = std::strtod(big.output.c_str() + at + 14, nullptr);
  EXPECT_GT(needs, 4000) << big.output;
  EXPECT_LE(needs, 7 * 1024) << big.output;
  const Result tiny = run_tool("vkamp-finetune", "--synthetic tinyllama-1.1b --quantize q4_k --seq-len 512 --batch 1 "
                                                 "--recompute --dry-run");
  ASSERT_EQ(tiny.status, 0) << tiny.output;
  const double planned = mib_after(tiny.output, "; planned ");
  EXPECT_GT(planned, 590) << tiny.output;
  EXPECT_LE(planned, 1536) << tiny.output;
  EXPECT_NE(tiny.output.find("frozen base 590."), std::string::npos) << tiny.output;  // 2,098 MiB in fp16
}

// A base larger than the heap (TinyLlama-1.1B's fp16 base against a 2 GiB
// budget) exits 2 before anything is allocated, naming the budget.
TEST(FineTuneMemory, APlanPastTheBudgetExitsTwoBeforeAllocating) {
  const Result r = vkamp::test::run_child("VKAMP_VALIDATION=1 VKAMP_TEST_MEMORY_BUDGET=2G " +
                                          VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/vkamp-finetune --no-progress "
                                          "--synthetic tinyllama-1.1b --max-steps 2");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("2048.0 MiB"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Nothing was allocated"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("The frozen base alone"), std::string::npos) << r.output;
  // One that fits with --recompute, a smaller batch or sequence says which.
  const Result q = vkamp::test::run_child("VKAMP_VALIDATION=1 VKAMP_TEST_MEMORY_BUDGET=2G " +
                                          VKAMP_TEST_DIR(VKAMP_SAMPLES_DIR) + "/vkamp-finetune --no-progress "
                                          "--synthetic qwen2.5-0.5b --batch 4 --seq-len 256 --dry-run");
  EXPECT_EQ(q.status, 2) << q.output;
  EXPECT_NE(q.output.find("Settings that fit, each alone: --recompute ("), std::string::npos) << q.output;
  EXPECT_NE(q.output.find("; --batch 2"), std::string::npos) << q.output;
}
