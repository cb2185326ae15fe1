#include "judge/host_contention.hpp"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace kbv::judge {

std::optional<ThreadWaits> thread_waits(const std::string& task_dir) {
  DIR* dir = ::opendir(task_dir.c_str());
  if (!dir) return std::nullopt;
  ThreadWaits waits;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string path = task_dir + "/" + entry->d_name + "/schedstat";
    std::FILE* f = std::fopen(path.c_str(), "re");
    if (!f) continue;  // a thread that ended meanwhile
    long long on_cpu = 0, waiting = 0;
    if (std::fscanf(f, "%lld %lld", &on_cpu, &waiting) == 2) waits[std::atol(entry->d_name)] = waiting;
    std::fclose(f);
  }
  ::closedir(dir);
  if (waits.empty()) return std::nullopt;
  return waits;
}

std::int64_t waited_between(const ThreadWaits& before, const ThreadWaits& after) {
  std::int64_t total = 0;
  for (const auto& [tid, wait] : after) {
    auto it = before.find(tid);
    total += std::max<std::int64_t>(wait - (it == before.end() ? 0 : it->second), 0);
  }
  return total;
}

}  // namespace kbv::judge
