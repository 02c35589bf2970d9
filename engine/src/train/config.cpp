// Training configuration: the YAML-subset reader, one-setting parser and the
// cross-field checks. Every error is a ConfigError that names the key (or the
// flag, when the command-line parser passes one as the label).
#include "vkamp/train/config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>
#include <system_error>

namespace vkamp::train {
namespace {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string fmt(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// "max_gradient_norm" -> "--max-gradient-norm".
std::string flag_of(std::string_view key) {
  std::string f = "--";
  for (char c : key) f += (c == '_') ? '-' : c;
  return f;
}

[[noreturn]] void fail(const std::string& label, const std::string& msg) {
  throw ConfigError(label + ": " + msg);
}

// ---- strict value parsers -------------------------------------------------

double parse_double(const std::string& v, const std::string& label) {
  const char* b = v.data();
  const char* e = b + v.size();
  if (b != e && *b == '+' && b + 1 != e && b[1] != '-') ++b;  // from_chars rejects a leading '+'
  double out = 0;
  auto [p, ec] = std::from_chars(b, e, out, std::chars_format::general);
  if (v.empty() || b == e || ec == std::errc::invalid_argument || p != e)
    fail(label, "'" + v + "' is not a number");
  if (ec == std::errc::result_out_of_range) fail(label, "'" + v + "' is out of the range of a double");
  if (!std::isfinite(out)) fail(label, "'" + v + "' is not a finite number");
  return out;
}

uint64_t parse_u64(const std::string& v, const std::string& label) {
  const char* b = v.data();
  const char* e = b + v.size();
  if (b != e && *b == '+' && b + 1 != e && b[1] != '-') ++b;
  uint64_t out = 0;
  auto [p, ec] = std::from_chars(b, e, out, 10);
  if (!v.empty() && v[0] == '-') fail(label, "'" + v + "' is negative; expected a whole number >= 0");
  if (v.empty() || b == e || ec == std::errc::invalid_argument || p != e)
    fail(label, "'" + v + "' is not a whole number");
  if (ec == std::errc::result_out_of_range) fail(label, "'" + v + "' is too large");
  return out;
}

uint32_t parse_u32(const std::string& v, const std::string& label, uint32_t min = 0) {
  uint64_t x = parse_u64(v, label);
  if (x > std::numeric_limits<uint32_t>::max())
    fail(label,
         "'" + v + "' is too large (at most " + std::to_string(std::numeric_limits<uint32_t>::max()) + ")");
  if (x < min) fail(label, "must be >= " + std::to_string(min) + " (got " + v + ")");
  return static_cast<uint32_t>(x);
}

bool parse_bool(const std::string& v, const std::string& label) {
  std::string s = lower(v);
  if (s == "true" || s == "yes" || s == "on" || s == "1") return true;
  if (s == "false" || s == "no" || s == "off" || s == "0") return false;
  fail(label, "'" + v + "' is not a boolean (expected true or false)");
}

template <class E>
E parse_enum(const std::string& v, const std::string& label,
             std::initializer_list<std::pair<const char*, E>> choices) {
  std::string s = lower(v);
  std::string list;
  for (const auto& [name, value] : choices) {
    if (s == name) return value;
    if (!list.empty()) list += " | ";
    list += name;
  }
  fail(label, "unknown value '" + v + "' (expected " + list + ")");
}

// Single-field range checks shared by the parser and validate().
double positive(double x, const std::string& v, const std::string& label) {
  if (!(x > 0)) fail(label, "must be > 0 (got " + v + ")");
  return x;
}
double non_negative(double x, const std::string& v, const std::string& label) {
  if (x < 0) fail(label, "must be >= 0 (got " + v + ")");
  return x;
}
double unit_interval(double x, const std::string& v, const std::string& label) {
  if (!(x >= 0 && x < 1)) fail(label, "must be in [0, 1) (got " + v + ")");
  return x;
}

// ---- the settings table ---------------------------------------------------

using Apply = void (*)(const std::string& v, const std::string& label, TrainConfig& c);

struct Setting {
  const char* key;
  const char* canonical;  // the key an alias stands for (same as key otherwise)
  Apply apply;
};

Format parse_precision(const std::string& v, const std::string& label) {
  auto f = parse_format(lower(v));
  if (!f) fail(label, "unknown precision '" + v + "' (expected fp32 | float16 | bfloat16 | cbfloat16)");
  return *f;
}

// clang-format off
const Setting kSettings[] = {
    // Cerebras names.
    {"fp16_type", "fp16_type",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       std::string s = lower(v);
       if (s == "float16") c.precision = Format::F16;
       else if (s == "bfloat16") c.precision = Format::BF16;
       else if (s == "cbfloat16") c.precision = Format::CB16;
       else
         fail(l, "unknown value '" + v +
                     "' (expected float16 | bfloat16 | cbfloat16; for full precision use precision: fp32)");
     }},
    {"loss_scaling_factor", "loss_scaling_factor",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       std::string s = lower(v);
       if (s == "dynamic") {
         c.scaler.mode = LossScaleMode::Dynamic;
       } else if (s == "none") {
         c.scaler.mode = LossScaleMode::None;
       } else {
         double x = 0;
         try {
           x = parse_double(v, l);
         } catch (const ConfigError&) {
           fail(l, "'" + v + "' is not dynamic, none or a positive number");
         }
         if (!(x > 0)) fail(l, "a static loss scale must be > 0 (got " + v + ")");
         c.scaler.mode = LossScaleMode::Static;
         c.scaler.initial_scale = x;
       }
     }},
    {"initial_loss_scale", "initial_loss_scale",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.scaler.initial_scale = positive(parse_double(v, l), v, l);
     }},
    {"steps_per_increase", "steps_per_increase",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.scaler.growth_interval = parse_u32(v, l, 1);
     }},
    {"min_loss_scale", "min_loss_scale",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.scaler.min_scale = positive(parse_double(v, l), v, l);
     }},
    {"max_loss_scale", "max_loss_scale",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.scaler.max_scale = positive(parse_double(v, l), v, l);
     }},
    {"max_gradient_norm", "max_gradient_norm",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.clip.max_norm = non_negative(parse_double(v, l), v, l);
     }},
    {"max_gradient_value", "max_gradient_value",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.clip.max_value = non_negative(parse_double(v, l), v, l);
     }},
    // vkamp names.
    {"precision", "precision",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.precision = parse_precision(v, l);
     }},
    {"device", "device",
     [](const std::string& v, const std::string&, TrainConfig& c) { c.device = v; }},
    {"growth_factor", "growth_factor",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       double x = parse_double(v, l);
       if (!(x > 1)) fail(l, "must be > 1 (got " + v + ")");
       c.scaler.growth_factor = x;
     }},
    {"backoff_factor", "backoff_factor",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       double x = parse_double(v, l);
       if (!(x > 0 && x < 1)) fail(l, "must be in (0, 1) (got " + v + ")");
       c.scaler.backoff_factor = x;
     }},
    {"hysteresis", "hysteresis",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.scaler.hysteresis = parse_u32(v, l, 1);
     }},
    {"consecutive_hysteresis", "consecutive_hysteresis",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.scaler.consecutive_hysteresis = parse_bool(v, l);
     }},
    {"overflow_policy", "overflow_policy",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.scaler.policy = parse_enum<OverflowPolicy>(
           v, l,
           {{"skip", OverflowPolicy::Skip}, {"apply", OverflowPolicy::Apply}, {"retry", OverflowPolicy::Retry}});
     }},
    {"max_retries", "max_retries",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.scaler.max_retries = parse_u32(v, l);
     }},
    {"fail_after_overflows", "fail_after_overflows",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.scaler.fail_after = parse_u32(v, l);
     }},
    {"histogram_interval", "histogram_interval",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.scaler.histogram_interval = parse_u32(v, l);
     }},
    {"optimizer", "optimizer",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.optimizer.kind = parse_enum<OptimizerKind>(
           v, l, {{"sgd", OptimizerKind::SGD}, {"adam", OptimizerKind::Adam}, {"adamw", OptimizerKind::AdamW}});
     }},
    {"lr", "lr",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.optimizer.lr = non_negative(parse_double(v, l), v, l);
     }},
    {"learning_rate", "lr",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.optimizer.lr = non_negative(parse_double(v, l), v, l);
     }},
    {"momentum", "momentum",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.optimizer.momentum = unit_interval(parse_double(v, l), v, l);
     }},
    {"beta1", "beta1",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.optimizer.beta1 = unit_interval(parse_double(v, l), v, l);
     }},
    {"beta2", "beta2",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.optimizer.beta2 = unit_interval(parse_double(v, l), v, l);
     }},
    {"eps", "eps",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.optimizer.eps = positive(parse_double(v, l), v, l);
     }},
    {"weight_decay", "weight_decay",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.optimizer.weight_decay = non_negative(parse_double(v, l), v, l);
     }},
    {"lr_schedule", "lr_schedule",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.optimizer.schedule = parse_enum<LrSchedule>(
           v, l, {{"constant", LrSchedule::Constant}, {"step", LrSchedule::Step}, {"cosine", LrSchedule::Cosine}});
     }},
    {"warmup_steps", "warmup_steps",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.optimizer.warmup_steps = parse_u32(v, l);
     }},
    {"lr_step_size", "lr_step_size",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.optimizer.step_size = parse_u32(v, l, 1);
     }},
    {"lr_gamma", "lr_gamma",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       c.optimizer.gamma = positive(parse_double(v, l), v, l);
     }},
    {"batch", "batch",
     [](const std::string& v, const std::string& l, TrainConfig& c) { c.batch = parse_u32(v, l, 1); }},
    {"batch_size", "batch",
     [](const std::string& v, const std::string& l, TrainConfig& c) { c.batch = parse_u32(v, l, 1); }},
    {"epochs", "epochs",
     [](const std::string& v, const std::string& l, TrainConfig& c) { c.epochs = parse_u32(v, l, 1); }},
    {"grad_accum", "grad_accum",
     [](const std::string& v, const std::string& l, TrainConfig& c) { c.grad_accum = parse_u32(v, l, 1); }},
    {"seed", "seed",
     [](const std::string& v, const std::string& l, TrainConfig& c) { c.seed = parse_u64(v, l); }},
    {"data", "data",
     [](const std::string& v, const std::string&, TrainConfig& c) { c.data_dir = v; }},
    {"metrics", "metrics",
     [](const std::string& v, const std::string&, TrainConfig& c) { c.metrics_path = v; }},
    {"report", "report",
     [](const std::string& v, const std::string&, TrainConfig& c) { c.report_path = v; }},
    {"checkpoint", "checkpoint",
     [](const std::string& v, const std::string&, TrainConfig& c) { c.checkpoint_path = v; }},
    {"checkpoint_every", "checkpoint_every",
     [](const std::string& v, const std::string& l, TrainConfig& c) { c.checkpoint_every = parse_u32(v, l); }},
    {"resume", "resume",
     [](const std::string& v, const std::string& l, TrainConfig& c) { c.resume = parse_bool(v, l); }},
    {"save", "save",
     [](const std::string& v, const std::string&, TrainConfig& c) { c.save_path = v; }},
    {"init_from", "init_from",
     [](const std::string& v, const std::string&, TrainConfig& c) { c.init_from = v; }},
    {"save_dtype", "save_dtype",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       auto f = parse_format(lower(v));
       if (!f || *f == Format::CB16) fail(l, "unknown value '" + v + "' (expected fp32 | fp16 | bf16)");
       c.save_dtype = *f;
     }},
    {"inject_overflow", "inject_overflow",
     [](const std::string& v, const std::string& l, TrainConfig& c) {
       try {
         c.inject_overflow = parse_step_ranges(v);
       } catch (const ConfigError& e) {
         fail(l, e.what());
       }
     }},
    {"progress", "progress",
     [](const std::string& v, const std::string& l, TrainConfig& c) { c.progress = parse_bool(v, l); }},
};
// clang-format on

