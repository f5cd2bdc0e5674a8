//===- Serve.h - Inference cost model and serving-plan search --*- C++ -*-===//
//
// Plans the serving of a model: the tensor/pipeline/expert split of one
// replica, the replica count, the batch limit and the prefill chunk, for a
// request shape (input and output length), a load (a request rate, or as
// much as the GPUs take) and latency targets (time to first token, time
// per output token). MLIR-free: it reads the LayerProfile of the model
// analysis and the hardware catalog, and prices a step with the same
// roofline and collective models as training (Cost/Roofline.h,
// Cost/Collectives.h). The model and its assumptions: docs/serving.md.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_SERVE_SERVE_H
#define TRIDENT_SERVE_SERVE_H

#include "trident/Cost/LayerProfile.h"
#include "trident/Hardware/Cluster.h"
#include "trident/Support/DType.h"
#include "trident/Support/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trident::serve {

/// The serving engines whose launch settings Trident writes.
enum class Engine : uint8_t { Vllm, Sglang, Trtllm };

/// What differs between engines for the cost model: how much of the GPU
/// memory the engine takes, its KV page size and its default prefill
/// chunk. One row per engine (Serve.cpp, kEngines), each value sourced.
struct EngineTraits {
  Engine engine;
  std::string_view name;      ///< "vllm", "sglang", "trtllm"
  double memoryFraction;      ///< of the GPU's memory the engine may use
  int64_t pageTokens;         ///< tokens per KV-cache block
  int64_t defaultChunkTokens; ///< default token budget of one step
  int64_t defaultMaxBatch;    ///< default limit on running sequences
};
const EngineTraits &engineTraits(Engine e);
/// "vllm", "sglang" or "trtllm"; the error lists them.
Result<Engine> parseEngine(std::string_view name);

/// The request shape, the load, the targets and the search bounds.
struct ServeOptions {
  int64_t inputLen = 0;         ///< prompt tokens per request
  int64_t outputLen = 0;        ///< generated tokens per request
  double ttftTargetSeconds = 0; ///< 0: no target (p90 is checked)
  double tpotTargetSeconds = 0; ///< 0: no target (p90 is checked)
  /// Requests per second over the whole deployment; 0: the most the GPUs
  /// sustain (--max-throughput).
  double requestRate = 0;
  DType precision = DType::BF16;   ///< weights and GEMMs: BF16 or FP8
  DType kvPrecision = DType::BF16; ///< the K/V cache: BF16 or FP8
  bool disaggregate = false;       ///< separate prefill and decode pools
  Engine engine = Engine::Vllm;
  bool cudaGraphs = true; ///< decode steps replayed as CUDA graphs
  /// Fraction of the GPU's memory the engine takes; 0: the engine's
  /// default (EngineTraits::memoryFraction).
  double memoryFraction = 0;
  int64_t top = 5; ///< plans to return
};

/// One replica's split (a pool's, with disaggregation).
struct ReplicaShape {
  int64_t tp = 1, pp = 1, ep = 1;
  int64_t replicas = 1;
  /// Data-parallel attention ranks in the replica (SGLang's
  /// --enable-dp-attention, TensorRT-LLM's enable_attention_dp, vLLM's
  /// --data-parallel-size on an MoE model): each rank of tp GPUs runs the
  /// attention and the dense layers for its own sequences and keeps their
  /// cache; the experts are spread over all dp x tp GPUs (ep = dp x tp),
  /// the routed tokens sent to them and back by all-to-alls. (After
  /// `replicas`, so that {tp, pp, ep, replicas} keeps its meaning.)
  int64_t dp = 1;
  int64_t gpus() const { return tp * dp * pp * replicas; }
};

/// One pool of replicas and what a step of it costs under the load.
struct PoolPrediction {
  ReplicaShape shape;
  int64_t maxBatch = 0;    ///< running sequences per replica (limit)
  /// Tokens per step (decode + prefill chunk), per data-parallel rank.
  int64_t chunkTokens = 0;
  double meanBatch = 0;    ///< running sequences per replica, on average
  double weightBytesPerGpu = 0;
  double workspaceBytesPerGpu = 0;
  double kvPoolBytesPerGpu = 0;
  double kvCapacityTokens = 0;     ///< per replica
  int64_t kvCapacitySequences = 0; ///< of input + output tokens each
  double memoryPerGpuBytes = 0;    ///< weights + workspace + reserve + KV
                                   ///< of the batch at full length
  double stepSeconds = 0;          ///< a decode step, mean
};

