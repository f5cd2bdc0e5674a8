//===- Runtime.h - Runtime library for emitted per-rank programs -*- C++ -*-===//
//
// The runtime that programs written by `trident emit` link: process and grid
// bootstrap, float32 tensors, forward and backward kernels on local shards,
// collectives and point-to-point transfers over named groups, SGD/Adam with
// ZeRO-1/3 helpers, deterministic initialisation and data, step reporting and
// parameter dumps.
//
// One header, two implementations with identical symbols:
//   TridentRuntimeCpu   Eigen kernels, OpenMPI collectives;
//   TridentRuntimeCuda  cuBLAS GEMMs, own CUDA kernels, NCCL collectives.
// A program links exactly one. The header includes no Eigen, MPI or CUDA
// header (everything backend-specific sits behind opaque pointers), so an
// emitted main.cpp compiles in a few seconds.
//
// Conventions shared by every function (docs/runtime.md has the details):
//  - Tensors are dense, row-major, float32 (tokens and targets: int32). A
//    Tensor's data lives where the backend computes: host memory on the CPU
//    backend, device memory on the CUDA backend. toHost()/fromHost() copy.
//  - Activations are 2-D [tokens, features] with tokens = batch * seq,
//    batch outermost; shapes are passed explicitly and checked.
//  - Backward kernels ACCUMULATE into parameter gradients (dW, db, dgamma,
//    ...) and OVERWRITE activation gradients (dx), unless the argument is
//    named `...Accum`.
//  - Errors (bad shapes, bad group, I/O failures) throw rt::Error whose
//    message names the function and the problem; reportFatal() prints it
//    with the rank and aborts all ranks.
//  - On CUDA, kernels are enqueued on one compute stream and collectives on
//    one communication stream with events in between; every function keeps
//    stream order so a program written for the CPU backend is correct on
//    CUDA unchanged. Host-visible results (toHost, reportStep) synchronise.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_RUNTIME_RUNTIME_H
#define TRIDENT_RUNTIME_RUNTIME_H

#include "trident/Support/RopeScaling.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace trident::rt {

//===----------------------------------------------------------------------===//
// Errors and process bootstrap
//===----------------------------------------------------------------------===//

/// Every runtime failure: the message names the function and the problem.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

/// Starts the process: MPI_Init (MPI_THREAD_FUNNELED) and, on CUDA, selects
/// device (node-local rank % device count) and creates the cuBLAS handle and
/// the compute and communication streams. Call once, first. Idempotent.
void init(int *argc, char ***argv);

/// Waits for outstanding work, frees communicators and calls MPI_Finalize.
void finalize();

/// Prints "trident-runtime: error (rank R): <what>" to stderr and aborts all
/// ranks (MPI_Abort with code 1). For the catch block of an emitted main.
[[noreturn]] void reportFatal(const std::exception &e);

/// Rank of this process in MPI_COMM_WORLD.
int worldRank();
/// Number of processes in MPI_COMM_WORLD.
int worldSize();
/// "cpu" or "cuda": which library was linked.
const char *backendName();
/// Lets fp32 GEMMs run on TF32 tensor cores (inputs rounded to a 10-bit
/// mantissa, fp32 accumulation: cuBLAS's CUBLAS_TF32_TENSOR_OP_MATH, what
/// PyTorch's allow_tf32 turns on). Off by default: the end-to-end tests
/// compare runs in full fp32. Returns false, changing nothing, where the
/// backend has no such mode (the CPU backend's Eigen GEMMs stay fp32).
/// For benchmarks (the emitted program's --tf32).
bool setTf32Gemms(bool on);
/// Which GEMMs run on bf16 tensor cores (setBf16Gemms).
enum class Bf16Gemms {
  Off,   ///< none: fp32 (or TF32, setTf32Gemms) from the fp32 tensors
  Large, ///< those where the bf16 rate pays for the copies it needs
         ///< (bf16GemmPays, trident/Support/Bf16Gemm.h: always for two
         ///< bf16 tensors, from kBf16CopyFlopsPerByte for two fp32 ones);
         ///< the others as under Off
  All,   ///< every one (the tests, to reach the bf16 path with tiny shapes)
};
/// Runs GEMMs on bf16 tensor cores: each operand is rounded to the nearest
/// bfloat16 (roundToBf16's rounding) into a scratch copy, the products
/// accumulate in fp32 and C stays fp32 (cublasGemmEx with CUDA_R_16BF
/// operands and CUBLAS_COMPUTE_32F), as Megatron's bf16 GEMMs do and as
/// flash attention multiplies its probabilities (rounded to bf16) with
/// the values. Off by default; the environment variable
/// TRIDENT_BF16_GEMMS=off|large|all overrides `mode` (for tests).
/// Returns false, changing nothing, where the backend has no such mode
/// (the CPU backend's Eigen GEMMs stay fp32: on operands that are bf16
/// values already they form the same products) or the GPU no bf16 tensor
/// cores (compute capability below 8.0). The emitted bf16 programs ask
/// for Large.
bool setBf16Gemms(Bf16Gemms mode);
/// Runs attention that keeps the log-sum-exp (attentionForward's
/// [batch, heads, seq] form: selective recomputation) as fused kernels
/// where they apply: the forward's tiles of 32 queries walk the keys with
/// an online softmax on bf16 tensor cores (warp matrix functions), and
/// the backward, given the forward's output, forms the probabilities and
/// their gradients tile by tile (one pass over key tiles for dk and dv,
/// one over query tiles for dq); no score reaches device memory. They
/// apply under a bf16 GEMM mode (setBf16Gemms: q, k, v, dout, the
/// probabilities and their gradients are rounded to bf16 for the
/// products), without dropout, with value heads as wide as query heads
/// and a head size of 16, 32, 64 or 128; elsewhere the unfused path runs.
/// Off by default: their speed against the unfused path is not measured
/// yet (docs/runtime.md, "Fused attention"). The environment variable
/// TRIDENT_FUSED_ATTENTION=on|off
/// overrides `on`. Returns false, changing nothing, where the backend has
/// no such kernel (the CPU backend).
bool setFusedAttention(bool on);
/// Waits until all enqueued kernels and transfers of this rank are done (a
/// no-op on the CPU backend, cudaDeviceSynchronize on CUDA).
void synchronize();
/// Waits until the compute stream's kernels are done, leaving collectives
/// that no kernel waited for yet running (a no-op on the CPU backend,
/// cudaStreamSynchronize of the compute stream on CUDA). The emitted
/// programs time their steps with it, so that the parameters' all-gathers
/// of one step's optimizer overlap the next step's forward.
void synchronizeCompute();
/// Monotonic wall clock in seconds.
double wallSeconds();

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

/// Element type of a Tensor: fp32; int32 for token ids; bfloat16 (2 bytes
/// an element, the upper 16 bits of the fp32 value; Common/Bf16.h) for
/// what the bf16 programs keep in bf16 tensors (toBf16).
enum class DType { F32, I32, BF16 };
/// Bytes an element of `dtype` takes: 4, 4, 2.
size_t elementSize(DType dtype);
/// "f32", "i32", "bf16" for messages.
const char *dtypeName(DType dtype);

/// A dense row-major buffer with a shape. Copies share storage (like a
/// shared_ptr); view() gives a sub-range of the same storage.
class Tensor {
public:
  /// An empty tensor (no storage, numel() == 0).
  Tensor() = default;
  /// Allocates `shape` on the backend's memory, zero-filled.
  explicit Tensor(std::vector<int64_t> shape, DType dtype = DType::F32);

  const std::vector<int64_t> &shape() const { return shape_; }
  /// Size of dimension `i`; negative counts from the end.
  int64_t dim(int i) const;
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const { return numel_; }
  DType dtype() const { return dtype_; }
  bool defined() const { return storage_ != nullptr; }

  /// Backend pointer to the first element (device pointer on CUDA). Throws
  /// if the dtype differs.
  float *f32() const;
  int32_t *i32() const;
  /// A bf16 tensor's elements as their 16 bits.
  uint16_t *bf16() const;

  /// A tensor sharing this storage: `numel(shape)` elements starting at
  /// flat element `offset` of this tensor. Used for flat parameter buffers.
  Tensor view(int64_t offset, std::vector<int64_t> shape) const;
  /// The same elements under another shape with the same numel.
  Tensor reshape(std::vector<int64_t> shape) const;
  /// A new tensor (own storage) with the same shape and contents.
  Tensor clone() const;

