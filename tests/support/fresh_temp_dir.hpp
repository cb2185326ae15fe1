#pragma once
// A folder of a test's own under the temp folder, made empty and removed on the way out.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace kbv::testing {

struct FreshTempDir {
  std::filesystem::path path;
  explicit FreshTempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~FreshTempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

}  // namespace kbv::testing
