//===- Evaluate.h - Step time and memory of one parallel plan --*- C++ -*-===//
//
// The cost model's single entry point: given a model (LayerProfile), a
// cluster and a parallel configuration, predict the training step time,
// throughput, MFU/HFU, and the memory of every pipeline stage.
//
//   step = pipeline makespan (Schedule simulation of per-chunk forward and
//          backward times, exposed TP/CP/EP communication and p2p included)
//        + exposed data-parallel gradient synchronisation
//        + optimizer step (+ parameter all-gather of the distributed
//          optimizer unless overlapped)
//
// Evaluator precomputes what depends only on (profile, cluster, options)
// and keeps its buffers, so Evaluator::evaluate() does not allocate once
// warm; use one Evaluator per thread. docs/cost-model.md has the model.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_COST_EVALUATE_H
#define TRIDENT_COST_EVALUATE_H

#include "trident/Cost/Collectives.h"
#include "trident/Cost/LayerProfile.h"
#include "trident/Cost/Memory.h"
#include "trident/Cost/Roofline.h"
#include "trident/Hardware/Cluster.h"
#include "trident/Hardware/Fitted.h"
#include "trident/Plan/Parallel.h"
#include "trident/Schedule/Schedule.h"
#include "trident/Schedule/Simulator.h"
#include "trident/Support/DType.h"
#include "trident/Support/Status.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trident {

/// Which fused attention kernel the runtime calls (GpuSpec has both).
enum class AttentionKernel : uint8_t {
  Best,            ///< the GPU's best (cuDNN / FlashAttention-3 on Hopper)
  FlashAttention2, ///< FlashAttention-2 (PyTorch SDPA, flash-attn 2)
};

/// The token exchange of expert parallelism (EvalOptions::moeDispatcher).
enum class MoeDispatcher : uint8_t { AllToAll, AllGather, Flex };
/// "alltoall", "allgather", "flex" (Megatron-Core's names); none if other.
std::optional<MoeDispatcher> parseMoeDispatcher(std::string_view name);
std::string_view moeDispatcherName(MoeDispatcher d);
/// "alltoall, allgather or flex": the names, for messages.
std::string moeDispatcherNames();

/// Modelling switches (defaults model Megatron-Core on current software).
/// DeepSpeed's default zero_optimization.reduce_bucket_size, in elements
/// (deepspeed/runtime/zero/config.py, 5e8): the `deepspeed` preset's
/// gradient buckets, and what the DeepSpeed export writes.
inline constexpr double kDeepSpeedReduceBucketElements = 5e8;
/// DeepSpeed ZeRO-3's parameter gathers of 2021 moved about 21 GB/s into
/// each GPU, over NVLink as over the network: DeepSpeed issue #1174
/// (v0.3.16, PyTorch 1.8.0, one p4d node of 8 A100s on NVSwitch): a BERT
/// "with 5B parameters" took 480 ms per ZeRO-3 forward against ZeRO-2's
/// 60 ms, the 420 ms gathering 5e9 x 2 bytes x 7/8 = 8.75 GB into each
/// GPU: 20.8 GB/s. Issue #1069 found the same ZeRO-3 throughput from 2 to
/// 16 nodes and on a network with 4x the bandwidth. Each gather followed a
/// torch.cuda.synchronize() and a zero-filled buffer, and PyTorch copied
/// the gathered tensor out to the world-size list of views (PR #1188).
inline constexpr double kDeepSpeedZero3GatherBytesPerS =
    5e9 * 2 * 7.0 / 8.0 / 0.420;

/// Compute slows while a collective runs beside it: its kernels take SMs
/// and memory bandwidth from the compute kernels. Lee, Oh, Kim, Go, Park
/// and Mahajan 2025 ("Characterizing Compute-Communication Overlap in
/// GPU-Accelerated Distributed Deep Learning: Performance and Power
/// Implications", arXiv 2507.03114) measured GPT and Llama layers on 4
/// A100s, H100s, MI250s and MI210s: overlapped with communication, compute
/// ran 18.9 % slower on average (40 % at most) than alone. Sourced, not
/// fitted.
inline constexpr double kOverlapComputeSlowdown = 0.189;

