//===- Calibration.h - Measured profiles overriding the catalog -*- C++ -*-===//
//
// A calibration profile holds what was measured on one GPU type: GEMM
// efficiency at given shapes, streaming memory bandwidth, and collective
// bus bandwidth by message size. Applied to a cluster, it replaces the
// catalog defaults of every group with that GPU type. Schema and example in
// docs/hardware.md.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_HARDWARE_CALIBRATION_H
#define TRIDENT_HARDWARE_CALIBRATION_H

#include "trident/Hardware/Cluster.h"
#include "trident/Hardware/Gpu.h"
#include "trident/Support/Status.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trident {

struct Calibration {
  /// GPU type the profile was measured on (canonical catalog name); empty
  /// means "every group".
  std::string gpu;
  std::vector<GemmCalibrationPoint> gemm;
  /// Measured streaming bandwidth, bytes/s (replaces peak x efficiency).
  std::optional<double> memBandwidthBytesPerS;
  /// Measured kernel launch overhead, seconds.
  std::optional<double> kernelLaunchSeconds;
  std::vector<CollectiveCalibrationPoint> collectives;
};

/// Parses a calibration JSON text; `source` names it in errors.
Result<Calibration> parseCalibrationJson(std::string_view text,
                                         std::string_view source =
                                             "calibration.json");
/// Reads and parses a calibration file.
Result<Calibration> loadCalibrationFile(const std::string &path);

/// Applies `cal` to every group whose GPU matches (all groups when
/// cal.gpu is empty). Errors when no group matches.
Status applyCalibration(Cluster &cluster, const Calibration &cal);

} // namespace trident

#endif // TRIDENT_HARDWARE_CALIBRATION_H
