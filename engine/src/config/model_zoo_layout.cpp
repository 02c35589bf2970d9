// The Cerebras Model Zoo trainer layout, as Model Zoo's own configs write it
// (trainer: init: precision / optimizer / schedulers / loop / checkpoint /
// seed), translated to vkamp's flat keys. Each argument vkamp reads maps to
// one flat key and its value goes through that key's row unchanged; the
// sections vkamp does not use (the model, the data loaders, the backend,
// ...) are listed once in one warning; a misspelt name inside a section is
// an error with the closest name. Which argument maps to what is the table
// of model_zoo_args.hpp; this file walks the file's sections against it.
#include "model_zoo_layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include "model_zoo_args.hpp"
#include "vkamp/config/setting.hpp"

namespace vkamp::config {

const char* kind_of(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "no value";
    case YAML::NodeType::Scalar: return "a single value";
    default: return "nothing";
  }
}

namespace {

using namespace model_zoo;  // the argument tables

std::vector<std::string> names_of(const Args& args) {
  std::vector<std::string> n;
  for (const Arg& a : args) n.push_back(a.name);
  return n;
}
std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

struct Entry {
  std::string name, path;
  int line;
  YAML::Node value;
};

const Entry* find(const std::vector<Entry>& es, const std::string& name) {
  for (const Entry& e : es)
    if (e.name == name) return &e;
  return nullptr;
}

class ModelZooReader {
 public:
  explicit ModelZooReader(FileSettings& file) : file_(file) {}

  void trainer(const YAML::Node& n, int line) {
    if (n.IsSequence())
      throw file_.error(line, "trainer: a list of trainers (several runs in one file) is not supported; write one "
                              "trainer: section");
    for (const Entry& e : entries(n, "trainer", line)) {
      if (e.name == "init") init(e);
      else if (e.name == "fit") fit(e);
      else if (contains(kTrainerUnused, e.name)) unused(e, true);
      else throw unknown(e, "trainer", joined({"init", "fit"}, kTrainerUnused));
    }
    if (unused_.empty()) return;
    std::string list;
    for (const std::string& u : unused_) list += (list.empty() ? "" : ", ") + u;
    std::fprintf(stderr, "%s: warning: vkamp does not use these Model Zoo settings, ignored: %s\n",
                 file_.file().c_str(), list.c_str());
  }

 private:
  // The entries of a section map in file order; a key is a plain name, once.
  std::vector<Entry> entries(const YAML::Node& map, const std::string& path, int line) const {
    std::vector<Entry> out;
    if (map.IsNull()) return out;  // an empty section
    if (!map.IsMap()) throw file_.error(line, path + ": expected a section of 'key: value' lines, got " + kind_of(map));
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node k = it->first;  // copies: it-> yields a temporary pair
      const YAML::Node v = it->second;
      const int at = line_of(k.Mark());
      if (!k.IsScalar()) throw file_.error(at, std::string("a key must be a plain name, not ") + kind_of(k));
      const std::string name = k.Scalar();
      if (const Entry* first = find(out, name))
        throw file_.error(at, path + "." + name + ": set twice (first on line " + std::to_string(first->line) + ")");
      out.push_back({name, path + "." + name, at, v});
    }
    return out;
  }

  // "unknown key 'trainer.init.precision.fp16_typo' (did you mean 'trainer.init.precision.fp16_type'?); ..."
  ConfigError unknown(const Entry& e, const std::string& section, const std::vector<std::string>& names) const {
    std::string hint = suggest_key(e.name, names);
    if (!contains(names, hint)) hint = closest_match(e.name, names);
    std::string msg = "unknown key '" + e.path + "'";
    if (!hint.empty()) msg += " (did you mean '" + section + "." + hint + "'?)";
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    return file_.error(e.line, msg + "; " + section + " takes " + list);
  }

  void note(const Entry& e, const std::string& why) const {
    std::fprintf(stderr, "%s:%d: note: %s ignored: %s\n", file_.file().c_str(), e.line, e.path.c_str(), why.c_str());
  }

  // A section vkamp does not use, with its keys when `expand` (trainer.fit's
  // train_dataloader and val_dataloader say more than "fit").
  void unused(const Entry& e, bool expand) {
    if (expand && e.value.IsMap()) {
      for (const Entry& c : entries(e.value, e.path, e.line)) unused(c, false);
      return;
    }
    unused_.push_back(e.path + " (line " + std::to_string(e.line) + ")");
  }

  std::string scalar(const Entry& e) const {
    if (!e.value.IsScalar())
      throw file_.error(e.line, e.path + ": expected a single value, got " + kind_of(e.value));
    return e.value.Scalar();
  }

