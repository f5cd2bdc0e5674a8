//===- EmitCommand.cpp - trident emit -------------------------------------===//
//
// `trident emit --plan plan.json [--model M] [--backend cpu|cuda] -o DIR`:
// the training step of model M under the plan, lowered to texec
// (lib/Conversion/TGraphToExec) and translated to a C++ project
// (lib/Target): DIR/CMakeLists.txt and DIR/main.cpp, written atomically.
// `--emit texec` prints the texec IR instead, `--emit cpp` only main.cpp.
//
// Exit codes: 0 written; 1 bad input (model, plan, or a model the lowering
// cannot handle: the message names the op or plan field); 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "dialects/Exec/IR/ExecOps.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "trident/Conversion/Passes.h"
#include "trident/Conversion/TGraphToExec/TGraphToExec.h"
#include "trident/Transforms/Passes.h"
#include "trident/Support/DType.h"
#include "trident/Support/FileIO.h"
#include "trident/Target/ExecToCpp.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>

#ifndef TRIDENT_SOURCE_DIR
#define TRIDENT_SOURCE_DIR ""
#endif

namespace cl = llvm::cl;

namespace trident::tool {

cl::SubCommand emitCmd("emit", "Write the C++ training program of a plan");

namespace {
cl::opt<std::string> emitModelOpt("model",
                                  cl::desc("zoo name, config.json or .mlir "
                                           "file"),
                                  cl::value_desc("M"), cl::sub(emitCmd),
                                  cl::cat(category));
cl::opt<std::string> emitPlanOpt("plan",
                                 cl::desc("a trident.plan/v1 file (trident "
                                          "plan -o, or written by hand)"),
                                 cl::value_desc("plan.json"), cl::sub(emitCmd),
                                 cl::cat(category));
cl::opt<std::string> emitBackendOpt("backend", cl::desc("cpu or cuda"),
                                    cl::init("cpu"), cl::sub(emitCmd),
                                    cl::cat(category));
cl::opt<std::string> emitOutputOpt("o",
                                   cl::desc("output directory (project), or "
                                            "file for --emit texec|cpp "
                                            "(default stdout)"),
                                   cl::value_desc("DIR"), cl::sub(emitCmd),
                                   cl::cat(category));
cl::opt<std::string> emitWhatOpt("emit",
                                 cl::desc("project (default), texec or cpp"),
                                 cl::init("project"), cl::sub(emitCmd),
                                 cl::cat(category));
cl::opt<std::string> emitOptimizerOpt("optimizer", cl::desc("adam or sgd"),
                                      cl::init("adam"), cl::sub(emitCmd),
                                      cl::cat(category));
cl::opt<double> emitLrOpt("lr", cl::desc("learning rate (default 1e-3)"),
                          cl::init(1e-3), cl::sub(emitCmd), cl::cat(category));
cl::opt<double> emitMoeBiasRateOpt(
    "moe-bias-rate",
    cl::desc("step of DeepSeek-V3's auxiliary-loss-free load balancing: a "
             "MoE selection bias moves this much per step towards balanced "
             "experts (default 0.001, DeepSeek-V3's; 0 freezes it)"),
    cl::init(1e-3), cl::sub(emitCmd), cl::cat(category));
cl::opt<std::string> emitPrecisionOpt(
    "precision",
    cl::desc("fp32 or bf16 (mixed precision: bf16 compute, fp32 master "
             "weights and optimizer state); default: the plan's precision"),
    cl::value_desc("P"), cl::sub(emitCmd), cl::cat(category));
cl::opt<bool> emitTrainF32Opt("train-in-f32",
                              cl::desc("the same as --precision fp32"),
                              cl::sub(emitCmd), cl::cat(category));
cl::opt<std::string> emitSourceOpt(
    "trident-source",
    cl::desc("Trident source tree the project's CMakeLists.txt builds "
             "lib/Runtime from (default: this build's source tree)"),
    cl::init(TRIDENT_SOURCE_DIR), cl::sub(emitCmd), cl::cat(category));
} // namespace

int runEmit(mlir::MLIRContext &ctx) {
  if (emitPlanOpt.empty())
    return fail("--plan is required (trident plan -o plan.json, or a "
                "hand-written trident.plan/v1 file)",
                2);
  auto backend = target::parseBackend(emitBackendOpt);
  if (!backend)
    return fail("--backend must be cpu or cuda, got '" + emitBackendOpt + "'",
                2);
  if (emitWhatOpt != "project" && emitWhatOpt != "texec" &&
      emitWhatOpt != "cpp")
    return fail("--emit must be project, texec or cpp, got '" + emitWhatOpt +
                    "'",
                2);
  if (emitWhatOpt == "project" && emitOutputOpt.empty())
    return fail("-o DIR is required to write a project", 2);
  if (!(emitLrOpt > 0) || emitLrOpt > 1e3)
    return fail("--lr must be in (0, 1000]", 2);
  if (!(emitMoeBiasRateOpt >= 0) || emitMoeBiasRateOpt > 1)
    return fail("--moe-bias-rate must be in [0, 1]", 2);
  auto text = readFile(emitPlanOpt);
  if (!text)
    return fail(text.message());
  auto plan = plan::parsePlanJson(*text, emitPlanOpt);
  if (!plan)
    return fail(plan.message());

  ctx.loadDialect<mlir::trident::exec::TExecDialect>();
  // --model, or the model the plan records (model_source), held to the
  // recorded digest: the same rule as trident export's.
  PlanModel model =
      loadPlanModel(ctx, *plan, emitPlanOpt, /*required=*/true, &emitModelOpt);
  if (!model)
    return model.code;
  for (const std::string &w : model->warnings)
    llvm::errs() << "trident: warning: " << w << "\n";

  if (emitTrainF32Opt && !emitPrecisionOpt.empty() &&
      parseDType(emitPrecisionOpt) != DType::F32)
    return fail("--train-in-f32 and --precision " + emitPrecisionOpt +
                    " contradict each other",
                2);
  const std::string requested =
      emitTrainF32Opt ? std::string("fp32") : std::string(emitPrecisionOpt);
  // The lowering refuses what it cannot emit (fp16, fp8, a bad name): the
  // option is named here, the plan field by the lowering.
  auto precision = conversion::programPrecision(*plan, requested);
  if (!precision)
    return fail(!requested.empty() ? "--" + precision.message()
                                   : emitPlanOpt + ": " + precision.message(),
                requested.empty() ? 1 : 2);
  // The plan's figures were computed for its precision: say so when the
  // program computes in another (`trident plan --precision P --runtime
  // trident` prices the program).
  if (std::optional<DType> own = parseDType(plan->precision);
      own && dtypeName(*own) != (*precision == "f32" ? "fp32" : "bf16"))
    llvm::errs() << "trident: note: " << emitPlanOpt
                 << "'s step time and memory assume " << plan->precision
                 << " training; the emitted program trains in "
                 << (*precision == "f32" ? "fp32" : "bf16")
                 << "; `trident plan --precision "
                 << (*precision == "f32" ? "fp32" : "bf16")
                 << " --runtime trident` gives figures for it\n";

  // trident-apply-plan holds the plan to the model (plan::verify): a plan
  // made for another model is refused, naming both.
  conversion::TrainingOptions options;
  options.optimizer = emitOptimizerOpt;
  options.lr = emitLrOpt;
  options.moeBiasUpdateRate = emitMoeBiasRateOpt;
  options.precision = requested;
  // The pipeline trident-opt runs (docs/emit.md): the plan onto the model
  // (held to it by plan::verify), then the lowering to texec.
  mlir::OwningOpRef<mlir::ModuleOp> exec = std::move(model->module);
  // The frontend names a model after its file; the same bytes under
  // another name (the digest the plan recorded proves them) keep the name
  // the plan was made with, which trident-apply-plan holds the plan to.
  if (model.sameFile)
    exec->walk([&](mlir::trident::graph::ModelOp m) {
      mlir::SymbolTable::setSymbolName(m, plan->model);
    });
  {
    // Lowering diagnostics name the tgraph op (or the plan field).
    mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
      llvm::errs() << "trident: error: ";
      if (auto flc = llvm::dyn_cast<mlir::FileLineColLoc>(d.getLocation()))
        llvm::errs() << flc.getFilename().getValue() << ":" << flc.getLine()
                     << ":" << flc.getColumn() << ": ";
      else
        llvm::errs() << model.spec << " under " << emitPlanOpt << ": ";
      llvm::errs() << d.str() << "\n";
      return mlir::success();
    });
    mlir::PassManager pm(&ctx);
    mlir::trident::ApplyPlanPassOptions apply;
    apply.planFile = emitPlanOpt;
    pm.nest<mlir::trident::graph::ModelOp>().addPass(
        mlir::trident::createApplyPlanPass(apply));
    mlir::trident::LowerToTexecPassOptions lower;
    lower.optimizer = options.optimizer;
    lower.lr = options.lr;
    lower.precision = options.precision;
    lower.moeBiasRate = options.moeBiasUpdateRate;
    pm.addPass(mlir::trident::createLowerToTexecPass(lower));
    if (mlir::failed(pm.run(*exec)))
      return 1;
  }

  std::string ir, cpp;
  llvm::raw_string_ostream irs(ir), cpps(cpp);
  exec->print(irs);
  if (emitWhatOpt == "texec") {
    if (Status s = writeFileAtomically(
            emitOutputOpt.empty() ? "-" : std::string(emitOutputOpt), ir);
        !s)
      return fail(s.message());
    return 0;
  }
  auto program = *exec->getBody()->getOps<mlir::trident::exec::ProgramOp>()
                      .begin();
  if (mlir::failed(target::emitMainCpp(program, cpps)))
    return 1;
  if (emitWhatOpt == "cpp") {
    if (Status s = writeFileAtomically(
            emitOutputOpt.empty() ? "-" : std::string(emitOutputOpt), cpp);
        !s)
      return fail(s.message());
    return 0;
  }
  std::string cmake = target::emitCMakeLists(program.getSymName(), *backend,
                                             emitSourceOpt);
  if (Status s = target::writeProjectAtomically(
          emitOutputOpt, {{"CMakeLists.txt", cmake},
                          {"main.cpp", cpp},
                          {"program.texec.mlir", ir}});
      !s)
    return fail(s.message());
  const int64_t ranks = program.getNumRanks();
  llvm::outs() << "trident: wrote " << emitOutputOpt << " (dp " << plan->dp
               << " x cp " << plan->cp << " x tp " << plan->tp << " x pp "
               << plan->pp << " = " << ranks << " ranks, backend "
               << emitBackendOpt << "): cmake -S " << emitOutputOpt << " -B "
               << emitOutputOpt << "/build && cmake --build " << emitOutputOpt
               << "/build && mpirun -np " << ranks << " " << emitOutputOpt
               << "/build/train\n";
  return 0;
}

} // namespace trident::tool
