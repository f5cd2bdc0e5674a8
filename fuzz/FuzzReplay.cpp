//===- FuzzReplay.cpp - Run a fuzz target over files, without libFuzzer ---===//
//
// Each fuzz target defines LLVMFuzzerTestOneInput. Built without libFuzzer
// (any compiler, the normal CI build) it links this main instead, which
// feeds it every file named on the command line and every regular file of
// every directory named (sorted, so a failure is reproducible), then prints
// how many inputs it ran. ctest runs each target this way over its seed
// corpus and its regression cases (fuzz/CMakeLists.txt): a crash, an
// assertion or a sanitizer report fails the test.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
    __attribute__((weak));

namespace fs = std::filesystem;

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    fs::path p(argv[i]);
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const fs::directory_entry &e : fs::directory_iterator(p, ec))
        if (e.is_regular_file())
          files.push_back(e.path());
    } else if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "%s: %s: no such file or directory\n", argv[0],
                   argv[i]);
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path &p : files) {
    std::ifstream in(p, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], p.c_str());
      return 2;
    }
    if (std::getenv("TRIDENT_FUZZ_VERBOSE"))
      std::fprintf(stderr, "running %s\n", p.c_str());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(data.data()),
                           data.size());
  }
  std::printf("replayed %zu inputs\n", files.size());
  return 0;
}
