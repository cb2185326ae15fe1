#include "orchestrate/built_index.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <system_error>

#include "core/sha256.hpp"
#include "core/version.hpp"

namespace fs = std::filesystem;

namespace kbv {

BuiltIndex::BuiltIndex(const std::string& build_root, const std::string& device_fingerprint)
    : dir_(build_root + "/built"),
      salt_(sha256_hex(device_fingerprint + "\n" + kVersion + "\n" + kGitCommit).substr(0, 16)) {}

std::string BuiltIndex::entry_path(const std::string& candidate_sha) const {
  return dir_ + "/" + candidate_sha + "-" + salt_;
}

std::optional<std::string> BuiltIndex::built_dir(const std::string& candidate_sha) const {
  std::ifstream in(entry_path(candidate_sha));
  std::string dir;
  if (!in || !std::getline(in, dir) || dir.empty()) return std::nullopt;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  return dir;
}

void BuiltIndex::mark_built(const std::string& candidate_sha, const std::string& build_dir) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  const std::string target = entry_path(candidate_sha);
  const std::string tmp = target + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return;
    out << build_dir << "\n";
    if (!out) return;
  }
  fs::rename(tmp, target, ec);
  if (ec) fs::remove(tmp, ec);
}

}  // namespace kbv
