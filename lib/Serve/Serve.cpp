//===- Serve.cpp - Inference cost model and serving-plan search -----------===//
//
// A step of a serving engine runs every layer once over the tokens of the
// step: one new token of each running (decoding) sequence, plus a chunk of
// prompt tokens (chunked prefill, Agrawal et al. 2024, "Taming
// Throughput-Latency Tradeoff in LLM Inference with Sarathi-Serve"). Its
// time is priced with the training cost model's primitives: the roofline
// of each GEMM (weights are read once per step, so a small batch is bound
// by HBM bandwidth), the attention over the cached keys (reading the K/V
// cache), the elementwise traffic, the tensor-parallel all-reduces and the
// pipeline hops. Continuous batching (Yu et al. 2022, "Orca") is solved as
// a fixed point: by Little's law the running batch is the request rate
// times the time a request decodes. The model and its limits:
// docs/serving.md.
//
//===----------------------------------------------------------------------===//

#include "trident/Serve/Serve.h"

#include "trident/Cost/Collectives.h"
#include "trident/Cost/Evaluate.h"
#include "trident/Cost/Roofline.h"
#include "trident/Support/Text.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

namespace trident::serve {

namespace {

using json = nlohmann::ordered_json;

// The engines' defaults (pinned sources: docs/serving.md, Launch settings).
constexpr std::array<EngineTraits, 3> kEngines = {{
    // vLLM (vllm/engine/arg_utils.py, EngineArgs._set_default_args, and
    // vllm/config/cache.py): --gpu-memory-utilization 0.9 of the whole
    // GPU (0.92 in newer versions), 16-token blocks; for the OpenAI server
    // on GPUs of 70 GB or more other than the A100, 8192 batched tokens and
    // 1024 sequences per step (256 and 2048 elsewhere). The launch command
    // writes both, so the defaults only bound the search.
    {Engine::Vllm, "vllm", 0.9, 16, 8192, 1024},
    // SGLang (python/sglang/srt/server_args.py): --mem-fraction-static is
    // chosen at start-up from the GPU memory and tp; 0.88 is our
    // assumption for 80 GB GPUs. One-token pages; --chunked-prefill-size
    // 8192 on large GPUs.
    {Engine::Sglang, "sglang", 0.88, 1, 8192, 1024},
    // TensorRT-LLM (tensorrt_llm/commands/serve.py, llmapi/llm_args.py):
    // --kv_cache_free_gpu_memory_fraction 0.9 of the memory left after the
    // weights, 32-token blocks, --max_num_tokens 8192, --max_batch_size
    // 2048.
    {Engine::Trtllm, "trtllm", 0.9, 32, 8192, 2048},
}};

/// The engine fraction of TensorRT-LLM applies to what the weights and
/// the workspace leave free, the others' to the whole GPU.
bool fractionOfFree(Engine e) { return e == Engine::Trtllm; }

/// The LLM API options file the TensorRT-LLM command names for an fp8
/// cache or data-parallel attention (launchNotes gives its content).
constexpr const char *kTrtllmOptionsFile = "extra-llm-api-options.yaml";

/// z of the standard normal's 90th percentile.
constexpr double kZ90 = 1.2815515655446004;

/// Host time per kernel inside a CUDA graph replay: "about 1 us or less
/// per kernel inside a graph" (shared/hardware/README.md, section 2.3).
constexpr double kGraphKernelSeconds = 1e-6;

/// Candidate prefill chunks (token budgets of a step); the engine's
/// default is always among them.
constexpr std::array<int64_t, 4> kChunks = {2048, 4096, 8192, 16384};

/// Experts a step of `tokens` tokens touches, on average: each token picks
/// k of E, so E (1 - (1 - k/E)^T) (uniform routing), at least one.
double expertsTouched(const LayerCost &L, double tokens) {
  double E = double(L.numExperts), k = double(L.topK);
  return std::max(1.0, E * (1 - std::pow(1 - k / E, tokens)));
}

/// One replica's layout and the step-time model on it (ReplicaShape's
/// fields: with dp > 1, tp is each attention rank's).
struct Shape {
  int64_t tp = 1, pp = 1, ep = 1, dp = 1;
  int64_t etp() const { return ep > 1 ? 1 : tp; }
};

/// Which layers (profile groups and counts) each pipeline stage holds.
struct StageLayers {
  std::vector<std::pair<int32_t, int64_t>> groups; ///< group, count
};

std::vector<StageLayers> splitStages(const LayerProfile &p, int64_t pp) {
  std::vector<StageLayers> st(static_cast<size_t>(pp));
  int64_t blocks = 0;
  for (const LayerGroup &g : p.groups)
    if (g.cost.kind == LayerKind::Block)
      blocks += g.count;
  // Blocks evenly, the first stages taking the remainder (vLLM's default
  // partition, get_pp_indices); the embedding on the first stage, the
  // head on the last, anything else with the block before it.
  std::vector<int64_t> firstBlock(static_cast<size_t>(pp) + 1, 0);
  for (int64_t s = 0; s < pp; ++s)
    firstBlock[size_t(s) + 1] =
        firstBlock[size_t(s)] + blocks / pp + (s < blocks % pp ? 1 : 0);
  auto add = [&](size_t s, int32_t g, int64_t n) {
    auto &v = st[s].groups;
    if (!v.empty() && v.back().first == g)
      v.back().second += n;
    else
      v.push_back({g, n});
  };
  int64_t seen = 0;
  size_t stage = 0;
  for (size_t i = 0; i < p.groups.size(); ++i) {
    const LayerGroup &g = p.groups[i];
    if (g.cost.kind == LayerKind::Block) {
      for (int64_t k = 0; k < g.count; ++k, ++seen) {
        while (stage + 1 < size_t(pp) && seen >= firstBlock[stage + 1])
          ++stage;
        add(stage, int32_t(i), 1);
      }
    } else if (g.cost.kind == LayerKind::Head) {
      add(size_t(pp - 1), int32_t(i), g.count);
    } else if (g.cost.kind == LayerKind::Embedding) {
      add(0, int32_t(i), g.count);
    } else {
      add(stage, int32_t(i), g.count);
    }
  }
  return st;
}

/// The work of one step on one GPU.
struct StepLoad {
  double decodeSeqs = 0;      ///< sequences generating a token
  double decodeContext = 0;   ///< keys each of them attends to (mean)
  double prefillTokens = 0;   ///< prompt tokens in the step
  double prefillContext = 0;  ///< keys a prompt token attends to (mean)
  double prefillRequests = 0; ///< requests whose prompt ends in the step
};

class StepModel {
public:
  StepModel(const LayerProfile &p, const NodeGroup &hw, const Shape &s,
            const ServeOptions &o)
      : p_(p), hw_(hw), s_(s), o_(o), stages_(splitStages(p, s.pp)) {
    actScale_ = 2.0 / double(dtypeBytes(p.dtype));
    kvScale_ = double(dtypeBytes(o.kvPrecision)) / double(dtypeBytes(p.dtype));
  }