/// Megatron-Core's MoE layer: seconds per layer and micro-batch that the
/// GPU waits for the host (EvalOptions::moeLayerHostSeconds), the fitted
/// "moe.host" of Fitted.h (milliseconds there).
inline constexpr double kMoeLayerHostSeconds =
    fittedValue(FitGroup::Moe, FitKind::MoeHost) * 1e-3;

struct EvalOptions {
  /// The preset that set the switches below (applyRuntime); reported in
  /// plans. Changing it alone changes nothing.
  Runtime runtime = Runtime::MegatronCore;
  bool allowTpAcrossNodes = false;
  bool flashAttention = true; ///< fused attention: no s^2 activations
  AttentionKernel attentionKernel = AttentionKernel::Best;
  /// PyTorch AMP autocast: GEMMs run in 16 bits but norms, softmax and the
  /// residual stream stay in fp32, so non-GEMM traffic moves 4-byte
  /// elements (Megatron and torchtitan keep them in 16 bits).
  bool autocast = false;
  /// bf16 values held in fp32 tensors: the programs of `trident emit`
  /// round bf16 activations and weight copies but store them in 4 bytes
  /// and keep 16 bytes of state per parameter (docs/emit.md, "bf16 mixed
  /// precision"), so a bf16 configuration moves and holds what the fp32
  /// one does (costPrecision), but for the values only bf16 readers read
  /// (LayerCost::actBf16Tensor*, GemmCost::xBf16 ...); each GEMM runs on
  /// bf16 tensor cores or on TF32 ones as bf16GemmPays
  /// (trident/Support/Bf16Gemm.h) decides from its operands' storage,
  /// with the copies of the operands not in the path's type (the copies'
  /// traffic and an fp32 result priced); its MFU stays against the bf16
  /// peak.
  /// The rounding passes themselves (one read and write of each
  /// activation) are not counted.
  bool bf16InFp32Storage = false;
  /// What Recompute::Selective recomputes: 0 = the attention core only
  /// (Korthikanti et al. 2022, Megatron); f > 0 = that share of each
  /// block's forward, saving the rest (torchtitan's selective AC, 0.5).
  double selectiveForwardFraction = 0;
  /// Selective recomputation (selectiveForwardFraction 0, unfused
  /// attention) saves the rows' log-sum-exp and its backward computes only
  /// the scores' product and the probabilities again, not the whole core's
  /// forward (the trident programs: rt::attentionForward).
  bool selectiveKeepsLse = false;
  /// Megatron's selective recompute under fused attention saves nothing
  /// (no s^2 activations to drop) and only adds time.
  /// Whether selective recomputation forms only the scores again
  /// (selectiveKeepsLse with unfused attention).
  bool selectiveFormsScoresOnly() const {
    return selectiveKeepsLse && !flashAttention;
  }
  bool selectiveIsDominated() const {
    return flashAttention && selectiveForwardFraction <= 0;
  }
  /// How the runtime exchanges K and V under context parallelism when the
  /// plan does not say (ParallelAxes::cpCommType); the trident programs
  /// all-gather them.
  CpCommType cpCommType = CpCommType::P2p;
  /// The FP8 scaling recipe when the plan does not name another than the
  /// default (ParallelAxes::fp8Recipe): what `trident plan --fix
  /// fp8_recipe=...` and `evaluate --fp8-recipe` set for every
  /// configuration.
  Fp8Recipe fp8Recipe = Fp8Recipe::Delayed;
  bool overlapGradReduce = true; ///< DP reduce overlaps the last backward
  /// ZeRO-1's reduce-scatter runs inside the optimizer step: exposed even
  /// with overlapGradReduce. No runtime preset sets it (the trident
  /// programs did until they started it in the backward); it describes
  /// software that reduce-scatters only when it steps.
  bool zero1ReduceInOptimizer = false;
  /// Stages after the first start their gradient sums (ZeRO 0 and 1)
  /// after their last send of the step: only the pipeline's drain hides
  /// them.
  bool gradReduceAfterLastSend = false;
  /// ZeRO-2 reduce-scatters every micro-batch's gradients (m times the
  /// traffic, each under its micro-batch's backward), as DeepSpeed's stage
  /// 2 under gradient accumulation.
  bool zero2ReducePerMicroBatch = false;
  /// ZeRO-3's parameter gathers hide behind compute (prefetched); false:
  /// each layer waits for its gather (no preset sets it; the trident
  /// programs did until they gathered one parameter ahead).
  bool overlapZero3Gather = true;
  /// ZeRO-3 gathers one parameter tensor at a time, each collective paying
  /// its latency (DeepSpeed v0.3.12-v0.4.2, partition_parameters.py
  /// _allgather_param; LayerCost::paramTensors).
  bool zero3GatherPerTensor = false;
  /// > 0: ZeRO-3 reduces gradients by all-reducing buckets of this many
  /// elements and keeping the rank's slice (DeepSpeed's default before
  /// contiguous_gradients, reduce_bucket_size 5e8), not by reduce-scatter.
  double zero3GradBucketElements = 0;
  /// > 0: ZeRO-3's parameter gathers move at most this many bytes per
  /// second into each GPU, whatever the network: the rate of the
  /// implementation, not of the links (DeepSpeedZero3GatherBytesPerS).
  double zero3GatherBytesPerS = 0;
  /// Under full recomputation, ZeRO-3 gathers the parameters once more for
  /// the backward after the recompute forward released them (DeepSpeed of
  /// 2021: each submodule's pre-forward hook gathers and its post-forward
  /// hook releases, the recompute forward included; partition_parameters.py
  /// and stage3.py at v0.4.2).
  bool zero3RegatherAfterRecompute = false;
  /// ZeRO-1/2's all-gather of the updated parameters overlaps the next
  /// forward (Megatron-LM's --overlap-param-gather; the trident programs
  /// since they wait for each parameter at its first use).
  bool overlapParamGather = false;
  /// How an expert-parallel group exchanges tokens (Megatron-Core's
  /// --moe-token-dispatcher-type):
  /// - AllToAll: the top-k copies of a rank's tokens, permuted by expert,
  ///   through an NCCL all-to-all (alltoall);
  /// - AllGather: an all-gather of the group's tokens, a reduce-scatter to
  ///   combine (allgather; the trident programs): every token of the group
  ///   in each direction;
  /// - Flex: node-aware kernels that send a token once per destination
  ///   rank and cross the network once per destination node (flex with
  ///   DeepEP or HybridEP; flexDispatchSeconds).
  MoeDispatcher moeDispatcher = MoeDispatcher::AllToAll;
  /// Load of the busiest expert over the mean: the busiest expert sets the
  /// pace of the expert GEMMs. Learned routing is never perfectly
  /// balanced; GShard (Lepikhin et al. 2020) and Switch (Fedus et al.
  /// 2021) size expert buffers with a capacity factor of 1.25 for this.
  /// Benchmark runs that force balanced routing (Megatron-Core's
  /// --moe-router-force-load-balancing, as Megatron-Bridge's performance
  /// tables run) spread tokens evenly: 1.
  double expertLoadImbalance = 1.25; ///< checkExpertLoadImbalance()
  /// Megatron-Core's --overlap-moe-expert-parallel-comm (with
  /// --delay-wgrad-compute): in the steady state of the pipeline schedule
  /// the forward of one micro-batch and the backward of another run
  /// together, layer by layer on two streams, so that each one's token
  /// dispatch and combine hide behind the other's compute (Megatron-Core's
  /// MoE documentation, "EP A2A overlap"). A stage's warm-up forwards and
  /// cool-down backwards have no partner and stay exposed; the hidden part
  /// slows the compute beside it (overlapComputeSlowdown). No preset sets
  /// it; `trident evaluate --moe-overlap-ep-comm` does.
  bool overlapEpComm = false;
  /// Fixed seconds each local expert adds to each grouped expert GEMM
  /// (forward, data and weight gradient) beyond the roofline time of all
  /// the routed rows: Transformer Engine runs one cuBLAS GEMM per expert
  /// (kTeGroupedGemmSecondsPerExpert; the megatron-core and nemo presets).
  /// 0: not priced per expert (the fsdp, torchtitan, trident and
  /// deepspeed presets: torch._grouped_mm is one kernel for all experts,
  /// the others' per-expert costs are not measured).
  double groupedGemmSecondsPerExpert = kTeGroupedGemmSecondsPerExpert;
  /// Seconds per MoE layer and micro-batch that the GPU waits for the host
  /// in the forward (a recompute forward waits again): Megatron-Core's MoE
  /// layer runs eagerly, and Transformer Engine's GroupedLinear takes each
  /// local expert's token count as a host integer (m_splits), so every
  /// MoE layer's forward copies the counts to the host and waits for them
  /// (the dispatchers do too, to size their receive buffers); the GPU
  /// then idles while the host launches the permutation, the expert GEMMs
  /// and the combine behind it, dozens of small kernels. The layer's
  /// forward waits for what the expert GEMMs' own forward time does not
  /// cover: max(0, this - expert forward). Fitted on the MoE runs of
  /// shared/validation under a Megatron-Core runtime, those of
  /// moe_cases.json each priced with the dispatcher it ran (Fitted.h
  /// "moe.host"; docs/cost-model.md, "Host work of the MoE layer"): the
  /// megatron-core, megatron-lm and nemo presets. 0 for the others (not
  /// measured).
  double moeLayerHostSeconds = kMoeLayerHostSeconds;
  /// MoE parallel folding (Liu et al. 2025, "MoE Parallel Folding:
  /// Heterogeneous Parallelism Mappings for Efficient Large-Scale MoE Model
  /// Training with Megatron Core"; Megatron-Core's expert layout since
  /// 0.10): a stage's tp x cp x dp ranks are laid out for the experts as
  /// etp (innermost), ep, then expert data parallelism, so ep need not
  /// divide dp and etp may differ from tp; an ep group's members are etp
  /// ranks apart. Off: experts split over dp only (ep divides dp, etp is
  /// 1 or tp, an ep group's members tp x cp ranks apart), as the trident
  /// programs split them.
  bool expertFolding = true;
  /// With pipeline stages and a tied embedding, ZeRO-2/3 sum the shared
  /// matrix's gradient slice over the first and last stage, 1/(dp cp) of
  /// it (the trident programs); Megatron-LM and DeepSpeed sum the whole
  /// gradient.
  bool tiedSumOfZeroSlice = false;
  bool overlapP2P = false;    ///< pipeline sends run beside compute
  /// Seconds of compute each second of hidden collective communication
  /// adds (kOverlapComputeSlowdown): the ring-attention transfers, ZeRO-3's
  /// gathers and scatters, the data-parallel reduction and the overlapped
  /// parameter gather are hidden behind compute that runs this much slower
  /// meanwhile. The tensor-parallel overlap is priced by its own SM margin
  /// (ubMarginSlowdown), the pipeline's point-to-point sends not at all.
  double overlapComputeSlowdown = kOverlapComputeSlowdown;
  CollectiveAlgo algorithm = CollectiveAlgo::Auto;
  /// Bytes per gradient element in memory and in the DP reduction; 0 =
  /// auto: the parameter dtype's (2 in mixed precision, 4 in fp32), as
  /// Megatron-LM without --accumulate-allreduce-grads-in-fp32 and FSDP.
  double gradBytesPerParam = 0;
  /// Optimizer state bytes per parameter; 0 = auto: 12 (fp32 master + Adam
  /// m, v) for mixed precision, 8 for fp32 training.
  double optimizerBytesPerParam = 0;
  /// With bf16 weights, the fp32 master weights are kept as the 16 low
  /// bits the bf16 copy lacks (Apex DistributedFusedAdam's
  /// store_param_remainders, which NeMo 1.x sets for bf16 models under
  /// distributed Adam): 10 optimizer bytes per parameter, not 12.
  bool masterWeightRemainders = false;
  /// Bytes per GPU the process cannot give to tensors, counted in every
  /// stage's buffers: what the driver keeps back of the capacity it
  /// reports (GpuSpec::hbmBytes), 0.65 GB on an A100-SXM4-40GB (40,960
  /// MiB reported, 42,298,834,944 bytes to CUDA: deviceQuery log in
  /// bottlerocket-os/bottlerocket#3873), and the CUDA context, library
  /// workspaces and NCCL buffers, 0.35 GB (assumption).
  double reservedBytes = 1.0e9;
  /// The PyTorch caching allocator's cache: memory reserved from CUDA but
  /// holding no live tensor at the peak (blocks freed earlier in the step
  /// that the peak's requests cannot reuse), as a share of the bytes
  /// allocated and freed within a step (activations, ZeRO-3 gather and
  /// pipeline buffers); counted in the buffers. No published allocator
  /// measurement is in the repository; the value is bounded by the runs
  /// of shared/validation, all of which ran: the largest share with which
  /// every one is still predicted to fit is 0.059 over cases.json and
  /// 0.19 over moe_cases.json. 0.01, below both; docs/cost-model.md,
  /// Memory.
  double allocatorCacheFraction = 0.01;
};

