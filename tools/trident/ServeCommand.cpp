//===- ServeCommand.cpp - trident serve -----------------------------------===//
//
// Thin: reads the flags, builds the model's LayerProfile at the input
// length, calls serve::searchServePlans (lib/Serve) and prints or writes
// its answer.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "trident/Analysis/ModelAnalysis.h"
#include "trident/Serve/Serve.h"
#include "trident/Serve/ServeValidation.h"
#include "trident/Support/FileIO.h"

#include "dialects/Graph/IR/GraphOps.h"

#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace trident::tool {

namespace {

cl::opt<int64_t> inputLenOpt("input-len", cl::desc("prompt tokens per request"),
                             cl::value_desc("I"), cl::init(0),
                             cl::sub(serveCmd), cl::cat(category));
cl::opt<int64_t> outputLenOpt("output-len",
                              cl::desc("generated tokens per request"),
                              cl::value_desc("O"), cl::init(0),
                              cl::sub(serveCmd), cl::cat(category));
cl::opt<double> ttftOpt("ttft-ms",
                        cl::desc("target time to first token, p90 (ms)"),
                        cl::value_desc("X"), cl::init(0), cl::sub(serveCmd),
                        cl::cat(category));
cl::opt<double> tpotOpt("tpot-ms",
                        cl::desc("target time per output token, p90 (ms)"),
                        cl::value_desc("Y"), cl::init(0), cl::sub(serveCmd),
                        cl::cat(category));
cl::opt<double> rateOpt("rate",
                        cl::desc("requests per second over the deployment"),
                        cl::value_desc("R"), cl::init(0), cl::sub(serveCmd),
                        cl::cat(category));
cl::opt<bool> maxThroughputOpt(
    "max-throughput",
    cl::desc("the highest load that meets the targets (the default)"),
    cl::sub(serveCmd), cl::cat(category));
cl::opt<std::string> kvPrecisionOpt("kv-precision",
                                    cl::desc("K/V cache: bf16 or fp8"),
                                    cl::init("bf16"), cl::sub(serveCmd),
                                    cl::cat(category));
cl::opt<bool> disaggregateOpt("disaggregate",
                              cl::desc("separate prefill and decode pools"),
                              cl::sub(serveCmd), cl::cat(category));
cl::opt<std::string> engineOpt("engine",
                               cl::desc("vllm, sglang or trtllm (launch "
                                        "settings and memory defaults)"),
                               cl::init("vllm"), cl::sub(serveCmd),
                               cl::cat(category));
cl::opt<double> memoryFractionOpt(
    "gpu-memory-fraction",
    cl::desc("fraction of GPU memory the engine takes (default: the "
             "engine's)"),
    cl::value_desc("F"), cl::init(0), cl::sub(serveCmd), cl::cat(category));
cl::opt<bool> eagerOpt("eager", cl::desc("no CUDA graphs for decode steps"),
                       cl::sub(serveCmd), cl::cat(category));
cl::opt<std::string> servedModelOpt(
    "served-model",
    cl::desc("the model name or path the launch command passes to the "
             "engine (default: --model)"),
    cl::value_desc("ID"), cl::sub(serveCmd), cl::cat(category));
cl::opt<int64_t> serveTopOpt("top", cl::desc("plans to print"), cl::init(5),
                             cl::sub(serveCmd), cl::cat(category));
cl::opt<std::string> serveOutOpt("o", cl::desc("write the JSON answer to FILE"),
                                 cl::value_desc("FILE"), cl::sub(serveCmd),
                                 cl::cat(category));

} // namespace