/// A serving plan and its predicted figures.
struct ServePlan {
  bool disaggregated = false;
  bool moe = false; ///< the model has routed experts (launch settings)
  PoolPrediction pool;        ///< the replicas (the decode pool, disaggregated)
  PoolPrediction prefill;     ///< the prefill pool (disaggregated only)
  double kvBytesPerToken = 0; ///< the whole model, at the KV precision
  double ttftSeconds = 0, ttftP90Seconds = 0;
  double tpotSeconds = 0, tpotP90Seconds = 0;
  double requestsPerSecond = 0;
  double outputTokensPerSecond = 0;
  double outputTokensPerSecondPerGpu = 0;
  /// Prompt tokens/s per GPU (requests/s x input length / GPUs).
  double inputTokensPerSecondPerGpu = 0;
  int64_t gpus = 0; ///< GPUs the plan uses
  /// The HBM-bandwidth floor of one decode step: the weights and the K/V
  /// cache of the mean batch read once at peak bandwidth.
  double tpotFloorSeconds = 0;
  bool meetsTargets = false;
  std::string why; ///< the target missed, when one is
};

struct ServeResult {
  std::vector<ServePlan> plans; ///< best first (meeting targets first)
  int64_t evaluated = 0;        ///< candidates priced
  /// When no plan meets the targets: the closest target and what it
  /// would need.
  std::string closest;
};

/// Searches serving plans of `profile` (built at the input length) on
/// `cluster` (one node group). Errors name the option at fault.
Result<ServeResult> searchServePlans(const LayerProfile &profile,
                                     const Cluster &cluster,
                                     const ServeOptions &options);

/// A load fixed by a benchmark, for `evaluateServe`.
enum class LoadKind : uint8_t {
  MaxThroughput, ///< the highest rate the layout sustains
  RequestRate,   ///< `value` requests/s over all replicas (open loop)
  Concurrency,   ///< `value` requests in flight (closed loop)
  StaticBatch,   ///< `value` requests started together
  /// A prefill pool alone (disaggregated serving, the decode side
  /// unlimited): steps of `value` prompt tokens per GPU (0: the engine's
  /// chunk), back to back; the figure is input tokens/s.
  PrefillOnly,
  /// A decode pool alone: `value` sequences per GPU decoding at a context
  /// of the input length, steady state; the figure is output tokens/s.
  DecodeOnly
};
struct FixedLoad {
  LoadKind kind = LoadKind::MaxThroughput;
  double value = 0;
};

/// Predicts one given layout under one load, with the engine's default
/// chunk and batch limit (targets are not checked): what `trident
/// validate --serve` compares with published measurements.
Result<ServePlan> evaluateServe(const LayerProfile &profile,
                                const Cluster &cluster,
                                const ReplicaShape &shape,
                                const ServeOptions &options,
                                const FixedLoad &load);

/// Bytes one token adds to the K/V cache of the whole model at `kv`.
double kvBytesPerToken(const LayerProfile &profile, DType kv);

/// The plans as text (a table and the launch command of the best).
std::string renderServeText(const ServeResult &r, const LayerProfile &profile,
                            const Cluster &cluster, const ServeOptions &o,
                            std::string_view modelArg);
/// {"schema": "trident.serve/v1", "plans": [...]}.
std::string renderServeJson(const ServeResult &r, const LayerProfile &profile,
                            const Cluster &cluster, const ServeOptions &o,
                            std::string_view modelArg);

/// The engine's launch command for `plan`, one argument per element
/// (disaggregated plans: the decode pool's; prefillCommand for the other).
std::vector<std::string> launchCommand(const ServePlan &plan,
                                       const ServeOptions &o,
                                       std::string_view modelArg,
                                       bool prefillPool = false);

/// What the launch command cannot say by itself (files it names, how a
/// checkpoint must be prepared); empty when nothing.
std::vector<std::string> launchNotes(const ServePlan &plan,
                                     const ServeOptions &o);

} // namespace trident::serve

#endif // TRIDENT_SERVE_SERVE_H
