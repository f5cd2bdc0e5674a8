//===- Internal.h - Shared internals of the runtime backends ---*- C++ -*-===//
//
// Declarations that the backend-neutral sources (Common/) and the backends
// (Cpu/, Cuda/) share. Never included by emitted programs: it includes MPI.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_LIB_RUNTIME_INTERNAL_H
#define TRIDENT_LIB_RUNTIME_INTERNAL_H

#include "Common/MoEExperts.h"
#include "Common/MoERouting.h"
#include "trident/Runtime/Runtime.h"

#include <mpi.h>

#include <algorithm>
#include <string>
#include <vector>

namespace trident::rt {

struct Group::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  std::string name;
  std::vector<int> worldRanks;
  /// Backend state attached to the group (the NCCL communicator on CUDA).
  std::shared_ptr<void> backend;
  ~Impl();
};

namespace detail {

/// Throws rt::Error("<fn>: <message>").
[[noreturn]] void fail(const char *fn, const std::string &message);
/// Throws unless `cond`.
inline void check(bool cond, const char *fn, const std::string &message) {
  if (!cond)
    fail(fn, message);
}
std::string shapeToString(const std::vector<int64_t> &shape);
/// `a` and `b` hold as many elements.
inline void sameNumel(const Tensor &a, const Tensor &b, const char *fn) {
  check(a.numel() == b.numel(), fn,
        "sizes differ: " + a.shapeString() + " vs " + b.shapeString());
}

/// The blocked dimension of a shard (ShardBlocks), -1 for none, after
/// checking that both extents hold `count` blocks. Shared by initParam and
/// ParamDump::add, which must map a shard's elements alike.
inline int checkShardBlocks(ShardBlocks blocks,
                            const std::vector<int64_t> &globalShape,
                            const std::vector<int64_t> &shardShape,
                            const std::string &name, const char *fn) {
  const int d = blocks.count > 1 ? blocks.dim : -1;
  check(blocks.count >= 1 && blocks.dim < int(globalShape.size()) &&
            shardShape.size() == globalShape.size() &&
            (d < 0 || (globalShape[d] % blocks.count == 0 &&
                       shardShape[d] % blocks.count == 0)),
        fn, name + ": dimension " + std::to_string(blocks.dim) +
                " cannot hold " + std::to_string(blocks.count) + " blocks");
  return d;
}
/// Along a blocked dimension: the global index of a shard's local index
/// i, the shard holding one piece of `count` blocks (local / count wide,
/// at `offset` inside each global / count wide block).
inline int64_t blockedGlobalIndex(int64_t i, int64_t local, int64_t global,
                                  int64_t count, int64_t offset) {
  const int64_t piece = local / count;
  return (i / piece) * (global / count) + offset + i % piece;
}

/// Argument checks of ropeApply, shared by the backends.
inline void checkRope(const Tensor &y, const Tensor &x, int64_t seq,
                      int64_t heads, int64_t headDim, int64_t rotaryDim,
                      double theta, int64_t posOffset, int64_t rotaryOffset,
                      const char *fn) {
  check(seq > 0 && heads > 0 && headDim > 0, fn,
        "seq, heads and headDim must be positive");
  check(posOffset >= 0, fn, "posOffset must not be negative");
  check(rotaryOffset >= 0 && rotaryOffset + rotaryDim <= headDim, fn,
        "rotary dimensions " + std::to_string(rotaryOffset) + ".." +
            std::to_string(rotaryOffset + rotaryDim - 1) +
            " fall outside headDim " + std::to_string(headDim));
  check(rotaryDim > 0 && rotaryDim <= headDim && rotaryDim % 2 == 0 &&
            rotaryDim <= 2 * kMaxRopePairs,
        fn,
        "rotaryDim " + std::to_string(rotaryDim) +
            " must be even, within headDim " + std::to_string(headDim) +
            " and at most " + std::to_string(2 * kMaxRopePairs));
  check(theta > 1, fn, "theta must exceed 1");
  check(y.numel() == x.numel(), fn,
        "sizes differ: " + y.shapeString() + " vs " + x.shapeString());
  check(x.numel() % (heads * headDim) == 0 &&
            (x.numel() / (heads * headDim)) % seq == 0,
        fn,
        "x " + x.shapeString() + " is not whole sequences of " +
            std::to_string(seq) + " rows of " + std::to_string(heads) +
            " heads x " + std::to_string(headDim));
}

/// Checks a latentKeyForward / Backward call: k [n, heads*(nope+rope)],
/// kNope [n, heads*nope], kRope [n, rope].
inline void checkLatentKey(const Tensor &k, const Tensor &kNope,
                           const Tensor &kRope, int64_t heads, int64_t nope,
                           int64_t rope, const char *fn) {
  check(heads > 0 && nope > 0 && rope > 0, fn,
        "heads, nopeDim and ropeDim must be positive");
  const int64_t n = kRope.numel() / rope;
  check(kRope.numel() == n * rope && kNope.numel() == n * heads * nope &&
            k.numel() == n * heads * (nope + rope),
        fn,
        "k " + k.shapeString() + ", kNope " + kNope.shapeString() +
            " and kRope " + kRope.shapeString() + " must be [n, " +
            std::to_string(heads) + "*(" + std::to_string(nope) + "+" +
            std::to_string(rope) + ")], [n, " + std::to_string(heads) + "*" +
            std::to_string(nope) + "] and [n, " + std::to_string(rope) + "]");
}

/// Checks a DropoutSite: rate in [0, 1), positive global sizes, offsets
/// inside them.
inline void checkDropout(const DropoutSite &d, const char *fn) {
  check(d.rate >= 0.0f && d.rate < 1.0f, fn,
        "dropout rate " + std::to_string(d.rate) + " must be in [0, 1)");
  check(d.seqLen > 0 && d.features > 0 && d.firstSample >= 0 &&
            d.firstPos >= 0 && d.firstPos < d.seqLen && d.firstFeature >= 0 &&
            d.firstFeature < d.features,
        fn, "dropout site offsets must lie inside its global sizes");
}

/// Checks a dropoutApply call (x seen as [batch, seq, f], the block inside
/// the site's global sizes) and returns f, the local features.
inline int64_t checkDropoutApply(const Tensor &y, const Tensor &x,
                                 int64_t batch, int64_t seq,
                                 const DropoutSite &site, const char *fn) {
  check(y.numel() == x.numel(), fn,
        "sizes differ: " + y.shapeString() + " vs " + x.shapeString());
  checkDropout(site, fn);
  check(batch > 0 && seq > 0 && x.numel() % (batch * seq) == 0, fn,
        x.shapeString() + " is not [" + std::to_string(batch) + ", " +
            std::to_string(seq) + ", features]");
  const int64_t f = x.numel() / (batch * seq);
  check(site.firstPos + seq <= site.seqLen &&
            site.firstFeature + f <= site.features,
        fn, "the local [" + std::to_string(batch) + ", " + std::to_string(seq) +
                ", " + std::to_string(f) +
                "] block does not fit the site's global sequence and features");
  return f;
}

/// Argument checks of attentionForward / attentionBackward, shared by the
/// backends. `out` is the forward's output or the backward's dout.
/// Shapes of patchEmbed{Forward,Backward}: images [b, C, side, side],
/// rows [b * T, h], w [C * patch^2, h], bias [h] or undefined. Returns b.
inline int64_t checkPatchEmbed(const Tensor &rows, const Tensor &images,
                               const Tensor &w, const Tensor &bias,
                               int64_t channels, int64_t side, int64_t patch,
                               const char *fn) {
  check(channels > 0 && patch > 0 && side > 0 && side % patch == 0, fn,
        "channels and patch must be positive and patch must divide side");
  const int64_t cols = channels * patch * patch, grid = side / patch;
  check(w.rank() == 2 && w.dim(0) == cols, fn,
        "w " + w.shapeString() + " must be [channels*patch*patch = " +
            std::to_string(cols) + ", h]");
  const int64_t h = w.dim(1);
  const int64_t perImage = channels * side * side;
  check(images.numel() % perImage == 0, fn,
        "images " + images.shapeString() + " must be [b, " +
            std::to_string(channels) + ", " + std::to_string(side) + ", " +
            std::to_string(side) + "]");
  const int64_t b = images.numel() / perImage;
  check(rows.numel() == b * grid * grid * h, fn,
        "rows " + rows.shapeString() + " must be [b*T, h] = [" +
            std::to_string(b * grid * grid) + ", " + std::to_string(h) + "]");
  check(!bias.defined() || bias.numel() == h, fn,
        "bias must have h = " + std::to_string(h) + " elements");
  return b;
}

/// Shapes of prependToken{Forward,Backward}: x [b*T, h], out [b*(T+1), h],
/// token [1, h]. Returns b.
inline int64_t checkPrependToken(const Tensor &withToken, const Tensor &x,
                                 const Tensor &token, int64_t tokens,
                                 const char *fn) {
  check(tokens > 0 && token.numel() > 0, fn, "tokens and h must be positive");
  const int64_t h = token.numel();
  check(x.numel() % (tokens * h) == 0, fn,
        "x " + x.shapeString() + " must be [b*" + std::to_string(tokens) +
            ", " + std::to_string(h) + "]");
  const int64_t b = x.numel() / (tokens * h);
  check(withToken.numel() == b * (tokens + 1) * h, fn,
        withToken.shapeString() + " must be [b*(T+1), h] = [" +
            std::to_string(b * (tokens + 1)) + ", " + std::to_string(h) + "]");
  return b;
}

/// Shapes of positionAdd{Forward,Backward}: rows [n, h] with n a multiple
/// of seq, wpe [P, h] holding positions posOffset .. posOffset + seq - 1.
/// Returns n.
inline int64_t checkPositionAdd(const Tensor &rows, const Tensor &wpe,
                                int64_t seq, int64_t posOffset,
                                const char *fn) {
  check(wpe.rank() == 2 && seq > 0 && posOffset >= 0 &&
            posOffset + seq <= wpe.dim(0),
        fn, "wpe " + wpe.shapeString() + " must hold positions " +
                std::to_string(posOffset) + ".." +
                std::to_string(posOffset + seq - 1));
  const int64_t h = wpe.dim(1);
  check(rows.numel() % (seq * h) == 0, fn,
        rows.shapeString() + " must be [b*seq, h] with seq " +
            std::to_string(seq) + " and h " + std::to_string(h));
  return rows.numel() / h;
}

/// Shapes of sliceRows: x [b*seq, h], y [b*count, h], the positions inside
/// the sequence. Returns b.
inline int64_t checkSliceRows(const Tensor &y, const Tensor &x, int64_t seq,
                              int64_t first, int64_t count, const char *fn) {
  check(seq > 0 && count > 0 && first >= 0 && first + count <= seq, fn,
        "positions " + std::to_string(first) + ".." +
            std::to_string(first + count - 1) + " must lie in [0, " +
            std::to_string(seq) + ")");
  check(x.rank() >= 2 && y.rank() >= 2 && x.dim(-1) == y.dim(-1), fn,
        "x " + x.shapeString() + " and y " + y.shapeString() +
            " must have the same rows' width");
  const int64_t h = x.dim(-1);
  check(h > 0 && x.numel() % (seq * h) == 0, fn,
        "x " + x.shapeString() + " must be [b*" + std::to_string(seq) +
            ", h]");
  const int64_t b = x.numel() / (seq * h);
  check(y.numel() == b * count * h, fn,
        "y " + y.shapeString() + " must be [" + std::to_string(b * count) +
            ", " + std::to_string(h) + "]");
  return b;
}

/// Shapes of selectToken{Forward,Backward}: rows [batch, h], x [batch*seq,
/// h] (any shape with those element counts and h as the last dimension).
/// Returns batch.
inline int64_t checkSelectToken(const Tensor &rows, const Tensor &x,
                                int64_t seq, const char *fn) {
  check(rows.rank() == 2 && seq > 0, fn,
        "rows must be [batch, h] and seq positive, got " +
            rows.shapeString());
  const int64_t batch = rows.dim(0), h = rows.dim(1);
  check(x.numel() == batch * seq * h && x.rank() >= 2 && x.dim(-1) == h, fn,
        "x " + x.shapeString() + " must hold [batch*seq, h] = [" +
            std::to_string(batch * seq) + ", " + std::to_string(h) + "]");
  return batch;
}

/// Sinks (or their gradient) of attention: one value per local head, or
/// undefined.
inline void checkSinks(const Tensor &sinks, const AttentionDims &d,
                       const char *fn) {
  check(!sinks.defined() || sinks.numel() == d.heads, fn,
        "sinks " + sinks.shapeString() + " must hold one value per head (" +
            std::to_string(d.heads) + ")");
}
inline void checkAttention(const Tensor &out, const Tensor &probs,
                           const Tensor &q, const Tensor &k, const Tensor &v,
                           const AttentionDims &d, const char *fn) {
  check(d.batch > 0 && d.seq > 0 && d.heads > 0 && d.kvHeads > 0 &&
            d.headDim > 0 && d.heads % d.kvHeads == 0,
        fn, "dims must be positive and kvHeads must divide heads");
  const int64_t keys = d.keys();
  check(d.kvSeq >= 0 && d.qOffset >= 0 && d.qOffset + d.seq <= keys, fn,
        "queries at positions " + std::to_string(d.qOffset) + ".." +
            std::to_string(d.qOffset + d.seq - 1) + " fall outside the " +
            std::to_string(keys) + " keys");
  const int64_t n = d.batch * d.seq, nk = d.batch * keys;
  check(d.vHeadDim >= 0 && std::isfinite(d.scale) && d.scale >= 0, fn,
        "vHeadDim and scale must be >= 0 (0: the defaults)");
  const int64_t vd = d.valueDim();
  check(q.numel() == n * d.heads * d.headDim, fn,
        "q " + q.shapeString() + " must be [b*s, heads*headDim]");
  check(out.numel() == n * d.heads * vd, fn,
        "out " + out.shapeString() + " must be [b*s, heads*valueDim]");
  check(k.numel() == nk * d.kvHeads * d.headDim, fn,
        "k " + k.shapeString() + " must be [b*keys, kvHeads*headDim]");
  check(v.numel() == nk * d.kvHeads * vd, fn,
        "v " + v.shapeString() + " must be [b*keys, kvHeads*valueDim]");
  check(probs.numel() == d.batch * d.heads * d.seq * keys ||
            probs.numel() == d.batch * d.heads * d.seq,
        fn,
        "probs " + probs.shapeString() +
            " must be [b, heads, s, keys] (the probabilities) or [b, heads, "
            "s] (their rows' log-sum-exp)");
  check(d.window >= 0, fn, "window must be >= 0");
  check(d.causal || d.window == 0, fn,
        "a sliding window needs causal attention");
  if (d.dropout.rate > 0.0f) {
    checkDropout(d.dropout, fn);
    check(d.dropout.firstFeature + d.heads <= d.dropout.features &&
              d.dropout.firstPos + d.seq <= d.dropout.seqLen &&
              keys == d.dropout.seqLen,
          fn, "attention dropout needs the whole sequence's keys and the "
              "local heads and queries inside the global ones");
  }
}
/// Whether attention's saved tensor is its rows' log-sum-exp rather than
/// the probabilities (Runtime.h, attentionForward); checkAttention has
/// checked that it is one of the two. With one key a row the two forms
/// have the same size, and the probabilities are what is kept.
inline bool savesLogSumExp(const Tensor &probs, const AttentionDims &d) {
  return d.keys() > 1 && probs.numel() == d.batch * d.heads * d.seq;
}
/// attentionBackward's tensors: the forward's (dout in place of out, and
/// out, when given, shaped as dout), the sinks' gradient, and dq, dk, dv
/// sized like q, k, v.
inline void checkAttentionBackward(const Tensor &dq, const Tensor &dk,
                                   const Tensor &dv, const Tensor &dsinks,
                                   const Tensor &dout, const Tensor &q,
                                   const Tensor &k, const Tensor &v,
                                   const Tensor &out, const Tensor &probs,
                                   const AttentionDims &d, const char *fn) {
  checkAttention(dout, probs, q, k, v, d, fn);
  checkSinks(dsinks, d, fn);
  if (out.defined())
    check(out.shape() == dout.shape(), fn,
          "out " + out.shapeString() + " is not shaped as dout " +
              dout.shapeString());
  sameNumel(dq, q, fn);
  sameNumel(dk, k, fn);
  sameNumel(dv, v, fn);
}

/// The real vocabulary of a vocab-parallel cross-entropy whose shards
/// together hold `padded` columns: `vocab` when it is set (0 < vocab <=
/// padded, checked), else `padded`.
inline int64_t realVocab(int64_t vocab, int64_t padded, const char *fn) {
  check(vocab >= 0 && vocab <= padded, fn,
        "vocab " + std::to_string(vocab) + " outside [0, " +
            std::to_string(padded) + "] (the shards' columns)");
  return vocab > 0 ? vocab : padded;
}
/// The shapes of a (vocabulary-parallel) cross-entropy, for every backend:
/// logits [n, V], int32 targets [n], lse [n], lossSum one element (or
/// none).
inline void checkCrossEntropy(const Tensor &lossSum, const Tensor &lse,
                              const Tensor &logits, const Tensor &targets,
                              const char *fn, int64_t &n, int64_t &V) {
  check(logits.rank() == 2, fn, "logits must be [n, V], got " +
                                    logits.shapeString());
  n = logits.dim(0);
  V = logits.dim(1);
  check(targets.dtype() == DType::I32 && targets.numel() == n, fn,
        "targets must be int32 [" + std::to_string(n) + "]");
  check(lse.numel() == n, fn, "lse must have n elements");
  check(!lossSum.defined() || lossSum.numel() == 1, fn,
        "lossSum must have one element");
}

/// Same shapes except dimension `dim`, where out = num / den x in: the
/// gathers' and scatters' outputs, for every backend.
inline void checkScaled(const Tensor &out, const Tensor &in, int dim,
                        int64_t num, int64_t den, const char *fn) {
  bool ok = out.rank() == in.rank() && dim >= 0 && dim < in.rank();
  for (int i = 0; ok && i < in.rank(); ++i)
    ok = i == dim ? out.shape()[i] * den == in.shape()[i] * num
                  : out.shape()[i] == in.shape()[i];
  check(ok, fn,
        "output " + out.shapeString() + " does not match input " +
            in.shapeString() + " along dimension " + std::to_string(dim));
}

/// adamUpdate's checks and bias corrections (Kingma & Ba 2015, "Adam: A
/// Method for Stochastic Optimization", Algorithm 1), for every backend;
/// false when there is nothing to update.
bool adamStep(const Tensor &param, const Tensor &grad, const Tensor &m,
              const Tensor &v, const AdamConfig &cfg, int64_t step,
              float &bc1, float &bc2);

/// allToAll's shapes, for every backend: `in` split along `splitDim` into
/// `groupSize` blocks, `out` the blocks concatenated along `concatDim`.
inline void checkAllToAll(const Tensor &out, const Tensor &in, int splitDim,
                          int concatDim, int groupSize, const char *fn) {
  check(splitDim >= 0 && splitDim < in.rank() && concatDim >= 0 &&
            concatDim < in.rank() && out.rank() == in.rank(),
        fn, "dimensions out of range for " + in.shapeString());
  check(in.shape()[splitDim] % groupSize == 0, fn,
        "dimension " + std::to_string(splitDim) + " of " + in.shapeString() +
            " is not divisible by the group size " + std::to_string(groupSize));
  std::vector<int64_t> expect = in.shape();
  expect[splitDim] /= groupSize;
  expect[concatDim] *= groupSize;
  check(out.shape() == expect, fn,
        "output " + out.shapeString() + " should be " + shapeToString(expect));
}

/// Real columns of a shard of `local` columns starting at `offset`.
inline int64_t validColumns(int64_t vocab, int64_t offset, int64_t local) {
  return std::max<int64_t>(0, std::min<int64_t>(local, vocab - offset));
}

/// bagPoolForward/Backward's shapes: `pooled` [n, d] (rank >= 1), `rows`
/// [n * bag, d] elements.
inline void checkBagPool(const Tensor &pooled, const Tensor &rows,
                         int64_t bag, const char *fn) {
  check(bag > 0, fn, "bag size must be positive, got " + std::to_string(bag));
  check(pooled.rank() >= 1 && pooled.dim(-1) > 0, fn,
        "pooled tensor " + pooled.shapeString() + " has no feature dimension");
  check(rows.numel() == pooled.numel() * bag, fn,
        "rows " + rows.shapeString() + " must hold " + std::to_string(bag) +
            " rows per sample of " + pooled.shapeString());
}
/// dotInteractionForward/Backward's shapes: F >= 2 features of n * d
/// elements (d = the first one's last dimension) and out [n, d + F(F-1)/2].
inline void checkDotInteraction(const Tensor &out,
                                const std::vector<Tensor> &features,
                                const char *fn, int64_t &n, int64_t &d) {
  check(features.size() >= 2, fn, "needs at least two features");
  check(features[0].rank() >= 1 && features[0].dim(-1) > 0, fn,
        "feature 0 " + features[0].shapeString() + " has no feature dimension");
  d = features[0].dim(-1);
  n = features[0].numel() / d;
  for (size_t a = 0; a < features.size(); ++a)
    check(features[a].numel() == n * d && features[a].dim(-1) == d, fn,
          "feature " + std::to_string(a) + " " + features[a].shapeString() +
              " must be [" + std::to_string(n) + ", " + std::to_string(d) +
              "]");
  const int64_t F = int64_t(features.size());
  const int64_t w = d + F * (F - 1) / 2;
  check(out.rank() >= 1 && out.dim(-1) == w && out.numel() == n * w, fn,
        "output " + out.shapeString() + " must be [" + std::to_string(n) +
            ", " + std::to_string(w) + "]");
}
/// dotInteractionBackward's gradients: one of n * d elements per feature.
inline void checkDotInteractionGrads(const std::vector<Tensor> &dfeatures,
                                     size_t numFeatures, int64_t n, int64_t d,
                                     const char *fn) {
  check(dfeatures.size() == numFeatures, fn,
        "one gradient per feature expected");
  for (const Tensor &g : dfeatures)
    check(g.numel() == n * d, fn,
          "feature gradient " + g.shapeString() + " must have " +
              std::to_string(n * d) + " elements");
}
/// Logits and int32 labels of the same number of elements.
inline void checkBce(const Tensor &logits, const Tensor &labels,
                     const char *fn) {
  check(labels.dtype() == DType::I32 && labels.numel() == logits.numel(), fn,
        "labels must be int32 with one per logit (" +
            std::to_string(logits.numel()) + "), got " +
            labels.shapeString());
}
/// One sample's sigmoid binary cross-entropy in the overflow-free form
/// max(z, 0) - z y + log(1 + exp(-|z|)).
inline double bceTerm(float z, int32_t y) {
  const double zd = z;
  return std::max(zd, 0.0) - zd * double(y) +
         std::log1p(std::exp(-std::abs(zd)));
}

/// The group's implementation, or an error naming `fn` for an empty Group.
Group::Impl &groupImpl(const Group &g, const char *fn);
/// Same, and also an error if this rank is not a member (size() == 0).
Group::Impl &memberImpl(const Group &g, const char *fn);

/// A send that sendAsync queued: a copy of the tensor, issued with the
/// rank's next communication call (Common/P2p.cpp).
struct QueuedSend {
  Tensor copy;
  int peer = 0, tag = 0;
  Group group; ///< keeps the communicators alive while queued
  Group::Impl &impl() const { return *group.impl(); }
};
/// A receive of one exchange: into `into` from `peer` of `G`, expecting
/// `tag` (checked on the MPI path; NCCL has no tags).
struct Receive {
  Tensor *into = nullptr;
  int peer = 0, tag = 0;
  Group::Impl *G = nullptr;
};
/// Issues the queued sends as one group of their own (end of step, reports).
void flushSends(const char *fn);
/// memberImpl(g, fn), the entry of every collective; first issues the
/// queued sends as a group of their own when one goes to a member of `g`
/// (who might otherwise wait for it before joining the collective).
Group::Impl &collectiveImpl(const Group &g, const char *fn);
/// The queued `sends` and `recvs` as one group over MPI with NCCL's
/// blocking rule: the call returns once every send met its receive and
/// the data arrived. Rejects a message whose tag or size differs from the
/// receive's.
void mpiExchange(std::vector<QueuedSend> &sends, std::vector<Receive> &recvs,
                 const char *fn);

// Implemented by each backend.
/// One group of point-to-point transfers (see mpiExchange); the CUDA
/// backend orders it on its communication stream instead of blocking.
void backendExchange(std::vector<QueuedSend> &sends,
                     std::vector<Receive> &recvs, const char *fn);
/// Zero-filled storage of `bytes` bytes in the backend's memory.
std::shared_ptr<void> allocate(size_t bytes);
/// Each calls noteHostCopy (rt::hostCopyBytes).
void copyToHost(void *dst, const void *src, size_t bytes);
void copyFromHost(void *dst, const void *src, size_t bytes);
void noteHostCopy(size_t bytes);
void copyOnBackend(void *dst, const void *src, size_t bytes);
/// n bf16 elements widened to fp32 / n fp32 elements rounded to bf16
/// (Bf16.h's bf16Value and bf16Bits), on the backend's memory.
void widenBf16(float *dst, const uint16_t *src, int64_t n);
void narrowToBf16(uint16_t *dst, const float *src, int64_t n);
/// Called once after MPI_Init (device selection, handles, streams).
void backendInit();
/// Called from finalize() before MPI_Finalize.
void backendFinalize();
/// Called collectively by every rank of the world, in the same order,
/// each time groups are formed (one MPI_Comm_split of the world): after
/// `g` got its MPI communicator, or with g.size == 0 on a rank that joins
/// no group (Grid::subgroup's non-members).
void backendGroupCreated(Group::Impl &g);
/// A mixture of experts' routing on the backend, each row by
/// Common/MoERouting.h (one thread a row on CUDA): rows [begin, end) of x
/// [n, h] give prob [rows, E], expert (I32) and weight [rows, k].
/// routerBias and select may be undefined. status (I32 [1]) gets the first
/// row (counted from begin) with a non-finite logit, or -1 (nothing else
/// is then meaningful); it stays on the device, for moeExpertRows to read
/// with its counts.
void moeRoute(Tensor &prob, Tensor &expert, Tensor &weight, Tensor &status,
              const Tensor &x, const Tensor &router, const Tensor &routerBias,
              const Tensor &select, const moe::RouteSpec &s, int64_t begin,
              int64_t end);
/// Adds to load [E] how many of expert [rows, k]'s choices went to each.
void moeExpertLoad(Tensor &load, const Tensor &expert);
/// The router's backward over rows [begin, end) of x [n, h], from their
/// routing (moeRoute) and dgate [n, k]: dx [rows, h] (overwritten),
/// drouter [h, E] and dRouterBias [E] (added to; undefined: none).
void moeRouterGrad(Tensor &dx, Tensor &drouter, Tensor &dRouterBias,
                   const Tensor &dgate, const Tensor &x, const Tensor &router,
                   const Tensor &prob, const Tensor &expert,
                   const Tensor &weight, const moe::RouteSpec &s, int64_t begin,
                   int64_t end);

/// The rows routed to this rank's experts (Common/MoEExperts.h's layout):
/// token, slot, weight, rowExpert [M]; begin [local + 1]; slotRow [n k];
/// all but weight I32.
struct MoeRows {
  Tensor token, slot, weight, rowExpert, begin, slotRow;
  std::vector<int64_t> hostBegin; ///< begin, on the host
  /// The routing's status (moeRoute): -1, or the first row whose logits
  /// were not finite (then nothing else is laid out).
  int64_t badRow = -1;
  int64_t size() const { return hostBegin.empty() ? 0 : hostBegin.back(); }
};
/// Lays out the rows of the choices `expert` [n, k] (global indices) that
/// went to local experts, with their weights from `weight` [n, k]; reads
/// the routing's status with the experts' row counts (on CUDA one copy to
/// the host).
MoeRows moeExpertRows(const Tensor &expert, const Tensor &weight,
                      const Tensor &status, const moe::ExpertSpec &s);
/// out [M, cols] = the rows of src [n, cols] at `token`, each times
/// scale[q] (undefined: 1).
void moeGather(Tensor &out, const Tensor &src, const Tensor &token,
               const Tensor &scale);
/// a [M, fin] += its expert's bias bIn [local, fin] (undefined: none);
/// u [M, f] = the hidden activation of a.
void moeHidden(Tensor &a, Tensor &u, const Tensor &bIn, const MoeRows &rows,
               const moe::ExpertSpec &s);
/// y [n, h] (overwritten) = each token's sum over its rows of `rowsOut`
/// [M, h], weighted by rows.weight with `bias` [local, h] added when
/// `weighted`, plain sums otherwise.
void moeCombine(Tensor &y, const Tensor &rowsOut, bool weighted,
                const Tensor &bias, const MoeRows &rows,
                const moe::ExpertSpec &s);
/// The experts' backward around their GEMMs, from back [M, f] (the
/// gradient reaching the hidden activation u before each row's weight):
/// dgate [n, k] (overwritten; 0 for other ranks' experts) from u and back
/// (with bOut [local, h] . dy where this rank adds it; undefined: none),
/// dbOut [local, h] += the sum of weight * dy rows (undefined: none).
void moeGateGrads(Tensor &dgate, Tensor &dbOut, const Tensor &u,
                  const Tensor &back, const Tensor &dyRows, const Tensor &bOut,
                  const MoeRows &rows, const moe::ExpertSpec &s);
/// da [M, fin] from a [M, fin] and back (da may be a itself: each element
/// pair is read before it is written); dbIn [local, fin] += the sum of da
/// rows (undefined: none).
void moeHiddenGrads(Tensor &da, Tensor &dbIn, const Tensor &a,
                    const Tensor &back, const MoeRows &rows,
                    const moe::ExpertSpec &s);

} // namespace detail
} // namespace trident::rt

#endif // TRIDENT_LIB_RUNTIME_INTERNAL_H
