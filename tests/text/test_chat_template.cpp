// The chat-template renderer against Python's jinja2 set up as transformers
// sets it up: every template in fixtures/chat_templates/ (llama.cpp's
// models/templates/) rendered with each fixture conversation, compared byte
// for byte, with the {% generation %} spans; a conversation jinja2 refuses
// must be refused too. tests/text/make_chat_fixtures.py wrote the fixture.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "vkamp/text/chat_template.hpp"
#include "vkamp/text/chat_tokens.hpp"

using vkamp::text::ChatTemplate;
using vkamp::text::ChatTemplateError;
using vkamp::text::ChatVariables;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string fixtures = VKAMP_TEXT_FIXTURES;

// Templates the renderer refuses when it parses them, with the construct
// named in the refusal. Each is refused by name, never rendered otherwise.
const std::map<std::string, std::string> expected_refusals = {
};

ChatVariables variables(const nlohmann::ordered_json& fixture, bool add_generation_prompt, bool tools) {
  ChatVariables vars;
  if (tools) vars.tools_json = fixture["tools"].dump();
  vars.add_generation_prompt = add_generation_prompt;
  for (const auto& [k, v] : fixture["special_tokens"].items()) vars.special_tokens[k] = v.get<std::string>();
  std::tm now{};  // the fixture's fixed clock: 2026-03-07 09:05:02, a Saturday
  now.tm_year = 2026 - 1900;
  now.tm_mon = 2;
  now.tm_mday = 7;
  now.tm_hour = 9;
  now.tm_min = 5;
  now.tm_sec = 2;
  now.tm_wday = 6;
  EXPECT_EQ(fixture["now"].get<std::string>(), "2026-03-07T09:05:02");
  vars.now = now;
  return vars;
}

TEST(ChatTemplate, RendersTheRealTemplatesAsJinja2Does) {
  const auto fixture = nlohmann::ordered_json::parse(read_file(fixtures + "/chat_renders.json"));
  int identical_templates = 0, refused = 0;
  std::string refused_names;
  for (const auto& c : fixture["cases"]) {
    const std::string name = c["template"];
    SCOPED_TRACE(name);
    ASSERT_FALSE(c.contains("syntax_error")) << "jinja2 itself refuses " << name;
    std::unique_ptr<ChatTemplate> tmpl;
    try {
      tmpl = std::make_unique<ChatTemplate>(ChatTemplate::parse(read_file(fixtures + "/chat_templates/" + name), name));
    } catch (const ChatTemplateError& e) {
      const auto it = expected_refusals.find(name);
      EXPECT_NE(it, expected_refusals.end()) << "unexpectedly refused: " << e.what();
      if (it != expected_refusals.end()) {
        EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(it->second), std::string::npos) << e.what();
      }
      ++refused;
      refused_names += name + " ";
      continue;
    }
    EXPECT_EQ(expected_refusals.count(name), 0u) << "listed as refused but parsed";
    bool all_same = true;
    for (const auto& r : c["renders"]) {
      const std::string conversation = r["conversation"];
      const bool agp = r["add_generation_prompt"];
      const bool tools = r["tools"];
      SCOPED_TRACE(conversation + (agp ? " +generation prompt" : "") + (tools ? " +tools" : ""));
      const std::string messages = fixture["conversations"][conversation].dump();
      if (r.contains("error")) {
        EXPECT_THROW(tmpl->render_json(messages, variables(fixture, agp, tools)), ChatTemplateError) << r["error"];
        continue;
      }
      try {
        const auto out = tmpl->render_json(messages, variables(fixture, agp, tools));
        const std::string expected = r["text"];
        EXPECT_EQ(out.text, expected);
        std::vector<std::pair<std::size_t, std::size_t>> spans;
        for (const auto& s : r["generation_spans"]) spans.emplace_back(s[0].get<std::size_t>(), s[1].get<std::size_t>());
        EXPECT_EQ(out.generation_spans, spans);
        all_same = all_same && out.text == expected && out.generation_spans == spans;
      } catch (const ChatTemplateError& e) {
        ADD_FAILURE() << "jinja2 renders it, vkamp fails: " << e.what();
        all_same = false;
      }
    }
    identical_templates += all_same;
  }
  std::printf("%d of %zu templates render identically; refused: %d (%s)\n", identical_templates,
              fixture["cases"].size(), refused, refused_names.c_str());
  EXPECT_GE(identical_templates, 60);
}

}  // namespace

