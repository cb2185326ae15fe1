#include "orchestrate/option_checks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace fs = std::filesystem;

namespace kbv {

void check_positive(const std::string& option, double value) {
  if (!std::isfinite(value) || value <= 0)
    throw UsageError(fmt::format("{} {} is not a positive number of seconds; give a value > 0, e.g. {} 600", option, value,
                                 option));
}

void check_non_negative(const std::string& option, double value) {
  if (!std::isfinite(value) || value < 0)
    throw UsageError(fmt::format("{} {} is not a finite number >= 0; give e.g. {} 1e-3", option, value, option));
}

void check_at_least_one(const std::string& option, long long value) {
  if (value < 1) throw UsageError(fmt::format("{} {} must be at least 1", option, value));
}

void check_output_writable(const std::string& option, const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw UsageError(fmt::format("{} '{}' is a folder; give a file name", option, path));
  bool existed = fs::exists(path, ec);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw UsageError(fmt::format("{} '{}' cannot be written ({}); check that its folder exists and is writable", option,
                                 path, std::strerror(errno)));
  ::close(fd);
  if (!existed) fs::remove(path, ec);
}

void check_folder_writable(const std::string& option, const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir))
    throw UsageError(fmt::format("{} '{}' is not a usable folder ({}); give a folder kbv can create and write to", option,
                                 dir, ec ? ec.message() : "not a folder"));
  std::string probe = (fs::path(dir) / fmt::format(".kbv-write-check-{}", ::getpid())).string();
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw UsageError(fmt::format("{} '{}' is not writable ({}); give a folder kbv can write to", option, dir,
                                 std::strerror(errno)));
  ::close(fd);
  fs::remove(probe, ec);
}

}  // namespace kbv