  // The table's rules for one entry; false when the entry is Special.
  bool apply(const Entry& e, const Args& args, const std::string& section, bool lr_from_schedule = false) const {
    auto it = std::find_if(args.begin(), args.end(), [&](const Arg& a) { return e.name == a.name; });
    if (it == args.end()) throw unknown(e, section, names_of(args));
    switch (it->use) {
      case Use::Set:
        if (lr_from_schedule && std::string(it->what) == "learning_rate") note(e, kScheduleOwnsLr);
        else file_.set(e.line, it->what, e.path, e.value);
        return true;
      case Use::Note: note(e, it->what); return true;
      case Use::Refuse: throw file_.error(e.line, e.path + " is not supported: " + it->what);
      case Use::Only: {
        const std::string v = scalar(e), only = it->only;
        const bool same = (only == "true" || only == "false") ? parse_bool(v, e.path) == (only == "true")
                                                              : parse_double(v, e.path) == parse_double(only, e.path);
        if (!same) throw file_.error(e.line, e.path + ": only " + only + " is supported (" + it->what + ")");
        return true;
      }
      case Use::Special: return false;
    }
    return true;
  }

  void init(const Entry& init) {
    const std::vector<Entry> es = entries(init.value, init.path, init.line);
    // A schedule sets the learning rate, whatever the optimizer says: Model Zoo's rule.
    const Entry* sched = find(es, "schedulers");
    const bool lr_from_schedule = sched && !sched->value.IsNull() && sched->value.size() > 0;
    for (const Entry& e : es) {
      if (e.name == "precision") precision(e);
      else if (e.name == "optimizer") optimizer(e, lr_from_schedule);
      else if (e.name == "schedulers") schedulers(e);
      else if (e.name == "loop") loop(e);
      else if (e.name == "checkpoint") checkpoint(e);
      else if (e.name == "seed") file_.set(e.line, "seed", e.path, e.value);
      else if (contains(kInitUnused, e.name)) unused(e, false);
      else throw unknown(e, init.path, joined(kInitRead, kInitUnused));
    }
    // vkamp's cosine reaches 0 at the run's last update; Model Zoo's after its total_iters.
    if (cosine_iters_) file_.schedule_steps(*cosine_iters_);
    if (cosine_iters_ && steps_ && *cosine_iters_ != *steps_)
      std::fprintf(stderr,
                   "%s:%d: note: the schedule's phases last %u steps but the run %u; vkamp's cosine reaches 0 at the "
                   "run's last update\n",
                   file_.file().c_str(), cosine_line_, *cosine_iters_, *steps_);
  }

  void checkpoint(const Entry& sec) const {
    for (const Entry& e : entries(sec.value, sec.path, sec.line)) apply(e, kCheckpointArgs, sec.path);
  }

  // trainer.fit: the data loaders are vkamp's own (--data, --train); only
  // the training batch size carries over.
  void fit(const Entry& sec) {
    for (const Entry& e : entries(sec.value, sec.path, sec.line)) {
      if (e.name != "train_dataloader" || !e.value.IsMap()) {
        unused(e, false);
        continue;
      }
      const std::vector<Entry> ds = entries(e.value, e.path, e.line);
      if (const Entry* b = find(ds, "batch_size")) file_.set(b->line, "batch", b->path, b->value);
      if (ds.size() > size_t(find(ds, "batch_size") ? 1 : 0))
        unused_.push_back(e.path + " (line " + std::to_string(e.line) + ") but its batch_size");
    }
  }

  void precision(const Entry& sec) {
    const std::vector<Entry> es = entries(sec.value, sec.path, sec.line);
    for (const Entry& e : es) {
      if (apply(e, kPrecisionArgs, sec.path)) continue;
      // enabled: false trains in fp32, where fp16_type means nothing.
      if (!parse_bool(scalar(e), e.path)) {
        if (const Entry* t = find(es, "fp16_type"))
          throw file_.error(t->line, t->path + ": has no effect with enabled: false (line " + std::to_string(e.line) +
                                         "); remove one of them");
        file_.set_text(e.line, "precision", e.path, "fp32");
      }
    }
  }

