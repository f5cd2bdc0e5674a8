//===- InspectCommand.cpp - trident inspect / import ----------------------===//

#include "Commands.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Report/InspectReport.h"
#include "trident/Support/FileIO.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace trident::tool {

static cl::opt<std::string> outputOpt("o", cl::desc("output file (- for stdout)"),
                                      cl::value_desc("file"), cl::init("-"),
                                      cl::sub(importCmd), cl::cat(category));

int runInspect(mlir::MLIRContext &ctx) {
  auto loaded = loadModelOption(ctx);
  if (!loaded)
    return 1;
  analysis::ModelSummary summary =
      analysis::summarizeModel(loaded->model(), seqLenOpt);
  if (jsonOpt) {
    LayerProfile shape =
        analysis::buildLayerProfile(loaded->model(), seqLenOpt);
    llvm::outs() << report::renderInspectJson(summary, shape);
  } else {
    llvm::outs() << report::renderInspectText(summary);
  }
  return 0;
}

int runImport(mlir::MLIRContext &ctx) {
  auto loaded = loadModelOption(ctx);
  if (!loaded)
    return 1;
  std::string text;
  llvm::raw_string_ostream os(text);
  loaded->module->print(os);
  os << "\n";
  os.flush();
  if (Status s = writeFileAtomically(outputOpt, text); !s)
    return fail(s.message());
  return 0;
}

} // namespace trident::tool
