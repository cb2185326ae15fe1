#pragma once
// The report as ONE self-contained HTML file: inline CSS, inline SVG plots drawn by
// svg_plot.cpp, and a few lines of inline JS to sort and filter tables. No network access.
#include <string>

#include "report/aggregates.hpp"

namespace kbv {

std::string render_html(const Report& report);

}  // namespace kbv
