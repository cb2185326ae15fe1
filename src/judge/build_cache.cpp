#include "judge/build_cache.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "core/sha256.hpp"

namespace fs = std::filesystem;

namespace kbv::judge {
namespace {

std::map<std::string, std::string> libraries_in(const std::string& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->path().extension() != ".so") continue;
    out[fs::relative(it->path(), dir, ec).string()] = sha256_file(it->path().string());
  }
  return out;
}

void empty_folder(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) fs::remove_all(e.path(), ec);
}

}  // namespace

BuildCacheEntry build_cache_entry(const std::string& build_root, const std::string& source_sha256) {
  BuildCacheEntry e;
  fs::path root = fs::absolute(build_root);
  std::string key = source_sha256.substr(0, 16);
  e.dir = (root / key).string();
  e.manifest = (root / ".kbv-manifests" / (key + ".json")).string();
  e.log = (root / key / "build.log").string();
  return e;
}

std::optional<std::string> build_cache_verify(const BuildCacheEntry& entry) {
  std::error_code ec;
  if (!fs::exists(entry.dir, ec)) return std::nullopt;
  auto present = libraries_in(entry.dir);
  std::ifstream in(entry.manifest);
  nlohmann::json manifest = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  std::optional<std::string> mismatch;
  if (!manifest.is_object() || !manifest.contains("files") || !manifest["files"].is_object()) {
    if (!present.empty()) mismatch = "built libraries with no record of their hashes (" + present.begin()->first + ")";
  } else {
    const auto& recorded = manifest["files"];
    for (const auto& [rel, sha] : present)
      if (!recorded.contains(rel) || recorded[rel] != sha)
        mismatch = rel + (recorded.contains(rel) ? " changed after it was built" : " appeared after the build");
    for (const auto& [rel, sha] : recorded.items())
      if (!present.count(rel)) mismatch = rel + " vanished after it was built";
  }
  if (mismatch) {
    empty_folder(entry.dir);
    fs::remove(entry.manifest, ec);
  }
  return mismatch;
}

void build_cache_prepare(const BuildCacheEntry& entry, std::int64_t uid) {
  std::error_code ec;
  fs::create_directories(entry.dir, ec);
  fs::create_directories(fs::path(entry.manifest).parent_path(), ec);
  if (::geteuid() != 0 || uid < 0) return;
  auto give = [&](const fs::path& p) {
    if (::lchown(p.c_str(), static_cast<uid_t>(uid), static_cast<gid_t>(uid)) != 0) {
      // a file we cannot hand over stays the judge's: the build will say so if it matters
    }
  };
  give(entry.dir);
  for (fs::recursive_directory_iterator it(entry.dir, ec), end; !ec && it != end; it.increment(ec)) give(it->path());
}

void build_cache_record(const BuildCacheEntry& entry) {
  nlohmann::json manifest{{"files", nlohmann::json::object()}};
  for (const auto& [rel, sha] : libraries_in(entry.dir)) manifest["files"][rel] = sha;
  std::string tmp = entry.manifest + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    out << manifest.dump(1);
  }
  std::error_code ec;
  fs::rename(tmp, entry.manifest, ec);
}

}  // namespace kbv::judge