/// Sets the switches `runtime` decides (attention kernel, fused or unfused
/// attention, autocast, gradient-reduction overlap) and records it.
void applyRuntime(EvalOptions &options, Runtime runtime);

/// How context parallelism exchanges K and V: the configuration's kind,
/// else (p2p, the default) the runtime's (EvalOptions::cpCommType).
CpCommType cpCommOf(const ParallelAxes &axes, const EvalOptions &options);

/// The FP8 scaling recipe: the configuration's, else (delayed, the
/// default) the options' (EvalOptions::fp8Recipe).
Fp8Recipe fp8RecipeOf(const ParallelAxes &axes, const EvalOptions &options);

/// Bytes each element of a quantised GEMM input moves through Transformer
/// Engine's casts under `recipe`: `forward` for the activations entering a
/// GEMM (a 16-bit read and an FP8 write; with current scaling a first
/// 16-bit read for the amax the scale needs), else for the output gradient
/// of the backward (cast and transpose: a read and two FP8 writes, again
/// after an amax read under current scaling). Delayed scaling takes its
/// scale from earlier steps' amax history, and the block recipes reduce
/// each block's amax in registers as they cast (Transformer Engine's
/// Float8BlockScaling, MXFP8BlockScaling): no extra pass.
double fp8CastBytesPerElement(Fp8Recipe recipe, bool forward);

