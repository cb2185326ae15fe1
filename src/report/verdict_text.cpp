#include "report/verdict_text.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/speed_bound.hpp"

namespace kbv {
namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// The last `lines` lines of text, each indented.
std::string last_lines(const std::string& text, int lines) {
  std::size_t pos = text.size();
  while (lines-- > 0 && pos > 0) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) {
      pos = 0;
      break;
    }
  }
  std::string out;
  std::string tail = text.substr(pos);
  std::size_t start = 0;
  while (start < tail.size()) {
    std::size_t end = tail.find('\n', start);
    if (end == std::string::npos) end = tail.size();
    if (end > start) out += "    " + tail.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string format_bytes(std::int64_t bytes) {
  double b = static_cast<double>(bytes);
  if (std::abs(b) >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  if (std::abs(b) >= 1024.0 * 1024) return fmt::format("{:.1f} MiB", b / (1024.0 * 1024));
  if (std::abs(b) >= 1024.0) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{} B", bytes);
}

std::string format_verdict(const Verdict& v) {
  std::string out;
  auto line = [&out](const std::string& s) { out += s + "\n"; };
  line(fmt::format("kbv verdict: {} protocol v{}, {}, {} ({})", v.protocol, v.protocol_version, v.precision,
                   v.device.name.empty() ? "unknown device" : v.device.name, v.device.kind));
  line(fmt::format("  problem    {}{}", v.problem.path, v.problem.size == "small" ? "  [small size]" : ""));
  line(fmt::format("  candidate  {}", v.candidate.path));
  line(fmt::format("  outcome    {}{}", upper(outcome_name(v.outcome)), v.reason.empty() ? "" : " - " + v.reason));

  if (v.build) {
    std::string exts;
    for (const auto& e : v.build->extensions)
      exts += fmt::format("{}{} -> {} ({:.1f} s{})", exts.empty() ? "" : ", ", e.requested_name, e.unique_name,
                          e.seconds, e.cuda ? ", CUDA" : "");
    line(fmt::format("  build      {:.1f} s, {} extension(s){}{}", v.build->seconds, v.build->extensions.size(),
                     exts.empty() ? " (no custom kernel)" : ": " + exts,
                     v.build->extensions.empty() ? "" : "; log " + v.build->log_path));
    if (v.outcome == Outcome::compile_error && !v.build->log_tail.empty()) out += last_lines(v.build->log_tail, 12);
  }
  if (v.correctness) {
    line(fmt::format("  correctness (atol {:g}, rtol {:g})", v.correctness->atol, v.correctness->rtol));
    for (const auto& d : v.correctness->distributions) {
      std::string errs = d.status == DistributionStatus::skipped
                             ? ""
                             : fmt::format("max abs err {:.2e}  max rel err {:.2e}", d.max_abs_err, d.max_rel_err);
      line(fmt::format("    {:<14} {:<8} {}{}", d.name, distribution_status_name(d.status), errs,
                       d.reason.empty() || d.status == DistributionStatus::pass ? "" : "  " + d.reason));
    }
  }
  if (v.timing) {
    const auto& t = *v.timing;
    line(fmt::format("  timing ({}{}, {} input set(s), {} rounds in {:.1f} s, {})",
                     t.clock == "cpu_steady_clock" ? "CPU timing, steady clock" : "CUDA events",
                     t.l2_flush ? fmt::format(", L2 flushed with {} before each sample", format_bytes(t.l2_flush_bytes)) : "",
                     t.input_sets, t.rounds, t.seconds,
                     t.stop_reason == "converged" ? fmt::format("CI within +-{:g}%", t.target_rel_ci * 100)
                                                  : "time budget ran out before the CI reached the target"));
    if (t.torch_compile_seconds)
      line(fmt::format("    torch.compile(Model) took {:.1f} s to compile (or load from inductor's cache), outside every sample",
                       *t.torch_compile_seconds));
    if (t.sandbox_frozen) line("    the candidate's sandbox was frozen during every baseline and hop sample");
    if (t.cpu_wait_share)
      line(fmt::format("    the judge's threads waited for a core {:.0f}% of the baselines' timed time{}", *t.cpu_wait_share * 100,
                       cpu_timing_contended(t.cpu_wait_share) ? ": the host was contended, no speedup is FASTER or SLOWER" : ""));
    if (t.idle_hop_ms && t.busy_hop_share)
      line(fmt::format("    hop {:.4f} ms; {:.4f} ms once the sandbox had ended; {:.0f}% of the rounds' hops above the idle limit",
                       t.hop_ms, *t.idle_hop_ms, *t.busy_hop_share * 100));
    for (const auto& s : t.series)
      line(fmt::format("    {:<16} median {:.4f} ms  IQR [{:.4f}, {:.4f}]  n={}", s.name, s.median_ms, s.q1_ms, s.q3_ms, s.samples));
    for (const auto& s : t.speedups)
      line(fmt::format("    speedup vs {:<16} {:.3f}x  95% CI [{:.3f}, {:.3f}]  {}{}", s.baseline, s.median, s.ci_low,
                       s.ci_high, s.compare, s.baseline == t.primary_baseline ? "  <- protocol baseline" : ""));
  }
  if (v.memory) {
    const auto& m = *v.memory;
    line(fmt::format("  memory (peak during one forward, above what was allocated before; {})", m.method));
    line(fmt::format("    candidate  allocator {:>11}  device {:>11}  held {:>11}", format_bytes(m.candidate.peak_allocated_bytes),
                     format_bytes(m.candidate.peak_device_bytes), format_bytes(m.candidate.resident_bytes)));
    line(fmt::format("    baseline   allocator {:>11}  device {:>11}  held {:>11}", format_bytes(m.baseline.peak_allocated_bytes),
                     format_bytes(m.baseline.peak_device_bytes), format_bytes(m.baseline.resident_bytes)));
    if (m.candidate.process_bytes)
      line(fmt::format("    candidate  its processes' device memory above a bare torch process (NVML): {}",
                       format_bytes(*m.candidate.process_bytes)));
    line(fmt::format("    ratio      allocator {:.2f}x  device {:.2f}x  held + device {:.2f}x (candidate / baseline)", m.ratio_allocated,
                     m.ratio_device, m.ratio_footprint));
  }
  for (const auto& f : v.flags) line("  FLAG       " + f.name + ": " + f.evidence);
  for (const auto& w : v.warnings) line("  warning    " + w);
  if (v.outcome != Outcome::correct && v.outcome != Outcome::incorrect && !v.output_tail.empty()) {
    line("  output (last lines):");
    out += last_lines(v.output_tail, 15);
  }
  return out;
}

}  // namespace kbv
