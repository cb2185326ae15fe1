#pragma once
// `kbv merge OUT IN...`: shard DBs (or any results DBs) into one (store/db_merge.hpp), under
// OUT's run lock so no `kbv run` writes OUT meanwhile. Prints what it did and every conflict.
#include <iosfwd>
#include <string>
#include <vector>

namespace kbv {

struct MergeOptions {
  std::string out_db;
  std::vector<std::string> inputs;
  bool quiet = false;  // print only conflicts and errors
};

// 0 done (conflicts included: they are resolved by the rule and printed), kExitDbBusy (75) when
// a kbv run holds OUT; errors are thrown (StoreError).
int run_merge_command(const MergeOptions& options, std::ostream& out);

}  // namespace kbv
