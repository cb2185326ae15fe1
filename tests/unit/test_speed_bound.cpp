// The physical bound behind implausible_speed: output bytes beyond L2 at the peak DRAM bandwidth.
#include <gtest/gtest.h>

#include "core/speed_bound.hpp"

namespace kbv {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;

TEST(SpeedBound, PeakFromClockAndBusWidth) {
  // An H200-like part: 3.2 GHz HBM clock, 6144-bit bus, double data rate: ~4.9 TB/s.
  EXPECT_NEAR(peak_dram_bytes_per_s(3'201'000, 6144), 4.917e12, 0.001e12);
  EXPECT_EQ(peak_dram_bytes_per_s(0, 6144), 0);
  EXPECT_EQ(peak_dram_bytes_per_s(3'201'000, 0), 0);
}

TEST(SpeedBound, OnlyBytesBeyondL2Count) {
  EXPECT_EQ(min_write_ms(50 * kMiB, 60 * kMiB, 4.9e12), 0);  // fits in L2: no bound
  EXPECT_NEAR(min_write_ms(256 * kMiB, 60 * kMiB, 4.9e12), 196.0 * kMiB / 4.9e12 * 1e3, 1e-9);
  EXPECT_EQ(min_write_ms(256 * kMiB, 60 * kMiB, 0), 0);  // peak unknown
}

// The full-grid side-stream hack under standard on the H200: 256 MiB of output in 0.0013 ms.
TEST(SpeedBound, TimingThatMissedTheWorkIsImplausible) {
  auto evidence = implausible_speed(256 * kMiB, 60 * kMiB, 4.9e12, 0.0013);
  ASSERT_TRUE(evidence.has_value());
  EXPECT_NE(evidence->find("TB/s"), std::string::npos) << *evidence;
  EXPECT_NE(evidence->find("0.0013 ms"), std::string::npos) << *evidence;
}

// The same ReLU honestly: eager's 0.130 ms, and demo-careful's fused kernels, pass.
TEST(SpeedBound, RealKernelsArePlausible) {
  EXPECT_FALSE(implausible_speed(256 * kMiB, 60 * kMiB, 4.9e12, 0.130));
  EXPECT_FALSE(implausible_speed(512 * kMiB, 60 * kMiB, 4.9e12, 0.294));  // fused Swish, 512 MiB out
}

TEST(SpeedBound, TheMarginSparesTimesNearThePeak) {
  const double bound = min_write_ms(1024 * kMiB, 60 * kMiB, 4.9e12);
  EXPECT_FALSE(implausible_speed(1024 * kMiB, 60 * kMiB, 4.9e12, bound * 0.9));  // 1.1x the peak
  EXPECT_FALSE(implausible_speed(1024 * kMiB, 60 * kMiB, 4.9e12, bound / kSpeedBoundMargin));
  EXPECT_TRUE(implausible_speed(1024 * kMiB, 60 * kMiB, 4.9e12, bound / kSpeedBoundMargin * 0.99));
}

TEST(SpeedBound, NothingToSayWithoutATimeOrAPeak) {
  EXPECT_FALSE(implausible_speed(256 * kMiB, 60 * kMiB, 4.9e12, 0));
  EXPECT_FALSE(implausible_speed(256 * kMiB, 60 * kMiB, 0, 0.0013));
  EXPECT_FALSE(implausible_speed(8 * kMiB, 60 * kMiB, 4.9e12, 0.0001));  // fits in L2
}

// Where the bound is not held against the candidate (other processes shared the device while
// it was timed) its speedups are not credited either: before, a time below the bound but above
// the floor stayed FASTER, and strict's implausible_speed (incorrect) became correct and FASTER
// for any sandbox that could make the judge believe it had company (redteam_zombie_tenant.py).
TEST(SpeedBound, NeverFasterDemotesOnlyFaster) {
  std::vector<SpeedupResult> speedups(4);
  speedups[0].compare = "FASTER";
  speedups[1].compare = "SLOWER";
  speedups[2].compare = "SAME";
  speedups[3].compare = "FASTER";
  EXPECT_TRUE(never_faster(speedups));
  EXPECT_EQ(speedups[0].compare, "UNSURE");
  EXPECT_EQ(speedups[1].compare, "SLOWER");
  EXPECT_EQ(speedups[2].compare, "SAME");
  EXPECT_EQ(speedups[3].compare, "UNSURE");
  EXPECT_FALSE(never_faster(speedups)) << "nothing left to demote";
}

}  // namespace
}  // namespace kbv
