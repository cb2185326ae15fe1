#include "store/verdict_spill.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/sha256.hpp"
#include "store/result_store.hpp"

namespace fs = std::filesystem;

namespace kbv {
namespace {

nlohmann::json sample_json(const SampleRef& s) {
  return {{"run_name", s.run_name}, {"candidate_path", s.candidate_path}, {"level", s.level},
          {"problem_id", s.problem_id}, {"sample_id", s.sample_id}};
}

SampleRef sample_from_json(const nlohmann::json& j) {
  return {j.at("run_name").get<std::string>(), j.at("candidate_path").get<std::string>(), j.at("level").get<int>(),
          j.at("problem_id").get<int>(), j.at("sample_id").get<int>()};
}

// One write of the whole line, so a reader never sees half of it; on a short write (ENOSPC)
// the file is cut back to where it was.
bool append_line(const std::string& path, const std::string& line, std::string& error) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = fmt::format("{}: {}", path, std::strerror(errno));
    return false;
  }
  struct stat before {};
  ::fstat(fd, &before);
  ssize_t n = ::write(fd, line.data(), line.size());
  bool ok = n == static_cast<ssize_t>(line.size()) && ::fsync(fd) == 0;
  if (!ok) {
    error = fmt::format("{}: {}", path, n < 0 || errno ? std::strerror(errno) : "short write");
    if (::ftruncate(fd, before.st_size) != 0) error += " (and could not cut the partial line back off)";
  }
  ::close(fd);
  if (!ok && before.st_size == 0) ::unlink(path.c_str());  // no empty spill file that says verdicts wait
  return ok;
}

}  // namespace

std::vector<std::string> spill_paths(const std::string& db_path, const std::string& fallback_dir) {
  std::vector<std::string> out{db_path + ".spill.jsonl"};
  if (!fallback_dir.empty()) {
    std::string absolute = fs::absolute(db_path).lexically_normal().string();
    out.push_back((fs::path(fallback_dir) / fmt::format("{}-{}.spill.jsonl", fs::path(db_path).filename().string(),
                                                         sha256_hex(absolute).substr(0, 12)))
                      .string());
  }
  return out;
}

VerdictSpill::VerdictSpill(const std::string& db_path, const std::string& fallback_dir)
    : paths_(spill_paths(db_path, fallback_dir)) {}

std::string VerdictSpill::append(const SpilledVerdict& v) {
  std::string line = nlohmann::json{{"sample", sample_json(v.sample)}, {"run_id", v.run_id}, {"verdict", v.verdict}}
                         .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                     "\n";
  std::lock_guard lock(mu_);
  std::string errors;
  for (const auto& path : paths_) {
    std::string error;
    if (append_line(path, line, error)) {
      ++count_;
      if (std::find(used_.begin(), used_.end(), path) == used_.end()) used_.push_back(path);
      return path;
    }
    errors += (errors.empty() ? "" : "; ") + error;
  }
  throw StoreError("cannot write the spill file either: " + errors);
}

std::size_t VerdictSpill::count() const {
  std::lock_guard lock(mu_);
  return count_;
}

std::vector<std::string> VerdictSpill::files() const {
  std::lock_guard lock(mu_);
  return used_;
}

std::vector<std::string> pending_spills(const std::string& db_path, const std::string& fallback_dir) {
  std::vector<std::string> out;
  for (const auto& p : spill_paths(db_path, fallback_dir)) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec) && fs::file_size(p, ec) > 0) out.push_back(p);
  }
  return out;
}

SpillImport import_spills(ResultStore& store, const std::string& db_path, const std::string& fallback_dir) {
  SpillImport result;
  for (const auto& path : pending_spills(db_path, fallback_dir)) {
    std::ifstream in(path);
    std::vector<SpilledVerdict> good;
    std::vector<std::string> bad;
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      try {
        auto j = nlohmann::json::parse(line);
        good.push_back({sample_from_json(j.at("sample")), verdict_from_json_text(j.at("verdict").dump()),
                        j.value("run_id", std::int64_t{0})});
      } catch (const std::exception&) {
        bad.push_back(line);
      }
    }
    in.close();
    for (const auto& v : good) store.put_verdict(v.sample, v.verdict, v.run_id);  // throws: the file stays
    if (!bad.empty()) {
      std::ofstream keep(path + ".bad", std::ios::app);
      for (const auto& line : bad) keep << line << "\n";
    }
    fs::remove(path);
    result.imported += good.size();
    result.unreadable_lines += bad.size();
    result.files.push_back(path);
  }
  return result;
}

}  // namespace kbv
