#pragma once
// Every default a user sees, in one place: the CLI's options, the job and the judge take them from
// here, so a default changes once and means the same everywhere.
#include <cstdint>

namespace kbv::defaults {

// Seconds of timing before giving up on the +-1% CI: one candidate (`kbv eval`) is worth a
// tighter interval than each of thousands (`kbv run`).
inline constexpr double kEvalTimeBudgetSeconds = 5.0;
inline constexpr double kRunTimeBudgetSeconds = 2.0;
inline constexpr double kTargetRelativeCi = 0.01;

// The candidate's build (its import) and everything after it, enforced by the judge as deadlines.
inline constexpr double kCompileTimeoutSeconds = 900;
inline constexpr double kRunTimeoutSeconds = 600;
// torch.compile(Model) for the torch_compile baseline is the judge's work: its time moves the
// candidate's deadline, and kbv's backstop on the whole judge allows this much more.
inline constexpr double kTorchCompileAllowanceSeconds = 900;

// The candidate's sandbox.
inline constexpr double kSandboxMemoryGiB = 64;
inline constexpr std::int64_t kSandboxMaxProcesses = 1024;

}  // namespace kbv::defaults
