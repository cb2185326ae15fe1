// Removing a folder that a candidate wrote (its private tmp, its build-cache entry).
//
// Not std::filesystem::remove_all: libtorch.so exports its own copy of it, which wins symbol
// lookup in every binary linked against LibTorch and calls through a null pointer on any
// non-empty folder (kbv-judge died of SIGSEGV after a candidate left files in its tmp).
// Here every step is relative to an open folder (openat/unlinkat, O_NOFOLLOW): a link planted
// in the tree is removed as a link, never followed, and any depth of nesting costs a bounded
// number of open files.
#pragma once

#include <string>

namespace kbv::isolation {

struct RemoveResult {
  bool ok = true;        // everything under the folder is gone (and the folder, for remove_tree)
  std::string error;     // the first thing that could not be removed, with errno's text
};

// Removes `path` and everything under it. A missing path is success.
RemoveResult remove_tree(const std::string& path);

// Removes everything under the folder `path`, keeping the folder itself.
RemoveResult empty_tree(const std::string& path);

}  // namespace kbv::isolation
