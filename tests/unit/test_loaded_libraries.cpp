// The judge's own evidence of a custom kernel (judge/loaded_libraries.hpp): the libraries of a
// build-cache entry that a process has mapped, read from /proc/<pid>/maps, never from the sandbox.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "judge/loaded_libraries.hpp"

namespace fs = std::filesystem;

namespace kbv::judge {
namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char name[] = "/tmp/kbv-loaded-libs-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() { fs::remove_all(path); }
};

void write_file(const fs::path& p, std::size_t bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << std::string(bytes, 'x');
}

// Maps `p` into this process (as a loader would), for as long as the object lives.
struct Mapping {
  void* at = MAP_FAILED;
  std::size_t size = 4096;
  explicit Mapping(const fs::path& p) {
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      at = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      ::close(fd);
    }
  }
  ~Mapping() {
    if (at != MAP_FAILED) ::munmap(at, size);
  }
};

TEST(LoadedLibraries, ParsesMapsLines) {
  MapsLine m;
  ASSERT_TRUE(parse_maps_line("7f0a1c000000-7f0a1c021000 r-xp 00000000 fd:01 1234567   /tmp/b/x/relu.so", &m));
  EXPECT_EQ(m.major, 0xfdu);
  EXPECT_EQ(m.minor, 1u);
  EXPECT_EQ(m.inode, 1234567ull);
  EXPECT_EQ(m.path, "/tmp/b/x/relu.so");
  ASSERT_TRUE(parse_maps_line("7f0a1c000000-7f0a1c021000 r-xp 00000000 08:02 99 /a b/lib.so (deleted)", &m));
  EXPECT_EQ(m.path, "/a b/lib.so");
  ASSERT_TRUE(parse_maps_line("7ffd5a3f0000-7ffd5a411000 rw-p 00000000 00:00 0                          [stack]", &m));
  EXPECT_EQ(m.inode, 0ull);
  EXPECT_FALSE(parse_maps_line("not a mapping", &m));
  EXPECT_FALSE(parse_maps_line("", &m));
}

TEST(LoadedLibraries, OnlyMappedLibrariesOfTheEntryCount) {
  TempDir entry, elsewhere;
  write_file(entry.path / "relu_ext" / "relu_ext.so", 8192);
  write_file(entry.path / "built_not_loaded.so", 8192);
  write_file(entry.path / "notes.txt", 8192);
  write_file(elsewhere.path / "outside.so", 8192);
  // Nothing mapped yet: no custom kernel, whatever the entry holds.
  EXPECT_TRUE(libraries_mapped_from(entry.path.string(), {::getpid()}).empty());
  Mapping lib(entry.path / "relu_ext" / "relu_ext.so");
  Mapping text(entry.path / "notes.txt");
  Mapping outside(elsewhere.path / "outside.so");
  ASSERT_NE(lib.at, MAP_FAILED);
  auto found = libraries_mapped_from(entry.path.string(), {::getpid()});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0], "relu_ext/relu_ext.so");
  // A process the judge cannot read (gone) adds nothing and breaks nothing.
  EXPECT_TRUE(libraries_mapped_from(entry.path.string(), {999999999}).empty());
}

TEST(LoadedLibraries, ALinkInTheEntryIsNotALibraryOfIt) {
  // A link named like a library, pointing at a library loaded from elsewhere (torch's own), is
  // not something the candidate built.
  TempDir entry, elsewhere;
  write_file(elsewhere.path / "libsystem.so", 8192);
  fs::create_symlink(elsewhere.path / "libsystem.so", entry.path / "mine.so");
  Mapping outside(elsewhere.path / "libsystem.so");
  ASSERT_NE(outside.at, MAP_FAILED);
  EXPECT_TRUE(libraries_mapped_from(entry.path.string(), {::getpid()}).empty());
}

}  // namespace
}  // namespace kbv::judge