  /// Seconds of one layer of `L` on one GPU for the step `w`.
  double layerSeconds(const LayerCost &L, const StepLoad &w) const {
    const GpuSpec &gpu = hw_.gpu;
    const double seq = double(std::max<int64_t>(1, p_.seqLen));
    const double tp = double(s_.tp), dp = double(s_.dp);
    double tokens = w.decodeSeqs + w.prefillTokens;
    // The head computes logits for the last token of a prompt only.
    if (L.kind == LayerKind::Head)
      tokens = w.decodeSeqs + w.prefillRequests;
    if (tokens <= 0)
      return 0;
    // With data-parallel attention a GPU runs everything but the experts
    // for its rank's share of the step; its experts take the routed rows
    // of the whole replica.
    const double rankTokens = tokens / dp;
    double gpuSeconds = 0;
    int64_t kernels = 0;
    for (const GemmCost &g : L.gemms) {
      if (g.attentionCore)
        continue;
      DType t = gemmDtype(g, o_.precision);
      double M = (g.expert ? tokens : rankTokens) * g.rowsPerSample / seq,
             N = double(g.n), K = double(g.k), B = double(g.batch);
      splitGemm(g.split, g.expert ? double(s_.etp()) : tp, N, K, B);
      if (g.expert && L.numExperts > 0 && L.topK > 0) {
        // The routed rows go to the experts the step touches, each read
        // once; this GPU holds 1/ep of them.
        double touched = expertsTouched(L, tokens);
        double local = touched / double(s_.ep);
        gpuSeconds += gemmTime(gpu, M / touched, N, K, local * B, t).seconds;
      } else {
        gpuSeconds += gemmTime(gpu, M, N, K, B, t).seconds;
      }
      ++kernels;
    }
    // Attention over the cache: decode reads each cached key and value
    // once per sequence; a prompt chunk is compute-bound (fused kernel).
    if (L.attnFlopsPerKey > 0) {
      double window = double(L.attentionWindow);
      auto keys = [&](double c) {
        return window > 0 ? std::min(window, c) : c;
      };
      double heads = double(std::max<int64_t>(1, L.kvCacheHeads));
      double kvPerTok = L.kvCacheBytesPerToken * kvScale_ / std::min(tp, heads);
      double peak = gpu.peakFlopsPerS(DType::BF16) * gpu.attentionEfficiency;
      const double seqs = w.decodeSeqs / dp, prompt = w.prefillTokens / dp;
      if (seqs > 0) {
        double c = keys(w.decodeContext);
        double flops = seqs * c * L.decodeFlopsPerKey / tp;
        double bytes = seqs * c * kvPerTok;
        gpuSeconds += std::max(flops / peak, memorySeconds(gpu, bytes));
        ++kernels;
      }
      if (prompt > 0) {
        double c = keys(w.prefillContext);
        double flops = prompt * c * L.attnFlopsPerKey / tp;
        // Writing the chunk's keys and values into the cache.
        gpuSeconds += flops / (peak * flashLengthEfficiency(c)) +
                      memorySeconds(gpu, prompt * kvPerTok);
        ++kernels;
      }
    }
    // Elementwise traffic (norms, activations, residuals, rotary).
    double ew = (std::max(0.0, L.fwdBytesTpSharded - L.attnCoreBytes) / tp +
                 L.fwdBytesReplicated) *
                rankTokens / seq * actScale_;
    gpuSeconds += memorySeconds(gpu, ew);
    kernels += std::max<int64_t>(0, L.numKernels - kernels);
    double seconds = o_.cudaGraphs
                         ? gpuSeconds + double(kernels) * kGraphKernelSeconds
                         : launchBound(gpu, gpuSeconds, double(kernels));
    // Tensor parallel all-reduces of the layer's outputs (and of the
    // experts' partial sums, whether experts are split by TP or by EP;
    // under data-parallel attention the experts answer by all-to-all).
    const bool moe = L.numExperts > 0;
    if (s_.tp > 1) {
      CommGroupShape sh = groupShape(hw_, s_.tp, 1);
      int64_t n = L.tpCollectivesFwd + (moe && s_.dp == 1 ? 1 : 0);
      double bytes = L.tpCollectiveBytes > 0
                         ? L.tpCollectiveBytes / seq * actScale_
                         : double(p_.hidden) * 2;
      if (n > 0)
        seconds += double(n) * collectiveSeconds(hw_, CollectiveOp::AllReduce,
                                                 rankTokens * bytes, sh);
    }
    if (moe && s_.dp > 1 && L.topK > 0) {
      // Dispatch and combine: each GPU sends its rank's tokens (split over
      // the rank's tp GPUs) to their top-k experts' GPUs, and takes the
      // results back, in 16 bits, as DeepEP does for SGLang's and
      // TensorRT-LLM's wide expert parallelism: one copy per other node
      // holding a chosen expert, forwarded over NVLink there (the training
      // model's flex dispatcher, flexDispatchSeconds).
      double tokenBytes = rankTokens / tp * double(p_.hidden) * 2;
      CommGroupShape sh = groupShape(hw_, s_.ep, 1);
      seconds +=
          2 * flexDispatchSeconds(hw_, tokenBytes, L.numExperts, L.topK, sh);
    }
    return seconds;
  }

  /// Seconds for a token to pass every stage: one decode step of a
  /// replica. With pp stages the engine keeps pp batches in flight, each
  /// of 1/pp of the load, and a token advances one stage per cycle.
  double stepSeconds(const StepLoad &w) const {
    StepLoad mb = w;
    double ppd = double(s_.pp);
    mb.decodeSeqs /= ppd;
    mb.prefillTokens /= ppd;
    mb.prefillRequests /= ppd;
    double slowest = 0;
    for (const StageLayers &st : stages_) {
      double t = 0;
      for (auto [g, count] : st.groups)
        t += double(count) * layerSeconds(p_.groups[size_t(g)].cost, mb);
      slowest = std::max(slowest, t);
    }
    if (s_.pp == 1)
      return slowest;
    double hop = p2pSeconds(
        hw_, (mb.decodeSeqs + mb.prefillTokens) * double(p_.hidden) * 2,
        s_.tp * s_.pp <= hw_.gpusPerNode);
    return ppd * (slowest + hop);
  }

  /// Bytes of weights on the busiest GPU.
  double weightBytesPerGpu() const {
    double wb = double(dtypeBytes(o_.precision)), most = 0;
    const double tp = double(s_.tp);
    for (const StageLayers &st : stages_) {
      double b = 0;
      for (auto [g, count] : st.groups) {
        const LayerCost &L = p_.groups[size_t(g)].cost;
        double perLayer =
            double(L.paramsTpSharded) / tp * wb +
            double(L.paramsVocab + L.tiedParams) / tp * 2 +
            double(L.paramsReplicated) * 2 +
            double(L.paramsExpert) / double(s_.ep * s_.etp()) * wb;
        b += double(count) * perLayer;
      }
      most = std::max(most, b);
    }
    return most;
  }

  /// Cache bytes per token on the busiest GPU, and the bytes of one
  /// sequence of `len` tokens (sliding-window layers keep at most their
  /// window), in pages of `page` tokens.
  std::pair<double, double> kvBytesPerGpu(double len, double page) const {
    double perTok = 0, perSeq = 0;
    const double tp = double(s_.tp);
    double pages = std::ceil(len / page) * page;
    for (const StageLayers &st : stages_) {
      double t = 0, q = 0;
      for (auto [g, count] : st.groups) {
        const LayerCost &L = p_.groups[size_t(g)].cost;
        if (L.kvCacheBytesPerToken <= 0)
          continue;
        double heads = double(std::max<int64_t>(1, L.kvCacheHeads));
        double b = L.kvCacheBytesPerToken * kvScale_ / std::min(tp, heads);
        double keep =
            L.attentionWindow > 0
                ? std::min(pages,
                           std::ceil(double(L.attentionWindow) / page) * page)
                : pages;
        t += double(count) * b;
        q += double(count) * b * keep;
      }
      if (q > perSeq) {
        perSeq = q;
        perTok = t;
      }
    }
    return {perTok, perSeq};
  }

  /// Live activations of a step of `tokens` tokens on one GPU: one
  /// layer's intermediates (what training saves for the backward of a
  /// layer bounds them) and the logits of `seqs` sequences in fp32.
  double workspaceBytes(double tokens, double seqs) const {
    const double seq = double(std::max<int64_t>(1, p_.seqLen));
    tokens /= double(s_.dp); // a data-parallel rank's share
    seqs /= double(s_.dp);
    double most = 0;
    for (const LayerGroup &g : p_.groups)
      most = std::max(
          most, (g.cost.actTpSharded / double(s_.tp) + g.cost.actReplicated) /
                    seq * actScale_);
    return tokens * most + seqs * double(p_.vocabSize) / double(s_.tp) * 4;
  }

  /// The HBM floor of a decode step of `seqs` sequences at `context`
  /// tokens: what the step must read on the busiest GPU (the GEMM weights,
  /// of the experts the step touches, and each sequence's cache), once,
  /// at the peak bandwidth.
  double decodeFloorSeconds(double seqs, double context) const {
    const double tp = double(s_.tp), wb = double(dtypeBytes(o_.precision));
    const double perSeq = kvBytesPerGpu(context, 1).second;
    double most = 0;
    for (const StageLayers &st : stages_) {
      double b = 0;
      for (auto [g, count] : st.groups) {
        const LayerCost &L = p_.groups[size_t(g)].cost;
        if (L.kind == LayerKind::Embedding)
          continue; // a lookup reads rows, not the table
        double experts = 0;
        if (L.numExperts > 0 && L.topK > 0)
          experts = double(L.paramsExpert) * expertsTouched(L, seqs) /
                    double(L.numExperts) / double(s_.ep * s_.etp()) * wb;
        b += double(count) *
             (double(L.paramsTpSharded) / tp * wb +
              double(L.paramsVocab + L.tiedParams) / tp * 2 + experts);
      }
      most = std::max(most, b);
    }
    return (most + seqs / double(s_.dp) * perSeq) /
           hw_.gpu.hbmBandwidthBytesPerS;
  }

