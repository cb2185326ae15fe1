#include "judge/host_contention.hpp"

#include <dirent.h>

#include <cstdio>

namespace kbv::judge {

std::optional<std::int64_t> runqueue_wait_ns(const std::string& task_dir) {
  DIR* dir = ::opendir(task_dir.c_str());
  if (!dir) return std::nullopt;
  std::int64_t total = 0;
  bool any = false;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string path = task_dir + "/" + entry->d_name + "/schedstat";
    std::FILE* f = std::fopen(path.c_str(), "re");
    if (!f) continue;  // a thread that ended meanwhile
    long long on_cpu = 0, waiting = 0;
    if (std::fscanf(f, "%lld %lld", &on_cpu, &waiting) == 2) {
      total += waiting;
      any = true;
    }
    std::fclose(f);
  }
  ::closedir(dir);
  if (!any) return std::nullopt;
  return total;
}

}  // namespace kbv::judge
