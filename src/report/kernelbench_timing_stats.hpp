#pragma once
// KernelBench's `runtime_stats` for one timed series, computed from kbv's raw samples the way
// KernelBench's timing.get_timing_stats does: mean, population std (np.std), min, max, each
// rounded to 3 significant digits (float(f"{x:.3g}")), num_trials, hardware and device.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/verdict.hpp"

namespace kbv {

// float(f"{x:.3g}") in Python: x rounded to 3 significant digits.
double round_3_significant(double x);

// The arithmetic mean of the samples; 0 when there are none.
double samples_mean(const std::vector<double>& samples_ms);
// The population standard deviation (numpy's default ddof=0); 0 when there are none.
double samples_population_std(const std::vector<double>& samples_ms);

// KernelBench's device string: "cuda:0" for a CUDA verdict (kbv records the kind, not the GPU's
// index; KernelBench's Modal path writes cuda:0 too), "cpu" otherwise.
std::string kernelbench_device(const DeviceInfo& d);

// {"mean", "std", "min", "max", "num_trials", "hardware", "device"} in KernelBench's order.
// Uses the raw samples when the series has them, else its stored summary.
nlohmann::ordered_json kernelbench_runtime_stats(const SeriesStats& s, const DeviceInfo& d);

}  // namespace kbv