const Setting* find_setting(const std::string& key) {
  for (const Setting& s : kSettings)
    if (key == s.key) return &s;
  return nullptr;
}

// Names other tools use for the same knobs: pointed at in "did you mean".
const std::pair<const char*, const char*> kForeignNames[] = {
    {"growth_interval", "steps_per_increase"},
    {"scale_window", "steps_per_increase"},
    {"loss_scale", "loss_scaling_factor"},
    {"init_scale", "initial_loss_scale"},
    {"initial_scale", "initial_loss_scale"},
    {"min_scale", "min_loss_scale"},
    {"max_scale", "max_loss_scale"},
    {"max_grad_norm", "max_gradient_norm"},
    {"clip_grad_norm", "max_gradient_norm"},
    {"clip_grad_value", "max_gradient_value"},
    {"clip_value", "max_gradient_value"},
    {"clip_norm", "max_gradient_norm"},
    {"scale_factor", "growth_factor"},
    {"dtype", "precision"},
    {"num_epochs", "epochs"},
    {"micro_batches", "grad_accum"},
    {"gradient_accumulation_steps", "grad_accum"},
};

std::string unknown_key_message(const std::string& key) {
  std::string msg = "unknown key '" + key + "'";
  std::string hint = suggest_key(key);
  if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
  return msg;
}

