//===- CalibrationFuzz.cpp - Fuzz the calibration profile reader ----------===//
//
// Input: the bytes of a calibration JSON. An accepted profile is applied to
// a two-group cluster (H100 and A100 nodes); the result must still
// validate, or applyCalibration must refuse it with a message.
//
//===----------------------------------------------------------------------===//

#include "trident/Hardware/Calibration.h"
#include "trident/Hardware/Cluster.h"

#include <cmath>
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

Cluster twoGroups() {
  Cluster c;
  c.name = "fuzz";
  c.groups.push_back(*presetNodeGroup("dgx-h100", 2));
  c.groups.push_back(*presetNodeGroup("dgx-a100-80gb", 1));
  c.interGroup = c.groups[1].nic;
  return c;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  auto cal = parseCalibrationJson(text, "fuzz.json");
  if (!cal) {
    if (cal.message().find("fuzz.json") == std::string::npos)
      finding("error does not name the input: " + cal.message());
    return 0;
  }
  // Every accepted value must be usable by the cost model: positive,
  // finite, GEMM shapes of at least one element.
  for (const GemmCalibrationPoint &g : cal->gemm)
    if (g.m < 1 || g.n < 1 || g.k < 1 || !std::isfinite(g.efficiency) ||
        g.efficiency == 0)
      finding("accepted GEMM point is unusable");
  for (const CollectiveCalibrationPoint &c : cal->collectives)
    if (!(std::isfinite(c.bytes) && c.bytes > 0 &&
          std::isfinite(c.busBwBytesPerS) && c.busBwBytesPerS > 0))
      finding("accepted collective point is unusable");
  if ((cal->memBandwidthBytesPerS &&
       !(std::isfinite(*cal->memBandwidthBytesPerS) &&
         *cal->memBandwidthBytesPerS > 0)) ||
      (cal->kernelLaunchSeconds && !(std::isfinite(*cal->kernelLaunchSeconds) &&
                                     *cal->kernelLaunchSeconds > 0)))
    finding("accepted bandwidth or launch time is unusable");
  static const Cluster base = twoGroups();
  Cluster c = base;
  if (Status s = applyCalibration(c, *cal); !s) {
    if (s.message().empty())
      finding("applyCalibration failed without a message");
    return 0;
  }
  if (Status s = validateCluster(c); !s)
    finding("calibrated cluster fails validation: " + s.message());
  return 0;
}
