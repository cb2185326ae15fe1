#pragma once
// The report as JSON (schema "kbv.report/1", docs/report.md): the same numbers as the Markdown,
// plus every result field of each problem's best sample.
#include <string>

#include <nlohmann/json.hpp>

#include "report/aggregates.hpp"

namespace kbv {

inline constexpr const char* kReportSchema = "kbv.report/1";

nlohmann::ordered_json report_to_json(const Report& report);
std::string render_json(const Report& report);  // indented, invalid UTF-8 replaced

}  // namespace kbv
