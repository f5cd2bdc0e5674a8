//===- HFConfigFuzz.cpp - Fuzz the Hugging Face config.json reader --------===//
//
// Input: the bytes of a config.json. The reader must either refuse it with
// a message naming the source or return a config that validates and whose
// parameter count does not overflow; anything else (a crash, a sanitizer
// report, an accepted config that fails validation) is a finding.
//
//===----------------------------------------------------------------------===//

#include "trident/Frontend/ModelSource.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

using namespace trident;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  std::vector<std::string> warnings;
  auto cfg = frontend::parseHFConfig(text, "fuzz.json", &warnings);
  if (!cfg) {
    if (cfg.message().find("fuzz.json") == std::string::npos) {
      std::fprintf(stderr, "error does not name the input: %s\n",
                   cfg.message().c_str());
      std::abort();
    }
    return 0;
  }
  if (Status s = frontend::validateModelConfig(*cfg, "fuzz.json"); !s) {
    std::fprintf(stderr, "accepted config fails validation: %s\n",
                 s.message().c_str());
    std::abort();
  }
  frontend::ParamCounts pc = frontend::countParams(*cfg);
  if (pc.total() <= 0 || pc.active <= 0 || pc.active > pc.total()) {
    std::fprintf(stderr, "accepted config has %lld parameters (%lld active)\n",
                 (long long)pc.total(), (long long)pc.active);
    std::abort();
  }
  return 0;
}
