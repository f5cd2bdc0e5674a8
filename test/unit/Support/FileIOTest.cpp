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
