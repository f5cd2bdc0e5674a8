//===- SharedData.h - Tests that read ../shared/validation ----------------===//
//
// The published runs are the cost model's ground truth: a test that reads
// them fails when they are missing, unless TRIDENT_SKIP_VALIDATION is set
// in the environment (then it says it skipped).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_TEST_UNIT_SHAREDDATA_H
#define TRIDENT_TEST_UNIT_SHAREDDATA_H

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

/// The path of `relative` under TRIDENT_SHARED_DIR, or "" when it is
/// missing and TRIDENT_SKIP_VALIDATION allows skipping (a missing file
/// without the variable fails the test).
inline std::string sharedDataOrSkip(const std::string &relative) {
  std::string path = std::string(TRIDENT_SHARED_DIR) + "/" + relative;
  if (std::filesystem::exists(path))
    return path;
  if (std::getenv("TRIDENT_SKIP_VALIDATION")) {
    WARN("skipped (TRIDENT_SKIP_VALIDATION): " << path << " not found");
    return "";
  }
  FAIL(path << " not found: the validation data is missing (set "
               "TRIDENT_SKIP_VALIDATION=1 to skip the tests that read it)");
  return "";
}

#endif // TRIDENT_TEST_UNIT_SHAREDDATA_H