// Both the flag and the YAML key, for validate()'s messages.
std::string names(const char* key) { return flag_of(key) + " (" + key + ")"; }

// "value" / 'value' -> value; "FILE:LINE: ..." is added by the caller.
std::string unquote(const std::string& v) {
  if (v.empty() || (v[0] != '"' && v[0] != '\'')) return v;
  char q = v[0];
  std::string out;
  size_t i = 1;
  for (; i < v.size(); ++i) {
    char ch = v[i];
    if (q == '\'' && ch == '\'') {
      if (i + 1 < v.size() && v[i + 1] == '\'') {  // '' is a quote inside '...'
        out += '\'';
        ++i;
        continue;
      }
      break;
    }
    if (q == '"' && ch == '\\' && i + 1 < v.size()) {
      char n = v[++i];
      switch (n) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case '"':
        case '\\':
        case '/': out += n; break;
        default: throw ConfigError(std::string("unsupported escape \\") + n + " in a quoted value");
      }
      continue;
    }
    if (q == '"' && ch == '"') break;
    out += ch;
  }
  if (i >= v.size()) throw ConfigError(std::string("unterminated ") + q + "quoted" + q + " value");
  if (i + 1 != v.size()) throw ConfigError("unexpected text after the closing quote: " + v.substr(i + 1));
  return out;
}

