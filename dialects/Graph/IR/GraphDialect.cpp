//===- GraphDialect.cpp - tgraph dialect registration ---------------------===//

#include "dialects/Graph/IR/GraphDialect.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::trident::graph;

#include "dialects/Graph/IR/GraphOpsDialect.cpp.inc"
#include "dialects/Graph/IR/GraphEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/Graph/IR/GraphAttrs.cpp.inc"

void TGraphDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/Graph/IR/GraphAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/Graph/IR/GraphOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// PlanAttr
//===----------------------------------------------------------------------===//

/// The plan's structure. What the values mean (each axis within its row's
/// bounds, the layer split covering the model, ...) is checked by the
/// converter to the plan record (lib/Conversion/PlanAttr) with
/// plan::verify: the dialect does not depend on lib/.
LogicalResult
PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                 StringRef model, int64_t seqLen, int64_t gpus,
                 StringRef precision, StringRef runtime, int64_t globalBatch,
                 int64_t numMicroBatches, DictionaryAttr axes,
                 DenseI64ArrayAttr layersPerChunk, ArrayAttr stageRecompute,
                 DenseI64ArrayAttr modelShape, DictionaryAttr predicted) {
  if (seqLen < 1 || globalBatch < 1 || numMicroBatches < 1 || gpus < 0)
    return emitError() << "tgraph.plan: seq_len, global_batch and "
                          "num_micro_batches must be positive and gpus "
                          "non-negative";
  if (precision.empty() || runtime.empty())
    return emitError() << "tgraph.plan: precision and runtime must be named";
  if (!axes)
    return emitError() << "tgraph.plan: axes must be a dictionary";
  for (NamedAttribute a : axes)
    if (!isa<IntegerAttr, BoolAttr, StringAttr>(a.getValue()))
      return emitError() << "tgraph.plan: axis '" << a.getName().getValue()
                         << "' must be an integer, a boolean or a name";
  if (!layersPerChunk || layersPerChunk.empty())
    return emitError() << "tgraph.plan: layers_per_chunk must not be empty";
  for (int64_t n : layersPerChunk.asArrayRef())
    if (n < 0)
      return emitError() << "tgraph.plan: layers_per_chunk entries must not "
                            "be negative";
  if (stageRecompute)
    for (Attribute r : stageRecompute) {
      auto name = dyn_cast<StringAttr>(r);
      if (!name ||
          (name.getValue() != "none" && name.getValue() != "selective" &&
           name.getValue() != "full"))
        return emitError() << "tgraph.plan: stage_recompute entries must be "
                              "\"none\", \"selective\" or \"full\"";
    }
  if (modelShape && modelShape.size() != 4)
    return emitError() << "tgraph.plan: model_shape holds layers, hidden, "
                          "vocab and params (4 entries), got "
                       << modelShape.size();
  if (modelShape)
    for (int64_t v : modelShape.asArrayRef())
      if (v < 0)
        return emitError() << "tgraph.plan: model_shape entries must not be "
                              "negative";
  if (predicted)
    for (NamedAttribute a : predicted)
      if (!isa<FloatAttr>(a.getValue()))
        return emitError() << "tgraph.plan: predicted '"
                           << a.getName().getValue() << "' must be a float";
  (void)model;
  return success();
}
