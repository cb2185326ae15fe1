#include "orchestrate/shard.hpp"

#include <charconv>

#include "core/errors.hpp"
#include "core/sha256.hpp"
#include "orchestrate/run_scan.hpp"

namespace kbv {
namespace {

// A whole decimal number, nothing else ("1x", "", "+1" are not).
bool parse_int(const std::string& s, int& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

}  // namespace

bool Shard::holds(const CandidateFile& c) const {
  return shard_of(c.run, c.level, c.problem_id, c.sample_id, count) == index;
}

std::string Shard::text() const { return std::to_string(index) + "/" + std::to_string(count); }

Shard parse_shard(const std::string& text) {
  auto slash = text.find('/');
  Shard s;
  if (slash == std::string::npos || !parse_int(text.substr(0, slash), s.index) || !parse_int(text.substr(slash + 1), s.count) ||
      s.count < 1 || s.index < 0 || s.index >= s.count)
    throw UsageError("--shard '" + text + "': write I/N with 0 <= I < N, e.g. 0/4 (Slurm: $SLURM_ARRAY_TASK_ID/N)");
  return s;
}

int shard_of(const std::string& run, int level, int problem_id, int sample_id, int count) {
  const std::string hex = sha256_hex(run + "\n" + std::to_string(level) + "\n" + std::to_string(problem_id) + "\n" +
                                     std::to_string(sample_id));
  std::uint64_t h = std::stoull(hex.substr(0, 16), nullptr, 16);
  return static_cast<int>(h % static_cast<std::uint64_t>(count));
}

}  // namespace kbv
