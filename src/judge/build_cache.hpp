#pragma once
// The candidate's entry in the shared build cache, and the judge's record of what was built in
// it. The sandbox may write only its own entry (Landlock); the judge, after a build, records the
// sha256 of every shared library the entry holds in a manifest no sandbox can write, and checks
// them before a later sandbox loads them: a library that changed is removed and rebuilt, and the
// verdict says so (build_cache_tampered).
#include <cstdint>
#include <optional>
#include <string>

namespace kbv::judge {

struct BuildCacheEntry {
  std::string dir;       // <build root>/<first 16 hex of the source's sha256>
  std::string manifest;  // <build root>/.kbv-manifests/<same>.json
  std::string lock;      // <build root>/.kbv-manifests/<same>.lock (BuildCacheLock)
  std::string log;       // <dir>/build.log
};

BuildCacheEntry build_cache_entry(const std::string& build_root, const std::string& source_sha256);

// Creates the entry's folders (the sandbox is confined to the entry, which must exist when it
// starts).
void build_cache_create(const BuildCacheEntry& entry);

// Before the sandbox is told to import the candidate. nullopt: the entry is empty, or matches its
// manifest. Otherwise what did not match; the entry has then been emptied so that it is rebuilt.
std::optional<std::string> build_cache_verify(const BuildCacheEntry& entry);

// Hands the entry to `uid` (when the judge is root; a no-op otherwise), so that a sandbox running
// as `uid` can build into it. Only under the entry's BuildCacheLock: a sandbox that is building or
// loading from it would lose its access (the entry is 0700) halfway.
void build_cache_hand_over(const BuildCacheEntry& entry, std::int64_t uid);

// Once the sandbox it was handed to has ended: the entry is 0700 again, whatever mode its candidate
// gave it, so no later sandbox of another uid can enter it (a candidate could otherwise leave
// files there for the candidates after it to read).
void build_cache_close(const BuildCacheEntry& entry);

// What a candidate's build may leave on disk: a load_inline build writes tens of MiB. An entry
// above it was filled on purpose (the host's disk, under every other candidate's build).
inline constexpr std::uintmax_t kBuildEntryCapBytes = 1ull << 30;

// The bytes the entry's files take on disk (allocated blocks: a fallocated file counts whole),
// links not followed.
std::uintmax_t build_cache_bytes(const BuildCacheEntry& entry);

// Once its sandbox has ended: an entry above kBuildEntryCapBytes is emptied (its disk given back
// at once, nothing of it cached). Returns the warning for the verdict, or nullopt.
std::optional<std::string> build_cache_cap(const BuildCacheEntry& entry, std::uintmax_t cap = kBuildEntryCapBytes);

// A build that failed for want of disk space (ENOSPC in its message or log): call it once the
// sandbox has ended (no file it holds open, unlinked or not, keeps its blocks). It empties the
// failed entry, then looks at the build root's file system itself: still (almost) full, the
// disk was filled by someone else and the failure is the host's state (kbv's internal_error);
// otherwise it is the candidate's compile_error, whatever it claimed. Returns the reason for an
// internal_error, or nullopt.
bool build_says_disk_full(const std::string& message, const std::string& log_tail);
std::optional<std::string> build_failed_for_host_disk(const BuildCacheEntry& entry);

// After a build: records the sha256 of every shared library under the entry.
void build_cache_record(const BuildCacheEntry& entry);

// One judge at a time for an entry (other kbv eval or kbv run processes share the build root),
// from build_cache_verify through hand-over and its sandbox's import to build_cache_record: so no
// judge hands the entry to its sandbox's uid, or empties it as unrecorded, while another judge's
// sandbox builds there; the next finds the build done and recorded. An flock beside the manifest,
// where no sandbox writes: the kernel drops it when its holder ends, however it ends.
class BuildCacheLock {
 public:
  // Waits while another judge holds it; throws when it cannot be taken (the lock file cannot be
  // opened or locked).
  explicit BuildCacheLock(const BuildCacheEntry& entry);
  ~BuildCacheLock();
  BuildCacheLock(const BuildCacheLock&) = delete;
  BuildCacheLock& operator=(const BuildCacheLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace kbv::judge
