// What a verdict says when its speedup did not reach the target interval (core/timing_note.hpp).
#include <gtest/gtest.h>

#include "core/timing_note.hpp"

namespace kbv {
namespace {

TimingResult budget_run() {
  TimingResult t;
  t.stop_reason = "budget";
  t.rounds = 454;
  t.target_rel_ci = 0.01;
  t.primary_baseline = "eager_tf32_on";
  t.speedups = {{"eager_tf32_off", 1.6, 1.5, 1.7, "FASTER"}, {"eager_tf32_on", 1.568, 1.536, 1.584, "FASTER"}};
  SeriesStats candidate;
  candidate.name = "candidate";
  candidate.median_ms = 0.002;
  candidate.q1_ms = 0.002;
  candidate.q3_ms = 0.002;
  SeriesStats eager;
  eager.name = "eager_tf32_on";
  eager.median_ms = 0.0032;
  eager.q1_ms = 0.0028;
  eager.q3_ms = 0.0036;
  t.series = {candidate, eager};
  return t;
}

TEST(TimingNote, SaysWhyTheTargetWasNotReached) {
  auto note = budget_note(budget_run());
  ASSERT_TRUE(note.has_value());
  EXPECT_NE(note->find("+-1.5% in 454 rounds, not the +-1% target"), std::string::npos) << *note;
  EXPECT_NE(note->find("noisiest series is eager_tf32_on (half its interquartile range is 12%"), std::string::npos) << *note;
}

TEST(TimingNote, ACallWithinTheCrossProcessResolutionIsSaidOnTheGpuConvergedOrNot) {
  TimingResult t = budget_run();
  t.stop_reason = "converged";
  for (auto& s : t.series) s.samples = 20;
  auto note = resolution_note(t, true);
  ASSERT_TRUE(note.has_value());
  EXPECT_NE(note->find("candidate takes 0.0020 ms, within the resolution"), std::string::npos) << *note;
  EXPECT_FALSE(resolution_note(t, false).has_value()) << "the CPU's clock has no hop to take out";
  for (auto& s : t.series) s.median_ms = 0.25;
  EXPECT_FALSE(resolution_note(t, true).has_value());
}

TEST(TimingNote, NoBudgetNoteWhenConverged) {
  TimingResult converged = budget_run();
  converged.stop_reason = "converged";
  EXPECT_FALSE(budget_note(converged).has_value());
  TimingResult no_speedup = budget_run();
  no_speedup.speedups.clear();
  EXPECT_FALSE(budget_note(no_speedup).has_value());
}

}  // namespace
}  // namespace kbv
