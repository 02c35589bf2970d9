#include "vkamp/io/metrics_log.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "vkamp/error.hpp"
#include "vkamp/platform/files.hpp"

namespace vkamp::io {
namespace {

using Json = nlohmann::ordered_json;  // keeps the fields in the order tools read them

// One JSON Lines record: {"key": value, ...} in insertion order, with the
// ", " and ": " separators the file has always had. nlohmann writes the
// keys and values (strings escaped, invalid UTF-8 replaced); real numbers
// go through json_number (shortest round-trip text, null when not finite).
std::string record(const Json& fields) {
  std::string out = "{";
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    if (it != fields.begin()) out += ", ";
    out += Json(it.key()).dump(-1, ' ', false, Json::error_handler_t::replace);
    out += ": ";
    out += it.value().is_number_float() ? json_number(it.value().get<double>())
                                        : it.value().dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  return out + "}\n";
}

// A fraction of `elements`, null when there are none (no scope).
Json share(uint32_t count, uint64_t elements) {
  return elements ? Json(double(count) / double(elements)) : Json(nullptr);
}

Json headroom(const std::optional<int>& h) { return h ? Json(*h) : Json(nullptr); }

}  // namespace

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";  // JSON has no inf or NaN
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

MetricsLog::MetricsLog(const std::string& path, train::UnderflowScope scope) : path_(path), scope_(std::move(scope)) {
  f_ = vkamp::platform::open_file(path, "w");
  if (!f_) throw Error("cannot write metrics to " + path + ": " + std::strerror(errno));
}

MetricsLog::~MetricsLog() {
  if (f_) std::fclose(f_);
}

void MetricsLog::put(const std::string& line) { std::fputs(line.c_str(), f_); }

void MetricsLog::write(const train::StepMetrics& m) {
  Json j;
  j["step"] = m.step;
  j["loss"] = double(m.loss);
  j["loss_scale"] = double(m.loss_scale);
  j["skipped"] = m.skipped;
  j["overflow"] = m.overflow;
  j["grad_norm"] = double(m.grad_norm);
  j["lr"] = double(m.lr);
  j["retries"] = m.retries;
  j["step_time"] = double(m.step_time_ms);
  j["zeros"] = share(m.zeros, scope_.total);
  j["subnormal"] = share(m.subnormal, scope_.total);
  j["lost_unscaled"] = share(m.lost_unscaled, scope_.total);
  j["headroom"] = scope_.empty() ? Json(nullptr) : headroom(scope_.of_step(m).headroom);
  put(record(j));
}

void MetricsLog::write(const train::TensorHistogram& h) {
  Json bins = Json::array();
  for (int i = 0; i < train::kHistLogBins; ++i) bins.push_back(h.bins[i]);
  Json j;
  j["type"] = "histogram";
  j["step"] = h.step;
  j["tensor"] = h.tensor;
  j["loss_scale"] = double(h.loss_scale);
  j["min_exp"] = train::kHistMinExp;
  j["log2_bins"] = std::move(bins);
  j["zero"] = h.bins[train::kHistZero];
  j["inf"] = h.bins[train::kHistInf];
  j["nan"] = h.bins[train::kHistNan];
  put(record(j));
}

void MetricsLog::write(const train::TensorUnderflow& u) {
  if (u.stats.size() != scope_.tensors.size()) return;
  for (size_t i = 0; i < u.stats.size(); ++i) {
    const train::TensorStats& s = u.stats[i];
    const uint64_t n = scope_.elements[i];
    Json j;
    j["type"] = "underflow";
    j["step"] = u.step;
    j["tensor"] = scope_.tensors[i];
    j["loss_scale"] = double(u.loss_scale);
    j["zeros"] = share(s.zeros, n);
    j["subnormal"] = share(s.subnormal, n);
    j["lost_unscaled"] = share(s.lost_unscaled, n);
    j["nonfinite"] = share(s.nonfinite, n);
    j["headroom"] = headroom(scope_.of_tensor(i, s).headroom);
    put(record(j));
  }
}

void MetricsLog::write(const train::EpochEnd& e) {
  if (e.metric.empty()) return;
  Json j;
  j["type"] = "eval";
  j["epoch"] = e.epoch;
  j["step"] = e.step;
  j[e.metric] = double(e.value);
  put(record(j));
}

}  // namespace vkamp::io
