//===- TestLayerProfile.cpp - test-layer-profile pass ---------------------===//
//
// Prints the LayerProfile the Analysis builds for a tgraph.model, so lit can
// check what Cost and Search will see.
//
//===----------------------------------------------------------------------===//

#include "trident/Analysis/ModelAnalysis.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::trident::graph;

namespace {

const char *kindName(::trident::LayerKind k) {
  switch (k) {
  case ::trident::LayerKind::Embedding:
    return "embedding";
  case ::trident::LayerKind::Block:
    return "block";
  case ::trident::LayerKind::Head:
    return "head";
  case ::trident::LayerKind::Other:
    return "other";
  }
  return "other";
}

struct TestLayerProfilePass
    : public PassWrapper<TestLayerProfilePass, OperationPass<ModelOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestLayerProfilePass)
  StringRef getArgument() const final { return "test-layer-profile"; }
  StringRef getDescription() const final {
    return "Print the LayerProfile of a tgraph.model";
  }
  void runOnOperation() override {
    ::trident::LayerProfile p =
        ::trident::analysis::buildLayerProfile(getOperation());
    llvm::raw_ostream &os = llvm::outs();
    os << "profile " << p.modelName << " seq " << p.seqLen << " hidden "
       << p.hidden << " vocab " << p.vocabSize << " heads " << p.numHeads
       << " layers " << p.numLayers << " params " << p.totalParams << "\n";
    for (const ::trident::LayerGroup &g : p.groups) {
      const ::trident::LayerCost &c = g.cost;
      os << "group " << c.name << " kind " << kindName(c.kind) << " count "
         << g.count << " gemms " << c.gemms.size() << " params "
         << c.params() << " (tp " << c.paramsTpSharded << ", replicated "
         << c.paramsReplicated << ", experts " << c.paramsExpert
         << ", vocab " << c.paramsVocab << ", tied " << c.tiedParams
         << ") act (tp " << int64_t(c.actTpSharded) << ", replicated "
         << int64_t(c.actReplicated) << ", core " << int64_t(c.actAttnCore)
         << ", input " << int64_t(c.actLayerInput) << ") tp-collectives "
         << c.tpCollectivesFwd << "\n";
    }
  }
};

} // namespace

namespace mlir::trident::test {
void registerTestLayerProfilePass() {
  PassRegistration<TestLayerProfilePass>();
}
} // namespace mlir::trident::test
