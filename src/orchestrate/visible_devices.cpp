#include "orchestrate/visible_devices.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace kbv {
namespace {

std::string trimmed(const std::string& s) {
  auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string::size_type start = 0;
  for (;;) {
    auto comma = s.find(',', start);
    out.push_back(trimmed(s.substr(start, comma - start)));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// The device an entry names, as a comparable identity ("#3", a full UUID, or the entry itself
// when it cannot be checked); nullopt when it names none, which ends the list.
std::optional<std::string> device_named(const std::string& entry, const GpuInventory& host) {
  if (all_digits(entry)) {
    if (entry.size() > 4 || std::stoi(entry) >= host.gpu_count()) return std::nullopt;
    return "#" + std::to_string(std::stoi(entry));
  }
  if (entry.rfind("MIG-", 0) == 0 && entry.size() > 4) return entry;  // MIG instances: not in NVML's GPU list
  if (entry.rfind("GPU-", 0) != 0 || entry.size() <= 4) return std::nullopt;
  if (!host.nvml_uuids) return entry;  // no NVML to check against: as listed
  std::optional<std::string> match;
  for (const auto& uuid : *host.nvml_uuids) {
    if (uuid.rfind(entry, 0) != 0) continue;
    if (match) return std::nullopt;  // an ambiguous prefix names no one device
    match = uuid;
  }
  return match;
}

}  // namespace

int GpuInventory::gpu_count() const { return nvml_uuids ? static_cast<int>(nvml_uuids->size()) : device_files; }

std::vector<std::string> visible_cuda_devices(const std::optional<std::string>& cuda_visible_devices,
                                              const GpuInventory& host) {
  std::vector<std::string> out;
  if (!cuda_visible_devices) {
    for (int i = 0; i < host.gpu_count(); ++i) out.push_back("cuda:" + std::to_string(i));
    return out;
  }
  std::set<std::string> seen;
  for (const auto& entry : split_commas(*cuda_visible_devices)) {
    auto device = device_named(entry, host);
    if (!device || !seen.insert(*device).second) break;
    out.push_back("cuda:" + std::to_string(out.size()));
  }
  return out;
}

}  // namespace kbv
