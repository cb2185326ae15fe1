#include "orchestrate/device_spec.hpp"

#include <algorithm>
#include <cctype>

#include "core/errors.hpp"

namespace kbv {
namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 4 && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

std::string normalize_device(const std::string& spec) {
  if (spec == "cpu" || spec == "auto") return spec;
  if (spec == "cuda") return "cuda:0";
  if (spec.rfind("cuda:", 0) == 0 && all_digits(spec.substr(5))) return "cuda:" + std::to_string(std::stoi(spec.substr(5)));
  if (all_digits(spec)) return "cuda:" + std::to_string(std::stoi(spec));
  throw UsageError("unknown device '" + spec + "': write cuda or cuda:N (e.g. cuda:0) for a GPU, cpu, or auto");
}

std::vector<std::string> normalize_devices(const std::vector<std::string>& specs) {
  std::vector<std::string> out;
  for (const auto& s : specs) {
    std::string d = normalize_device(s);
    if (d == "auto") {
      if (specs.size() > 1) throw UsageError("--device auto cannot be combined with other devices");
      return {};
    }
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  }
  return out;
}

}  // namespace kbv
