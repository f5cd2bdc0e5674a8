//===- FileIOTest.cpp - Outputs are written atomically --------------------===//
//
// writeFileAtomically must never leave a half-written file: the target is
// replaced by a rename (so an existing file stays intact until the new one
// is complete), a failed write leaves the old target and no temporary.
//
//===----------------------------------------------------------------------===//
#include "trident/Support/FileIO.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/resource.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#include <vector>

using namespace trident;
namespace fs = std::filesystem;

namespace {

/// A fresh directory, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl =
        (fs::temp_directory_path() / "trident-fileio-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const fs::directory_entry &e : fs::directory_iterator(path))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

std::string readBack(const fs::path &p) {
  auto r = readFile(p.string());
  REQUIRE(r.isOk());
  return *r;
}

} // namespace

TEST_CASE("writeFileAtomically writes the whole text and nothing else",
          "[support][fileio]") {
  TempDir d;
  fs::path out = d.path / "plan.json";
  std::string text(100000, 'x');
  REQUIRE(writeFileAtomically(out.string(), text).isOk());
  CHECK(readBack(out) == text);
  CHECK(d.entries() == std::vector<std::string>{"plan.json"});
}

TEST_CASE("writeFileAtomically replaces the target by a rename",
          "[support][fileio]") {
  TempDir d;
  fs::path out = d.path / "plan.json";
  fs::path link = d.path / "old.json";
  REQUIRE(writeFileAtomically(out.string(), "old\n").isOk());
  // A second name for the old file: an in-place rewrite would change it
  // too; a rename gives `plan.json` a new file and leaves the old one.
  fs::create_hard_link(out, link);
  REQUIRE(writeFileAtomically(out.string(), "new\n").isOk());
  CHECK(readBack(out) == "new\n");
  CHECK(readBack(link) == "old\n");
  CHECK(d.entries() == std::vector<std::string>{"old.json", "plan.json"});
}

TEST_CASE("a write that fails mid-way leaves the old target and no temporary",
          "[support][fileio]") {
  TempDir d;
  fs::path out = d.path / "plan.json";
  REQUIRE(writeFileAtomically(out.string(), "old\n").isOk());
  // Files may grow to 4 KiB only: writing 1 MiB fails part-way (EFBIG;
  // SIGXFSZ ignored so the process survives to report it).
  struct rlimit saved;
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 4096;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  Status s = writeFileAtomically(out.string(), std::string(1 << 20, 'y'));
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, oldHandler);
  REQUIRE_FALSE(s.isOk());
  CHECK(s.message().find("plan.json: write failed") != std::string::npos);
  CHECK(readBack(out) == "old\n");
  CHECK(d.entries() == std::vector<std::string>{"plan.json"});
}

TEST_CASE("writing into a missing directory fails, naming the path",
          "[support][fileio]") {
  TempDir d;
  fs::path out = d.path / "no-such-dir" / "plan.json";
  Status s = writeFileAtomically(out.string(), "x");
  REQUIRE_FALSE(s.isOk());
  CHECK(s.message().find("no-such-dir/plan.json") != std::string::npos);
  CHECK(d.entries().empty());
}

TEST_CASE("a pipe or device target is written in place, not replaced",
          "[support]") {
  TempDir d;
  fs::path fifo = d.path / "out.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A non-blocking reader, open before the write: the pipe then takes the
  // (small) text at once, and a rename over the pipe would leave the
  // reader with nothing instead of hanging the test.
  int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(rd >= 0);
  Status s = writeFileAtomically(fifo.string(), "plan text\n");
  char buf[64] = {};
  ssize_t n = ::read(rd, buf, sizeof buf);
  ::close(rd);
  REQUIRE(s.isOk());
  CHECK(std::string(buf, n > 0 ? size_t(n) : 0) == "plan text\n");
  struct stat st;
  REQUIRE(::stat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode)); // still the pipe, not a file renamed over it
  CHECK(d.entries() == std::vector<std::string>{"out.fifo"});

  // Through a symbolic link: the named file is replaced, the link stays.
  fs::path file = d.path / "real.json", link = d.path / "link.json";
  REQUIRE(writeFileAtomically(file.string(), "old").isOk());
  fs::create_symlink(file, link);
  REQUIRE(writeFileAtomically(link.string(), "new").isOk());
  CHECK(fs::is_symlink(link));
  CHECK(readBack(file) == "new");
  // A directory is refused by name.
  Status dir = writeFileAtomically(d.path.string(), "x");
  REQUIRE_FALSE(dir.isOk());
  CHECK(dir.message().find("is a directory") != std::string::npos);
}
