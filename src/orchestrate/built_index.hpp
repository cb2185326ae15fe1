#pragma once
// Which candidate sources `kbv run` has already built into the build cache for this device and
// this kbv, so a re-run (a resumed run, a new DB, another protocol) skips their build-only
// workers — on the H200 a warm build phase still cost 6.8 s of worker start-up per source.
// One small file per (source, device, kbv) under <build root>/built/, written atomically after
// a successful build; it names the build folder, and an entry whose folder is gone is ignored.
#include <optional>
#include <string>

namespace kbv {

class BuiltIndex {
 public:
  BuiltIndex(const std::string& build_root, const std::string& device_fingerprint);

  // The build folder recorded for this candidate source, if it was built and still exists.
  std::optional<std::string> built_dir(const std::string& candidate_sha) const;
  // Records a successful build (best effort: a read-only cache only costs a rebuild check).
  void mark_built(const std::string& candidate_sha, const std::string& build_dir) const;

 private:
  std::string entry_path(const std::string& candidate_sha) const;

  std::string dir_;
  std::string salt_;  // device fingerprint and kbv version/commit: a change means "check again"
};

}  // namespace kbv