  const Shape &shape() const { return s_; }
  /// Whether the model has routed experts.
  bool moe() const {
    return std::any_of(
        p_.groups.begin(), p_.groups.end(),
        [](const LayerGroup &g) { return g.cost.numExperts > 0; });
  }

private:
  const LayerProfile &p_;
  const NodeGroup &hw_;
  Shape s_;
  const ServeOptions &o_;
  std::vector<StageLayers> stages_;
  double actScale_ = 1, kvScale_ = 1;
};

/// A replica's memory and the batch it can hold.
struct Capacity {
  double weights = 0, workspace = 0, reserve = 0, kvPool = 0;
  double kvPerTokenPerGpu = 0, kvPerSeqPerGpu = 0;
  double tokens = 0;     ///< cache capacity of a replica, tokens
  int64_t sequences = 0; ///< of input + output tokens each
};

Capacity capacityOf(const StepModel &m, const GpuSpec &gpu,
                    const ServeOptions &o, int64_t chunk, int64_t maxBatch) {
  const EngineTraits &e = engineTraits(o.engine);
  double fraction = o.memoryFraction > 0 ? o.memoryFraction : e.memoryFraction;
  Capacity c;
  c.weights = m.weightBytesPerGpu();
  c.workspace = m.workspaceBytes(double(chunk), double(maxBatch));
  // Driver, CUDA context, NCCL and CUDA-graph memory: the reserve the
  // training memory model documents (EvalOptions::reservedBytes).
  c.reserve = EvalOptions().reservedBytes;
  double fixed = c.weights + c.workspace + c.reserve;
  c.kvPool = fractionOfFree(o.engine) ? fraction * (gpu.hbmBytes - fixed)
                                      : fraction * gpu.hbmBytes - fixed;
  auto [perTok, perSeq] =
      m.kvBytesPerGpu(double(o.inputLen + o.outputLen), double(e.pageTokens));
  c.kvPerTokenPerGpu = perTok;
  c.kvPerSeqPerGpu = perSeq;
  if (c.kvPool > 0 && perTok > 0) {
    // Each data-parallel rank holds the cache of its own sequences.
    const double dp = double(m.shape().dp);
    c.tokens = dp * std::floor(c.kvPool / perTok);
    c.sequences = int64_t(dp * std::floor(c.kvPool / perSeq));
  }
  return c;
}

/// Figures of one pool at a request rate per replica.
struct Loaded {
  bool sustained = false;
  double batch = 0, tpot = 0, tpotP90 = 0, ttft = 0, ttftP90 = 0;
};

/// Continuous batching at `rate` requests/s on one replica: the fixed
/// point of tau = step(B = rate O tau, P = rate I tau) (Little's law),
/// with the prefill as chunks of at most `chunk - B` tokens per step.
/// `prefill` false: a decode pool (prompts arrive prefilled).
Loaded atRate(const StepModel &m, const ServeOptions &o, double rate,
              int64_t chunk, double batchLimit, bool prefill = true) {
  const double I = double(o.inputLen), O = double(o.outputLen);
  auto load = [&](double B, double P) {
    StepLoad w;
    w.decodeSeqs = B;
    w.decodeContext = I + O / 2;
    if (prefill) {
      w.prefillTokens = P;
      w.prefillContext = I / 2;
      w.prefillRequests = P / I;
    }
    return w;
  };
  Loaded r;
  // Each data-parallel rank has its own step budget of `chunk` tokens.
  const double dp = double(m.shape().dp), limit = double(chunk) * dp;
  double tau = m.stepSeconds(load(1, 0));
  for (int it = 0; it < 200; ++it) {
    double B = std::max(1.0, rate * O * tau);
    double P = prefill ? rate * I * tau : 0;
    if (B > batchLimit || B + P > limit || !(tau < 1e4))
      return r; // the queue grows without bound
    double next = m.stepSeconds(load(B, P));
    bool done = std::abs(next - tau) <= 1e-9 * tau;
    tau = next;
    if (done)
      break;
  }
  double B = std::max(1.0, rate * O * tau);
  double P = prefill ? rate * I * tau : 0;
  if (B > batchLimit || B + P > limit)
    return r;
  r.sustained = true;
  r.batch = B;
  r.tpot = tau;
  // p90 over requests: the running batch is Poisson about its mean, and
  // the prompts that arrive during a request's O steps are Poisson too
  // (their prefill is averaged over those steps).
  double b90 = std::min(batchLimit, B + kZ90 * std::sqrt(B));
  double n = rate * tau * O;
  double p90 =
      prefill ? std::min(limit - b90, I * (n + kZ90 * std::sqrt(n)) / O) : 0;
  r.tpotP90 = std::max(tau, m.stepSeconds(load(b90, std::max(0.0, p90))));
  if (prefill) {
    // A prompt waits for the step under way, then goes through in chunks
    // of the budget the running batch leaves; prompts queue for that
    // budget (M/D/1: mean wait rho s / (2 (1 - rho)), exponential tail).
    // (A prompt is one rank's; at saturation every rank prefills one.)
    double budget = std::max(1.0, double(chunk) - B / dp);
    double steps = std::ceil(I / budget);
    double chunkTokens = std::min(I, budget);
    StepLoad w = load(B, chunkTokens * dp);
    w.prefillRequests = chunkTokens * dp / I;
    double service = steps * m.stepSeconds(w);
    double rho = std::min(0.999, P / (budget * dp));
    double wait = rho * service / (2 * (1 - rho));
    r.ttft = tau / 2 + service + wait;
    double theta = rho > 0 ? wait / rho : 0;
    r.ttftP90 = tau + service + (rho > 0.1 ? theta * std::log(10 * rho) : 0);
  }
  return r;
}

/// The highest rate per replica whose figures meet the targets (bisection
/// on the rate; the figures grow with it). 0 when even a trickle fails.
double maxRate(const StepModel &m, const ServeOptions &o, int64_t chunk,
               double batchLimit, bool prefill, Loaded &at) {
  auto meets = [&](const Loaded &l) {
    if (!l.sustained)
      return false;
    if (o.tpotTargetSeconds > 0 && l.tpotP90 > o.tpotTargetSeconds)
      return false;
    if (prefill && o.ttftTargetSeconds > 0 && l.ttftP90 > o.ttftTargetSeconds)
      return false;
    return true;
  };
  double lo = 0, hi = 1;
  // Grow hi until it fails.
  for (int i = 0; i < 60 && meets(atRate(m, o, hi, chunk, batchLimit, prefill));
       ++i) {
    lo = hi;
    hi *= 2;
  }
  // (When even 1 request/s fails, the bisection below searches under it.)
  for (int i = 0; i < 40; ++i) {
    double mid = (lo + hi) / 2;
    if (meets(atRate(m, o, mid, chunk, batchLimit, prefill)))
      lo = mid;
    else
      hi = mid;
  }
  if (lo > 0)
    at = atRate(m, o, lo, chunk, batchLimit, prefill);
  return lo;
}

/// How far a plan is from the targets: the largest ratio of a p90 figure
/// to its target (<= 1 meets them).
double targetRatio(const ServePlan &p, const ServeOptions &o,
                   std::string *what = nullptr) {
  double worst = 0;
  if (o.ttftTargetSeconds > 0) {
    double r = p.ttftP90Seconds / o.ttftTargetSeconds;
    if (r > worst && what)
      *what = fmt::format("TTFT p90 {:.1f} ms against {:.1f} ms",
                          p.ttftP90Seconds * 1e3, o.ttftTargetSeconds * 1e3);
    worst = std::max(worst, r);
  }
  if (o.tpotTargetSeconds > 0) {
    double r = p.tpotP90Seconds / o.tpotTargetSeconds;
    if (r > worst && what)
      *what = fmt::format("TPOT p90 {:.1f} ms against {:.1f} ms",
                          p.tpotP90Seconds * 1e3, o.tpotTargetSeconds * 1e3);
    worst = std::max(worst, r);
  }
  return worst;
}

std::vector<int64_t> powersOfTwoUpTo(int64_t n) {
  std::vector<int64_t> v;
  for (int64_t x = 1; x <= n; x *= 2)
    v.push_back(x);
  return v;
}

/// Replica shapes the model allows on `hw`: tp within a node dividing
/// the heads (and the KV heads, or divisible by them, as vLLM requires),
/// pp up to the blocks, ep = tp for MoE models when the experts divide.
std::vector<Shape> shapesFor(const LayerProfile &p, const NodeGroup &hw,
                             int64_t gpus) {
  std::vector<Shape> out;
  int64_t experts = 0;
  for (const LayerGroup &g : p.groups)
    experts = std::max(experts, g.cost.numExperts);
  for (int64_t tp : powersOfTwoUpTo(std::min(hw.gpusPerNode, gpus))) {
    if (p.numHeads > 0 && p.numHeads % tp != 0)
      continue;
    if (p.numKvHeads > 0 && p.numKvHeads % tp != 0 && tp % p.numKvHeads != 0)
      continue;
    for (int64_t pp : powersOfTwoUpTo(gpus / tp)) {
      if (pp > 1 && (pp > p.numLayers || pp > 16))
        continue;
      out.push_back({tp, pp, 1});
      if (experts > 0 && tp > 1 && experts % tp == 0)
        out.push_back({tp, pp, tp});
    }
  }
  // Data-parallel attention (MoE models): single-GPU attention ranks, the
  // experts over all of them, within a node or across nodes.
  if (experts > 0)
    for (int64_t dp : powersOfTwoUpTo(std::min<int64_t>(gpus, 64)))
      if (dp > 1 && experts % dp == 0)
        out.push_back({1, 1, dp, dp});
  return out;
}

/// A pool's figures: its layout and limits, its memory, its step.
PoolPrediction poolOf(const Capacity &cap, const ReplicaShape &shape,
                      int64_t maxBatch, int64_t chunk, double meanBatch,
                      double stepSeconds) {
  PoolPrediction p;
  p.shape = shape;
  p.maxBatch = maxBatch;
  p.chunkTokens = chunk;
  p.meanBatch = meanBatch;
  p.weightBytesPerGpu = cap.weights;
  p.workspaceBytesPerGpu = cap.workspace;
  p.kvPoolBytesPerGpu = cap.kvPool;
  p.kvCapacityTokens = cap.tokens;
  p.kvCapacitySequences = cap.sequences;
  p.memoryPerGpuBytes =
      cap.weights + cap.workspace + cap.reserve +
      double(maxBatch) / double(shape.dp) * cap.kvPerSeqPerGpu;
  p.stepSeconds = stepSeconds;
  return p;
}

/// Fills the figures of a colocated plan at `rate` per replica.
ServePlan colocatedPlan(const StepModel &m, const Capacity &cap,
                        const ServeOptions &o, const Loaded &l, double rate,
                        int64_t replicas, int64_t chunk, int64_t maxBatch,
                        double kvPerToken) {
  const Shape &s = m.shape();
  ServePlan p;
  p.moe = m.moe();
  p.pool = poolOf(cap, {s.tp, s.pp, s.ep, replicas, s.dp}, maxBatch, chunk,
                  l.batch, l.tpot);
  p.kvBytesPerToken = kvPerToken;
  p.ttftSeconds = l.ttft;
  p.ttftP90Seconds = l.ttftP90;
  p.tpotSeconds = l.tpot;
  p.tpotP90Seconds = l.tpotP90;
  p.requestsPerSecond = rate * double(replicas);
  p.outputTokensPerSecond = p.requestsPerSecond * double(o.outputLen);
  p.gpus = p.pool.shape.gpus();
  p.outputTokensPerSecondPerGpu = p.outputTokensPerSecond / double(p.gpus);
  p.inputTokensPerSecondPerGpu =
      p.requestsPerSecond * double(o.inputLen) / double(p.gpus);
  p.tpotFloorSeconds = m.decodeFloorSeconds(
      l.batch, double(o.inputLen) + double(o.outputLen) / 2);
  return p;
}

void finishTargets(ServePlan &p, const ServeOptions &o) {
  std::string what;
  double r = targetRatio(p, o, &what);
  p.meetsTargets = r <= 1.0 + 1e-12;
  if (!p.meetsTargets)
    p.why = what;
}

/// Order of plans: meeting the targets first; among those that miss, the
/// closest; then output tokens/s per GPU, fewer GPUs, the name.
bool betterPlan(const ServePlan &a, const ServePlan &b, const ServeOptions &o);

/// Batch limits tried: powers of two from 64 to twice the engine's
/// default per data-parallel rank (`ranks` of them), within what the
/// cache holds.
std::vector<int64_t> batchLimits(const EngineTraits &e, int64_t capacity,
                                 int64_t ranks) {
  std::vector<int64_t> v;
  const int64_t most = 2 * e.defaultMaxBatch * ranks;
  for (int64_t b = 64 * ranks; b <= most; b *= 2)
    if (b <= capacity)
      v.push_back(b);
  if (v.empty() || (capacity < most && v.back() < capacity))
    v.push_back(capacity);
  return v;
}

/// GPUs of one replica of `s`.
int64_t replicaGpus(const Shape &s) { return s.tp * s.pp * s.dp; }

/// The plan of one colocated layout, chunk and batch limit: the fewest
/// replicas that carry --rate within the targets, or the highest rate
/// that meets them. Empty when the layout cannot hold the load at all.
std::optional<ServePlan>
colocatedCandidate(const StepModel &m, const Capacity &cap,
                   const ServeOptions &o, int64_t maxReplicas, int64_t chunk,
                   int64_t maxBatch, double kvPerToken) {
  if (o.requestRate > 0) {
    // Bisection on the replicas (more replicas, less load on each); when
    // even all of them miss, all of them, for the closest-target report.
    auto planAt = [&](int64_t r, ServePlan &out) {
      double rate = o.requestRate / double(r);
      Loaded l = atRate(m, o, rate, chunk, double(maxBatch));
      if (!l.sustained)
        return false;
      out = colocatedPlan(m, cap, o, l, rate, r, chunk, maxBatch, kvPerToken);
      finishTargets(out, o);
      return true;
    };
    ServePlan best;
    if (!planAt(maxReplicas, best))
      return std::nullopt;
    if (best.meetsTargets) {
      int64_t lo = 0, hi = maxReplicas; // hi meets, lo does not
      while (hi - lo > 1) {
        int64_t mid = (lo + hi) / 2;
        ServePlan p;
        if (planAt(mid, p) && p.meetsTargets)
          hi = mid;
        else
          lo = mid;
      }
      planAt(hi, best);
    }
    return best;
  }
  Loaded l;
  double rate = maxRate(m, o, chunk, double(maxBatch), true, l);
  if (rate <= 0) {
    // Nothing meets the targets: the lightest load, for the report.
    l = atRate(m, o, 1e-6, chunk, double(maxBatch));
    if (!l.sustained)
      return std::nullopt;
    rate = 1e-6;
  }
  ServePlan p = colocatedPlan(m, cap, o, l, rate, maxReplicas, chunk, maxBatch,
                              kvPerToken);
  finishTargets(p, o);
  return p;
}

/// Colocated search: every layout, and for each the best chunk and batch
/// limit.
void searchColocated(const LayerProfile &profile, const NodeGroup &hw,
                     const ServeOptions &o, double kvPerToken,
                     std::vector<ServePlan> &plans, int64_t &evaluated) {
  const EngineTraits &e = engineTraits(o.engine);
  const int64_t gpus = hw.gpus();
  for (const Shape &s : shapesFor(profile, hw, gpus)) {
    StepModel m(profile, hw, s, o);
    int64_t maxReplicas = gpus / replicaGpus(s);
    std::optional<ServePlan> best;
    for (int64_t chunk : kChunks) {
      Capacity cap =
          capacityOf(m, hw.gpu, o, chunk * s.dp, 2 * e.defaultMaxBatch * s.dp);
      if (cap.sequences < 1)
        continue; // the weights leave no room for one request
      for (int64_t maxBatch : batchLimits(e, cap.sequences, s.dp)) {
        ++evaluated;
        auto p = colocatedCandidate(m, cap, o, maxReplicas, chunk, maxBatch,
                                    kvPerToken);
        if (p && (!best || betterPlan(*p, *best, o)))
          best = std::move(p);
      }
    }
    if (best)
      plans.push_back(std::move(*best));
  }
}

/// Disaggregated search (Zhong et al. 2024, "DistServe"): a prefill pool
/// and a decode pool sized to the same request rate; the cache moves from
/// one to the other over the network (NVLink within one node).
void searchDisaggregated(const LayerProfile &profile, const NodeGroup &hw,
                         const ServeOptions &o, double kvPerToken,
                         std::vector<ServePlan> &plans, int64_t &evaluated) {
  const EngineTraits &e = engineTraits(o.engine);
  const int64_t gpus = hw.gpus();
  if (gpus < 2)
    return;
  const double I = double(o.inputLen);
  std::vector<Shape> shapes = shapesFor(profile, hw, gpus - 1);
  // Pools with data-parallel attention are searched colocated only (the
  // queueing model below serves one prompt at a time per replica).
  shapes.erase(std::remove_if(shapes.begin(), shapes.end(),
                              [](const Shape &s) { return s.dp > 1; }),
               shapes.end());
  for (const Shape &ps : shapes) {
    if (ps.pp != 1)
      continue; // prefill pools are tensor-parallel only
    StepModel pm(profile, hw, ps, o);
    Capacity pcap = capacityOf(pm, hw.gpu, o, o.inputLen, 1);
    if (pcap.sequences < 1)
      continue;
    // One prompt per forward pass, no chunking.
    StepLoad w;
    w.prefillTokens = I;
    w.prefillContext = I / 2;
    w.prefillRequests = 1;
    double service = pm.stepSeconds(w);
    // The cache of one prompt leaves the prefill pool through its GPUs'
    // share of the node's NICs (or over NVLink on one node).
    double bytes = I * kvPerToken;
    double link = hw.nodes > 1 ? hw.nodeNetworkBytesPerS() /
                                     double(hw.gpusPerNode) * double(ps.tp)
                               : hw.intra.bandwidthBytesPerS * double(ps.tp);
    double transfer = link > 0 ? bytes / link : 0;
    for (const Shape &ds : shapes) {
      if (ps.tp + ds.tp * ds.pp > gpus)
        continue;
      StepModel dm(profile, hw, ds, o);
      Capacity dcap =
          capacityOf(dm, hw.gpu, o, e.defaultMaxBatch, e.defaultMaxBatch);
      if (dcap.sequences < 1)
        continue;
      int64_t maxBatch = std::min<int64_t>(dcap.sequences, e.defaultMaxBatch);
      ++evaluated;
      // The prefill pool as M/D/1 queues; the decode pool as continuous
      // batching without prompts.
      auto prefillAt = [&](double rate, double &ttft, double &ttftP90) {
        double rho = rate * service;
        if (rho >= 1)
          return false;
        double wait = rho * service / (2 * (1 - rho));
        ttft = service + wait + transfer;
        double theta = rho > 0 ? wait / rho : 0;
        ttftP90 =
            service + transfer + (rho > 0.1 ? theta * std::log(10 * rho) : 0);
        return true;
      };
      // Highest prefill rate per replica within the TTFT target.
      double pRate = 0;
      {
        double lo = 0, hi = 1 / service;
        for (int i = 0; i < 50; ++i) {
          double mid = (lo + hi) / 2, t, t90;
          bool ok = prefillAt(mid, t, t90) &&
                    (o.ttftTargetSeconds <= 0 || t90 <= o.ttftTargetSeconds);
          (ok ? lo : hi) = mid;
        }
        pRate = lo;
      }
      Loaded dl;
      double dRate = 0;
      if (o.requestRate <= 0) {
        dRate = maxRate(dm, o, e.defaultMaxBatch, double(maxBatch), false, dl);
      }
      int64_t pr = 0, dr = 0;
      if (o.requestRate > 0) {
        // The fewest replicas of each pool for the rate.
        if (pRate <= 0)
          continue;
        pr = int64_t(std::ceil(o.requestRate / pRate - 1e-9));
        for (dr = 1; pr * ps.tp + dr * ds.tp * ds.pp <= gpus; ++dr) {
          dl = atRate(dm, o, o.requestRate / double(dr), e.defaultMaxBatch,
                      double(maxBatch), false);
          if (dl.sustained &&
              (o.tpotTargetSeconds <= 0 || dl.tpotP90 <= o.tpotTargetSeconds))
            break;
        }
        if (pr * ps.tp + dr * ds.tp * ds.pp > gpus || !dl.sustained)
          continue;
      } else {
        if (pRate <= 0 || dRate <= 0)
          continue;
        // Split the GPUs in the ratio of the pools' GPUs per request/s.
        double pw = double(ps.tp) / pRate, dw = double(ds.tp * ds.pp) / dRate;
        double prefShare = pw / (pw + dw);
        pr = std::max<int64_t>(
            1, int64_t(std::floor(double(gpus) * prefShare / double(ps.tp))));
        dr = (gpus - pr * ps.tp) / (ds.tp * ds.pp);
        if (dr < 1) {
          pr = (gpus - ds.tp * ds.pp) / ps.tp;
          dr = 1;
        }
        if (pr < 1)
          continue;
        double rate = std::min(double(pr) * pRate, double(dr) * dRate);
        dl = atRate(dm, o, rate / double(dr), e.defaultMaxBatch,
                    double(maxBatch), false);
        if (!dl.sustained)
          continue;
      }
      double rate = o.requestRate > 0
                        ? o.requestRate
                        : std::min(double(pr) * pRate, double(dr) * dRate);
      ServePlan p = colocatedPlan(dm, dcap, o, dl, rate / double(dr), dr,
                                  e.defaultMaxBatch, maxBatch, kvPerToken);
      p.disaggregated = true;
      p.prefill =
          poolOf(pcap, {ps.tp, 1, ps.ep, pr, ps.dp}, 1, o.inputLen, 1, service);
      double t = 0, t90 = 0;
      prefillAt(rate / double(pr), t, t90);
      p.ttftSeconds = t + dl.tpot / 2;
      p.ttftP90Seconds = t90 + dl.tpot;
      p.requestsPerSecond = rate;
      p.outputTokensPerSecond = rate * double(o.outputLen);
      p.gpus = p.pool.shape.gpus() + p.prefill.shape.gpus();
      p.outputTokensPerSecondPerGpu = p.outputTokensPerSecond / double(p.gpus);
      finishTargets(p, o);
      plans.push_back(p);
    }
  }
}

std::string shapeName(const ReplicaShape &s) {
  std::string n = fmt::format("tp{} pp{}", s.tp, s.pp);
  if (s.dp > 1)
    n += fmt::format(" dp{}", s.dp);
  if (s.ep > 1)
    n += fmt::format(" ep{}", s.ep);
  return n + fmt::format(" x{}", s.replicas);
}

std::string planName(const ServePlan &p) {
  if (!p.disaggregated)
    return shapeName(p.pool.shape);
  return "prefill " + shapeName(p.prefill.shape) + " | decode " +
         shapeName(p.pool.shape);
}

bool betterPlan(const ServePlan &a, const ServePlan &b, const ServeOptions &o) {
  if (a.meetsTargets != b.meetsTargets)
    return a.meetsTargets;
  if (!a.meetsTargets) {
    double ra = targetRatio(a, o), rb = targetRatio(b, o);
    if (ra != rb)
      return ra < rb;
  }
  if (a.outputTokensPerSecondPerGpu != b.outputTokensPerSecondPerGpu)
    return a.outputTokensPerSecondPerGpu > b.outputTokensPerSecondPerGpu;
  if (a.gpus != b.gpus)
    return a.gpus < b.gpus;
  if (a.ttftP90Seconds != b.ttftP90Seconds)
    return a.ttftP90Seconds < b.ttftP90Seconds;
  if (planName(a) != planName(b))
    return planName(a) < planName(b);
  if (a.pool.chunkTokens != b.pool.chunkTokens)
    return a.pool.chunkTokens < b.pool.chunkTokens;
  return a.pool.maxBatch < b.pool.maxBatch;
}

std::string gbText(double bytes) { return fmt::format("{:.1f}", bytes / 1e9); }

} // namespace

const EngineTraits &engineTraits(Engine e) {
  for (const EngineTraits &t : kEngines)
    if (t.engine == e)
      return t;
  return kEngines[0];
}

Result<Engine> parseEngine(std::string_view name) {
  for (const EngineTraits &t : kEngines)
    if (t.name == name)
      return t.engine;
  return Status::error("--engine: unknown engine '" + std::string(name) +
                       "' (expected vllm, sglang or trtllm)");
}

double kvBytesPerToken(const LayerProfile &profile, DType kv) {
  double scale = double(dtypeBytes(kv)) / double(dtypeBytes(profile.dtype));
  double sum = 0;
  for (const LayerGroup &g : profile.groups)
    sum += double(g.count) * g.cost.kvCacheBytesPerToken * scale;
  return sum;
}

Result<ServeResult> searchServePlans(const LayerProfile &profile,
                                     const Cluster &cluster,
                                     const ServeOptions &o) {
  if (o.inputLen <= 0)
    return Status::error(
        "--input-len is required and must be a positive number of tokens");
  if (o.outputLen <= 0)
    return Status::error(
        "--output-len is required and must be a positive number of tokens");
  if (o.ttftTargetSeconds < 0 || o.tpotTargetSeconds < 0 ||
      !std::isfinite(o.ttftTargetSeconds) ||
      !std::isfinite(o.tpotTargetSeconds))
    return Status::error("--ttft-ms and --tpot-ms must be positive");
  if (o.requestRate < 0 || !std::isfinite(o.requestRate))
    return Status::error("--rate must be a positive number of requests/s");
  if (o.precision != DType::BF16 && o.precision != DType::FP8)
    return Status::error("--precision: serving plans use bf16 or fp8");
  if (o.kvPrecision != DType::BF16 && o.kvPrecision != DType::FP8)
    return Status::error("--kv-precision: expected bf16 or fp8");
  if (o.memoryFraction < 0 || o.memoryFraction > 1)
    return Status::error("--gpu-memory-fraction must be in (0, 1]");
  if (o.top < 1)
    return Status::error("--top must be at least 1");
  if (!cluster.homogeneous())
    return Status::error("--cluster: serving plans need one GPU type "
                         "(a cluster with one node group)");
  const NodeGroup &hw = cluster.groups.front();
  if (o.precision == DType::FP8 && hw.gpu.peakFp8FlopsPerS <= 0)
    return Status::error("--precision fp8: " + hw.gpu.name +
                         " has no FP8 tensor cores");
  double kvPerToken = kvBytesPerToken(profile, o.kvPrecision);
  if (kvPerToken <= 0)
    return Status::error("model '" + profile.modelName +
                         "' has no attention with a K/V cache to serve");
  if (profile.seqLen != o.inputLen)
    return Status::error("internal: the profile is built at sequence length " +
                         std::to_string(profile.seqLen) +
                         ", not at --input-len");

  ServeResult r;
  std::vector<ServePlan> plans;
  if (o.disaggregate)
    searchDisaggregated(profile, hw, o, kvPerToken, plans, r.evaluated);
  else
    searchColocated(profile, hw, o, kvPerToken, plans, r.evaluated);
  if (plans.empty()) {
    r.closest = "no layout holds the model's weights and one request's "
                "cache on " +
                std::to_string(hw.gpus()) + " " + hw.gpu.name + " GPUs";
    return r;
  }
  // Meeting the targets first, then output tokens/s per GPU, then fewer
  // GPUs; ties by name, for a deterministic order.
  std::stable_sort(plans.begin(), plans.end(),
                   [&](const ServePlan &a, const ServePlan &b) {
                     return betterPlan(a, b, o);
                   });
  if (!plans.front().meetsTargets) {
    const ServePlan &c = plans.front();
    double ratio = targetRatio(c, o);
    r.closest = fmt::format(
        "closest: {} with {}: it needs {:.2f}x less time there (fp8 "
        "weights or cache, faster GPUs, more GPUs, or a lighter load)",
        planName(c), c.why, ratio);
  }
  if (int64_t(plans.size()) > o.top)
    plans.resize(size_t(o.top));
  r.plans = std::move(plans);
  return r;
}

Result<ServePlan> evaluateServe(const LayerProfile &profile,
                                const Cluster &cluster,
                                const ReplicaShape &shape,
                                const ServeOptions &o, const FixedLoad &load) {
  if (!cluster.homogeneous())
    return Status::error("serving needs a cluster of one node group");
  const NodeGroup &hw = cluster.groups.front();
  if (shape.tp < 1 || shape.pp < 1 || shape.ep < 1 || shape.replicas < 1)
    return Status::error("tp, pp, ep and replicas must be at least 1");
  if (shape.gpus() > hw.gpus())
    return Status::error(fmt::format("{} GPUs asked, the cluster has {}",
                                     shape.gpus(), hw.gpus()));
  if (shape.dp < 1)
    return Status::error("dp must be at least 1");
  if (shape.dp > 1 && shape.ep != shape.tp * shape.dp)
    return Status::error("with data-parallel attention ep must equal dp x "
                         "tp (the experts spread over every GPU of the "
                         "replica)");
  if (shape.dp > 1 && shape.pp > 1)
    return Status::error("data-parallel attention is modelled with pp 1");
  if (shape.dp == 1 && shape.ep > 1 && shape.ep != shape.tp)
    return Status::error("ep must be 1 or equal to tp (experts spread over "
                         "the tensor-parallel group)");
  if (!(load.value >= 0) || !std::isfinite(load.value))
    return Status::error("the load must be a positive number");
  const EngineTraits &e = engineTraits(o.engine);
  Shape s{shape.tp, shape.pp, shape.ep, shape.dp};
  StepModel m(profile, hw, s, o);
  int64_t chunk = e.defaultChunkTokens; // per data-parallel rank
  // SGLang's default --chunked-prefill-size is the replica's, divided
  // over the data-parallel ranks (server_args.py, _handle_data_parallelism).
  if (o.engine == Engine::Sglang && shape.dp > 1)
    chunk = std::max<int64_t>(1, chunk / shape.dp);
  // The engines' limits are per data-parallel rank.
  const int64_t rankBatch = e.defaultMaxBatch * shape.dp;
  Capacity cap = capacityOf(m, hw.gpu, o, chunk * shape.dp, rankBatch);
  if (cap.sequences < 1)
    return Status::error(fmt::format(
        "the weights ({} GB per GPU) leave no room for one request's cache",
        gbText(cap.weights)));
  int64_t maxBatch = std::min<int64_t>(cap.sequences, rankBatch);
  double kvPerToken = kvBytesPerToken(profile, o.kvPrecision);
  const double I = double(o.inputLen), O = double(o.outputLen);
  const double R = double(shape.replicas);
  switch (load.kind) {
  case LoadKind::MaxThroughput: {
    ServeOptions free = o;
    free.ttftTargetSeconds = free.tpotTargetSeconds = 0;
    Loaded l;
    double rate = maxRate(m, free, chunk, double(maxBatch), true, l);
    if (rate <= 0)
      return Status::error("the layout sustains no load");
    return colocatedPlan(m, cap, o, l, rate, shape.replicas, chunk, maxBatch,
                         kvPerToken);
  }
  case LoadKind::RequestRate: {
    Loaded l = atRate(m, o, load.value / R, chunk, double(maxBatch));
    if (!l.sustained)
      return Status::error(
          fmt::format("{:g} requests/s overload the layout", load.value));
    return colocatedPlan(m, cap, o, l, load.value / R, shape.replicas, chunk,
                         maxBatch, kvPerToken);
  }
  case LoadKind::Concurrency:
  case LoadKind::StaticBatch: {
    // B sequences per replica. Static: they start together, prefill as
    // one batch, then decode together. Concurrency (closed loop): each
    // finished request is replaced at once, so the batch stays B and the
    // prompts of B / O requests enter every step.
    double B = std::max(1.0, load.value / R);
    if (B > double(cap.sequences))
      return Status::error(fmt::format(
          "a batch of {:g} needs more cache than the {} sequences it holds", B,
          cap.sequences));
    StepLoad dec;
    dec.decodeSeqs = B;
    dec.decodeContext = I + O / 2;
    Loaded l;
    l.sustained = true;
    l.batch = B;
    double prefillTokens = B * I, ttft = 0;
    if (load.kind == LoadKind::StaticBatch) {
      // The prompts in chunks of the step budget (every rank's).
      const double stepTokens = double(chunk) * double(shape.dp);
      for (double left = prefillTokens; left > 0; left -= stepTokens) {
        StepLoad w;
        w.prefillTokens = std::min(left, stepTokens);
        w.prefillContext = I / 2;
        w.prefillRequests = w.prefillTokens / I;
        ttft += m.stepSeconds(w);
      }
      l.tpot = l.tpotP90 = m.stepSeconds(dec);
      l.ttft = l.ttftP90 = ttft;
      double seconds = ttft + std::max(0.0, O - 1) * l.tpot;
      ServePlan p = colocatedPlan(m, cap, o, l, B / seconds, shape.replicas,
                                  chunk, maxBatch, kvPerToken);
      p.outputTokensPerSecond = B * O * R / seconds;
      p.outputTokensPerSecondPerGpu = p.outputTokensPerSecond / double(p.gpus);
      p.requestsPerSecond = B * R / seconds;
      p.inputTokensPerSecondPerGpu = p.requestsPerSecond * I / double(p.gpus);
      return p;
    }
    dec.prefillTokens = B * I / O;
    dec.prefillContext = I / 2;
    dec.prefillRequests = B / O;
    l.tpot = l.tpotP90 = m.stepSeconds(dec);
    StepLoad w = dec;
    w.prefillTokens = std::min(I, double(chunk));
    w.prefillRequests = w.prefillTokens / I;
    l.ttft = l.ttftP90 = std::ceil(I / double(chunk)) * m.stepSeconds(w);
    double rate = B / (O * l.tpot + l.ttft);
    return colocatedPlan(m, cap, o, l, rate, shape.replicas, chunk, maxBatch,
                         kvPerToken);
  }
  case LoadKind::PrefillOnly: {
    // Back-to-back forward passes of `value` prompt tokens on every GPU
    // (SGLang's and DistServe's prefill pools); each request's cache then
    // leaves for the decode pool, which is not priced here.
    const double perGpu = load.value > 0 ? load.value : double(chunk);
    StepLoad w;
    w.prefillTokens = perGpu * double(shape.tp * shape.dp);
    w.prefillContext = I / 2;
    w.prefillRequests = w.prefillTokens / I;
    double step = m.stepSeconds(w);
    Loaded l;
    l.sustained = true;
    l.ttft = l.ttftP90 = step;
    double rate = w.prefillRequests / step;
    ServePlan p = colocatedPlan(m, cap, o, l, rate, shape.replicas, chunk,
                                maxBatch, kvPerToken);
    p.outputTokensPerSecond = p.outputTokensPerSecondPerGpu = 0;
    return p;
  }
  case LoadKind::DecodeOnly: {
    // A decode pool at a steady batch (prompts arrive prefilled).
    StepLoad w;
    w.decodeSeqs = load.value * double(shape.tp * shape.dp);
    w.decodeContext = I;
    if (w.decodeSeqs > double(cap.sequences) * 1.0000001)
      return Status::error(fmt::format(
          "{:g} sequences per replica need more cache than the {} it holds",
          w.decodeSeqs, cap.sequences));
    Loaded l;
    l.sustained = true;
    l.batch = w.decodeSeqs;
    l.tpot = l.tpotP90 = m.stepSeconds(w);
    ServePlan p = colocatedPlan(m, cap, o, l, 0, shape.replicas, chunk,
                                maxBatch, kvPerToken);
    p.outputTokensPerSecond = w.decodeSeqs * R / l.tpot;
    p.outputTokensPerSecondPerGpu = p.outputTokensPerSecond / double(p.gpus);
    p.requestsPerSecond = 0;
    p.inputTokensPerSecondPerGpu = 0;
    return p;
  }
  }
  return Status::error("unknown load kind");
}

std::vector<std::string> launchCommand(const ServePlan &plan,
                                       const ServeOptions &o,
                                       std::string_view modelArg,
                                       bool prefillPool) {
  const PoolPrediction &pool = prefillPool ? plan.prefill : plan.pool;
  const ReplicaShape &s = pool.shape;
  const EngineTraits &e = engineTraits(o.engine);
  double fraction = o.memoryFraction > 0 ? o.memoryFraction : e.memoryFraction;
  const std::string model(modelArg);
  const int64_t maxLen = o.inputLen + o.outputLen;
  const bool fp8 = o.precision == DType::FP8,
             fp8Kv = o.kvPrecision == DType::FP8;
  std::vector<std::string> c;
  auto add = [&](std::string flag, auto value) {
    c.push_back(std::move(flag));
    c.push_back(fmt::format("{}", value));
  };
  switch (o.engine) {
  case Engine::Vllm:
    c = {"vllm", "serve", model};
    add("--tensor-parallel-size", s.tp);
    add("--pipeline-parallel-size", s.pp);
    // vLLM's data parallelism on an MoE model is data-parallel attention
    // (its MoE layers span dp x tp GPUs); independent replicas of an MoE
    // model are separate servers (launchNotes).
    if (s.dp > 1)
      add("--data-parallel-size", s.dp);
    else if (s.replicas > 1 && !plan.moe)
      add("--data-parallel-size", s.replicas);
    if (s.ep > 1)
      c.push_back("--enable-expert-parallel");
    // Each data-parallel rank is an engine of its own: per-rank limits.
    add("--max-num-seqs", pool.maxBatch / s.dp);
    add("--max-model-len", maxLen);
    add("--max-num-batched-tokens", std::max(pool.chunkTokens, maxLen));
    add("--gpu-memory-utilization", fmt::format("{:g}", fraction));
    if (fp8)
      add("--quantization", "fp8");
    if (fp8Kv)
      add("--kv-cache-dtype", "fp8");
    if (!o.cudaGraphs)
      c.push_back("--enforce-eager");
    if (plan.disaggregated)
      add("--kv-transfer-config",
          "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}");
    break;
  case Engine::Sglang:
    c = {"python3", "-m", "sglang.launch_server", "--model-path", model};
    // SGLang's --tp-size counts every GPU of a data-parallel-attention
    // replica; --dp-size then splits them into attention ranks.
    add("--tp-size", s.tp * s.dp);
    if (s.pp > 1)
      add("--pp-size", s.pp);
    if (s.dp > 1) {
      add("--dp-size", s.dp);
      c.push_back("--enable-dp-attention");
    } else if (s.replicas > 1) {
      add("--dp-size", s.replicas); // independent replicas, for any model
    }
    if (s.ep > 1)
      add("--ep-size", s.ep);
    // With data-parallel attention SGLang divides both by --dp-size
    // (server_args.py, _handle_data_parallelism): give the replica's.
    add("--max-running-requests", pool.maxBatch);
    add("--context-length", maxLen);
    add("--chunked-prefill-size", pool.chunkTokens * s.dp);
    add("--mem-fraction-static", fmt::format("{:g}", fraction));
    if (fp8)
      add("--quantization", "fp8");
    if (fp8Kv)
      add("--kv-cache-dtype", "fp8_e4m3");
    if (!o.cudaGraphs)
      c.push_back("--disable-cuda-graph");
    if (plan.disaggregated)
      add("--disaggregation-mode", prefillPool ? "prefill" : "decode");
    break;
  case Engine::Trtllm:
    c = {"trtllm-serve", model};
    add("--backend", "pytorch");
    add("--tp_size", s.tp * s.dp);
    add("--pp_size", s.pp);
    if (s.ep > 1)
      add("--ep_size", s.ep);
    // TensorRT-LLM's max_batch_size is per attention rank.
    add("--max_batch_size", pool.maxBatch / s.dp);
    add("--max_num_tokens", std::max(pool.chunkTokens, int64_t(1)));
    add("--max_seq_len", maxLen);
    add("--kv_cache_free_gpu_memory_fraction", fmt::format("{:g}", fraction));
    if (fp8Kv || s.dp > 1)
      add("--extra_llm_api_options", kTrtllmOptionsFile);
    break;
  }
  return c;
}

std::vector<std::string> launchNotes(const ServePlan &plan,
                                     const ServeOptions &o) {
  std::vector<std::string> notes;
  const ReplicaShape &s = plan.pool.shape;
  if (s.replicas > 1 && (o.engine == Engine::Trtllm || s.dp > 1 ||
                         (o.engine == Engine::Vllm && plan.moe)))
    notes.push_back(fmt::format(
        "the command serves one replica: start {} of them and balance the "
        "requests over them",
        s.replicas));
  if (o.engine == Engine::Trtllm && (o.kvPrecision == DType::FP8 || s.dp > 1)) {
    // TensorRT-LLM sets these in its LLM API options, not by flags.
    std::string yaml;
    if (o.kvPrecision == DType::FP8)
      yaml += "kv_cache_config:\\n  dtype: fp8\\n";
    if (s.dp > 1)
      yaml += "enable_attention_dp: true\\n";
    notes.push_back(std::string(kTrtllmOptionsFile) + ": \"" + yaml +
                    "\" (TensorRT-LLM sets the cache type and data-parallel "
                    "attention in its LLM API options, not by flags)");
  }
  if (o.engine == Engine::Trtllm && o.precision == DType::FP8)
    notes.push_back("TensorRT-LLM takes fp8 weights from an FP8-quantised "
                    "checkpoint (ModelOpt): give its path as the model");
  return notes;
}

namespace {

std::string shellJoin(const std::vector<std::string> &argv) {
  std::string s;
  for (const std::string &a : argv) {
    if (!s.empty())
      s += ' ';
    bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) ||
             std::string_view("-_./:=,").find(ch) != std::string_view::npos;
    });
    s += plain ? a : "'" + a + "'";
  }
  return s;
}