  /// Copies the whole tensor to a host vector (synchronises on CUDA); a
  /// bf16 tensor's values widened to fp32 (exactly).
  std::vector<float> toHost() const;
  std::vector<int32_t> toHostI32() const;
  /// Copies `values` (exactly numel() of them) into the tensor; into a
  /// bf16 tensor rounded as roundToBf16 rounds them.
  void fromHost(const std::vector<float> &values);
  void fromHostI32(const std::vector<int32_t> &values);

  /// "[2, 3]" for messages.
  std::string shapeString() const;

private:
  std::shared_ptr<void> storage_;
  int64_t offset_ = 0; // in elements
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  DType dtype_ = DType::F32;
};

/// Product of the dimensions (1 for a scalar shape {}).
int64_t numelOf(const std::vector<int64_t> &shape);

//===----------------------------------------------------------------------===//
// Groups and the process grid
//===----------------------------------------------------------------------===//

/// A set of ranks that communicate together: an MPI communicator (CPU) or an
/// MPI communicator plus an NCCL communicator (CUDA). Copies share it.
class Group {
public:
  Group() = default;
  /// Number of ranks in the group.
  int size() const;
  /// This process's rank inside the group, 0..size()-1.
  int rank() const;
  /// World ranks of the members, in group-rank order.
  const std::vector<int> &worldRanks() const;
  /// The axis name it was created for ("tp", "dp", "world", ...).
  const std::string &name() const;

