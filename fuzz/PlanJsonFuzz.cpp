//===- PlanJsonFuzz.cpp - Fuzz the trident.plan/v1 reader -----------------===//
//
// Input: the bytes of a plan file. An accepted plan must survive a round
// trip (write it, read it back: the same plan; docs/plan-schema.md promises
// parse(write(p)) == p) and convert to a parallel configuration or be
// refused by toParallelConfig with a message.
//
//===----------------------------------------------------------------------===//

#include "trident/Plan/Plan.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace trident;

namespace {

[[noreturn]] void finding(const std::string &what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  auto p = plan::parsePlanJson(text, "fuzz.json");
  if (!p) {
    if (p.message().find("fuzz.json") == std::string::npos)
      finding("error does not name the input: " + p.message());
    return 0;
  }
  std::string written = plan::planToJson(*p);
  auto back = plan::parsePlanJson(written, "written.json");
  if (!back)
    finding("a written plan does not read back: " + back.message() + "\n" +
            written);
  if (!(*back == *p))
    finding("a plan changed in a round trip:\n" + written);
  if (plan::planToJson(*back) != written)
    finding("writing a plan twice gives different text");
  auto cfg = plan::toParallelConfig(*p);
  if (!cfg && cfg.message().empty())
    finding("toParallelConfig failed without a message");
  return 0;
}