namespace {

// Small templates on the edges of jinja2's semantics (whitespace control,
// Python's number and repr formatting, scoping, filters, tests, generators,
// Markup, undefined values, errors) against jinja2's output for each; those
// listed as refused must be refused by name when parsed.
TEST(ChatTemplate, MatchesJinja2OnEdgeCases) {
  const auto fixture = nlohmann::ordered_json::parse(read_file(fixtures + "/chat_renders.json"));
  ChatVariables vars = variables(fixture, false, false);
  vars.special_tokens.clear();
  vars.more_json = fixture["snippet_variables"].dump();
  ASSERT_GE(fixture["snippets"].size(), 40u);
  int compared = 0, errors = 0, refusals = 0;
  for (const auto& snippet : fixture["snippets"]) {
    const std::string name = snippet["name"];
    SCOPED_TRACE(name);
    if (snippet.contains("refused")) {
      try {
        ChatTemplate::parse(snippet["source"], name);
        ADD_FAILURE() << "not refused";
      } catch (const ChatTemplateError& e) {
        EXPECT_NE(std::string(e.what()).find(snippet["refused"].get<std::string>()), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
      }
      ++refusals;
      continue;
    }
    if (snippet.contains("error")) {
      EXPECT_THROW(ChatTemplate::parse(snippet["source"], name).render({}, vars), ChatTemplateError) << snippet["error"];
      ++errors;
      continue;
    }
    ++compared;
    try {
      EXPECT_EQ(ChatTemplate::parse(snippet["source"], name).render_json("[]", vars).text, snippet["text"].get<std::string>());
    } catch (const ChatTemplateError& e) {
      ADD_FAILURE() << "jinja2 renders it, vkamp fails: " << e.what();
    }
  }
  EXPECT_GE(compared, 35);
  EXPECT_GE(errors, 5);
  EXPECT_EQ(refusals, 4);
}

TEST(ChatTemplate, QuotesTheTemplatesOwnRefusal) {
  const auto tmpl = ChatTemplate::parse(
      "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('System role not supported') }}"
      "{% endif %}{{ m.content }}{% endfor %}",
      "gemma-like");
  try {
    tmpl.render({{"system", "x"}, {"user", "y"}}, {});
    FAIL() << "rendered";
  } catch (const ChatTemplateError& e) {
    EXPECT_STREQ(e.what(), "chat template gemma-like refuses the conversation: \"System role not supported\"");
  }
  EXPECT_EQ(tmpl.render({{"user", "y"}}, {}).text, "y");
}

TEST(ChatTemplate, NamesTheTemplateAndLineOfASyntaxError) {
  try {
    ChatTemplate::parse("ok\n{% if x %}\n{{ x + }}\n{% endif %}", "broken.jinja");
    FAIL() << "parsed";
  } catch (const ChatTemplateError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.jinja: line 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ChatTemplate::parse("{% if x %}never closed", "open.jinja"), ChatTemplateError);
  EXPECT_THROW(ChatTemplate::parse("{{ 'unterminated }}", "quote.jinja"), ChatTemplateError);
}

}  // namespace

namespace {

// Conversations as training ids: the rendering encoded without added
// special tokens and the assistant's targets, against Hugging Face's
// tokenizer and transformers' / TRL's masks (make_chat_token_fixtures.mjs)
// with the llama3 fixture's tokenizer: {% generation %} spans where the
// template has them (LFM2.5, Laguna), the prefix split elsewhere; where the
// prefixes do not line up (Qwen3 drops earlier turns' thinking, Mistral
// moves the system prompt) the split is refused, not guessed.
TEST(ChatTokens, IdsAndTargetsMatchTransformersAndTrl) {
  const auto renders = nlohmann::ordered_json::parse(read_file(fixtures + "/chat_renders.json"));
  const auto expected = nlohmann::ordered_json::parse(read_file(fixtures + "/chat_tokens.json"));
  const auto tokenizer = vkamp::text::Tokenizer::load(fixtures + "/llama3");
  int generation = 0, prefixes = 0, refused = 0;
  for (const auto& c : expected["cases"]) {
    const std::string name = c["template"], conversation = c["conversation"];
    SCOPED_TRACE(name + " " + conversation);
    auto chat = vkamp::text::load_model_chat(fixtures + "/llama3", fixtures + "/chat_templates/" + name);
    ASSERT_TRUE(chat.has_value());
    chat->variables = variables(renders, false, false);  // the special tokens and clock jinja2 rendered with
    const std::string messages = renders["conversations"][conversation].dump();
    if (c.contains("error")) {
      EXPECT_THROW(vkamp::text::tokenize_chat(*chat, tokenizer, messages, false), ChatTemplateError) << c["error"];
      ++refused;
      continue;
    }
    const auto t = vkamp::text::tokenize_chat(*chat, tokenizer, messages, false);
    EXPECT_EQ(t.text, c["text"].get<std::string>());
    EXPECT_EQ(t.ids, c["ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(t.target, c["target"].get<std::vector<uint8_t>>());
    EXPECT_EQ(t.from_generation_markers, c["method"] == "generation");
    (t.from_generation_markers ? generation : prefixes) += 1;
  }
  EXPECT_EQ(generation, 6);
  EXPECT_EQ(prefixes, 17);
  EXPECT_EQ(refused, 4);
}

}  // namespace

namespace {

// vkamp-generate stops a chat at the template's end-of-turn token: found by
// rendering an assistant turn, where the token after it is a special one.
TEST(ChatTokens, EndOfTurnIsTheSpecialTokenAfterAnAssistantTurn) {
  const auto tokenizer = vkamp::text::Tokenizer::load(fixtures + "/llama3");
  auto eot = [&](const std::string& name) {
    const auto chat = vkamp::text::load_model_chat(fixtures + "/llama3", fixtures + "/chat_templates/" + name);
    return vkamp::text::end_of_turn_token(*chat, tokenizer);
  };
  EXPECT_EQ(eot("meta-llama-Llama-3.1-8B-Instruct.jinja"), tokenizer.token_to_id("<|eot_id|>"));
  EXPECT_EQ(eot("meta-llama-Llama-3.2-3B-Instruct.jinja"), 128009);
  // ChatML's <|im_end|> is no token of Llama 3's vocabulary: no end of turn to stop at.
  EXPECT_EQ(eot("Qwen-Qwen2.5-7B-Instruct.jinja"), std::nullopt);
  // Gemma 2 refuses nothing here, and writes <end_of_turn> as text in this vocabulary.
  EXPECT_EQ(eot("google-gemma-2-2b-it.jinja"), std::nullopt);
}

}  // namespace
