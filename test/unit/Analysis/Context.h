//===- Context.h - The MLIR context and model loading of the Analysis tests
//-===//

#ifndef TRIDENT_TEST_UNIT_ANALYSIS_CONTEXT_H
#define TRIDENT_TEST_UNIT_ANALYSIS_CONTEXT_H

#include "trident/Frontend/GraphBuilder.h"
#include "trident/Frontend/ModelSource.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <catch2/catch.hpp>

#include <string>

namespace trident::test {

/// One context with the frontend's dialects, shared by the tests.
inline mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    frontend::registerFrontendDialects(registry);
    auto *c = new mlir::MLIRContext(registry);
    c->loadAllAvailableDialects();
    return c;
  }();
  return *ctx;
}

/// `spec` (zoo name, config.json, .mlir) loaded at `seq`; the test fails
/// with the loader's message when it cannot be.
inline frontend::LoadedModel load(const std::string &spec, int64_t seq = 0) {
  auto loaded = frontend::loadModel(context(), spec, seq);
  INFO(spec << ": " << (loaded ? "" : loaded.message()));
  REQUIRE(loaded.isOk());
  return std::move(*loaded);
}

} // namespace trident::test

#endif // TRIDENT_TEST_UNIT_ANALYSIS_CONTEXT_H