  void optimizer(const Entry& sec, bool lr_from_schedule) {
    std::vector<std::string> names;
    for (const OptimizerClass& c : kOptimizerClasses) names.push_back(c.name);
    for (const Entry& e : entries(sec.value, sec.path, sec.line)) {
      auto c = std::find_if(kOptimizerClasses.begin(), kOptimizerClasses.end(),
                            [&](const OptimizerClass& k) { return e.name == k.name; });
      if (c == kOptimizerClasses.end()) {
        const Args& old = kOptimizerArgs;
        if (!contains(names_of(old), e.name)) throw unknown(e, sec.path, joined(names, names_of(old)));
        apply(e, old, sec.path, lr_from_schedule);
        continue;
      }
      file_.set_text(e.line, "optimizer", e.path, c->kind);
      for (const auto& [key, value] : c->defaults)
        if (!(lr_from_schedule && std::string(key) == "learning_rate"))
          file_.imply(key, e.path + " (cstorch's default " + key + ")", value);
      for (const Entry& a : entries(e.value, e.path, e.line)) {
        if (apply(a, c->args, e.path, lr_from_schedule)) continue;
        // betas: [beta1, beta2]
        if (!a.value.IsSequence() || a.value.size() != 2 || !a.value[0].IsScalar() || !a.value[1].IsScalar())
          throw file_.error(a.line, a.path + ": expected a list of two values, [beta1, beta2]");
        file_.set(a.line, "beta1", a.path + "[0]", a.value[0]);
        file_.set(a.line, "beta2", a.path + "[1]", a.value[1]);
      }
    }
  }

  void loop(const Entry& sec) {
    const std::vector<Entry> es = entries(sec.value, sec.path, sec.line);
    for (const char* name : {"max_steps", "num_steps"})
      if (const Entry* s = find(es, name)) steps_ = parse_u32(scalar(*s), s->path, 1);
    for (const Entry& e : es)
      if (!apply(e, kLoopArgs, sec.path)) eval_frequency(e);
    // The steps decide, as in Model Zoo: an epoch has at least one update.
    if (steps_ && !find(es, "num_epochs"))
      file_.imply("epochs", sec.path + ".max_steps (so that the steps decide)", std::to_string(*steps_));
  }

