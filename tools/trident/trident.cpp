//===- trident.cpp - The Trident command-line planner ---------------------===//
//
// Thin: parses options, calls the libraries, prints. Exit codes: 0 success,
// 1 bad input or a failed run (the message names the input and the
// problem), 2 bad usage, 3 nothing fits (plan).
//
//===----------------------------------------------------------------------===//

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Frontend/GraphBuilder.h"
#include "trident/Frontend/ModelSource.h"
#include "trident/Report/InspectReport.h"
#include "trident/Support/FileIO.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <string>

namespace cl = llvm::cl;
using namespace trident;

namespace {

cl::OptionCategory category("Trident options");

cl::SubCommand inspectCmd("inspect",
                          "Parameters, layers and FLOPs of a model");
cl::SubCommand importCmd("import", "Write a model as tgraph MLIR");

cl::opt<std::string> modelOpt("model", cl::desc("zoo name, config.json or .mlir"),
                              cl::value_desc("M"), cl::sub(inspectCmd),
                              cl::sub(importCmd), cl::cat(category));
cl::opt<int64_t> seqLenOpt("seq-len", cl::desc("sequence length override"),
                           cl::init(0), cl::sub(inspectCmd), cl::sub(importCmd),
                           cl::cat(category));
cl::opt<bool> jsonOpt("json", cl::desc("print JSON"), cl::sub(inspectCmd),
                      cl::cat(category));
cl::opt<std::string> outputOpt("o", cl::desc("output file (- for stdout)"),
                               cl::value_desc("file"), cl::init("-"),
                               cl::sub(importCmd), cl::cat(category));

int fail(const std::string &message, int code = 1) {
  llvm::errs() << "trident: error: " << message << "\n";
  return code;
}

/// Loads --model, printing warnings; nullopt (after printing) on error.
std::optional<frontend::LoadedModel> load(mlir::MLIRContext &context) {
  if (modelOpt.empty()) {
    fail("--model is required (a zoo name, a config.json or a .mlir file)");
    return std::nullopt;
  }
  if (seqLenOpt < 0) {
    fail("--seq-len must be positive, got " + std::to_string(seqLenOpt));
    return std::nullopt;
  }
  auto loaded = frontend::loadModel(context, modelOpt, seqLenOpt);
  if (!loaded) {
    fail(loaded.message());
    return std::nullopt;
  }
  for (const std::string &w : loaded->warnings)
    llvm::errs() << "trident: warning: " << w << "\n";
  return std::move(*loaded);
}

int runInspect(mlir::MLIRContext &context) {
  auto loaded = load(context);
  if (!loaded)
    return 1;
  analysis::ModelSummary summary =
      analysis::summarizeModel(loaded->model(), seqLenOpt);
  std::string text = jsonOpt ? report::renderInspectJson(summary)
                             : report::renderInspectText(summary);
  llvm::outs() << text;
  return 0;
}

int runImport(mlir::MLIRContext &context) {
  auto loaded = load(context);
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

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Trident: automatic parallelization planner and cost model\n\n"
      "  trident inspect --model M [--seq-len S] [--json]\n"
      "  trident import  --model M [--seq-len S] [-o out.mlir]\n");
  mlir::DialectRegistry registry;
  frontend::registerFrontendDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  if (inspectCmd)
    return runInspect(context);
  if (importCmd)
    return runImport(context);
  llvm::errs() << "trident: error: expected a command: inspect, import "
                  "(see --help)\n";
  return 2;
}