/// States on `axes` the settings of `options` it is priced with: the K/V
/// exchange of context parallelism (cpCommOf; p2p without cp) and the FP8
/// recipe (fp8RecipeOf). (The tensor-parallel overlap is the
/// configuration's own, tpCommOverlap.) The search's plans, its
/// runtime checks and `trident evaluate` all read a configuration through it.
void stateSettings(ParallelAxes &axes, const EvalOptions &options);

/// Bytes per parameter of the model states, as the Evaluator counts them.
struct StateBytesPerParam {
  double weight = 2;    ///< training-dtype copy
  double gradient = 2;  ///< see EvalOptions::gradBytesPerParam
  double optimizer = 12; ///< see EvalOptions::optimizerBytesPerParam
};
/// The precision whose storage and GEMMs a configuration in `precision`
/// costs: fp32 for bf16 under bf16InFp32Storage, else `precision`.
DType costPrecision(DType precision, const EvalOptions &o);

StateBytesPerParam stateBytesPerParam(DType precision,
                                      const EvalOptions &options);

/// Per pipeline stage (one GPU of that stage; all its chunks).
struct StageBreakdown {
  int64_t nodeGroup = 0; ///< index into Cluster::groups
  int64_t layers = 0;    ///< transformer blocks (all chunks)
  Recompute recompute = Recompute::None; ///< this stage's policy
  bool hasEmbedding = false, hasHead = false;
  // --- time, seconds per step ---
  double computeSeconds = 0;  ///< forward + backward + recompute
  double exposedCommSeconds = 0; ///< TP/CP/EP/p2p/DP not hidden
  double hiddenCommSeconds = 0;  ///< communication overlapped with compute
  double bubbleSeconds = 0;      ///< idle in the pipeline
  double dpCommSeconds = 0;      ///< gradient sync (+ param gather), total
  double optimizerSeconds = 0;
  double forwardSecondsPerMicroBatch = 0;  ///< all chunks
  double backwardSecondsPerMicroBatch = 0; ///< all chunks, recompute incl.
  // --- memory, bytes per GPU ---
  double weightBytes = 0, gradientBytes = 0, optimizerBytes = 0;
  double activationBytes = 0, bufferBytes = 0;
  double totalBytes = 0;
  double capacityBytes = 0;
  int32_t peakInFlight = 0; ///< (micro-batch, chunk) activations held
  /// ZeRO-3 only: parameter elements the stage's largest layer gathers at
  /// once (zero3GatherElements); the memory holds two such layers, the one
  /// in use and the one prefetched. 0 for other ZeRO stages.
  double zero3GatherElements = 0;
};

