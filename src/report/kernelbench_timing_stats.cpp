#include "report/kernelbench_timing_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kbv {

double round_3_significant(double x) {
  if (!std::isfinite(x) || x == 0) return x;
  // %.3g then strtod is exactly what Python's float(f"{x:.3g}") does (both round half to even
  // on the decimal digits of the binary value).
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return std::strtod(buf, nullptr);
}

double samples_mean(const std::vector<double>& samples_ms) {
  if (samples_ms.empty()) return 0;
  double sum = 0;
  for (double x : samples_ms) sum += x;
  return sum / static_cast<double>(samples_ms.size());
}

double samples_population_std(const std::vector<double>& samples_ms) {
  if (samples_ms.empty()) return 0;
  double mean = samples_mean(samples_ms);
  double ss = 0;
  for (double x : samples_ms) ss += (x - mean) * (x - mean);
  return std::sqrt(ss / static_cast<double>(samples_ms.size()));
}

std::string kernelbench_device(const DeviceInfo& d) {
  return d.kind == "cuda" ? "cuda:0" : d.kind;
}

nlohmann::ordered_json kernelbench_runtime_stats(const SeriesStats& s, const DeviceInfo& d) {
  const auto& xs = s.samples_ms;
  bool raw = !xs.empty();
  double mean = raw ? samples_mean(xs) : s.mean_ms;
  double min = raw ? *std::min_element(xs.begin(), xs.end()) : s.min_ms;
  double max = raw ? *std::max_element(xs.begin(), xs.end()) : s.max_ms;
  nlohmann::ordered_json j;
  j["mean"] = round_3_significant(mean);
  j["std"] = round_3_significant(samples_population_std(xs));
  j["min"] = round_3_significant(min);
  j["max"] = round_3_significant(max);
  j["num_trials"] = raw ? static_cast<std::int64_t>(xs.size()) : s.samples;
  j["hardware"] = d.name;
  j["device"] = kernelbench_device(d);
  return j;
}

}  // namespace kbv
