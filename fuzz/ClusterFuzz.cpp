//===- ClusterFuzz.cpp - Fuzz the cluster.json reader and cluster specs ---===//
//
// Input: the bytes of a cluster.json, or (when short and not JSON) a
// "NAME:NODES" spec. An accepted cluster must validate, have between 1 and
// 2^24 GPUs, and map every GPU index to a group consistently.
//
//===----------------------------------------------------------------------===//

#include "trident/Hardware/Cluster.h"

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

void checkAccepted(const Cluster &c) {
  if (Status s = validateCluster(c); !s)
    finding("accepted cluster fails validation: " + s.message());
  int64_t total = c.totalGpus();
  if (total < 1 || total > (int64_t(1) << 24))
    finding("accepted cluster has " + std::to_string(total) + " GPUs");
  // Group boundaries: first GPU of each group maps back to the group.
  for (int64_t g = 0; g < int64_t(c.groups.size()); ++g) {
    int64_t first = c.firstGpuOfGroup(g);
    if (c.groupOfGpu(first) != g ||
        c.groupOfGpu(first + c.groups[size_t(g)].gpus() - 1) != g)
      finding("groupOfGpu disagrees with firstGpuOfGroup at group " +
              std::to_string(g));
  }
  if (c.groupOfGpu(-1) != -1 || c.groupOfGpu(total) != -1)
    finding("groupOfGpu accepts an index outside the cluster");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  auto c = parseClusterJson(text, "fuzz.json");
  if (c)
    checkAccepted(*c);
  else if (c.message().find("fuzz.json") == std::string::npos)
    finding("error does not name the input: " + c.message());
  if (size <= 64 && text.find('{') == std::string_view::npos) {
    auto s = parseClusterSpec(text);
    if (s)
      checkAccepted(*s);
  }
  return 0;
}