struct Evaluation {
  Runtime runtime = Runtime::MegatronCore; ///< EvalOptions::runtime
  /// EvalOptions::moeDispatcher and expertLoadImbalance, as priced (they
  /// matter to models with experts).
  MoeDispatcher moeDispatcher = MoeDispatcher::AllToAll;
  bool overlapEpComm = false; ///< EvalOptions::overlapEpComm, as priced
  double expertLoadImbalance = 1;
  double iterationSeconds = 0;
  double tokensPerSecond = 0;
  double tokensPerSecondPerGpu = 0;
  double tflopsPerGpu = 0; ///< model FLOPs (no recompute) per GPU
  double mfu = 0;          ///< model FLOPs / peak
  double hfu = 0;          ///< hardware FLOPs (recompute counted) / peak
  double peakMemoryBytes = 0; ///< the largest GPU
  int64_t peakMemoryStage = 0;
  double memoryCapacityBytes = 0; ///< of that stage's GPU
  bool fits = false;       ///< every stage within its GPU's memory
  /// evaluateIfFits() stopped after the memory: a stage did not fit, and
  /// only the memory (stages' bytes and capacity, the peak) is filled.
  bool memoryOnly = false;
  double pipelineSeconds = 0; ///< makespan of the schedule
  double bubbleFraction = 0;
  double dpExposedSeconds = 0;
  /// With pipeline stages and a tied embedding: the sum of its gradient
  /// between the first and last stage, after the schedule (counted in
  /// dpExposedSeconds).
  double tiedEmbeddingSeconds = 0;
  double optimizerSeconds = 0;
  int64_t microBatches = 0; ///< per replica (the most, with data shares)
  ScheduleKind schedule = ScheduleKind::OneFOneB;
  /// With data shares: the gradient all-reduce between the node groups,
  /// after each group's own reduction (counted in dpExposedSeconds).
  double crossGroupSyncSeconds = 0;
  /// With data shares: each share's own step time (before the cross-group
  /// synchronisation), in the order of ParallelConfig::dataShares.
  std::vector<double> shareSeconds;
  double modelFlopsPerStep = 0;
  double hardwareFlopsPerStep = 0;
  /// Per pipeline stage; with data shares, the stages of each share in
  /// turn (pp per share, StageBreakdown::nodeGroup tells the group).
  std::vector<StageBreakdown> stages;
};

