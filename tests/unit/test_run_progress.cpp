// kbv run's progress line on a terminal: it never wraps (a wrapped line is rewritten only in its
// last row), the counters stay whole, and what is cut is the start of the description.
#include <gtest/gtest.h>

#include "orchestrate/run_progress.hpp"

namespace kbv {
namespace {

const std::string kCounters = "[build 3/10] [eval 5/30] 4.2 eval/min, ETA 1m05s";

TEST(RunProgress, AShortLineIsLeftAlone) {
  EXPECT_EQ(fit_progress_line(kCounters, "a L1 P19 S0 strict: correct", 200), kCounters + "  a L1 P19 S0 strict: correct");
}

TEST(RunProgress, ALongDescriptionLosesItsStartAndTheLineFits) {
  std::string what = "runs/some/very/long/path/to/a/run/folder/level_1_problem_19_sample_0_kernel.py";
  for (std::size_t columns : {60, 80, 100}) {
    std::string line = fit_progress_line(kCounters, what, columns);
    EXPECT_LE(line.size(), columns - 1) << line;
    EXPECT_EQ(line.rfind(kCounters + "  ...", 0), 0u) << line;
    std::string tail = line.substr((kCounters + "  ...").size());
    EXPECT_FALSE(tail.empty()) << line;
    EXPECT_EQ(tail, what.substr(what.size() - tail.size())) << line;  // the end of the description
  }
}

TEST(RunProgress, ANarrowTerminalKeepsWhatFitsOfTheCounters) {
  std::string line = fit_progress_line(kCounters, "anything", 20);
  EXPECT_EQ(line, kCounters.substr(0, 19));
}

TEST(RunProgress, NoCharacterIsCutInHalf) {
  std::string what = "problème_\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9_noyau.py";  // two-byte characters
  for (std::size_t columns = kCounters.size() + 6; columns < kCounters.size() + 30; ++columns) {
    std::string line = fit_progress_line(kCounters, what, columns);
    std::string tail = line.substr(kCounters.size() + 5);
    ASSERT_FALSE(!tail.empty() && (static_cast<unsigned char>(tail[0]) & 0xC0) == 0x80) << columns << ": " << line;
  }
}

}  // namespace
}  // namespace kbv
