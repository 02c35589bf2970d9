#include "app/charlm.hpp"

#include "app/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "vkamp/config_error.hpp"
#include "vkamp/error.hpp"
#include "vkamp/data/text.hpp"
#include "vkamp/models/gpt_decoder.hpp"
#include "vkamp/data/data_error.hpp"
#include "vkamp/platform.hpp"

namespace vkamp::app {
namespace {

std::string read_all(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  if (!f) throw data::DataError(p.string() + ": cannot open");
  return std::string(std::istreambuf_iterator<char>(f), {});
}

std::string fortunes_text() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(platform::path_from_utf8(fortunes_dir()), ec))
    throw data::DataError(fortunes_dir() +
                           " is missing: install Debian's fortunes package (apt-get install fortunes) or give "
                           "--text FILE");
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(platform::path_from_utf8(fortunes_dir()))) {
    if (e.is_symlink() || !e.is_regular_file() || e.path().extension() == ".dat") continue;
    files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());  // by name, byte order
  std::string text;
  for (const fs::path& f : files) text += read_all(f);
  return text;
}

struct Preset {
  const char* name;
  uint32_t block_size, n_layer, n_head, n_embd;
};
// tiny trains in minutes on a CPU driver; small, medium and gpt2 are for
// GPUs (medium is nanoGPT's shakespeare_char configuration, gpt2 GPT-2
// small's shape: 12 layers, 12 heads, 768 channels, block 1024; bench/
// gpu_vs_torch.sh runs it at batch 8).
constexpr Preset kPresets[] = {
    {"tiny", 64, 2, 4, 64},
    {"small", 128, 4, 4, 128},
    {"medium", 256, 6, 6, 384},
    {"gpt2", 1024, 12, 12, 768},
};

}  // namespace

CharCorpus load_corpus(const LmOptions& o) {
  CharCorpus c;
  c.source = o.text_path.empty() ? fortunes_dir() : o.text_path;
  const std::string text = o.text_path.empty() ? fortunes_text() : read_all(vkamp::platform::path_from_utf8(o.text_path));
  if (text.empty()) throw data::DataError(c.source + ": no text to train on");
  data::TextTokens t = data::tokens_of(text);
  c.vocab = std::move(t.vocab);
  c.tokens = std::move(t.tokens);
  c.split = c.tokens.size() * 9 / 10;
  return c;
}

models::GptConfig gpt_config(const LmOptions& o, uint32_t vocab_size) {
  const Preset* p = nullptr;
  for (const Preset& q : kPresets)
    if (o.size == q.name) p = &q;
  if (!p) throw vkamp::ConfigError("unknown size '" + o.size + "' (expected tiny | small | medium | gpt2)");
  auto pick = [](uint32_t flag, uint32_t preset) { return flag ? flag : preset; };
  return {vocab_size,    pick(o.block_size, p->block_size), pick(o.n_layer, p->n_layer), pick(o.n_head, p->n_head),
          pick(o.n_embd, p->n_embd), o.dropout};
}

CharWindows char_windows(const CharCorpus& c, uint32_t block_size) {
  std::vector<uint32_t> train(c.tokens.begin(), c.tokens.begin() + c.split);
  std::vector<uint32_t> val(c.tokens.begin() + c.split, c.tokens.end());
  for (auto [part, n] : {std::pair{"training", train.size()}, std::pair{"held-out (last tenth)", val.size()}})
    if (n < size_t(block_size) + 1)
      throw data::DataError(c.source + ": the " + std::string(part) + " text has " + std::to_string(n) +
                             " characters, fewer than a window of " + std::to_string(block_size + 1));
  return {data::HostData::windows(std::move(train), block_size, 1),
          data::HostData::windows(std::move(val), block_size, block_size)};
}

std::map<std::string, std::string> charlm_metadata(const models::GptConfig& c, const std::string& vocab) {
  auto meta = models::gpt_metadata(c);
  // Each byte as the code point of the same number, so any byte survives
  // JSON; ASCII-only output (\u00XX escapes) keeps the header plain.
  std::string utf8;
  for (unsigned char b : vocab) {
    if (b < 0x80) {
      utf8 += char(b);
    } else {
      utf8 += char(0xC0 | (b >> 6));
      utf8 += char(0x80 | (b & 0x3F));
    }
  }
  meta["vkamp.vocab"] = nlohmann::json(utf8).dump(-1, ' ', true);
  // The training's dropout, a record of the run (a loaded GPT generates without it).
  char dropout[32];
  std::snprintf(dropout, sizeof dropout, "%g", c.dropout);
  meta["vkamp.dropout"] = dropout;
  return meta;
}

