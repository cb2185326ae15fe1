#pragma once
// `kbv merge OUT IN...`: the verdicts of several results DBs (e.g. the shard DBs of a Slurm job
// array, docs/scale.md) into one, by their natural keys, in SQL (ATTACH; inputs opened
// read-only and never written).
//
// - Idempotent and order-free: merging the same inputs again, or in another order, gives the
//   same rows. One verdict per sample and conditions (as in the store): rows with the same
//   place and conditions are one slot, and of two verdicts in one slot the merge keeps
//     1. the one kbv would keep on a resume over one it would evaluate again (internal_error,
//        an outcome this kbv does not know),
//     2. then the later evaluation (updated_at),
//     3. then the greater verdict_json text (an arbitrary but order-free tie-break).
//   Identical verdicts are not a conflict; any other pair is one, and is reported.
// - Provenance: every `runs` row of an input is copied once (a run is known by its host, start
//   time, pid and process start time) with options.merged_from = {db, run_id, merged_at}, and
//   each merged verdict points at its copied run: which shard DB, host and run it came from.
#include <cstdint>
#include <string>
#include <vector>

namespace kbv {

// Two different verdicts for one slot, and which was kept.
struct MergeConflict {
  std::string run_name;
  int level = 0;
  int problem_id = 0;
  int sample_id = 0;
  std::string protocol;
  std::string kept_outcome, kept_from;        // kept_from: the DB the kept row came from
  std::string dropped_outcome, dropped_from;
  bool same_content = true;  // same problem and candidate hashes (else a file changed between runs)
};

struct MergeSummary {
  std::int64_t inputs = 0;
  std::int64_t runs_added = 0;
  std::int64_t verdicts_added = 0;     // new slots
  std::int64_t verdicts_replaced = 0;  // conflicts the input won
  std::int64_t verdicts_identical = 0; // already there, same verdict
  std::int64_t verdicts_total = 0;     // in OUT afterwards
  std::vector<MergeConflict> conflicts;
};

// Merges `inputs` into `out_path` (created when missing, migrated when older), one transaction
// per input. Throws StoreError for an input that is not a kbv DB, has another schema version,
// is damaged, or is OUT itself.
MergeSummary merge_result_dbs(const std::string& out_path, const std::vector<std::string>& inputs);

}  // namespace kbv
