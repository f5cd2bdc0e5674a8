//===- trident.cpp - The Trident command-line planner ---------------------===//
//
// Thin: parses options, calls the libraries, prints. Exit codes: 0 success,
// 1 bad input or a failed run (the message names the input and the
// problem), 2 bad usage, 3 the configuration does not fit / nothing fits.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace trident;
using namespace trident::tool;

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "Trident: automatic parallelization planner and cost model\n\n"
      "  trident inspect  --model M [--seq-len S] [--json]\n"
      "  trident import   --model M [--seq-len S] [-o out.mlir]\n"
      "  trident evaluate --model M --cluster C --global-batch B --seq-len S\n"
      "                   --tp N --pp N --dp N [--cp N] [--ep N] [--vpp N]\n"
      "                   [--cp-comm-type p2p|allgather|a2a]\n"
      "                   [--fp8-recipe delayed|tensorwise|blockwise|mxfp8]\n"
      "                   --micro-batch N [--recompute none|selective|full]\n"
      "                   [--sequence-parallel] [--tp-comm-overlap] [--zero "
      "0..3]\n"
      "                   [--precision bf16|fp16|fp8|fp32] [--json]\n"
      "                   [--runtime "
      "megatron-core|megatron-lm|fsdp|torchtitan|trident|deepspeed|nemo]\n"
      "                   [--trace trace.json]\n"
      "  trident plan     --model M --cluster C --global-batch B --seq-len S\n"
      "                   [--precision P] [--top K] [--fix tp=8,pp=16,...]\n"
      "                   [--max-memory-fraction F] [--price-per-gpu-hour P]\n"
      "                   [--threads N] [--json] [-o plan.json] [--runtime R]\n"
      "                   [--export "
      "megatron|megatron-bridge|deepspeed|torchtitan]\n"
      "                   [--trace trace.json] [--report report.html]\n"
      "  trident export   --plan plan.json --to "
      "megatron|megatron-bridge|deepspeed|torchtitan|shard\n"
      "                   [--model M] [--cluster C] [--launcher "
      "torchrun|slurm]\n"
      "                   [-o FILE]\n"
      "  trident emit     --plan plan.json --model M [--backend cpu|cuda]\n"
      "                   -o DIR [--emit project|texec|cpp] [--optimizer "
      "adam|sgd]\n"
      "                   [--lr F] [--precision fp32|bf16] [--train-in-f32]\n"
      "  trident explore  --model M --seq-len S --tokens T\n"
      "                   --clusters PRESET:A..B[,PRESET:A..B...]\n"
      "                   [--global-batch auto|N[,N...]] [--critical-batch "
      "TOKENS]\n"
      "                   [--price-per-gpu-hour GPU=P,...] [--deadline-days "
      "D]\n"
      "                   [--budget USD] [--vary KEY=V1,V2,...]...\n"
      "                   [--precision P] [--runtime R]\n"
      "                   [--threads N] [--json] [-o explore.json]\n"
      "  trident serve    --model M --cluster C --input-len I --output-len O\n"
      "                   [--ttft-ms X] [--tpot-ms Y] [--rate R | "
      "--max-throughput]\n"
      "                   [--precision bf16|fp8] [--kv-precision bf16|fp8]\n"
      "                   [--disaggregate] [--engine vllm|sglang|trtllm]\n"
      "                   [--gpu-memory-fraction F] [--eager] [--served-model "
      "ID]\n"
      "                   [--top K] [--json] [-o serve.json]\n"
      "  trident replan   --plan old.json --cluster NEW [--model M]\n"
      "                   [--storage-gbps G] [--restart-s S] [--threads N]\n"
      "                   [--json] [-o new.json]\n"
      "  trident validate-plan --plan plan.json [--schema schema.json]\n"
      "  trident validate [--cases cases.json] [--write-doc "
      "docs/validation.md]\n"
      "                   [--runtime R] [--as-ran settings.json]\n"
      "\nExit codes: 0 success; 1 bad input (the message names it); 2 bad\n"
      "usage; 3 the configuration does not fit / nothing fits.\n");
  mlir::DialectRegistry registry;
  frontend::registerFrontendDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  if (inspectCmd)
    return runInspect(context);
  if (importCmd)
    return runImport(context);
  if (evaluateCmd)
    return runEvaluate(context);
  if (validateCmd)
    return runValidate(context);
  if (planCmd)
    return runPlan(context);
  if (exportCmd)
    return runExport(context);
  if (emitCmd)
    return runEmit(context);
  if (validatePlanCmd)
    return runValidatePlan();
  if (exploreCmd)
    return runExplore(context);
  if (serveCmd)
    return runServe(context);
  if (replanCmd)
    return runReplan(context);
  llvm::errs() << "trident: error: expected a command: inspect, import, "
                  "evaluate, plan, explore, serve, replan, export, emit, "
                  "validate, "
                  "validate-plan (see "
                  "--help)\n";
  return 2;
}