// Cuts a '#' comment that starts the line or follows whitespace, outside quotes.
std::string strip_comment(const std::string& line) {
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char ch = line[i];
    if (quote) {
      if (quote == '"' && ch == '\\')
        ++i;
      else if (ch == quote)
        quote = 0;
    } else if (ch == '"' || ch == '\'') {
      // Quotes only open a quoted scalar at the start of the value.
      size_t j = i;
      while (j > 0 && (line[j - 1] == ' ' || line[j - 1] == '\t')) --j;
      if (j > 0 && line[j - 1] == ':') quote = ch;
    } else if (ch == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      return line.substr(0, i);
    }
  }
  return line;
}

bool valid_key(const std::string& k) {
  if (k.empty()) return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  return true;
}

}  // namespace

// ---- public API -------------------------------------------------------------

const std::vector<std::string>& setting_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const Setting& s : kSettings) k.emplace_back(s.key);
    return k;
  }();
  return keys;
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  // Optimal string alignment distance (Levenshtein plus adjacent swaps).
  auto distance = [](const std::string& a, const std::string& b) {
    const size_t n = a.size(), m = b.size();
    std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
    for (size_t i = 0; i <= n; ++i) d[i][0] = i;
    for (size_t j = 0; j <= m; ++j) d[0][j] = j;
    for (size_t i = 1; i <= n; ++i)
      for (size_t j = 1; j <= m; ++j) {
        size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    return d[n][m];
  };
  std::string best;
  size_t best_d = std::max<size_t>(1, std::min(word.size() / 3, size_t(3))) + 1;  // accept < this
  for (const std::string& c : candidates) {
    size_t dd = distance(word, c);
    if (dd < best_d) {
      best_d = dd;
      best = c;
    }
  }
  return best;
}