/// "fits: stage 3 needs 61.2 GB of 80.0 GB" or "does not fit: ...".
std::string describeFit(const Evaluation &e);

/// EvalOptions::expertLoadImbalance must be a finite number >= 1 (the
/// busiest expert's load over the mean); the error says what was given.
Status checkExpertLoadImbalance(double f);

/// Evaluates plans of one model on one cluster. Not thread-safe (it keeps
/// buffers); copy it per thread.
class Evaluator {
public:
  static Result<Evaluator> create(const LayerProfile &profile,
                                  const Cluster &cluster,
                                  const EvalOptions &options = {});

  /// Checks `cfg` against the model and the cluster; the message names the
  /// offending field.
  Status validate(const ParallelConfig &cfg) const;

  /// Validates and evaluates `cfg` into `out` (whose vectors are reused).
  Status evaluate(const ParallelConfig &cfg, Evaluation &out);

  /// evaluate(), except that where a stage needs more than `fraction` of
  /// its GPU's memory it stops once the memory is known (before any
  /// communication or the pipeline simulation) and sets out.memoryOnly:
  /// the stages' bytes are what evaluate() gives, fits is false and no
  /// time is computed. The search uses it, as a plan that does not fit
  /// needs no step time. Configurations with data shares are evaluated
  /// whole.
  Status evaluateIfFits(const ParallelConfig &cfg, double fraction,
                        Evaluation &out);

  /// A lower bound on what ZeRO-3's gathers and gradient scatters add to
  /// the stages of `cfg` together, per micro-batch: at least
  /// min(1, overlapComputeSlowdown) of their time, whether hidden (the
  /// compute beside them slows) or exposed, and their time summed over
  /// any split of the model into chunks is at least that of one collective
  /// over all of it (the modelled collective time is a minimum of affine
  /// terms with non-negative latencies, so subadditive in its bytes). 0
  /// where that does not hold or there is nothing to bound: not ZeRO-3, no
  /// data parallelism, data shares, several node groups, or measured
  /// collective bandwidths (calibration) on the cluster. The search adds
  /// it to a ZeRO-3 configuration's step-time lower bound.
  double zero3AddedFloor(const ParallelConfig &cfg) const;

