#include "core/speed_bound.hpp"

#include <cstdio>

namespace kbv {

double peak_dram_bytes_per_s(std::int64_t memory_clock_khz, std::int64_t bus_width_bits) {
  if (memory_clock_khz <= 0 || bus_width_bits <= 0) return 0;
  return 2.0 * static_cast<double>(memory_clock_khz) * 1e3 * static_cast<double>(bus_width_bits) / 8.0;
}

double min_write_ms(std::int64_t output_bytes, std::int64_t l2_bytes, double peak_bytes_per_s) {
  if (peak_bytes_per_s <= 0 || output_bytes <= l2_bytes) return 0;
  return static_cast<double>(output_bytes - l2_bytes) / peak_bytes_per_s * 1e3;
}

std::optional<std::string> implausible_speed(std::int64_t output_bytes, std::int64_t l2_bytes,
                                             double peak_bytes_per_s, double median_ms) {
  const double bound = min_write_ms(output_bytes, l2_bytes, peak_bytes_per_s);
  if (bound <= 0 || median_ms <= 0 || median_ms * kSpeedBoundMargin >= bound) return std::nullopt;
  const double mib = 1024.0 * 1024.0;
  char text[320];
  std::snprintf(text, sizeof text,
                "median %.4g ms to write %.1f MiB of output (%.1f MiB beyond the %.1f MiB L2) is %.1f TB/s; "
                "the device's theoretical peak is %.2f TB/s, so no correct kernel takes less than %.4g ms",
                median_ms, static_cast<double>(output_bytes) / mib, static_cast<double>(output_bytes - l2_bytes) / mib,
                static_cast<double>(l2_bytes) / mib, static_cast<double>(output_bytes - l2_bytes) / (median_ms * 1e-3) / 1e12,
                peak_bytes_per_s / 1e12, bound);
  return std::string(text);
}

bool never_faster(std::vector<SpeedupResult>& speedups) {
  bool demoted = false;
  for (auto& sp : speedups)
    if (sp.compare == "FASTER") {
      sp.compare = "UNSURE";
      demoted = true;
    }
  return demoted;
}

bool all_unsure(std::vector<SpeedupResult>& speedups) {
  bool demoted = false;
  for (auto& sp : speedups)
    if (sp.compare == "FASTER" || sp.compare == "SLOWER") {
      sp.compare = "UNSURE";
      demoted = true;
    }
  return demoted;
}

}  // namespace kbv
