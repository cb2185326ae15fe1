#pragma once
// The one spelling of devices on kbv's command line, for `kbv eval --device`, `kbv run --device`
// (and its older --gpus) and `kbv audit --device`: cpu, cuda (= cuda:0), cuda:N, auto. A bare
// N is cuda:N (kbv run --gpus 0,1). Anything else, "gpu" included, is a usage error that says
// what to write.
#include <string>
#include <vector>

namespace kbv {

// Throws UsageError for an unknown spelling.
std::string normalize_device(const std::string& spec);

// A list of devices: "auto" alone, or cpu / cuda:N entries (no auto among others); "auto" gives
// an empty list (kbv run then takes every GPU, else the CPU).
std::vector<std::string> normalize_devices(const std::vector<std::string>& specs);

}  // namespace kbv