  /// A lower bound, times pp, on what ZeRO-1/2's all-gather of the updated
  /// parameters adds to a step of `cfg`: the gather of the whole model at
  /// once (the stages' gathers together take no less, by the same
  /// subadditivity), whole when exposed, its slowdown fraction when
  /// hidden in the next forward (overlapParamGather). 0 where
  /// zero3AddedFloor gives 0 for the same reasons, or not ZeRO-1/2.
  double paramGatherFloor(const ParallelConfig &cfg) const;

  /// The per-chunk durations and stage-boundary transfer times that the
  /// last successful evaluate() simulated, so a timeline (Report/Trace.h)
  /// replays exactly what was predicted (not after an evaluation that
  /// stopped at the memory).
  const PipelineCosts &lastPipelineCosts() const;

  const LayerProfile &profile() const { return profile_; }
  const Cluster &cluster() const { return cluster_; }
  const EvalOptions &options() const { return options_; }

  struct Impl; ///< per-evaluation scratch (internal)

  Evaluator(const Evaluator &other);
  Evaluator &operator=(const Evaluator &other);
  Evaluator(Evaluator &&) noexcept;
  Evaluator &operator=(Evaluator &&) noexcept;
  ~Evaluator();

private:
  Evaluator();
  LayerProfile profile_;
  Cluster cluster_;
  EvalOptions options_;
  /// Indices of profile_.groups in execution order, split by kind.
  std::vector<int32_t> embeddingGroups_, blockGroups_, headGroups_;
  std::vector<int64_t> blockPrefix_; ///< blocks before block group i
  int64_t numBlocks_ = 0;
  double modelFlopsPerToken_ = 0;
  double blockFwdFlopsPerToken_ = 0;   ///< for HFU under full recompute
  double attnCoreFlopsPerToken_ = 0;   ///< for HFU under selective
  /// Vocabulary parameters the head shares with the embedding (tied
  /// weights): stored once when both sit on the same stage, else once
  /// more on the last stage, whose gradient the two stages sum.
  double tiedVocabParams_ = 0;
  /// Whether the head's own parameter counts list that matrix (the
  /// analytic profiles) or name it as read from the embedding (tiedParams,
  /// the profiles analysed from tgraph).
  bool headListsTied_ = false;
  bool hasExperts_ = false;
  int64_t minExperts_ = 0;
  /// Heterogeneous clusters: an Evaluator per node group alone, for plans
  /// with data shares.
  std::vector<Evaluator> groupEvaluators_;
  std::vector<Evaluation> shareEvals_;
  Status validateShares(const ParallelConfig &cfg) const;
  Status evaluateShares(const ParallelConfig &cfg, Evaluation &out);
  ParallelConfig shareConfig(const ParallelConfig &cfg, size_t share) const;
  /// From out.iterationSeconds and out.stages: throughput, FLOPs (the
  /// model's plus `recomputedFlops`), MFU/HFU, peak memory and fit; an
  /// error when any of them is not finite (checkFinite).
  Status finishTotals(const ParallelConfig &cfg, double recomputedFlops,
                      Evaluation &out) const;
  Status checkFinite(const ParallelConfig &cfg, const Evaluation &out) const;
  /// What zero3AddedFloor and paramGatherFloor share: the dense and
  /// expert collective groups and the whole model's parameters on one GPU
  /// (Evaluate.cpp).
  struct FloorParts;
  FloorParts floorParts(const ParallelConfig &cfg) const;
  /// The parts of evaluate() (Evaluate.cpp).
  struct Frame;
  struct StepSums;
  void chunkCosts(const Frame &f, Evaluation &out);
  void communicationCosts(const Frame &f, Evaluation &out);
  void stageMemory(const Frame &f, const std::vector<int32_t> &inflight,
                   int64_t s, Evaluation &out);
  StepSums syncAndStageTimes(const Frame &f, Evaluation &out);
  void notePeakMemory(Evaluation &out) const;
  Status evaluateUpTo(const ParallelConfig &cfg, double stopFraction,
                      Evaluation &out);
  Status memoryOnlyResult(Evaluation &out) const;
  std::unique_ptr<Impl> impl_;
};

/// One-shot convenience: builds an Evaluator and evaluates `cfg`.
Result<Evaluation> evaluate(const LayerProfile &profile, const Cluster &cluster,
                            const ParallelConfig &cfg,
                            const EvalOptions &options = {});

} // namespace trident

#endif // TRIDENT_COST_EVALUATE_H
