#include "scan/python_facts.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>

#include "scan/child_process.hpp"
#include "scan/python_facts_script.hpp"  // generated: kPythonFactsScript
#include "scan/scan.hpp"

namespace kbv::scan::detail {
namespace {

// Below this much source, a second helper costs more (its start-up, ~50 ms) than it saves.
constexpr std::size_t kBytesPerHelper = 1 << 20;

PythonFacts facts_from_json(const nlohmann::json& j) {
  PythonFacts f;
  if (j.contains("error")) {
    f.syntax_problem =
        SyntaxProblem{j["error"]["line"].get<int>(), j["error"]["message"].get<std::string>()};
    return f;
  }
  for (const auto& c : j["comments"])
    f.comments.emplace_back(c[0].get<std::size_t>(), c[1].get<std::size_t>());
  for (const auto& s : j["strings"])
    f.strings.push_back({s[0].get<std::size_t>(), s[1].get<std::size_t>(), s[2].get<std::size_t>(),
                         s[3].get<std::size_t>(), s[4].get<int>() != 0});
  for (const auto& fw : j["forwards"]) {
    ForwardFacts ff{fw[0].get<int>(), fw[1].get<int>(), fw[2].get<std::vector<std::string>>(), {}};
    for (const auto& r : fw[3]) ff.returns.emplace_back(r[0].get<int>(), r[1].get<std::string>());
    f.forwards.push_back(std::move(ff));
  }
  for (const auto& t : j["tries"])
    f.tries.push_back({t[0].get<int>(), t[1].get<std::vector<std::string>>()});
  for (const auto& k : j["key_uses"])
    f.key_uses.emplace_back(k[0].get<int>(), k[1].get<int>() != 0);
  for (const auto& d : j["cache_decorators"])
    f.cache_decorators.emplace_back(d[0].get<int>(), d[1].get<int>() != 0);
  f.extension_names = j["extension_names"].get<std::vector<std::string>>();
  for (const auto& a : j["attribute_assignments"])
    f.attribute_assignments.emplace_back(a[0].get<int>(), a[1].get<std::string>());
  for (const auto& r : j["references"])
    f.references.emplace_back(r[0].get<int>(), r[1].get<std::string>());
  return f;
}

}  // namespace

const std::string& scan_python() {
  static const std::string python = KBV_SCAN_PYTHON;
  return python;
}

std::vector<PythonFacts> python_facts(const std::vector<std::string_view>& sources) {
  std::vector<PythonFacts> out;
  if (sources.empty()) return out;
  // Parsing is the cost, and files are independent: one helper per core for a large batch,
  // each taking a contiguous run of files so the answers keep their order.
  std::size_t total = 0;
  for (auto s : sources) total += s.size();
  std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  std::size_t helpers =
      std::clamp<std::size_t>(total / kBytesPerHelper, 1, std::min(cores, sources.size()));
  std::vector<std::string> inputs(helpers);
  std::vector<std::size_t> first(helpers + 1, sources.size());
  std::size_t helper = 0, taken = 0;
  first[0] = 0;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (helper + 1 < helpers && taken >= total * (helper + 1) / helpers) first[++helper] = i;
    inputs[helper] += std::to_string(sources[i].size());
    inputs[helper] += '\n';
    inputs[helper].append(sources[i]);
    taken += sources[i].size();
  }
  std::vector<std::string_view> views(inputs.begin(), inputs.end());
  std::vector<std::string> answers;
  try {
    // -I: no user site, no PYTHON* variables; -S: no site import (faster, nothing third-party).
    answers = run_each_with_stdin({scan_python(), "-I", "-S", "-c", kPythonFactsScript}, views);
  } catch (const ScanError& e) {
    throw ScanError(std::string(e.what()) +
                    " (kbv check parses Python with the interpreter kbv was configured with; "
                    "reconfigure with -DKBV_PYTHON=/path/to/python3, 3.8 or newer)");
  }
  for (std::size_t h = 0; h < helpers; ++h) {
    const std::string& answer = answers[h];
    std::size_t pos = 0;
    for (std::size_t i = first[h]; i < (h + 1 < helpers ? first[h + 1] : sources.size()); ++i) {
      std::size_t nl = answer.find('\n', pos);
      if (nl == std::string::npos)
        throw ScanError("the Python parser helper answered for " + std::to_string(out.size()) +
                        " of " + std::to_string(sources.size()) + " files");
      out.push_back(
          facts_from_json(nlohmann::json::parse(answer.begin() + static_cast<std::ptrdiff_t>(pos),
                                                answer.begin() + static_cast<std::ptrdiff_t>(nl))));
      pos = nl + 1;
    }
  }
  return out;
}

}  // namespace kbv::scan::detail
