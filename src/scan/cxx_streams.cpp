// Which CUDA streams the embedded C++ takes from torch (for side_stream's launch check).
#include "scan/scan_context.hpp"

namespace kbv::scan::detail {

void find_current_streams(ScanContext& ctx) {
  std::string_view text = ctx.views.strings;
  std::string_view call = "getCurrentCUDAStream";
  for (std::size_t p = text.find(call); p != std::string_view::npos; p = text.find(call, p + 1)) {
    ctx.asks_current_stream = true;
    int line = ctx.views.line_of(p);
    std::string_view before =
        text.substr(ctx.views.line_starts[static_cast<std::size_t>(line)],
                    p - ctx.views.line_starts[static_cast<std::size_t>(line)]);
    std::size_t eq = before.rfind('=');
    if (eq == std::string_view::npos) continue;
    std::string_view lhs = trim(before.substr(0, eq));
    std::size_t b = lhs.size();
    while (b > 0 && is_word(lhs[b - 1])) --b;
    if (b < lhs.size()) ctx.current_stream_names.emplace_back(lhs.substr(b));
  }
  if (ctx.views.code.find("current_stream(") != std::string::npos) ctx.asks_current_stream = true;
}

}  // namespace kbv::scan::detail
