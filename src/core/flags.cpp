#include "core/flags.hpp"

#include <array>

namespace kbv {
namespace {

constexpr std::array<FlagInfo, 15> kFlags{{
    {FlagName::input_mutated, "input_mutated", true},
    {FlagName::output_aliases_input, "output_aliases_input", true},
    {FlagName::result_reuse, "result_reuse", true},
    {FlagName::stale_memory, "stale_memory", true},
    {FlagName::unsynchronized_work, "unsynchronized_work", true},
    {FlagName::nondeterministic, "nondeterministic", true},
    {FlagName::implausible_speed, "implausible_speed", true},
    {FlagName::persisting_l2, "persisting_l2", true},
    {FlagName::build_cache_tampered, "build_cache_tampered", true},
    {FlagName::device_busy, "device_busy", true},
    {FlagName::judge_starved, "judge_starved", true},
    {FlagName::lower_precision, "lower_precision", false},
    {FlagName::sandbox_account_differs, "sandbox_account_differs", false},
    {FlagName::no_custom_kernel, "no_custom_kernel", false},
    {FlagName::degenerate, "degenerate", false},
}};

}  // namespace

const FlagInfo& flag_info(FlagName f) {
  for (const auto& info : kFlags)
    if (info.id == f) return info;
  return kFlags.front();
}

std::optional<FlagName> flag_from_name(std::string_view name) {
  for (const auto& info : kFlags)
    if (info.name == name) return info.id;
  return std::nullopt;
}

bool is_integrity_flag(std::string_view name) {
  auto f = flag_from_name(name);
  return !f || flag_info(*f).integrity;
}

}  // namespace kbv
