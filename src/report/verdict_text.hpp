#pragma once
// A verdict as text for a person at a terminal.
#include <string>

#include "core/verdict.hpp"

namespace kbv {

std::string format_verdict(const Verdict& v);
std::string format_bytes(std::int64_t bytes);  // "1.50 GiB", "12.0 MiB", "512 B"

}  // namespace kbv
