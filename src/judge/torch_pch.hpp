#pragma once
// A precompiled torch/extension.h shared by every candidate's load_inline build (issue 14: the
// build cost). torch's main.cpp of every extension starts with that header, and parsing it is
// ~25 s of CPU each time; with the PCH the same compile takes ~8 s (bench/RESULTS.md).
//
// Trust: the PCH is made by kbv-judge (which never runs candidate code) into
// <build root>/torch-pch/<key>, which sandboxes only read, and only handed to sandboxes that run
// as another uid (they cannot write the judge's 0644 files). The key names the torch headers
// (their folder, size and mtime): g++ checks its own version and the flags of a PCH, not whether
// the header changed, so a torch upgrade gets a new folder instead of a stale PCH. Every build of
// one key gets the same `-I<folder>` whether the PCH exists yet or not, so torch's rebuild
// signature never depends on it; g++ uses a variant only when it is valid for the compile (same
// -O level, macros), else it parses the header as before.
//
// Beside it, kbv/binding.h (core/binding_prelude.hpp: torch/extension.h less the C++ frontend,
// which load_inline's main.cpp is compiled with where it can be) and its own three variants; the
// header is written with the folder, so a build finds it whether its PCH is made yet or not.
#include <string>

namespace kbv::judge {

// <build root>/torch-pch/<key>, created (0755) when missing; "" when the build root is not this
// user's alone (owned by another uid, writable by group or others, or a symlink): a folder others
// can write is no place for what every build reads.
std::string torch_pch_dir(const std::string& build_root);

// Makes the missing variants (-O0, -O2, -O3) of both headers in torch_pch_dir(build_root) under a
// lock: each is compiled aside, checked by a compile that must use it, then renamed in whole.
// `summary` gets one JSON object. Returns 0 when torch/extension.h's -O0 variant is present afterwards.
int make_torch_pch(const std::string& build_root, std::string* summary);

}  // namespace kbv::judge