std::string suggest_key(const std::string& unknown) {
  for (const auto& [from, to] : kForeignNames)
    if (unknown == from) return to;
  return closest_match(unknown, setting_keys());
}

void apply_setting(const std::string& key, const std::string& value, TrainConfig& cfg,
                   const std::string& label) {
  const Setting* s = find_setting(key);
  if (!s) throw ConfigError(unknown_key_message(key));
  s->apply(value, label, cfg);
}

void apply_setting(const std::string& key, const std::string& value, TrainConfig& cfg) {
  apply_setting(key, value, cfg, key);
}

void apply_config_file(const std::string& path, TrainConfig& cfg) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    throw ConfigError("cannot read config file '" + path +
                      "': " + (err ? std::strerror(err) : "open failed"));
  }
  std::map<std::string, int> seen;  // canonical key -> line it was set on
  std::string line;
  int lineno = 0;
  auto where = [&] { return path + ":" + std::to_string(lineno) + ": "; };
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (lineno == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8 BOM
    std::string text = strip_comment(line);
    std::string t = trim(text);
    if (t.empty() || t == "---" || t == "...") continue;
    if (text[0] == ' ' || text[0] == '\t')
      throw ConfigError(
          where() +
          "indented line: nested YAML is not supported, write 'key: value' at the start of the line");
    if (t[0] == '-') throw ConfigError(where() + "YAML lists are not supported, write 'key: value'");
    size_t colon = std::string::npos;
    for (size_t i = 0; i < t.size(); ++i)
      if (t[i] == ':' && (i + 1 == t.size() || t[i + 1] == ' ' || t[i + 1] == '\t')) {
        colon = i;
        break;
      }
    if (colon == std::string::npos)
      throw ConfigError(where() + "expected 'key: value' (with a space after the colon), got '" + t + "'");
    std::string key = trim(std::string_view(t).substr(0, colon));
    std::string raw = trim(std::string_view(t).substr(colon + 1));
    if (!valid_key(key)) throw ConfigError(where() + "'" + key + "' is not a valid key");
    const Setting* s = find_setting(key);
    if (!s) throw ConfigError(where() + unknown_key_message(key));
    if (raw.empty())
      throw ConfigError(where() + key + ": no value (write " + key + ": VALUE, or \"\" for an empty string)");
    std::string value;
    try {
      value = unquote(raw);
    } catch (const ConfigError& e) {
      throw ConfigError(where() + key + ": " + e.what());
    }
    auto [it, inserted] = seen.emplace(s->canonical, lineno);
    if (!inserted)
      throw ConfigError(where() + key + ": set twice (first on line " + std::to_string(it->second) + ")");
    try {
      s->apply(value, key, cfg);
    } catch (const ConfigError& e) {
      throw ConfigError(where() + e.what());
    }
  }
  if (in.bad()) throw ConfigError("error while reading config file '" + path + "'");
}

