#include "isolation/isolation_report.hpp"

namespace kbv::isolation {

void to_json(nlohmann::json& j, const IsolationReport& r) {
  j = nlohmann::json{{"user_namespace", r.user_namespace},
                     {"outer_uid", r.outer_uid},
                     {"pid_namespace", r.pid_namespace},
                     {"network_namespace", r.network_namespace},
                     {"mount_namespace", r.mount_namespace},
                     {"readonly_root", r.readonly_root},
                     {"capabilities_dropped", r.capabilities_dropped},
                     {"landlock_abi", r.landlock_abi},
                     {"tracing_denied", r.tracing_denied},
                     {"cgroup", r.cgroup},
                     {"memory_limit_bytes", r.memory_limit_bytes},
                     {"memory_limit_by", r.memory_limit_by},
                     {"process_limit", r.process_limit},
                     {"process_limit_by", r.process_limit_by},
                     {"file_size_limit_bytes", r.file_size_limit_bytes},
                     {"writable", r.writable},
                     {"environment", r.environment},
                     {"warnings", r.warnings}};
}

}  // namespace kbv::isolation
