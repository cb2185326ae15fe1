#pragma once
// `kbv run --shard I/N`: one of N disjoint parts of a run's work, for N processes on N hosts
// (a Slurm job array: docs/scale.md). A candidate belongs to shard
//   first 8 bytes of SHA-256("<run>\n<level>\n<problem id>\n<sample id>"), big-endian, mod N
// so the partition depends on nothing but the candidate's place and N: adding runs, samples or
// problems never moves an existing candidate to another shard, every protocol of a candidate is
// in the same shard (its build and its verdicts stay together), and any tool can recompute it.
#include <cstdint>
#include <string>

namespace kbv {

struct CandidateFile;

struct Shard {
  int index = 0;  // 0 <= index < count
  int count = 1;
  bool holds(const CandidateFile& c) const;
  std::string text() const;  // "I/N"
};

// "I/N" with 0 <= I < N; throws UsageError otherwise ("1/1" is one shard: all the work).
Shard parse_shard(const std::string& text);

// The shard (0..count-1) of the candidate at (run, level, problem, sample).
int shard_of(const std::string& run, int level, int problem_id, int sample_id, int count);

}  // namespace kbv
