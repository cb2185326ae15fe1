#pragma once
// Timestamps in verdicts, runs and generated files: UTC, ISO 8601, seconds ("2026-11-30T16:01:06Z").
#include <string>

namespace kbv {

std::string utc_now_iso();

}  // namespace kbv
