#include "core/outcome.hpp"

#include <array>
#include <utility>

namespace kbv {
namespace {
constexpr std::array<std::pair<Outcome, std::string_view>, 10> kNames{{
    {Outcome::correct, "correct"},
    {Outcome::incorrect, "incorrect"},
    {Outcome::compile_error, "compile_error"},
    {Outcome::runtime_error, "runtime_error"},
    {Outcome::timeout, "timeout"},
    {Outcome::crashed, "crashed"},
    {Outcome::skipped, "skipped"},
    {Outcome::problem_error, "problem_error"},
    {Outcome::protocol_violation, "protocol_violation"},
    {Outcome::internal_error, "internal_error"},
}};
}  // namespace

std::string_view outcome_name(Outcome o) {
  for (const auto& [value, name] : kNames)
    if (value == o) return name;
  return "unknown";
}

std::optional<Outcome> outcome_from_name(std::string_view name) {
  for (const auto& [value, n] : kNames)
    if (n == name) return value;
  return std::nullopt;
}

}  // namespace kbv