std::map<std::string, std::string> charlm_save_metadata(train::Trainer& t, const models::GptConfig& c,
                                                        const std::string& vocab, const data::HostData& val,
                                                        const RunOptions& cfg, const RunResult& s, double last_loss) {
  auto meta = charlm_metadata(c, vocab);
  double saved_loss = last_loss;
  if (cfg.save_best && s.best && !s.best_weights.empty()) {
    train::Model& model = t.model();
    const std::vector<float> last = model.read_master();
    model.write_master(s.best_weights);
    saved_loss = t.held_out(val).value;
    model.write_master(last);
  }
  char loss[32];
  std::snprintf(loss, sizeof loss, "%.6f", saved_loss);
  meta["vkamp.val_loss"] = loss;
  return meta;
}

std::vector<uint32_t> prompt_ids(const std::string& vocab, const LmOptions& o) {
  std::vector<uint32_t> ids;
  for (char ch : o.prompt.empty() ? std::string("\n") : o.prompt) {
    const size_t id = vocab.find(ch);
    if (id == std::string::npos)
      throw vkamp::ConfigError("--prompt: the byte " + std::to_string(int(static_cast<unsigned char>(ch))) +
                               " is not in the text's vocabulary of " + std::to_string(vocab.size()) + " bytes");
    ids.push_back(uint32_t(id));
  }
  return ids;
}

std::string vocab_from_metadata(const std::map<std::string, std::string>& meta, const std::string& origin) {
  const auto it = meta.find("vkamp.vocab");
  if (it == meta.end()) throw vkamp::ConfigError(origin + ": metadata vkamp.vocab is missing (not saved by charlm?)");
  const nlohmann::json j = nlohmann::json::parse(it->second, nullptr, /*allow_exceptions=*/false);
  if (!j.is_string()) throw vkamp::ConfigError(origin + ": metadata vkamp.vocab is not a JSON string");
  // Back from code points U+0000..U+00FF (one or two UTF-8 bytes) to bytes.
  const std::string utf8 = j.get<std::string>();
  std::string vocab;
  for (size_t i = 0; i < utf8.size(); ++i) {
    const unsigned char b = utf8[i];
    if (b < 0x80) {
      vocab += char(b);
    } else if ((b == 0xC2 || b == 0xC3) && i + 1 < utf8.size() && (utf8[i + 1] & 0xC0) == 0x80) {
      vocab += char(((b & 0x03) << 6) | (utf8[++i] & 0x3F));
    } else {
      throw vkamp::ConfigError(origin + ": metadata vkamp.vocab holds a character above U+00FF; a byte is expected");
    }
  }
  if (vocab.empty()) throw vkamp::ConfigError(origin + ": metadata vkamp.vocab is empty");
  return vocab;
}

NextLogits gpt_next_logits(const models::GptConfig& c, train::Model& model, PredictWindows predict) {
  auto decoder =
      std::make_shared<models::GptDecoder>(model.working().context(), c, model.format(), model.working(), model.tensors());
  auto cached = std::make_shared<std::vector<uint32_t>>();  // the tokens in the decoder's cache
  const uint32_t T = c.block_size, V = c.vocab_size;
  return [=](const std::vector<uint32_t>& ids) {
    if (ids.size() > T) {
      // The window moves: every position changes, so the whole window runs.
      const std::vector<float> window(ids.end() - T, ids.end());
      const std::vector<float> logits = predict(window, 1);
      return std::vector<float>(logits.end() - V, logits.end());
    }
    // Append what the cache lacks; start again when it holds another text.
    if (cached->size() >= ids.size() || !std::equal(cached->begin(), cached->end(), ids.begin())) {
      decoder->reset();
      cached->clear();
    }
    std::vector<float> logits;
    while (cached->size() < ids.size()) {
      logits = decoder->append(ids[cached->size()]);
      cached->push_back(ids[cached->size()]);
    }
    return logits;
  };
}

std::string generate_text(train::Trainer& t, const models::GptConfig& c, const std::string& vocab,
                          const LmOptions& o, uint64_t seed) {
  t.sync();  // the decoder reads the working weights of the last step
  const PredictWindows predict = [&](const std::vector<float>& x, uint32_t rows) { return t.predict(x, rows); };
  return generate_text(gpt_next_logits(c, t.model(), predict), vocab, o, seed);
}

std::string generate_text(const NextLogits& next, const std::string& vocab, const LmOptions& o, uint64_t seed,
                          const std::function<void(char)>& emit) {
  std::vector<uint32_t> ids = prompt_ids(vocab, o);
  std::string out;
  for (uint32_t id : ids) out += vocab[id];
  const uint32_t V = uint32_t(vocab.size());
  std::mt19937_64 gen(seed);
  for (uint32_t n = 0; n < o.generate; ++n) {
    const std::vector<float> logits = next(ids);
    if (logits.size() != V)
      throw Error("charlm: the model has " + std::to_string(logits.size()) + " outputs for a " + std::to_string(V) +
                  "-byte vocabulary");
    const uint32_t next_id = sample_next(logits, {o.temperature, o.top_k, o.top_p}, gen);
    ids.push_back(next_id);
    out += vocab[next_id];
    if (emit) emit(vocab[next_id]);
  }
  return out;
}

}  // namespace vkamp::app
