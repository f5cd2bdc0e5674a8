//===- ExportCommand.cpp - trident export ---------------------------------===//
//
// `trident export --plan plan.json --to megatron|deepspeed|torchtitan
// [-o FILE]`: a trident.plan/v1 plan as a training framework's
// configuration (TridentPlan's Export.h, docs/exporters.md). Notes that the
// text cannot carry (DeepSpeed JSON has no comments) go to stderr.
//
// Exit codes: 0 written; 1 bad input or a plan the target cannot express;
// 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "trident/Plan/Export.h"
#include "trident/Support/FileIO.h"

#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace trident::tool {

namespace {
cl::opt<std::string> planOpt("plan",
                             cl::desc("a trident.plan/v1 file (trident plan "
                                      "-o)"),
                             cl::value_desc("plan.json"), cl::sub(exportCmd),
                             cl::cat(category));
cl::opt<std::string> exportOutputOpt("o", cl::desc("write here (default: "
                                                   "stdout)"),
                                     cl::value_desc("file"),
                                     cl::sub(exportCmd), cl::cat(category));
cl::opt<std::string> exportToOpt("to",
                                 cl::desc("megatron, deepspeed or torchtitan"),
                                 cl::value_desc("target"), cl::sub(exportCmd),
                                 cl::cat(category));
} // namespace

int printExported(const plan::Plan &p, std::string_view target,
                  std::string_view source, const std::string &outPath) {
  auto t = plan::parseExportTarget(target);
  if (!t)
    return fail(t.message(), 2);
  auto e = plan::exportPlan(p, *t, source);
  if (!e)
    return fail(e.message());
  if (!e->notesInText)
    for (const std::string &n : e->notes)
      llvm::errs() << "trident: note: " << n << "\n";
  if (outPath.empty() || outPath == "-") {
    llvm::outs() << e->text;
    return 0;
  }
  if (Status s = writeFileAtomically(outPath, e->text); !s)
    return fail(s.message());
  return 0;
}

int runExport(mlir::MLIRContext &) {
  if (planOpt.empty())
    return fail("--plan is required (a plan written by trident plan -o)", 2);
  if (exportToOpt.empty())
    return fail("--to is required: megatron, deepspeed or torchtitan", 2);
  auto text = readFile(planOpt);
  if (!text)
    return fail(text.message());
  auto p = plan::parsePlanJson(*text, planOpt);
  if (!p)
    return fail(p.message());
  return printExported(*p, exportToOpt, planOpt, exportOutputOpt);
}

} // namespace trident::tool