json poolJson(const PoolPrediction &p) {
  json j;
  j["parallel"] = {{"tp", p.shape.tp},
                   {"pp", p.shape.pp},
                   {"ep", p.shape.ep},
                   {"dp", p.shape.dp},
                   {"replicas", p.shape.replicas}};
  j["max_batch"] = p.maxBatch;
  j["chunk_tokens"] = p.chunkTokens;
  j["mean_batch"] = p.meanBatch;
  j["kv_capacity_tokens"] = p.kvCapacityTokens;
  j["kv_capacity_sequences"] = p.kvCapacitySequences;
  j["weight_bytes_per_gpu"] = p.weightBytesPerGpu;
  j["kv_pool_bytes_per_gpu"] = p.kvPoolBytesPerGpu;
  j["memory_per_gpu_bytes"] = p.memoryPerGpuBytes;
  j["step_s"] = p.stepSeconds;
  return j;
}

} // namespace

std::string renderServeJson(const ServeResult &r, const LayerProfile &profile,
                            const Cluster &cluster, const ServeOptions &o,
                            std::string_view modelArg) {
  json root;
  root["schema"] = "trident.serve/v1";
  root["model"] = profile.modelName;
  root["cluster"] = cluster.name;
  root["gpu"] = cluster.groups.front().gpu.name;
  root["engine"] = engineTraits(o.engine).name;
  root["input_len"] = o.inputLen;
  root["output_len"] = o.outputLen;
  root["precision"] = dtypeName(o.precision);
  root["kv_precision"] = dtypeName(o.kvPrecision);
  if (o.requestRate > 0)
    root["request_rate"] = o.requestRate;
  else
    root["max_throughput"] = true;
  if (o.ttftTargetSeconds > 0)
    root["ttft_target_s"] = o.ttftTargetSeconds;
  if (o.tpotTargetSeconds > 0)
    root["tpot_target_s"] = o.tpotTargetSeconds;
  root["evaluated"] = r.evaluated;
  json plans = json::array();
  for (const ServePlan &p : r.plans) {
    json j;
    j["meets_targets"] = p.meetsTargets;
    if (!p.meetsTargets)
      j["missed"] = p.why;
    j["disaggregated"] = p.disaggregated;
    j["parallel"] = {{"tp", p.pool.shape.tp},
                     {"pp", p.pool.shape.pp},
                     {"ep", p.pool.shape.ep},
                     {"dp", p.pool.shape.dp},
                     {"replicas", p.pool.shape.replicas}};
    j["max_batch"] = p.pool.maxBatch;
    j["mean_batch"] = p.pool.meanBatch;
    j["chunk_tokens"] = p.pool.chunkTokens;
    j["kv_bytes_per_token"] = p.kvBytesPerToken;
    j["kv_capacity_tokens"] = p.pool.kvCapacityTokens;
    j["kv_capacity_sequences"] = p.pool.kvCapacitySequences;
    j["ttft_s"] = p.ttftSeconds;
    j["ttft_p90_s"] = p.ttftP90Seconds;
    j["tpot_s"] = p.tpotSeconds;
    j["tpot_p90_s"] = p.tpotP90Seconds;
    j["tpot_floor_s"] = p.tpotFloorSeconds;
    j["output_tokens_per_s"] = p.outputTokensPerSecond;
    j["output_tokens_per_s_per_gpu"] = p.outputTokensPerSecondPerGpu;
    j["requests_per_s"] = p.requestsPerSecond;
    j["gpus"] = p.gpus;
    j["memory_per_gpu_bytes"] = p.pool.memoryPerGpuBytes;
    if (p.disaggregated) {
      j["decode"] = poolJson(p.pool);
      j["prefill"] = poolJson(p.prefill);
      j["launch_prefill"] = launchCommand(p, o, modelArg, true);
    }
    j["launch"] = launchCommand(p, o, modelArg);
    if (auto notes = launchNotes(p, o); !notes.empty())
      j["launch_notes"] = notes;
    plans.push_back(std::move(j));
  }
  root["plans"] = std::move(plans);
  if (!r.closest.empty())
    root["closest"] = r.closest;
  return root.dump(2) + "\n";
}