  struct Impl;
  /// For the backends only.
  Impl *impl() const { return impl_.get(); }
  explicit Group(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

private:
  std::shared_ptr<Impl> impl_;
};

/// The axes of the process grid. Rank -> coordinate mapping (Megatron's
/// default order, tp fastest):
///   world = tp + TP * (cp + CP * (dp + DP * pp))
/// ep is carved out of dp: the ep group of a rank holds the ranks with the
/// same pp, cp, tp and dp coordinates {e*EP .. e*EP+EP-1} where e = dp / EP,
/// i.e. its ep coordinate is dp % EP. DPCP is the combined dp x cp group
/// (gradient reduction when cp > 1). EDP (expert data parallel) holds the
/// dp / EP ranks with the same pp, cp, tp and ep coordinate, which hold the
/// same experts (their gradient reduction); its coordinate is dp / EP.
/// EDPCP is edp x cp (the same experts when cp > 1), coordinate
/// (dp / EP) * CP + cp. With ep = 1 these two are the DP and DPCP groups
/// themselves (no extra communicators).
enum class Axis { PP, DP, CP, TP, EP, DPCP, EDP, EDPCP, World };

/// "pp", "dp", "cp", "tp", "ep", "dpcp", "edp", "edpcp", "world".
const char *axisName(Axis axis);

/// Sizes of the grid axes; their product pp*dp*cp*tp must be the world size
/// and ep must divide dp.
struct GridShape {
  int pp = 1, dp = 1, cp = 1, tp = 1, ep = 1;
};

/// The process grid: coordinates of this rank and one Group per axis.
/// Construction is collective over MPI_COMM_WORLD (every rank must build the
/// same grid at the same point) and creates every group (MPI_Comm_split and,
/// on CUDA, one NCCL communicator per group, split by ncclCommSplit from a
/// world communicator made from one ncclUniqueId broadcast over MPI).
class Grid {
public:
  /// Throws if the shape does not match the world size.
  explicit Grid(GridShape shape);
  const GridShape &shape() const { return shape_; }
  /// Size of an axis (World: world size; DPCP: dp*cp; EDP: dp/ep).
  int size(Axis axis) const;
  /// This rank's coordinate on an axis (World: world rank; DPCP: dp*CP+cp;
  /// EDP: dp/EP).
  int coord(Axis axis) const;
  /// The group of ranks that differ from this one only along `axis`.
  const Group &group(Axis axis) const;
  /// World rank of the process at grid coordinates (pp, dp, cp, tp).
  int worldRankOf(int pp, int dp, int cp, int tp) const;
  /// A group inside one axis: the ranks that share every other coordinate
  /// with this one and whose `axis` coordinate is in `members` (group rank =
  /// position in `members`), e.g. the first and last pipeline stage for a
  /// tied embedding. Collective over the world: every rank calls it at the
  /// same point with the same arguments. Ranks whose coordinate is not in
  /// `members` get a Group with size() == 0 that they must not use.
  Group subgroup(Axis axis, const std::vector<int> &members,
                 const std::string &name) const;
  /// True on the last pipeline stage (pp coordinate == pp - 1).
  bool isLastStage() const { return coord(Axis::PP) == shape_.pp - 1; }
  bool isFirstStage() const { return coord(Axis::PP) == 0; }

private:
  GridShape shape_;
  int coords_[4] = {0, 0, 0, 0}; // pp, dp, cp, tp
  std::vector<Group> groups_;    // indexed by Axis
};

//===----------------------------------------------------------------------===//
// Deterministic initialisation and synthetic data
//===----------------------------------------------------------------------===//

/// Fills `shard` (shape `shardShape`, starting at `shardOffset` inside a
/// tensor of shape `globalShape`) with scale * u, u uniform in [-1, 1), where
/// u depends only on (seed, name, global flat index) through a counter-based
/// hash (SplitMix64 finaliser). Hence any shard of any plan equals the
/// slice of the single-rank parameter bit for bit. `shard` must have
/// numel(shardShape) elements.
/// A shard dimension made of `count` equal blocks, each the rank's piece
/// of one of the `count` equal blocks of the global dimension (a gated
/// expert's gate and up columns under tensor parallelism). Along `dim` the
/// shard offset is the piece's offset inside its block. `dim` -1: none.
struct ShardBlocks {
  int dim = -1;
  int64_t count = 1;
};

void initParam(Tensor &shard, const std::string &name,
               const std::vector<int64_t> &globalShape,
               const std::vector<int64_t> &shardOffset,
               const std::vector<int64_t> &shardShape, uint64_t seed,
               float scale, ShardBlocks blocks = {});
/// Fills with a constant (e.g. 1 for norm weights, 0 for biases).
void fillConstant(Tensor &t, float value);

/// The value initParam gives element `flatIndex` of parameter `name`
/// (for tests and tools).
float initParamValue(const std::string &name, uint64_t flatIndex,
                     uint64_t seed, float scale);

/// Synthetic token of training step `step`, global sample `sample`, position
/// `pos` in [0, vocab): a counter-based hash of (seed, step, sample, pos).
/// The sequence has seqLen + 1 tokens; inputs are positions 0..seqLen-1 and
/// the target of position p is the token at p + 1.
int32_t syntheticToken(uint64_t seed, int64_t step, int64_t sample,
                       int64_t pos, int64_t vocab);

/// Fills `tokens` and `targets` (int32, [numSamples * seqLen], sample
/// outermost) for global samples firstSample .. firstSample+numSamples-1 and
/// positions firstPos .. firstPos+seqLen-1 (firstPos > 0 for a
/// context-parallel or sequence chunk).
void syntheticBatch(Tensor &tokens, Tensor &targets, uint64_t seed,
                    int64_t step, int64_t firstSample, int64_t numSamples,
                    int64_t firstPos, int64_t seqLen, int64_t vocab);

/// Another synthetic integer input (BERT's token types and next-sentence
/// labels), an independent stream told apart by `stream` (its input
/// name): ids (int32) in [0, range) for global samples firstSample ..
/// firstSample+numSamples-1 at positions firstPos .. firstPos+seqLen-1
/// ([numSamples * seqLen] values, sample outermost), or one per sample
/// when seqLen is 0 ([numSamples] values).
void syntheticIds(Tensor &ids, uint64_t seed, const std::string &stream,
                  int64_t step, int64_t firstSample, int64_t numSamples,
                  int64_t firstPos, int64_t seqLen, int64_t range);

/// A synthetic float input (ViT's images): t holds numSamples * perSample
/// values (sample outermost); value e of global sample s is uniform in
/// [-1, 1), a hash of (seed, stream, step, s, e), so a sample is the same
/// on every rank and plan.
void syntheticFloats(Tensor &t, uint64_t seed, const std::string &stream,
                     int64_t step, int64_t firstSample, int64_t numSamples,
                     int64_t perSample);

/// Where one dropout call's elements sit in the single-rank model, so that
/// every plan draws the same mask for the same element. The mask bit of an
/// element is a counter-based hash of (seed, step, site, its global flat
/// index); nothing is stored, and the backward draws the same bits again.
/// An element is dropped when the top 24 bits of its hash, read as an
/// integer, fall below round(rate * 2^24); kept elements are scaled by
/// 1 / (1 - rate) ("inverted" dropout, Srivastava et al. 2014, "Dropout: A
/// Simple Way to Prevent Neural Networks from Overfitting").
struct DropoutSite {
  float rate = 0.0f;        ///< drop probability in [0, 1); 0 = no dropout
  uint64_t seed = 0;        ///< the program's seed
  int64_t step = 0;         ///< training step: a fresh mask every step
  int64_t site = 0;         ///< which dropout of the model
  int64_t firstSample = 0;  ///< global sample of the local batch's first
  int64_t seqLen = 1;       ///< global sequence length
  int64_t firstPos = 0;     ///< global position of the local first position
  int64_t features = 1;     ///< global features per position (heads in attention)
  int64_t firstFeature = 0; ///< global index of the local first feature
};

/// The keep bit dropout draws for global element `index` of `site` (for
/// tests and tools); every backend gives the same bit.
bool dropoutKeeps(const DropoutSite &site, uint64_t index);

//===----------------------------------------------------------------------===//
// Kernels (local shards). n = number of token rows.
//===----------------------------------------------------------------------===//

/// Sets every element to zero.
void zero(Tensor &t);
/// dst = src (same numel).
void copy(Tensor &dst, const Tensor &src);
/// t *= alpha.
void scale(Tensor &t, float alpha);
/// y += alpha * x (same numel).
void axpy(Tensor &y, const Tensor &x, float alpha = 1.0f);
/// out = a + b (residual connection). out may alias a or b.
void add(Tensor &out, const Tensor &a, const Tensor &b);
/// out = a * b elementwise.
void mul(Tensor &out, const Tensor &a, const Tensor &b);
/// Sum of all elements, computed in double, returned on the host.
double sum(const Tensor &t);

/// Rounds every element to the nearest bfloat16 (ties to even; NaN and
/// infinities kept), in place. Every bf16 value is an fp32 value, so a
/// tensor rounded this way holds exactly what a bf16 tensor would: the
/// emitted bf16 programs (docs/emit.md, "bf16 mixed precision") round each
/// activation a kernel writes and compute in fp32, as tensor cores
/// multiply bf16 operands and accumulate in fp32.
void roundToBf16(Tensor &t);
/// A new tensor holding `t` rounded to bf16: the working copy of an fp32
/// master weight that a bf16 program's forward and backward read.
Tensor bf16Copy(const Tensor &t);
/// A new bf16 tensor (DType::BF16, 2 bytes an element) of an fp32 tensor's
/// values rounded as roundToBf16 rounds them: a weight's working copy or
/// an activation whose every reader takes bf16 storage (the operands of
/// linearForward and linearBackward, the activations' inputs, the output
/// attentionBackward reads; docs/emit.md, "bf16 mixed precision"); a bf16
/// tensor comes back as it is (shared storage).
Tensor toBf16(const Tensor &t);
/// A new fp32 tensor of a bf16 tensor's values (exact: every bf16 value is
/// an fp32 value); an fp32 tensor is returned as it is (shared storage).
Tensor toF32(const Tensor &t);

/// Embedding: out[i, :] = wte[tokens[i] - vocabOffset, :] when the token
/// falls in this shard's rows [vocabOffset, vocabOffset + wte.dim(0)), else
/// zeros (vocab-parallel embedding: all-reduce `out` over tp afterwards).
/// If `wpe` is defined (positions x hidden, not sharded) adds
/// wpe[posOffset + i % seqLen, :] — on one tp rank only when vocab-parallel
/// (pass addPositions = false on the others).
/// tokens: int32 [n]; out: [n, hidden].
void embeddingForward(Tensor &out, const Tensor &tokens, const Tensor &wte,
                      const Tensor &wpe, int64_t seqLen, int64_t posOffset,
                      int64_t vocabOffset, bool addPositions = true);
/// dwte[tokens[i] - vocabOffset] += dout[i] (rows in this shard only);
/// dwpe[posOffset + i % seqLen] += dout[i] if dwpe is defined and
/// addPositions.
void embeddingBackward(Tensor &dwte, Tensor &dwpe, const Tensor &dout,
                       const Tensor &tokens, int64_t seqLen, int64_t posOffset,
                       int64_t vocabOffset, bool addPositions = true);

/// DLRM's pooled embedding bags (Naumov et al. 2019, "Deep Learning
/// Recommendation Model for Personalization and Recommendation Systems",
/// Sec. 2.1): x holds the looked-up rows of `bag` ids per sample, [n *
/// bag, d] (embeddingForward over the [n, bag] ids); out [n, d] is the sum
/// of each sample's rows, divided by `bag` when `mean`.
void bagPoolForward(Tensor &out, const Tensor &x, int64_t bag, bool mean);
/// dx [n * bag, d] = each sample's dout row (divided by `bag` when `mean`),
/// overwritten.
void bagPoolBackward(Tensor &dx, const Tensor &dout, int64_t bag, bool mean);

/// DLRM's dot interaction (Naumov et al. 2019, Sec. 2.1.3; the reference
/// implementation's `interact_features` without self-interaction): F >= 2
/// features [n, d] each; out [n, d + F(F-1)/2] holds the first feature,
/// then <f_a, f_b> for every pair a > b in the order (1,0), (2,0), (2,1),
/// (3,0), ... (the strict lower triangle row by row: pair (a, b) at
/// column d + a(a-1)/2 + b).
void dotInteractionForward(Tensor &out, const std::vector<Tensor> &features);
/// df_a = sum over b != a of dout[pair(a, b)] f_b, plus dout[:, :d] for
/// a = 0 (every df overwritten; df and features in the same order).
void dotInteractionBackward(const std::vector<Tensor> &dfeatures,
                            const Tensor &dout,
                            const std::vector<Tensor> &features);

/// Sigmoid binary cross-entropy (DLRM's click loss) on logits z [n] (any
/// shape of n elements) against labels y in {0, 1} (int32 [n]): adds
/// sum_i max(z_i, 0) - z_i y_i + log(1 + exp(-|z_i|)), computed in double,
/// to lossSum[0] (a [1] tensor on the backend).
void binaryCrossEntropyForward(Tensor &lossSum, const Tensor &logits,
                               const Tensor &labels);
/// dz = gradScale * (sigmoid(z) - y) (overwritten).
void binaryCrossEntropyBackward(Tensor &dlogits, const Tensor &logits,
                                const Tensor &labels, float gradScale);

/// Dropout of x seen as [batch, seq, f] (local shard, f = numel / (batch *
/// seq)): y = x * keep / (1 - rate), the keep bit of local element (i, j,
/// c) being that of global element ((site.firstSample + i) * site.seqLen +
/// site.firstPos + j) * site.features + site.firstFeature + c. Its
/// backward is the same call on dy (the mask is drawn again, not stored).
/// y may alias x.
void dropoutApply(Tensor &y, const Tensor &x, int64_t batch, int64_t seq,
                  const DropoutSite &site);

/// LayerNorm over the last dim of x [n, h]: y = (x - mean) * rstd *
/// (gamma + gammaShift) + beta (beta may be undefined). gammaShift 1 is
/// Megatron's zero-centred LayerNorm1p (`apply_layernorm_1p`, Nemotron),
/// whose weights start at 0. Saves mean and rstd ([n]) for backward.
void layerNormForward(Tensor &y, Tensor &mean, Tensor &rstd, const Tensor &x,
                      const Tensor &gamma, const Tensor &beta, float eps,
                      float gammaShift = 0.0f);
/// dx = overwritten; dgamma, dbeta accumulated (dbeta may be undefined).
void layerNormBackward(Tensor &dx, Tensor &dgamma, Tensor &dbeta,
                       const Tensor &dy, const Tensor &x, const Tensor &gamma,
                       const Tensor &mean, const Tensor &rstd,
                       float gammaShift = 0.0f);

/// RMSNorm over the last dim: y = x * rstd * gamma, rstd = 1/sqrt(mean(x^2)
/// + eps). gamma may be shorter than the row (per-head norm): the row is
/// then split into row/gamma.numel() groups, each normalised separately;
/// rstd has n * groups entries.
void rmsNormForward(Tensor &y, Tensor &rstd, const Tensor &x,
                    const Tensor &gamma, float eps);
void rmsNormBackward(Tensor &dx, Tensor &dgamma, const Tensor &dy,
                     const Tensor &x, const Tensor &gamma, const Tensor &rstd);

/// y [n, out] = x [n, in] * W^T + b, W [out, in] (the tgraph layout), b [out]
/// or undefined. x and W (and linearBackward's dy, x and W) may be bf16
/// tensors (toBf16): read as they are, with the same result as their
/// values in fp32 tensors (a bf16 GEMM takes them without a copy, an fp32
/// or TF32 GEMM on the CUDA backend from an fp32 copy).
void linearForward(Tensor &y, const Tensor &x, const Tensor &w,
                   const Tensor &b);
/// dx = dy W (overwritten; skipped if dx undefined), dW += dy^T x
/// (skipped if dw undefined), db += column sums of dy (skipped if db
/// undefined). The emitted programs take dx first, start its tensor-
/// parallel sum, and take dW and db while it runs.
void linearBackward(Tensor &dx, Tensor &dw, Tensor &db, const Tensor &dy,
                    const Tensor &x, const Tensor &w);
/// Plain matmul for tests and odd shapes: c [m, n] = a [m, k] * b [k, n]
/// (or b^T when transB, b then [n, k]); beta = 1 accumulates into c.
void matmul(Tensor &c, const Tensor &a, const Tensor &b, bool transB,
            float beta = 0.0f);

/// The activations below (GELU, SiLU, ReLU, squared ReLU, SwiGLU; not
/// tanh) read x (SwiGLU's gate and up) from fp32 or bf16 tensors
/// (DType::BF16) alike, and write y (the backward's dx, dgate, dup) into
/// an fp32 tensor or a bf16 one, each element then rounded as toBf16
/// rounds: the same bits as toBf16 of the fp32 result, without the fp32
/// tensor (the emitted bf16 programs declare their results so where every
/// reader takes bf16; docs/emit.md, "bf16 mixed precision").
/// GELU. approximate = true: tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x +
/// 0.044715 x^3))); false: exact erf form 0.5 x (1 + erf(x / sqrt(2))).
void geluForward(Tensor &y, const Tensor &x, bool approximate = true);
/// dx = dy * gelu'(x) (overwritten).
void geluBackward(Tensor &dx, const Tensor &dy, const Tensor &x,
                  bool approximate = true);
/// SiLU: x * sigmoid(x).
void siluForward(Tensor &y, const Tensor &x);
void siluBackward(Tensor &dx, const Tensor &dy, const Tensor &x);
/// ReLU: max(x, 0).
void reluForward(Tensor &y, const Tensor &x);
void reluBackward(Tensor &dx, const Tensor &dy, const Tensor &x);
/// Squared ReLU (So et al. 2021, "Primer"; Nemotron-4's MLP): y =
/// max(x, 0)^2; backward dx = 2 max(x, 0) dy.
void squaredReluForward(Tensor &y, const Tensor &x);
void squaredReluBackward(Tensor &dx, const Tensor &dy, const Tensor &x);
/// tanh (BERT's pooler); backward dx = (1 - tanh(x)^2) dy.
void tanhForward(Tensor &y, const Tensor &x);
void tanhBackward(Tensor &dx, const Tensor &dy, const Tensor &x);
/// ViT patch embedding (Dosovitskiy et al. 2021, "An Image is Worth 16x16
/// Words"): images [b, channels, side, side] are cut into patch x patch
/// squares; patch (py, px) becomes token py * (side / patch) + px, whose
/// feature (c, i, j) is pixel (c, py*patch + i, px*patch + j) at index
/// (c * patch + i) * patch + j. out [b * T, h] (T = (side / patch)^2,
/// overwritten) = those [b * T, channels * patch^2] rows x w [channels *
/// patch^2, h] + bias (undefined: none): the stride-patch convolution.
void patchEmbedForward(Tensor &out, const Tensor &images, const Tensor &w,
                       const Tensor &bias, int64_t channels, int64_t side,
                       int64_t patch);
/// dw (w's shape) and db ([h]; undefined: none) overwritten with this
/// call's contribution; the images get no gradient.
void patchEmbedBackward(Tensor &dw, Tensor &db, const Tensor &dy,
                        const Tensor &images, int64_t channels, int64_t side,
                        int64_t patch);
/// ViT's class token: out [b * (T + 1), h] (overwritten) holds, per sample,
/// token [1, h] then the sample's T rows of x [b * T, h].
void prependTokenForward(Tensor &out, const Tensor &x, const Tensor &token,
                         int64_t tokens);
/// dx [b * T, h]: dy without each sample's first row; dtoken [1, h]: the
/// sum of those first rows in sample order (both overwritten).
void prependTokenBackward(Tensor &dx, Tensor &dtoken, const Tensor &dy,
                          int64_t tokens);
/// Learned positions added to an activation (ViT, after the class token):
/// y [n, h] = x + wpe[posOffset + r % seq] for row r (y may alias x).
void positionAddForward(Tensor &y, const Tensor &x, const Tensor &wpe,
                        int64_t seq, int64_t posOffset);
/// dwpe (wpe's shape, overwritten): per position, the sum over samples (in
/// order) of dy's rows at it; rows of other positions stay zero.
void positionAddBackward(Tensor &dwpe, const Tensor &dy, int64_t seq,
                         int64_t posOffset);

/// Positions first .. first+count-1 of every sample: x [b*seq, h] ->
/// y [b*count, h] (overwritten). A sequence shard of a replicated
/// activation (ViT's tokens entering sequence parallelism).
void sliceRows(Tensor &y, const Tensor &x, int64_t seq, int64_t first,
               int64_t count);

/// One token of every sequence (BERT's [CLS] pooling): x [batch*seq, h]
/// holds `seq` positions per sample; out [batch, h] (overwritten) gets row
/// `index` of each sample, or zeros when index is outside [0, seq) (the
/// token lives on another sequence shard: sum the shards' outputs).
void selectTokenForward(Tensor &out, const Tensor &x, int64_t seq,
                        int64_t index);
/// dx [batch*seq, h] (overwritten): dy's row b at row index of sample b,
/// zeros elsewhere (all zeros when index is outside [0, seq)).
void selectTokenBackward(Tensor &dx, const Tensor &dy, int64_t seq,
                         int64_t index);
/// SwiGLU: y = silu(gate) * up (gate and up separate tensors, same shape).
void swigluForward(Tensor &y, const Tensor &gate, const Tensor &up);
/// dgate, dup overwritten.
void swigluBackward(Tensor &dgate, Tensor &dup, const Tensor &dy,
                    const Tensor &gate, const Tensor &up);

/// RoPE frequency scaling of long-context checkpoints (Hugging Face's
/// `rope_scaling`): the kinds and their papers are in
/// include/trident/Support/RopeScaling.h.
using trident::RopeScaling;
/// The rotaryDim / 2 angular frequencies (radians per position) of RoPE
/// with base theta under `scaling`. Throws on invalid parameters.
std::vector<double> ropeFrequencies(int64_t rotaryDim, double theta,
                                    const RopeScaling &scaling);

/// Rotary position embedding (RoFormer, Su et al. 2021) with the "rotate
/// half" pairing of GPT-NeoX and Llama: x and y are [batch*seq,
/// heads*headDim] (row r holds position r % seq); in every head,
/// dimensions i and i + rotaryDim/2 (i < rotaryDim/2) turn by the angle
/// p * f_i (ropeFrequencies: theta^(-2i/rotaryDim) unscaled) and are
/// multiplied by the scaling's attentionFactor; dimensions from rotaryDim
/// on pass through. inverse = true applies the transpose (the opposite
/// angle, the same factor), which is the backward (dx = ropeApply(dy,
/// inverse)). y may alias x. posOffset shifts every position (row r holds
/// position posOffset + r % seq): the first position of a context-parallel
/// sequence chunk. rotaryDim is at most 2 * kMaxRopePairs. rotaryOffset
/// moves the rotated dimensions to rotaryOffset .. rotaryOffset +
/// rotaryDim - 1 of each head, all others passing through (DeepSeek's
/// multi-head latent attention rotates the last qk_rope_head_dim of each
/// query head). interleaved pairs dimensions 2i and 2i + 1 of the rotated
/// range instead of i and i + rotaryDim/2 (DeepSeek's checkpoints:
/// transformers' apply_rotary_pos_emb_interleave, which turns the same
/// pairs and leaves q k^T the same).
constexpr int64_t kMaxRopePairs = 256;
void ropeApply(Tensor &y, const Tensor &x, int64_t seq, int64_t heads,
               int64_t headDim, int64_t rotaryDim, double theta, bool inverse,
               int64_t posOffset = 0, const RopeScaling &scaling = {},
               int64_t rotaryOffset = 0, bool interleaved = false);

/// Multi-head latent attention's keys (DeepSeek-V2, "DeepSeek-V2: A Strong,
/// Economical, and Efficient Mixture-of-Experts Language Model", 2024,
/// section 2.1.3): k [n, heads*(nopeDim+ropeDim)] (overwritten), where key
/// head h is head h of kNope [n, heads*nopeDim] followed by kRope [n,
/// ropeDim], the rotary key all heads share.
void latentKeyForward(Tensor &k, const Tensor &kNope, const Tensor &kRope,
                      int64_t heads, int64_t nopeDim, int64_t ropeDim);
/// Its backward: dkNope (overwritten) the non-rotary parts of dk's heads;
/// dkRope (overwritten) the sum of their rotary parts, in head order.
void latentKeyBackward(Tensor &dkNope, Tensor &dkRope, const Tensor &dk,
                       int64_t heads, int64_t nopeDim, int64_t ropeDim);

/// Shape of a self-attention call on local heads.
struct AttentionDims {
  int64_t batch = 1, seq = 1;
  int64_t heads = 1;   ///< local query heads
  int64_t kvHeads = 1; ///< local key/value heads; divides heads (GQA)
  int64_t headDim = 1; ///< of a query and key head
  /// Keys/values per sequence; 0 means seq. Larger under context
  /// parallelism: the local queries attend to the all-gathered sequence.
  int64_t kvSeq = 0;
  /// Position of query 0 among the keys (0 without context parallelism).
  int64_t qOffset = 0;
  /// Sliding window: > 0 limits the query at position p to keys p - window
  /// + 1 .. p (Mistral, Jiang et al. 2023, "Mistral 7B", with Hugging
  /// Face's count: window keys including p); 0 = all earlier keys.
  int64_t window = 0;
  /// Dropout on the attention probabilities (rate 0: none). Element (b, h,
  /// i, j) has global index ((firstSample + b) * features + firstFeature +
  /// h) * seqLen + firstPos + i) * keys + j: features counts the model's
  /// heads, firstFeature is this rank's first head, firstPos the position
  /// of query 0 (qOffset when the keys are the whole sequence).
  DropoutSite dropout;
  /// false: every query sees every key (encoders: BERT, ViT); qOffset
  /// then only places the queries for dropout, and window must be 0.
  bool causal = true;
  /// Of a value (and output) head; 0 means headDim. Differs under
  /// multi-head latent attention (DeepSeek-V2: 192 for q and k, 128 for v).
  int64_t vHeadDim = 0;
  /// Softmax scale on q k^T; 0 means 1/sqrt(headDim). DeepSeek's YaRN
  /// checkpoints multiply it by mscale^2.
  double scale = 0.0;
  int64_t keys() const { return kvSeq ? kvSeq : seq; }
  int64_t valueDim() const { return vHeadDim ? vHeadDim : headDim; }
  float softmaxScale() const {
    return scale > 0.0 ? float(scale) : 1.0f / std::sqrt(float(headDim));
  }
};
/// Self-attention (causal unless dims.causal is false), softmax scale
/// dims.softmaxScale() (1/sqrt(headDim) unless set):
///   q [batch*seq, heads*headDim], k [batch*keys, kvHeads*headDim], v
///   [batch*keys, kvHeads*valueDim] (i.e. [b, s, heads, d], the direct
///   output of the q/k/v projections); out [batch*seq, heads*valueDim].
///   `probs`, saved for the backward, is one of two forms, told apart by
///   its size:
///   - the probabilities [batch, heads, seq, keys] (masked entries are 0;
///     undropped: the backward draws the dropout mask again);
///   - their rows' log-sum-exp [batch, heads, seq]: row i's max plus the
///     log of its softmax denominator (sinks included), so that
///     p_ij = exp(scale q_i k_j - lse_i). The backward computes the
///     probabilities again from q and k, as flash attention does (Dao et
///     al. 2022, "FlashAttention: Fast and Memory-Efficient Exact
///     Attention with IO-Awareness"), and nothing of size seq x keys
///     outlives a call.
///   Query i sees keys 0 .. qOffset + i (the last `window` of them with a
///   window), or all keys when not causal. Query head h reads kv head
///   h / (heads / kvHeads).
void attentionForward(Tensor &out, Tensor &probs, const Tensor &q,
                      const Tensor &k, const Tensor &v,
                      const AttentionDims &dims);
/// dq, dk, dv overwritten.
void attentionBackward(Tensor &dq, Tensor &dk, Tensor &dv, const Tensor &dout,
                       const Tensor &q, const Tensor &k, const Tensor &v,
                       const Tensor &probs, const AttentionDims &dims);
/// Attention with sinks (gpt-oss; Xiao et al. 2024, "Efficient Streaming
/// Language Models with Attention Sinks", as a learned logit): sinks [heads]
/// holds one logit per local head that joins every row's softmax without a
/// value, so a row's probabilities sum to 1 - p_sink. Undefined sinks: the
/// plain attention above.
void attentionForward(Tensor &out, Tensor &probs, const Tensor &q,
                      const Tensor &k, const Tensor &v, const Tensor &sinks,
                      const AttentionDims &dims);
/// The backward with sinks: dsinks [heads] (overwritten; undefined: not
/// computed) gets, per head, the sum over rows in (batch, query) order of
/// -p_sink * sum_j p_j dp_j, with p_sink = 1 - sum_j p_j from probs.
void attentionBackward(Tensor &dq, Tensor &dk, Tensor &dv, Tensor &dsinks,
                       const Tensor &dout, const Tensor &q, const Tensor &k,
                       const Tensor &v, const Tensor &probs,
                       const AttentionDims &dims);
/// The backward given also the forward's output `out` (shaped as dout;
/// undefined: not given). Each row's sum_j p_j dp_j is then dout_i . out_i
/// (out_i = sum_j p_j v_j), which the fused backward of the CUDA backend
/// (rt::setFusedAttention) needs, as flash attention's backward does; the
/// other paths do not read it.
void attentionBackward(Tensor &dq, Tensor &dk, Tensor &dv, Tensor &dsinks,
                       const Tensor &dout, const Tensor &q, const Tensor &k,
                       const Tensor &v, const Tensor &out, const Tensor &probs,
                       const AttentionDims &dims);

/// Pointwise activation of a mixture-of-experts MLP.
enum class Activation { Gelu, GeluTanh, Silu, Relu };
/// Shape of a routed mixture-of-experts MLP call.
struct MoEDims {
  int64_t experts = 1; ///< E, all experts (the router's width)
  int64_t topK = 1;    ///< experts per token
  bool gated = false;  ///< act(gate) * up: wIn holds gate then up columns
  Activation act = Activation::Silu;
  /// First expert held here: wIn and wOut hold experts expertOffset ..
  /// expertOffset + wIn.dim(0) - 1 (expert parallelism; 0 and all E
  /// without it).
  int64_t expertOffset = 0;
  /// Weights renormalised over the chosen experts (Mixtral; HF
  /// norm_topk_prob true). false: each weight is the softmax probability
  /// itself (Qwen-MoE with norm_topk_prob false).
  bool renormalize = true;
  /// > 0: gpt-oss's clamped SwiGLU (OpenAI 2025, "gpt-oss-120b &
  /// gpt-oss-20b Model Card"; transformers' GptOssExperts) instead of
  /// act(gate) * up: g = min(gate, limit), u = clamp(up, -limit, limit),
  /// hidden = (u + 1) * g * sigmoid(kGptOssSwigluAlpha * g). Needs gated.
  float swigluLimit = 0.0f;
  /// false: the experts' output biases are left out of y and of dgate
  /// here (another rank of a tensor-parallel group adds them), though
  /// their gradient is still computed.
  bool outBiasHere = true;
  /// DeepSeek-V3's router ("DeepSeek-V3 Technical Report", 2024, section
  /// 2.1.2; transformers' DeepseekV3TopkRouter): each expert's score is
  /// sigmoid(logit) instead of the softmax probability, and the
  /// renormalised weights divide by (sum + 1e-20).
  bool sigmoidScores = false;
  /// Group-limited routing: the experts form `groups` equal groups; a
  /// group's score is the sum of its two best selection scores, and each
  /// token picks its top-k experts from its `topkGroups` best groups (the
  /// others' selection scores set to 0, as transformers masks them).
  int64_t groups = 1, topkGroups = 1;
  /// The chosen weights, after any renormalisation, times this
  /// (`routed_scaling_factor`).
  float routedScale = 1.0f;
};
/// The sigmoid's slope in gpt-oss's SwiGLU (GptOssExperts.alpha = 1.702).
constexpr float kGptOssSwigluAlpha = 1.702f;
/// Biases of a mixture of experts, each undefined when absent: router [E]
/// added to the logits, in [L, f or 2f] to x wIn[e], out [L, h] to each
/// expert's output before its weight (gpt-oss); select [E] added to the
/// scores only to choose the experts, not to weight them (DeepSeek-V3's
/// e_score_correction_bias, which training updates outside the gradient:
/// its gradient is none). A gradient MoEBiases holds the tensors the
/// backward writes (Tensor copies share storage).
struct MoEBiases {
  Tensor router, in, out, select;
};
/// Routed mixture of experts with Mixtral's routing ("Mixtral of Experts",
/// Jiang et al. 2024): logits = x router, p = softmax(logits); each token
/// goes to its topK most probable experts (ties: the lower index) with
/// weights p_e / sum of the chosen p (p_e itself without renormalize); expert e
/// computes act(x wIn[e]) wOut[e] (gated: act(x wIn[e][:, :f]) * x wIn[e][:,
/// f:]). x, y [n, h]; router [h, E]; wIn [L, h, f or 2f]; wOut [L, f, h] for
/// the L experts held here. y (overwritten) sums the contributions of those
/// experts only: under expert parallelism the members' y add up to the
/// whole output. Computed on the backend's device in a fixed order, the
/// same on both backends (lib/Runtime/Common/MoE.cpp): on CUDA only the
/// local experts' row counts, which size the expert GEMMs, and the
/// routing's status come to the host, in one copy.
void moeForward(Tensor &y, const Tensor &x, const Tensor &router,
                const Tensor &wIn, const Tensor &wOut, const MoEDims &dims);
/// With biases (any undefined: none).
void moeForward(Tensor &y, const Tensor &x, const Tensor &router,
                const Tensor &wIn, const Tensor &wOut, const MoEDims &dims,
                const MoEBiases &biases);
/// The experts' part of the backward, for the experts held here: dx
/// (overwritten) through the experts, dwIn and dwOut accumulated, and
/// dgate [n, topK] (overwritten) the gradient of each chosen expert's
/// weight (0 for experts held elsewhere: sum dgate over the expert-parallel
/// group before moeRouterBackward). Recomputes the routing and the
/// experts' hidden activations from x instead of saving them.
void moeBackward(Tensor &dx, Tensor &dwIn, Tensor &dwOut, Tensor &dgate,
                 const Tensor &dy, const Tensor &x, const Tensor &router,
                 const Tensor &wIn, const Tensor &wOut, const MoEDims &dims);
/// With biases: dbiases.in and dbiases.out (defined where biases' are)
/// accumulated like dwIn and dwOut; dbiases.router is not touched (see
/// moeRouterBackward).
void moeBackward(Tensor &dx, Tensor &dwIn, Tensor &dwOut, Tensor &dgate,
                 const Tensor &dy, const Tensor &x, const Tensor &router,
                 const Tensor &wIn, const Tensor &wOut, const MoEDims &dims,
                 const MoEBiases &biases, MoEBiases &dbiases);
/// The router's part of the backward for rows rowOffset .. rowOffset +
/// dx.rows - 1 of x [n, h] (this rank's own tokens when x was gathered over
/// the expert-parallel group): dx [rows, h] (overwritten) through the
/// router, drouter accumulated; dgate [n, topK] holds every expert's part.
void moeRouterBackward(Tensor &dx, Tensor &drouter, const Tensor &dgate,
                       const Tensor &x, const Tensor &router,
                       const MoEDims &dims, int64_t rowOffset = 0);
/// With a router bias [E] (undefined: none): dRouterBias (its shape)
/// accumulated with the rows' logit gradients.
void moeRouterBackward(Tensor &dx, Tensor &drouter, Tensor &dRouterBias,
                       const Tensor &dgate, const Tensor &x,
                       const Tensor &router, const Tensor &routerBias,
                       const MoEDims &dims, int64_t rowOffset = 0);
/// With the router and selection biases of `biases` (either undefined:
/// none; the selection bias gets no gradient). selectLoad (nullptr: none)
/// [experts] gets, added to each expert's entry, the number of these rows
/// that chose it: the expert load of DeepSeek-V3's auxiliary-loss-free
/// balancing (see loadBalanceUpdate).
void moeRouterBackward(Tensor &dx, Tensor &drouter, Tensor &dRouterBias,
                       const Tensor &dgate, const Tensor &x,
                       const Tensor &router, const MoEBiases &biases,
                       const MoEDims &dims, int64_t rowOffset = 0,
                       Tensor *selectLoad = nullptr);
/// Auxiliary-loss-free load balancing ("DeepSeek-V3 Technical Report",
/// 2024, section 2.1.2; Wang et al. 2024, "Auxiliary-Loss-Free Load
/// Balancing Strategy for Mixture-of-Experts"): after a step, each
/// expert's selection bias moves by `rate` towards balance: b_e += rate *
/// sign(mean load - load_e) (0 for an expert at the mean). load [E] holds
/// the step's token counts of every expert, summed over all the tokens of
/// the global batch; bias holds elements begin .. begin + bias.numel() - 1
/// of the [E] bias (a ZeRO-3 slice; elements at or past E are padding and
/// stay as they are).
void loadBalanceUpdate(Tensor &bias, const Tensor &load, float rate,
                       int64_t begin = 0);

/// Softmax cross-entropy over logits [n, V] with int32 targets [n].
/// Adds the SUM over the n rows of -log softmax(logits)[target] to
/// lossSum[0] (a [1] tensor kept on the backend; read it with
/// globalMeanLoss), and saves the row log-sum-exp in lse [n].
void crossEntropyForward(Tensor &lossSum, Tensor &lse, const Tensor &logits,
                         const Tensor &targets);
/// dlogits = gradScale * (softmax(logits) - onehot(target)) (overwritten).
/// For the mean over T tokens of the whole global batch pass 1/T.
void crossEntropyBackward(Tensor &dlogits, const Tensor &logits,
                          const Tensor &targets, const Tensor &lse,
                          float gradScale);
/// Vocab-parallel cross-entropy (Megatron): logits [n, V/tp] hold the
/// columns [vocabOffset, vocabOffset + V/tp) of the full logits; max,
/// sum-exp and the target logit are all-reduced over `tp`, so every tp rank
/// adds the same full-vocab loss sum to lossSum and gets the same lse.
/// `vocab` > 0 is the real vocabulary of a table padded to a multiple of
/// tp: columns at global index >= vocab are padding, left out of the
/// softmax (and targets must be below it); 0 means every column is real.
void vocabParallelCrossEntropyForward(Tensor &lossSum, Tensor &lse,
                                      const Tensor &logits,
                                      const Tensor &targets,
                                      int64_t vocabOffset, const Group &tp,
                                      int64_t vocab = 0);
/// dlogits for the local columns (no communication needed); padding
/// columns (global index >= `vocab` > 0) get 0.
void vocabParallelCrossEntropyBackward(Tensor &dlogits, const Tensor &logits,
                                       const Tensor &targets,
                                       const Tensor &lse, int64_t vocabOffset,
                                       float gradScale, int64_t vocab = 0);

//===----------------------------------------------------------------------===//
// Communication
//===----------------------------------------------------------------------===//
// All collectives are deterministic for a given group and message size (the
// same ranks reduce in the same order every time); results are identical on
// every member. On a group of size 1 they are copies or no-ops.

/// In-place sum over the group.
void allReduceSum(Tensor &t, const Group &g);
/// In-place max over the group.
void allReduceMax(Tensor &t, const Group &g);
/// Concatenates the members' `in` along dimension `dim` (group-rank order)
/// into `out` (out.dim(dim) == g.size() * in.dim(dim), other dims equal).
void allGather(Tensor &out, const Tensor &in, int dim, const Group &g);
/// Sums the members' `in` and leaves block g.rank() along `dim` in `out`
/// (in.dim(dim) == g.size() * out.dim(dim)). dim 0 of [tokens, hidden] is
/// the sequence dimension for sequence parallelism when batch == 1; for
/// batch > 1 reshape to [batch, seq, hidden] and use dim 1.
void reduceScatterSum(Tensor &out, const Tensor &in, int dim, const Group &g);
/// Splits `in` into g.size() blocks along `splitDim`, sends block j to
/// member j, and concatenates the received blocks along `concatDim` into
/// `out` (expert dispatch, Ulysses-style sequence/head exchange).
void allToAll(Tensor &out, const Tensor &in, int splitDim, int concatDim,
              const Group &g);
/// Copies the tensor of group rank `root` to every member.
void broadcast(Tensor &t, int root, const Group &g);
/// Waits until every member reaches it (and, on CUDA, its streams drained).
void barrier(const Group &g);

/// A collective started without waiting (communication overlapping
/// compute). wait() makes the result visible to later kernels (on CUDA the
/// compute stream waits for an event; the host does not block).
/// Move-only: a copy would run then()'s work twice. One destroyed (or
/// assigned over) before wait() is waited for there, so no result is lost.
class Pending {
public:
  Pending() = default;
  Pending(Pending &&other) noexcept;
  Pending &operator=(Pending &&other) noexcept;
  Pending(const Pending &) = delete;
  Pending &operator=(const Pending &) = delete;
  ~Pending();
  /// Makes the result visible, then runs what then() added.
  void wait();
  /// (then_ is only ever held beside an unfinished impl_.)
  bool done() const { return impl_ == nullptr; }
  /// Adds `f` to run once the collective has finished: in wait(), or at
  /// once when it already has (the CPU backend, a group of one).
  [[nodiscard]] Pending then(std::function<void()> f) &&;
  struct Impl;
  explicit Pending(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

private:
  /// Runs and clears then_ (after the backend's part of wait()).
  void finish();
  /// wait() unless done, reporting instead of throwing (destructor).
  void settle() noexcept;
  std::shared_ptr<Impl> impl_;
  std::function<void()> then_;
};
/// Asynchronous in-place sum; `t` must not be touched until wait().
/// The CPU backend completes it before returning, or with
/// TRIDENT_RT_DEFER_ASYNC=1 in the environment writes the result into `t`
/// only in wait(), so that a program reading `t` too early fails its tests
/// on the CPU as it would on a GPU, and refuses in wait() a write to `t`
/// made before it (not checked for a sum issued while an earlier one on
/// `t` is still held back: that one's wait() writes `t`).
[[nodiscard]] Pending allReduceSumAsync(Tensor &t, const Group &g);
/// Asynchronous reduceScatterSum; `out` must not be touched, nor `in`
/// written, until wait(): NCCL may read `in` until then. The CPU backend
/// under TRIDENT_RT_DEFER_ASYNC=1 holds the result back likewise and
/// fails wait() when `in` changed.
[[nodiscard]] Pending reduceScatterSumAsync(Tensor &out, const Tensor &in,
                                            int dim, const Group &g);
/// Asynchronous allGather along the outermost dimension (`out` holds the
/// members' `in` one after another); `out` must not be touched, nor `in`
/// written, until wait() (checked on the CPU likewise). `in` may be this
/// member's block of `out` (NCCL's in-place form); any other overlap is
/// copied first.
[[nodiscard]] Pending allGatherAsync(Tensor &out, const Tensor &in,
                                     const Group &g);

/// Point-to-point between pipeline stages, with NCCL's rules on both
/// backends (docs/runtime.md, "Pipeline point-to-point"). sendAsync queues
/// a copy of `t` and returns. exchangeStep issues the queued sends and the
/// receives of `incoming` as one group and holds what arrives; recv then
/// takes the tensor with its peer and tag (its shape must match `t`'s).
/// A recv of something no exchangeStep brought issues the queued sends and
/// that receive as one group. A collective over a group that includes the
/// receiver of a queued send first issues the queued sends as a group of
/// their own; other collectives leave them queued. A group ends only when
/// each send met its receive and each receive has its data (the host never
/// blocks on CUDA). A rank pair's messages must be received in the order
/// they were sent: the tag only checks that (a mismatch is an error), it
/// never reorders. Call waitAllSends() once at the end of each step. `peer`
/// is a group rank of `g` (normally the pp group).
void sendAsync(const Tensor &t, int peer, int tag, const Group &g);
void recv(Tensor &t, int peer, int tag, const Group &g);
/// A tensor an exchangeStep receives.
struct Incoming {
  int peer = 0, tag = 0;
  std::vector<int64_t> shape;
};
/// One communication step of a pipeline schedule: the queued sends and
/// the receives the next step's actions need, together (Megatron-LM's
/// send_forward_recv_backward and send_forward_backward_recv_forward_backward;
/// the Schedule library's transferSteps says which actions share a step).
/// Does nothing when there is nothing to send or receive.
void exchangeStep(const std::vector<Incoming> &incoming, const Group &g);
/// Issues the queued sends (their group may still run on CUDA); an error
/// if a received tensor was never taken by recv.
void waitAllSends();
/// Whether sendAsync has queued sends that no exchange has issued yet.
bool sendsQueued();

//===----------------------------------------------------------------------===//
// Optimizers and ZeRO
//===----------------------------------------------------------------------===//

/// Adam hyper-parameters (Kingma & Ba 2015, with bias correction;
/// weightDecay is decoupled as in AdamW, Loshchilov & Hutter 2019).
struct AdamConfig {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  float weightDecay = 0.0f;
};

/// param -= lr * grad (elementwise; any view).
void sgdUpdate(Tensor &param, const Tensor &grad, float lr);
/// One Adam step (step counts from 1) on matching param/grad/m/v views:
///   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
///   p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps) + lr*wd*p
void adamUpdate(Tensor &param, const Tensor &grad, Tensor &m, Tensor &v,
                const AdamConfig &cfg, int64_t step);
/// One parameter's tensors for adamUpdateMany (views of the same storage
/// as the tensors they were copied from).
struct AdamTensors {
  Tensor param, grad, m, v;
};
/// One Adam step on many parameters at once: each entry updated exactly
/// as adamUpdate updates it (the same arithmetic, the same bits), each
/// entry checked as adamUpdate checks it. The CUDA backend runs them all
/// in one launch (a multi-tensor kernel, as Megatron-LM's fused Adam from
/// apex: each block takes a chunk of one tensor) instead of one launch a
/// parameter; the CPU backend updates them in turn.
void adamUpdateMany(const std::vector<AdamTensors> &list, const AdamConfig &cfg,
                    int64_t step);

/// The flat element range [begin, end) of a tensor of `numel` elements that
/// dp rank `dpRank` of `dpSize` owns under ZeRO: the tensor is padded to a
/// multiple of dpSize, chunk = padded / dpSize, rank r owns
/// [r*chunk, (r+1)*chunk) clipped to numel. chunk is also returned.
struct ZeroRange {
  int64_t begin = 0, end = 0, chunk = 0;
};
ZeroRange zeroRange(int64_t numel, int dpSize, int dpRank);

/// ZeRO-1 step for one parameter (or a flat buffer of many): `grad` is the
/// full local gradient (not yet reduced over dp). Reduce-scatters the grad
/// SUM over `dp`, applies Adam to this rank's slice with the sharded states
/// `m`, `v` (each [zeroRange(...).chunk] elements), and all-gathers the
/// updated slices so `param` is complete and equal on every dp rank.
void zero1AdamStep(Tensor &param, Tensor &grad, Tensor &m, Tensor &v,
                   const AdamConfig &cfg, int64_t step, const Group &dp);
/// ZeRO-1 with SGD (no state).
void zero1SgdStep(Tensor &param, Tensor &grad, float lr, const Group &dp);

/// ZeRO-2 (gradients sharded too): reduce-scatters the SUM of the members'
/// full gradients `fullGrad` (this micro-batch's contributions to one
/// parameter) and adds this rank's part to `sliceGrad` ([zeroRange(...)
/// .chunk] elements, padding excluded). The caller then releases fullGrad,
/// so a full gradient lives only until its parameter's last contribution in
/// one backward (DeepSpeed's stage 2 with gradient accumulation).
void zero2AccumulateGrad(Tensor &sliceGrad, const Tensor &fullGrad,
                         const Group &dp);
/// zero2AccumulateGrad without waiting: the reduce-scatter runs on the
/// communication stream (CUDA) and the addition into `sliceGrad` happens in
/// wait(), which must come before `sliceGrad` is read. The caller may
/// release `fullGrad` at once; until wait() a full-size copy of it stays
/// alive. The CPU backend completes it before returning (in wait() under
/// TRIDENT_RT_DEFER_ASYNC=1). `fullGrad` is read on the compute stream
/// when called: an asynchronous sum into it (allReduceSumAsync over tp)
/// must be waited for first, unlike reduceScatterSumAsync's input, which
/// is read on the communication stream after the sums issued before it.
[[nodiscard]] Pending zero2AccumulateGradAsync(Tensor &sliceGrad,
                                               const Tensor &fullGrad,
                                               const Group &dp);
/// ZeRO-2 step: Adam on this rank's slice of `param` with the reduced slice
/// gradient `sliceGrad` and sharded states, then all-gathers the updated
/// slices so `param` is complete on every member.
void zero2AdamStep(Tensor &param, const Tensor &sliceGrad, Tensor &m,
                   Tensor &v, const AdamConfig &cfg, int64_t step,
                   const Group &dp);
/// ZeRO-2 with SGD.
void zero2SgdStep(Tensor &param, const Tensor &sliceGrad, float lr,
                  const Group &dp);

/// ZeRO-1/2 steps whose parameters' all-gather overlaps what follows
/// (Megatron-LM's --overlap-param-gather: the emitted programs start the
/// gathers a few parameters ahead of the next forward and wait for each
/// parameter at its first use). The parameter is held padded: `padded` is
/// a flat [chunk * dp] tensor (chunk from zeroRange of the parameter's
/// numel) whose first numel elements are the parameter, zeros after (its
/// storage: the parameter is padded.view(0, shape)). *UpdateChunk updates
/// this rank's chunk of `padded` in place (the padding stays zero: its
/// gradient and states are zero); zeroGatherChunksAsync then gathers the
/// members' chunks in place, and `padded` must not be read until wait()
/// (the CPU backend completes it before returning, or in wait() under
/// TRIDENT_RT_DEFER_ASYNC=1).
void zero2AdamUpdateChunk(Tensor &padded, const Tensor &sliceGrad, Tensor &m,
                          Tensor &v, const AdamConfig &cfg, int64_t step,
                          const Group &dp);
void zero2SgdUpdateChunk(Tensor &padded, const Tensor &sliceGrad, float lr,
                         const Group &dp);
/// The same from the full gradient `grad` (numel elements, not yet summed
/// over dp): reduce-scatters it first (ZeRO-1 without startSliceSum).
void zero1AdamUpdateChunk(Tensor &padded, const Tensor &grad, Tensor &m,
                          Tensor &v, const AdamConfig &cfg, int64_t step,
                          const Group &dp);
void zero1SgdUpdateChunk(Tensor &padded, const Tensor &grad, float lr,
                         const Group &dp);
[[nodiscard]] Pending zeroGatherChunksAsync(Tensor &padded, const Group &dp);

/// ZeRO-3: parameters live as slices of `chunk` elements. Gathers the full
/// parameter (numel = full.numel()) from the members' slices.
void zero3Gather(Tensor &full, const Tensor &slice, const Group &dp);
/// zero3Gather started without waiting: `full` holds the parameter once
/// the Pending is waited for (on CUDA the all-gather runs on the
/// communication stream while compute goes on: the emitted programs
/// gather up to two weight matrices ahead of the one in use).
[[nodiscard]] Pending zero3GatherAsync(Tensor &full, const Tensor &slice,
                                       const Group &dp);
/// Reduce-scatters the SUM of the members' full gradients into this rank's
/// slice gradient (chunk elements, padding excluded from the result).
void zero3ReduceGrad(Tensor &sliceGrad, const Tensor &fullGrad,
                     const Group &dp);
/// Copies this rank's slice out of a full parameter (at initialisation).
void zero3TakeSlice(Tensor &slice, const Tensor &full, const Group &dp);

//===----------------------------------------------------------------------===//
// Step reporting and parameter dumps
//===----------------------------------------------------------------------===//

/// Global mean loss of a step: sums lossSum[0] of the ranks on the last
/// pipeline stage with tp (and ep) coordinate 0 over the whole world and
/// divides by globalTokens. Collective over the world; every rank gets the
/// value.
double globalMeanLoss(const Tensor &lossSum, double globalTokens,
                      const Grid &grid);

/// Prints, on world rank 0 only, exactly one line to stdout:
///   "step <N> loss <L> time <T>\n"
/// with L printed as %.9g and T (seconds, the maximum over all ranks of
/// `seconds`) as %.6f, then flushes. Collective over the world.
void reportStep(int64_t step, double loss, double seconds, const Grid &grid);

/// Bytes of tensor storage this rank holds now, and the most it held at
/// once since start-up or the last resetPeakTensorBytes() (every Tensor
/// allocation counts once; views share their storage).
int64_t liveTensorBytes();
int64_t peakTensorBytes();
void resetPeakTensorBytes();
/// Bytes this rank has copied between host memory and tensor storage since
/// start-up: Tensor::toHost and fromHost, and the copies the runtime makes
/// itself (on CUDA, device <-> host; on the CPU backend, the same copies,
/// memory to memory). Shows what a call stages through the host.
int64_t hostCopyBytes();
/// On world rank 0:
///   "memory: peak tensor bytes <max> (max over ranks), <min> (min)\n"
/// Collective over the world.
void reportMemory(const Grid &grid);

/// Parses a line written by reportStep; false if it is not one.
bool parseStepLine(const std::string &line, int64_t &step, double &loss,
                   double &seconds);

/// Collects shards for a dump. Each rank adds its shards with their global
/// offsets, then write() stores "<dir>/rank<R>.params" (text, atomically):
///   trident-params 1
///   tensor <name> global <d0,d1,..> offset <o0,..> shape <s0,..>
///   <numel hex floats (%a), one per line>
/// Replicated shards (dp copies) may be added by several ranks; the compare
/// tool checks that copies agree.
class ParamDump {
public:
  /// Records a copy of `shard` (synchronises on CUDA).
  /// With `blocks`, each block's piece is recorded as a shard of its own.
  void add(const std::string &name, const std::vector<int64_t> &globalShape,
           const std::vector<int64_t> &shardOffset, const Tensor &shard,
           ShardBlocks blocks = {});
  /// Creates `dir` if needed and writes this rank's file.
  void write(const std::string &dir) const;

private:
  struct Entry {
    std::string name;
    std::vector<int64_t> global, offset, shape;
    std::vector<float> values;
  };
  std::vector<Entry> entries_;
};

//===----------------------------------------------------------------------===//
// Checkpoints that outlive a plan (docs/elastic.md, "Checkpoints")
//===----------------------------------------------------------------------===//

/// Where a tensor's elements sit in a logical (unsharded) parameter: the
/// shard at `offset` of shape `local` (with `blocks`: its piece of each
/// block, as initParam), flattened row-major, elements from `flatBegin`
/// on (a ZeRO chunk starts inside it). Elements past `local`'s end (the
/// padding of the last chunk) and rows past `global` (vocabulary padding)
/// belong to no logical element.
struct Slice {
  std::vector<int64_t> global, offset, local;
  ShardBlocks blocks;
  int64_t flatBegin = 0;
};

/// One rank's part of a checkpoint: copies of its tensors with their
/// slices. write() is collective over the world: every rank writes its own
/// file (nothing is gathered), and the checkpoint appears atomically.
class CheckpointWriter {
public:
  /// Records a copy of `data` (synchronises on CUDA) as `name`'s elements
  /// flatBegin .. flatBegin + numel of `slice`.
  void add(const std::string &name, const Slice &slice, const Tensor &data);
  /// Writes DIR/step-<step>: each rank's rank<R>.ckpt (every tensor with a
  /// checksum), then, after all ranks synced theirs, world rank 0's
  /// `manifest` (the step, the world size and `meta`, key-value lines);
  /// the files go to DIR/.step-<step>.partial first, which rank 0 renames
  /// when complete: a crash leaves the checkpoints before intact.
  void
  write(const std::string &dir, int64_t step,
        const std::vector<std::pair<std::string, std::string>> &meta) const;

private:
  struct Entry {
    std::string name;
    Slice slice;
    std::vector<float> values;
  };
  std::vector<Entry> entries_;
};

/// The newest complete checkpoint under a directory, whichever plan wrote
/// it: every rank's file indexed (headers only) on opening; read() then
/// assembles the elements a slice needs from the files holding them.
class CheckpointReader {
public:
  /// Throws naming `dir` when it holds no complete checkpoint, and naming
  /// the file and line of a malformed index.
  explicit CheckpointReader(const std::string &dir);
  int64_t step() const { return step_; }
  /// The checkpoint's directory (DIR/step-K).
  const std::string &path() const { return path_; }
  /// A `meta` value of the writer ("" when absent).
  std::string meta(const std::string &key) const;
  /// Fills `out` with `name`'s elements flatBegin .. flatBegin + numel of
  /// `slice` (zero where they belong to no logical element). Throws naming
  /// the file and the slice of a truncated or corrupted tensor (checksum),
  /// and the element no file holds; nothing is zero-filled silently.
  void read(const std::string &name, const Slice &slice, Tensor &out) const;

private:
  struct Entry {
    std::string file;
    long offset = 0; ///< of the values in the file
    int64_t count = 0;
    uint64_t checksum = 0;
    Slice slice;
    int line = 0; ///< of the header, for messages
  };
  std::string path_;
  int64_t step_ = 0;
  std::vector<std::pair<std::string, std::string>> meta_;
  std::vector<std::pair<std::string, Entry>> entries_;
};

} // namespace trident::rt

#endif // TRIDENT_RUNTIME_RUNTIME_H