std::vector<StepRange> parse_step_ranges(const std::string& s) {
  std::vector<StepRange> out;
  std::string all = trim(s);
  if (all.empty()) return out;
  auto bad = [&](const std::string& why) -> ConfigError {
    return ConfigError("bad step list '" + s + "': " + why + " (expected e.g. 120,300-305)");
  };
  auto number = [&](const std::string& item, const std::string& n) -> uint64_t {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), v, 10);
    if (n.empty() || ec != std::errc() || p != n.data() + n.size())
      throw bad("'" + item + "' is not a step or a FIRST-LAST range");
    return v;
  };
  size_t pos = 0;
  while (true) {
    size_t comma = all.find(',', pos);
    std::string item =
        trim(std::string_view(all).substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (item.empty()) throw bad("empty item");
    size_t dash = item.find('-');
    StepRange r;
    if (dash == std::string::npos) {
      r.first = r.last = number(item, item);
    } else {
      r.first = number(item, trim(std::string_view(item).substr(0, dash)));
      r.last = number(item, trim(std::string_view(item).substr(dash + 1)));
      if (r.last < r.first) throw bad("range '" + item + "' ends before it starts");
    }
    out.push_back(r);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

TrainConfig with_live_scaler(const TrainConfig& cfg, const ScalerConfig& sc) {
  if (sc.mode != cfg.scaler.mode)
    throw ConfigError("the loss-scale mode cannot change during a run; start a new run");
  TrainConfig next = cfg;
  next.scaler = sc;
  if (sc.mode == LossScaleMode::Dynamic && sc.min_scale <= sc.max_scale)
    next.scaler.initial_scale = std::clamp(sc.initial_scale, sc.min_scale, sc.max_scale);
  validate(next);
  return next;
}

void validate(const TrainConfig& cfg) {
  const ScalerConfig& sc = cfg.scaler;
  auto err = [](const std::string& m) { throw ConfigError(m); };
  auto finite = [&](double x, const char* key) {
    if (!std::isfinite(x)) err(names(key) + " must be a finite number (got " + fmt(x) + ")");
  };

  // The picture is a PNG; a typo'd name should fail now, not after training.
  auto ends_with = [](const std::string& s, const char* tail) {
    size_t n = std::strlen(tail);
    return s.size() >= n && std::equal(s.end() - n, s.end(), tail, [](char a, char b) { return std::tolower(a) == b; });
  };
  if (!cfg.report_path.empty() && !ends_with(cfg.report_path, ".png"))
    err(names("report") + " writes a PNG picture: give a file name ending in .png (got \"" + cfg.report_path + "\")");

  // safetensors holds F32, F16 and BF16; cb16 has no PyTorch dtype.
  if (cfg.save_dtype != Format::F32 && cfg.save_dtype != Format::F16 && cfg.save_dtype != Format::BF16)
    err(names("save_dtype") + " must be fp32, fp16 or bf16 (got " + format_name(cfg.save_dtype) + ")");

  // Gradient clipping: one knob or none (Cerebras: max_gradient_norm xor max_gradient_value).
  finite(cfg.clip.max_norm, "max_gradient_norm");
  finite(cfg.clip.max_value, "max_gradient_value");
  if (cfg.clip.max_norm < 0)
    err(names("max_gradient_norm") + " must be >= 0 (0 = off), got " + fmt(cfg.clip.max_norm));
  if (cfg.clip.max_value < 0)
    err(names("max_gradient_value") + " must be >= 0 (0 = off), got " + fmt(cfg.clip.max_value));
  if (cfg.clip.max_norm > 0 && cfg.clip.max_value > 0)
    err("--max-gradient-norm and --max-gradient-value (max_gradient_norm, max_gradient_value) "
        "cannot both be set: clip by the global norm or by value, not both (got " +
        fmt(cfg.clip.max_norm) + " and " + fmt(cfg.clip.max_value) + ")");

  // Loss scale.
  const std::string scale_names = sc.mode == LossScaleMode::Static
                                      ? "--loss-scale (loss_scaling_factor)"
                                      : "--initial-loss-scale (initial_loss_scale)";
  if (!(sc.initial_scale > 0) || !std::isfinite(sc.initial_scale))
    err(scale_names + ": the loss scale must be a finite number > 0, got " + fmt(sc.initial_scale));
  if (!(sc.min_scale > 0) || !std::isfinite(sc.min_scale))
    err(names("min_loss_scale") + " must be a finite number > 0, got " + fmt(sc.min_scale));
  if (!(sc.max_scale > 0) || !std::isfinite(sc.max_scale))
    err(names("max_loss_scale") + " must be a finite number > 0, got " + fmt(sc.max_scale));
  if (sc.min_scale > sc.max_scale)
    err(names("min_loss_scale") + " = " + fmt(sc.min_scale) + " is above " + names("max_loss_scale") + " = " +
        fmt(sc.max_scale));
  if (sc.mode == LossScaleMode::Dynamic &&
      (sc.initial_scale < sc.min_scale || sc.initial_scale > sc.max_scale))
    err(names("initial_loss_scale") + " = " + fmt(sc.initial_scale) + " is outside [" +
        names("min_loss_scale") + ", " + names("max_loss_scale") + "] = [" + fmt(sc.min_scale) + ", " +
        fmt(sc.max_scale) + "]; set an initial scale inside the range");
  finite(sc.growth_factor, "growth_factor");
  if (!(sc.growth_factor > 1)) err(names("growth_factor") + " must be > 1, got " + fmt(sc.growth_factor));
  if (!(sc.backoff_factor > 0 && sc.backoff_factor < 1))
    err(names("backoff_factor") + " must be in (0, 1), got " + fmt(sc.backoff_factor));
  if (sc.growth_interval < 1) err(names("steps_per_increase") + " must be >= 1");
  if (sc.hysteresis < 1) err(names("hysteresis") + " must be >= 1 (1 = back off on every overflow)");
  // A retry recomputes the batch at a lower scale; a fixed scale would
  // overflow the same way every time.
  if (sc.policy == OverflowPolicy::Retry && sc.mode != LossScaleMode::Dynamic)
    err(flag_of("overflow_policy") + " retry (overflow_policy) recomputes at a backed-off loss scale, which needs dynamic scaling; " +
        "--loss-scale (loss_scaling_factor) is " +
        (sc.mode == LossScaleMode::Static ? "a static " + fmt(sc.initial_scale) : std::string("none")) +
        ": use --overflow-policy skip, or --loss-scale dynamic");

  // Optimizer.
  const OptimizerConfig& o = cfg.optimizer;
  finite(o.lr, "lr");
  finite(o.weight_decay, "weight_decay");
  finite(o.eps, "eps");
  finite(o.gamma, "lr_gamma");
  if (o.lr < 0) err(names("lr") + " must be >= 0, got " + fmt(o.lr));
  if (!(o.momentum >= 0 && o.momentum < 1))
    err(names("momentum") + " must be in [0, 1), got " + fmt(o.momentum));
  if (!(o.beta1 >= 0 && o.beta1 < 1)) err(names("beta1") + " must be in [0, 1), got " + fmt(o.beta1));
  if (!(o.beta2 >= 0 && o.beta2 < 1)) err(names("beta2") + " must be in [0, 1), got " + fmt(o.beta2));
  if (!(o.eps > 0)) err(names("eps") + " must be > 0, got " + fmt(o.eps));
  if (o.weight_decay < 0) err(names("weight_decay") + " must be >= 0, got " + fmt(o.weight_decay));
  if (!(o.gamma > 0)) err(names("lr_gamma") + " must be > 0, got " + fmt(o.gamma));
  if (o.step_size < 1) err(names("lr_step_size") + " must be >= 1");

  // Loop.
  if (cfg.batch < 1) err(names("batch") + " must be >= 1");
  if (cfg.epochs < 1) err(names("epochs") + " must be >= 1");
  if (cfg.grad_accum < 1) err(names("grad_accum") + " must be >= 1");
  for (const StepRange& r : cfg.inject_overflow)
    if (r.last < r.first)
      err(names("inject_overflow") + ": range " + std::to_string(r.first) + "-" + std::to_string(r.last) +
          " ends before it starts");
  if (cfg.resume && cfg.checkpoint_path.empty())
    err("--resume (resume: true) needs a checkpoint file: give --checkpoint FILE (checkpoint)");
}

const char* scale_mode_name(LossScaleMode m) {
  switch (m) {
    case LossScaleMode::None: return "none";
    case LossScaleMode::Static: return "static";
    case LossScaleMode::Dynamic: return "dynamic";
  }
  return "?";
}

const char* policy_name(OverflowPolicy p) {
  switch (p) {
    case OverflowPolicy::Skip: return "skip";
    case OverflowPolicy::Apply: return "apply";
    case OverflowPolicy::Retry: return "retry";
  }
  return "?";
}

const char* optimizer_name(OptimizerKind k) {
  switch (k) {
    case OptimizerKind::SGD: return "sgd";
    case OptimizerKind::Adam: return "adam";
    case OptimizerKind::AdamW: return "adamw";
  }
  return "?";
}

const char* schedule_name(LrSchedule s) {
  switch (s) {
    case LrSchedule::Constant: return "constant";
    case LrSchedule::Step: return "step";
    case LrSchedule::Cosine: return "cosine";
  }
  return "?";
}

}  // namespace vkamp::train
