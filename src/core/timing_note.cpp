#include "core/timing_note.hpp"

#include <fmt/format.h>

namespace kbv {

std::optional<std::string> budget_note(const TimingResult& t) {
  if (t.stop_reason != "budget") return std::nullopt;
  const SpeedupResult* primary = nullptr;
  for (const auto& s : t.speedups)
    if (s.baseline == t.primary_baseline) primary = &s;
  if (!primary || primary->median <= 0) return std::nullopt;
  const double reached = (primary->ci_high - primary->ci_low) / 2 / primary->median;
  std::string note = fmt::format("timing: the speedup's 95% CI reached +-{:.2g}% in {} rounds, not the +-{:g}% target: the "
                                 "time budget ran out",
                                 reached * 100, t.rounds, t.target_rel_ci * 100);
  const SeriesStats* noisiest = nullptr;
  double spread = 0;
  for (const auto& s : t.series) {
    if (s.median_ms <= 0) continue;
    double rel = (s.q3_ms - s.q1_ms) / 2 / s.median_ms;
    if (!noisiest || rel > spread) {
      noisiest = &s;
      spread = rel;
    }
  }
  if (noisiest)
    note += fmt::format("; the noisiest series is {} (half its interquartile range is {:.2g}% of its median)", noisiest->name,
                        spread * 100);
  return note;
}

std::optional<std::string> resolution_note(const TimingResult& t, bool gpu) {
  if (!gpu) return std::nullopt;
  for (const auto& s : t.series)
    if (s.samples > 0 && s.median_ms < kCrossProcessResolutionMs)
      return fmt::format("timing: {} takes {:.4f} ms, within the resolution of timing across processes (~{:g} ms): its "
                         "speedups say little about the kernel",
                         s.name, s.median_ms, kCrossProcessResolutionMs);
  return std::nullopt;
}

}  // namespace kbv