std::string renderServeText(const ServeResult &r, const LayerProfile &profile,
                            const Cluster &cluster, const ServeOptions &o,
                            std::string_view modelArg) {
  const NodeGroup &hw = cluster.groups.front();
  std::string out = fmt::format(
      "serve       {} on {} ({} x {}), {} in / {} out tokens, {} weights, "
      "{} cache, {}\n",
      profile.modelName, cluster.name, hw.gpus(), hw.gpu.name, o.inputLen,
      o.outputLen, dtypeName(o.precision), dtypeName(o.kvPrecision),
      o.requestRate > 0 ? fmt::format("{:g} requests/s", o.requestRate)
                        : std::string("max throughput"));
  out += fmt::format("kv cache    {:.0f} bytes per token\n",
                     kvBytesPerToken(profile, o.kvPrecision));
  std::vector<std::string> head = {"plan",  "batch",     "chunk",  "TTFT ms",
                                   "p90",   "TPOT ms",   "p90",    "tok/s/GPU",
                                   "req/s", "KV tokens", "GB/GPU", "targets"};
  std::vector<std::vector<std::string>> rows;
  for (const ServePlan &p : r.plans)
    rows.push_back({planName(p), std::to_string(p.pool.maxBatch),
                    std::to_string(p.pool.chunkTokens),
                    fmt::format("{:.1f}", p.ttftSeconds * 1e3),
                    fmt::format("{:.1f}", p.ttftP90Seconds * 1e3),
                    fmt::format("{:.2f}", p.tpotSeconds * 1e3),
                    fmt::format("{:.2f}", p.tpotP90Seconds * 1e3),
                    fmt::format("{:.0f}", p.outputTokensPerSecondPerGpu),
                    fmt::format("{:.3g}", p.requestsPerSecond),
                    fmt::format("{:.0f}", p.pool.kvCapacityTokens),
                    gbText(p.pool.memoryPerGpuBytes),
                    p.meetsTargets ? "met" : "missed"});
  std::vector<size_t> width(head.size());
  for (size_t i = 0; i < head.size(); ++i) {
    width[i] = head[i].size();
    for (const auto &row : rows)
      width[i] = std::max(width[i], row[i].size());
  }
  auto line = [&](const std::vector<std::string> &cells) {
    std::string s;
    for (size_t i = 0; i < cells.size(); ++i)
      s += (i ? "  " : "") + padCell(cells[i], width[i], i == 0);
    while (!s.empty() && s.back() == ' ')
      s.pop_back();
    return s + "\n";
  };
  out += line(head);
  for (const auto &row : rows)
    out += line(row);
  if (!r.plans.empty()) {
    const ServePlan &best = r.plans.front();
    if (best.disaggregated)
      out += "launch      (prefill) " +
             shellJoin(launchCommand(best, o, modelArg, true)) + "\n" +
             "            (decode)  " +
             shellJoin(launchCommand(best, o, modelArg)) + "\n";
    else
      out +=
          "launch      " + shellJoin(launchCommand(best, o, modelArg)) + "\n";
  }
  if (!r.plans.empty())
    for (const std::string &n : launchNotes(r.plans.front(), o))
      out += "note        " + n + "\n";
  if (!r.closest.empty())
    out += r.closest + "\n";
  return out;
}

} // namespace trident::serve
