#pragma once
// Verdicts that kbv run could not write to its results DB (locked for too long, disk full, an
// I/O error), kept as JSON lines so that no finished evaluation is lost. The file sits next to
// the DB (<db>.spill.jsonl); when that cannot be written either (the full disk is the DB's
// disk), in a fallback folder on another disk, under a name derived from the DB's absolute path.
// The next `kbv run` on the DB imports both and removes them (import_spills).
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>
#include <vector>

#include "core/verdict.hpp"
#include "store/result_fields.hpp"

namespace kbv {

class ResultStore;

struct SpilledVerdict {
  SampleRef sample;
  Verdict verdict;
  std::int64_t run_id = 0;
};

// Where the spill files of `db_path` may be, in the order they are tried: next to the DB, then
// in `fallback_dir` ("" = none).
std::vector<std::string> spill_paths(const std::string& db_path, const std::string& fallback_dir);

// Appends verdicts to the first spill file that takes them. Safe to call from several threads.
class VerdictSpill {
 public:
  VerdictSpill(const std::string& db_path, const std::string& fallback_dir);

  // Appends one line and flushes it to the disk (fsync); a line that does not fit is cut back
  // off, so the file stays whole lines. Returns the file it went to. Throws StoreError when no
  // spill file can take it.
  std::string append(const SpilledVerdict& v);

  std::size_t count() const;                 // verdicts appended by this object
  std::vector<std::string> files() const;    // the files they went to

 private:
  mutable std::mutex mu_;
  std::vector<std::string> paths_;
  std::vector<std::string> used_;
  std::size_t count_ = 0;
};

struct SpillImport {
  std::size_t imported = 0;
  std::size_t unreadable_lines = 0;   // kept in a .bad file beside the spill file
  std::vector<std::string> files;     // spill files imported (and removed)
};

// Imports every verdict of the spill files of `db_path` into `store` and removes the files.
// A file whose import fails (the store fails again) is kept whole for the next try; a line that
// cannot be parsed is moved to <spill>.bad. Throws StoreError from the store.
SpillImport import_spills(ResultStore& store, const std::string& db_path, const std::string& fallback_dir);

// Spill files of `db_path` that exist now (for `kbv report` to say verdicts are waiting).
std::vector<std::string> pending_spills(const std::string& db_path, const std::string& fallback_dir);

}  // namespace kbv