int runServe(mlir::MLIRContext &ctx) {
  if (inputLenOpt <= 0)
    return fail("--input-len is required and must be a positive number of "
                "tokens");
  if (seqLenOpt != 0)
    return fail("--seq-len: serve takes --input-len and --output-len");
  if (rateOpt > 0 && maxThroughputOpt)
    return fail("--rate and --max-throughput exclude each other", 2);
  // The other values are checked by serve::searchServePlans; the input
  // length is needed first, to build the profile.
  serve::ServeOptions o;
  o.inputLen = inputLenOpt;
  o.outputLen = outputLenOpt;
  o.ttftTargetSeconds = ttftOpt / 1e3;
  o.tpotTargetSeconds = tpotOpt / 1e3;
  o.requestRate = rateOpt;
  o.disaggregate = disaggregateOpt;
  o.cudaGraphs = !eagerOpt;
  o.memoryFraction = memoryFractionOpt;
  o.top = serveTopOpt;
  auto engine = serve::parseEngine(engineOpt);
  if (!engine)
    return fail(engine.message());
  o.engine = *engine;
  auto precision = precisionOption();
  if (!precision)
    return 1;
  o.precision = *precision;
  auto kv = parseDType(kvPrecisionOpt);
  if (!kv || (*kv != DType::BF16 && *kv != DType::FP8))
    return fail("--kv-precision: expected bf16 or fp8, got '" + kvPrecisionOpt +
                "'");
  o.kvPrecision = *kv;
  auto cluster = loadClusterOption();
  if (!cluster)
    return 1;
  auto loaded = loadModelOption(ctx);
  if (!loaded)
    return 1;
  LayerProfile profile =
      analysis::buildLayerProfile(loaded->model(), inputLenOpt);
  auto r = serve::searchServePlans(profile, *cluster, o);
  if (!r)
    return fail(r.message());
  std::string served = servedModelOpt.empty() ? std::string(modelOpt)
                                              : std::string(servedModelOpt);
  if (!serveOutOpt.empty() && serveOutOpt != "-")
    if (Status s = writeFileAtomically(
            serveOutOpt,
            serve::renderServeJson(*r, profile, *cluster, o, served));
        !s)
      return fail(s.message());
  if (jsonOpt || serveOutOpt == "-")
    llvm::outs() << serve::renderServeJson(*r, profile, *cluster, o, served);
  else
    llvm::outs() << serve::renderServeText(*r, profile, *cluster, o, served);
  if (r->plans.empty() || !r->plans.front().meetsTargets)
    return fail("no plan meets the targets" +
                    (r->closest.empty() ? std::string() : "; " + r->closest),
                3);
  return 0;
}

int runValidateServe(mlir::MLIRContext &ctx, const std::string &casesArg,
                     const std::string &writeDoc) {
  // Model paths in the cases are relative to the repository root, the
  // folder above the cases file's.
  std::string cases = casesArg.empty() ? std::string(TRIDENT_SOURCE_DIR) +
                                             "/validation/serving.json"
                                       : casesArg;
  auto file = serve::loadServeCases(cases);
  if (!file)
    return fail(file.message());
  std::string root = cases;
  for (int up = 0; up < 2; ++up) {
    size_t slash = root.find_last_of('/');
    root = slash == std::string::npos ? "." : root.substr(0, slash);
  }
  auto profileOf = [&](const std::string &model,
                       int64_t seqLen) -> Result<LayerProfile> {
    std::string spec = model;
    if (spec.find('/') != std::string::npos && spec.front() != '/')
      spec = root + "/" + spec;
    auto loaded = frontend::loadModel(ctx, spec, seqLen);
    if (!loaded)
      return loaded.status();
    return analysis::buildLayerProfile(loaded->model(), seqLen);
  };
  serve::ServeValidationReport report =
      serve::validateServeCases(*file, profileOf);
  llvm::outs() << serve::renderServeValidationText(report);
  if (!writeDoc.empty())
    if (Status s = writeFileAtomically(
            writeDoc, serve::renderServeValidationMarkdown(
                          report, "trident validate --serve --write-doc "
                                  "docs/validation-serving.md"));
        !s)
      return fail(s.message());
  return 0;
}

} // namespace trident::tool
