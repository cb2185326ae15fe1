#pragma once
// The report as Markdown: what `kbv report` prints on the terminal by default.
#include <string>

#include "report/aggregates.hpp"

namespace kbv {

std::string render_markdown(const Report& report);

}  // namespace kbv
