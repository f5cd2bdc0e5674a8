//===- FrontendTestUtil.h - Helpers for the frontend unit tests -*- C++ -*-===//

#ifndef TRIDENT_TEST_UNIT_FRONTEND_FRONTENDTESTUTIL_H
#define TRIDENT_TEST_UNIT_FRONTEND_FRONTENDTESTUTIL_H

#include "trident/Frontend/ModelSource.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace trident::frontend::test {

/// A file under test/data/models/ (copied from shared/models/ so that the
/// tests do not depend on the sibling folder).
inline std::string modelPath(const std::string &file) {
  return std::string(TRIDENT_SOURCE_DIR) + "/test/data/models/" + file;
}

inline std::string readModelFile(const std::string &file) {
  std::ifstream in(modelPath(file));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Loads a test config, failing the test with the message on error.
inline ModelConfig loadModel(const std::string &file,
                             std::vector<std::string> *warnings = nullptr) {
  Result<ModelConfig> r = loadHFConfigFile(modelPath(file), warnings);
  INFO(file << ": " << (r ? std::string("ok") : r.message()));
  REQUIRE(r.isOk());
  return *r;
}

/// Parses `text` (named "t.json"), expecting an error; returns its message.
inline std::string parseError(const std::string &text) {
  std::vector<std::string> warnings;
  Result<ModelConfig> r = parseHFConfig(text, "t.json", &warnings);
  INFO(text);
  REQUIRE_FALSE(r.isOk());
  return r.message();
}

} // namespace trident::frontend::test

#endif // TRIDENT_TEST_UNIT_FRONTEND_FRONTENDTESTUTIL_H
