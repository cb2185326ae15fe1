#pragma once
// Checks of option values that must fail as usage errors (exit 2) before any work: a limit of 0
// or NaN would turn into the candidate's timeout, a --json path that cannot be written would
// fail only after the evaluation. Each throws UsageError with a message that says what to write.
#include <string>

namespace kbv {

// A finite number > 0 (seconds, budgets).
void check_positive(const std::string& option, double value);
// A finite number >= 0 (tolerances).
void check_non_negative(const std::string& option, double value);
// An integer >= 1 (jobs, samples).
void check_at_least_one(const std::string& option, long long value);

// `path` can be written later: its folder exists and a file can be created there (a file that
// already exists is opened for writing, not truncated). A file created by the check is removed.
void check_output_writable(const std::string& option, const std::string& path);

// `dir` exists or can be created, and a file can be written in it (--build-dir).
void check_folder_writable(const std::string& option, const std::string& dir);

}  // namespace kbv
