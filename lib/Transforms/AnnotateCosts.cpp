//===- AnnotateCosts.cpp - trident-annotate-costs -------------------------===//
//
// Thin: asks every op for its cost through CostOpInterface and records it.
//
//===----------------------------------------------------------------------===//

#include "trident/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <cmath>

#define DEBUG_TYPE "trident-annotate-costs"

namespace mlir::trident {
#define GEN_PASS_DEF_ANNOTATECOSTSPASS
#include "trident/Transforms/Passes.h.inc"
} // namespace mlir::trident

using namespace mlir;
using namespace mlir::trident::graph;

namespace {

/// Costs are whole numbers of FLOPs and bytes; integers print exactly.
IntegerAttr count(Builder &b, double v) {
  return b.getI64IntegerAttr(static_cast<int64_t>(std::llround(v)));
}

DictionaryAttr costDict(Builder &b, const OpCost &c) {
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("fwd_flops", count(b, c.fwdFlops)),
      b.getNamedAttr("bwd_flops", count(b, c.bwdFlops)),
      b.getNamedAttr("bytes_read", count(b, c.bytesRead)),
      b.getNamedAttr("bytes_written", count(b, c.bytesWritten)),
      b.getNamedAttr("params", b.getI64IntegerAttr(c.params)),
      b.getNamedAttr("saved_none", count(b, c.savedBytes[0])),
      b.getNamedAttr("saved_selective", count(b, c.savedBytes[1])),
      b.getNamedAttr("saved_full", count(b, c.savedBytes[2])),
  };
  return b.getDictionaryAttr(fields);
}

struct AnnotateCostsPass
    : public mlir::trident::impl::AnnotateCostsPassBase<AnnotateCostsPass> {
  using AnnotateCostsPassBase::AnnotateCostsPassBase;

  void runOnOperation() override {
    ModelOp model = getOperation();
    if (batch <= 0) {
      model.emitError() << "trident-annotate-costs: batch must be positive, "
                           "got "
                        << static_cast<int64_t>(batch);
      return signalPassFailure();
    }
    if (seqLen < 0) {
      model.emitError() << "trident-annotate-costs: seq-len must not be "
                           "negative, got "
                        << static_cast<int64_t>(seqLen);
      return signalPassFailure();
    }
    CostContext ctx;
    ctx.batch = batch;
    ctx.seq = seqLen > 0 ? seqLen : model.getSeqLenAttr().getInt();
    Builder b(&getContext());
    model.walk([&](CostOpInterface op) {
      if (isa<ParamOp, InputOp, YieldOp, OutputOp>(op.getOperation()))
        return;
      op->setAttr("tgraph.cost", costDict(b, op.getCost(ctx)));
    });
    OpCost total = model.getCost(ctx);
    double tokens = double(ctx.batch) * double(ctx.seq);
    model->setAttr(
        "tgraph.flops_per_token",
        b.getDictionaryAttr(
            {b.getNamedAttr("forward", count(b, total.fwdFlops / tokens)),
             b.getNamedAttr("train", count(b, (total.fwdFlops +
                                               total.bwdFlops) /
                                                  tokens))}));
  }
};

} // namespace