  // A number of steps; a fraction in (0, 1] of the run; 0 or null: no
  // evaluation during training (vkamp's final one only).
  void eval_frequency(const Entry& e) {
    const std::string v = e.value.IsNull() ? "0" : scalar(e);
    auto of_run = [&](double fraction) {
      if (!steps_)
        throw file_.error(e.line, e.path + ": '" + v + "' is a share of the run, which needs " + e.path.substr(0, e.path.rfind('.')) +
                                      ".max_steps; or write the steps between evaluations");
      return std::to_string(std::max<uint32_t>(1, uint32_t(std::lround(fraction * *steps_))));
    };
    const bool whole = !v.empty() && std::all_of(v.begin(), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (whole) {
      file_.set_text(e.line, "eval_every", e.path, parse_u32(v, e.path) == 0 ? of_run(1.0) : v);
      return;
    }
    const double f = parse_double(v, e.path);
    if (!(f > 0 && f <= 1))
      throw file_.error(e.line, e.path + ": expected the steps between evaluations or a share of the run in (0, 1], got '" + v + "'");
    file_.set_text(e.line, "eval_every", e.path, of_run(f));
  }

  // One schedule: a list of one scheduler (or the scheduler's map itself).
  void schedulers(const Entry& sec) {
    if (sec.value.IsNull()) return;
    if (sec.value.IsMap()) return scheduler(sec, sec.value);
    if (!sec.value.IsSequence()) throw file_.error(sec.line, sec.path + ": expected a list of schedulers");
    if (sec.value.size() > 1)
      throw file_.error(sec.line, sec.path + ": vkamp schedules the learning rate only, with one scheduler; got " +
                                      std::to_string(sec.value.size()));
    if (sec.value.size() == 1) scheduler(sec, sec.value[0]);
  }

  struct Phase {
    std::string name, path;
    int line;
    std::map<std::string, Entry> args;
    std::string text(const std::string& arg) const { return args.at(arg).value.Scalar(); }
    double number(const std::string& arg) const { return parse_double(text(arg), args.at(arg).path); }
  };

  // {Name: {args}}: the scheduler's one entry, its arguments checked;
  // `warm_up`: the first phase of a SequentialLR, where LinearLR is one.
  Phase phase(const Entry& at, const YAML::Node& item, bool warm_up = false) const {
    const std::vector<Entry> one = entries(item, at.path, line_of(item.Mark()));
    if (one.size() != 1)
      throw file_.error(line_of(item.Mark()), at.path + ": a scheduler is one 'Name: {arguments}' entry");
    const Entry& s = one[0];
    if (!contains(kVkampSchedules, s.name) && !(warm_up && s.name == "LinearLR")) {
      if (contains(kOtherSchedules, s.name))
        throw file_.error(s.line, s.path + " is not supported: " + kScheduleShapes);
      throw unknown(s, at.path, joined(kVkampSchedules, kOtherSchedules));
    }
    Phase p{s.name, s.path, s.line, {}};
    for (const Entry& a : entries(s.value, s.path, s.line)) {
      if (apply(a, kScheduleArgs, s.path)) continue;
      if (a.name != "schedulers") scalar(a);
      p.args.emplace(a.name, a);
    }
    return p;
  }

  // The arguments a phase needs, and those it may have besides.
  void require(const Phase& p, const std::vector<std::string>& needed,
               const std::vector<std::string>& optional = {}) const {
    for (const std::string& n : needed)
      if (!p.args.count(n)) throw file_.error(p.line, p.path + ": needs " + n);
    for (const auto& [name, a] : p.args)
      if (!contains(needed, name) && !contains(optional, name))
        throw file_.error(a.line, a.path + ": not an argument of " + p.name);
  }

  void cosine_to_zero(const Phase& p) {
    require(p, {"initial_learning_rate", "end_learning_rate", "total_iters"});
    if (p.number("end_learning_rate") != 0)
      throw file_.error(p.args.at("end_learning_rate").line,
                        p.args.at("end_learning_rate").path + ": only 0 is supported (vkamp's cosine ends at 0)");
  }

  void set_rate(const Phase& p, const char* arg, const char* schedule) {
    const Entry& a = p.args.at(arg);
    file_.set(a.line, "learning_rate", a.path, a.value);
    file_.set_text(p.line, "lr_schedule", p.path, schedule);
  }

  void scheduler(const Entry& sec, const YAML::Node& item) {
    const Phase p = phase(sec, item);
    if (p.name == "ConstantLR") {
      require(p, {"learning_rate"}, {"total_iters"});  // the rate stays after total_iters
      set_rate(p, "learning_rate", "constant");
    } else if (p.name == "StepLR") {
      require(p, {"initial_learning_rate", "step_size", "gamma"});
      set_rate(p, "initial_learning_rate", "step");
      file_.set(p.args.at("step_size").line, "lr_step_size", p.args.at("step_size").path, p.args.at("step_size").value);
      file_.set(p.args.at("gamma").line, "lr_gamma", p.args.at("gamma").path, p.args.at("gamma").value);
    } else if (p.name == "CosineDecayLR") {
      cosine_to_zero(p);
      set_rate(p, "initial_learning_rate", "cosine");
      cosine_iters_ = parse_u32(p.text("total_iters"), p.args.at("total_iters").path);
      cosine_line_ = p.line;
    } else {  // SequentialLR: LinearLR from 0, then CosineDecayLR to 0
      require(p, {"schedulers"}, {"milestones"});
      const Entry& list = p.args.at("schedulers");
      auto refuse = [&] { return file_.error(list.line, list.path + " is not supported: " + kScheduleShapes); };
      if (!list.value.IsSequence() || list.value.size() != 2) throw refuse();
      const Phase warm = phase(list, list.value[0], true), cos = phase(list, list.value[1]);
      if (warm.name != "LinearLR" || cos.name != "CosineDecayLR") throw refuse();
      cosine_to_zero(cos);
      require(warm, {"initial_learning_rate", "end_learning_rate", "total_iters"});
      if (warm.number("initial_learning_rate") != 0 || warm.number("end_learning_rate") != cos.number("initial_learning_rate"))
        throw file_.error(warm.line, warm.path + ": a warm-up from 0 to the cosine's initial_learning_rate is "
                                                 "supported, not this");
      set_rate(cos, "initial_learning_rate", "cosine");
      const Entry& w = warm.args.at("total_iters");
      file_.set(w.line, "warmup_steps", w.path, w.value);
      cosine_iters_ = parse_u32(w.value.Scalar(), w.path) + parse_u32(cos.text("total_iters"), cos.args.at("total_iters").path);
      cosine_line_ = p.line;
    }
  }

  FileSettings& file_;
  std::vector<std::string> unused_;     // "trainer.init.model (line 12)", in file order
  std::optional<uint32_t> steps_;       // trainer.init.loop.max_steps (or num_steps)
  std::optional<uint32_t> cosine_iters_;  // the schedule's total_iters, warm-up included
  int cosine_line_ = 0;
};

}  // namespace

void read_model_zoo_trainer(const YAML::Node& trainer, int line, FileSettings& file) {
  ModelZooReader(file).trainer(trainer, line);
}

}  // namespace vkamp::config
