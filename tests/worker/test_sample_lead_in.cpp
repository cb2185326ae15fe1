// The lead-in of every timed sample (judge/sample_lead_in.hpp): the wake's setting and its size.
// That the wake runs on the GPU, sized from a timed pass, is EvalGpu.EverySampleStartsOnAnAwakeDevice.
#include <gtest/gtest.h>

#include <string>

#include <ATen/ATen.h>

#include "judge/sample_lead_in.hpp"

namespace kbv::judge {
namespace {

TEST(WakeSetting, UnsetIsTheDefaultAndZeroTurnsItOff) {
  std::string error;
  EXPECT_EQ(wake_us_setting(nullptr, &error), kDefaultWakeUs);
  EXPECT_EQ(wake_us_setting("", &error), kDefaultWakeUs);
  EXPECT_EQ(wake_us_setting("0", &error), 0.0);
  EXPECT_EQ(wake_us_setting("250", &error), 250.0);
  EXPECT_EQ(wake_us_setting("1e3", &error), 1000.0);
  EXPECT_TRUE(error.empty()) << error;
}

TEST(WakeSetting, AnythingButMicrosecondsInRangeIsTheDefaultAndSaysSo) {
  for (const char* bad : {"lots", "500us", "-1", "nan", "inf", "1e9", " 500", "0x1f4"}) {
    std::string error;
    EXPECT_EQ(wake_us_setting(bad, &error), kDefaultWakeUs) << bad;
    EXPECT_NE(error.find("KBV_WAKE_US='" + std::string(bad) + "'"), std::string::npos) << bad << ": " << error;
  }
}

TEST(WakePasses, EnoughPassesToCoverTheWake) {
  EXPECT_EQ(wake_passes(500, 36), 14);   // 14 x 36 = 504 >= 500
  EXPECT_EQ(wake_passes(500, 50), 10);
  EXPECT_EQ(wake_passes(500, 600), 1);   // a slow pass: one
  EXPECT_GE(wake_passes(500, 36) * 36.0, 500.0);
}

TEST(WakePasses, OffOrUnmeasuredIsNoneAndATinyPassIsCapped) {
  EXPECT_EQ(wake_passes(0, 36), 0);
  EXPECT_EQ(wake_passes(500, 0), 0);     // the pass could not be timed
  EXPECT_EQ(wake_passes(500, -1), 0);
  EXPECT_EQ(wake_passes(5000, 0.001), kMaxWakePasses);
}

TEST(SampleLeadIn, OnTheCpuItIsNothing) {
  SampleLeadIn lead_in(at::Device(at::kCPU), 50 << 20, kDefaultWakeUs, nullptr);
  lead_in.queue();
  EXPECT_EQ(lead_in.flush_bytes(), 0);
  EXPECT_EQ(lead_in.wake_us(), 0.0);
}

}  // namespace
}  // namespace kbv::judge
