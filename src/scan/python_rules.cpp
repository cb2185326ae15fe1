// The rules decided on the parsed Python (python_facts.hpp) rather than on a literal:
// silent_fallback (a try/except around the kernel, or anywhere in forward), result_caching's
// outputs saved on self in forward and returned on a later call, and the tampering rules'
// assignments to torch / time / comparison functions (import aliases resolved).
#include <algorithm>

#include "scan/scan_context.hpp"

namespace kbv::scan::detail {

namespace {

// A dotted name that is the extension or reaches into it: `ext`, `ext.f`, `self.ext.f`.
bool names_extension(const std::string& used, const std::string& ext) {
  return used == ext || (used.size() > ext.size() && used.compare(0, ext.size(), ext) == 0 &&
                         used[ext.size()] == '.');
}

bool names_extension_loader(const std::string& used) {
  return used.find("load_inline") != std::string::npos ||
         used.find("cpp_extension") != std::string::npos;
}

void find_silent_fallbacks(ScanContext& ctx) {
  const auto& facts = *ctx.facts;
  for (const auto& t : facts.tries) {
    bool fallback = ctx.in_forward(t.line);
    for (const auto& used : t.names) {
      if (fallback) break;
      fallback = names_extension_loader(used) ||
                 std::any_of(facts.extension_names.begin(), facts.extension_names.end(),
                             [&](const std::string& ext) { return names_extension(used, ext); });
    }
    if (fallback) ctx.mark(Rule::silent_fallback, t.line, Severity::warning);
  }
}

// In forward: `self.out = y ... return self.out` (or self.cache[k] = y ... return self.cache[k]).
// `return self.conv(x)` calls a module (even one loaded lazily in forward); it returns no saved
// output, so it is no finding.
void find_saved_outputs(ScanContext& ctx) {
  for (const auto& f : ctx.facts->forwards)
    for (const auto& [line, attr] : f.returns)
      if (std::find(f.assigned_self_attrs.begin(), f.assigned_self_attrs.end(), attr) !=
          f.assigned_self_attrs.end())
        ctx.mark(Rule::result_caching, line, Severity::warning);
}

// torch.relu = f, a, torch.x = ..., t.relu = f after `import torch as t`, setattr(torch, "x", f);
// and `_orig = torch.cuda.synchronize` / wraps(torch.allclose), which keep one aside to wrap it.
void find_tampering(ScanContext& ctx) {
  for (const auto& [line, name] : ctx.facts->attribute_assignments)
    if (auto rule = classify_name(name, true)) ctx.mark(*rule, line, default_severity(*rule));
  for (const auto& [line, name] : ctx.facts->references)
    if (auto rule = classify_name(name, false)) ctx.mark(*rule, line, default_severity(*rule));
}

}  // namespace

void run_python_rules(ScanContext& ctx) {
  if (!ctx.facts) return;
  find_silent_fallbacks(ctx);
  find_saved_outputs(ctx);
  find_tampering(ctx);
}

}  // namespace kbv::scan::detail
