#pragma once
// Verdicts as CSV: one row per stored verdict, one column per result field (the header is
// result_fields(), in order). RFC 4180 quoting.
#include <string>
#include <vector>

#include "store/result_fields.hpp"

namespace kbv {

std::string render_csv(const std::vector<VerdictRecord>& records);
std::string csv_escape(const std::string& value);

}  // namespace kbv
