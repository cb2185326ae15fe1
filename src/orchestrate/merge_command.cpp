#include "orchestrate/merge_command.hpp"

#include <iostream>
#include <optional>
#include <ostream>

#include <fmt/format.h>

#include "orchestrate/run_command.hpp"
#include "store/db_merge.hpp"
#include "store/db_run_lock.hpp"

namespace kbv {

int run_merge_command(const MergeOptions& o, std::ostream& out) {
  std::optional<DbRunLock> lock;
  try {
    lock.emplace(o.out_db);
  } catch (const DbBusyError& e) {
    std::cerr << "kbv merge: " << e.what() << "\n";
    return kExitDbBusy;
  }
  MergeSummary s = merge_result_dbs(o.out_db, o.inputs);
  for (const auto& c : s.conflicts)
    out << fmt::format("kbv merge: conflict {} L{} P{} S{} {}: kept {} (from {}), dropped {} (from {}){}\n", c.run_name,
                       c.level, c.problem_id, c.sample_id, c.protocol, c.kept_outcome, c.kept_from, c.dropped_outcome,
                       c.dropped_from, c.same_content ? "" : "; the files differ: the sample was edited between the runs");
  if (!o.quiet)
    out << fmt::format("kbv merge: {} input(s) into {}: {} verdict(s) added, {} replaced, {} already there; {} conflict(s) "
                       "(rule: docs/scale.md); {} run(s) added; {} verdicts in all\n",
                       s.inputs, o.out_db, s.verdicts_added, s.verdicts_replaced, s.verdicts_identical, s.conflicts.size(),
                       s.runs_added, s.verdicts_total);
  return 0;
}

}  // namespace kbv
