//===- AttentionGemms.h - Batched products of one sample's attention ------===//
//
// The CUDA backend computes a sample's attention with strided batched GEMMs
// (cublasSgemmStridedBatched) instead of one GEMM pair per head. Where each
// product reads and writes is plain index arithmetic, kept here as data so
// that a CPU unit test (RuntimeKernelsTest.cpp, "attention's batched
// products") runs the very same descriptors through a host GEMM and checks
// them against the per-head formulas; the CUDA code only maps a descriptor
// onto one cuBLAS call.
//
// Query head h = j * group + r reads kv head j (grouped-query attention,
// group = heads / kvHeads). A product that overwrites its output (scores,
// output, dP, dQ) batches over the kv heads j, one call per r
// (consecutive products `group` query heads, one kv head and `group`
// score matrices apart), or, when a group is longer than the kv heads
// (multi-query attention), over the r of one group, one call per j (one
// query head and one score matrix apart, the same kv head). dV and dK,
// which sum a kv head's query heads, always batch over j, one call per r
// in order, so each kv head adds r = 0, 1, ... as a loop over the heads
// would.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_RUNTIME_COMMON_ATTENTIONGEMMS_H
#define TRIDENT_RUNTIME_COMMON_ATTENTIONGEMMS_H

#include "trident/Runtime/Runtime.h"

#include <cstdint>
#include <vector>

namespace trident::rt::detail {

/// The buffers a product reads or writes. Q, K, V, O, dO, dQ, dK and dV are
/// the whole tensors (the descriptors add the sample's offset); P, PV and
/// dP are the sample's [heads, s, keys] matrices: its probabilities, the
/// probabilities the values are weighted with (P, or P with attention
/// dropout applied) and their gradient.
enum class AttnBuf { Q, K, V, O, DO, DQ, DK, DV, P, PV, DP };

/// Row-major C[m, n] = alpha op(A) op(B) + beta C for `batch` products,
/// product i at offsets off + i * stride of its buffers.
struct AttnGemm {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;
  AttnBuf a = AttnBuf::Q, b = AttnBuf::K, c = AttnBuf::P;
  int64_t offA = 0, lda = 0, strideA = 0;
  int64_t offB = 0, ldb = 0, strideB = 0;
  int64_t offC = 0, ldc = 0, strideC = 0;
  int64_t batch = 1;
};

/// Which products of sample b: the scores (P = scale Q K^T, before the
/// softmax), the output (O = PV V), the backward's first half (dV += PV^T
/// dO, dP = dO V^T, before the softmax's backward) or its second (dQ = dP
/// K, dK += dP^T Q, dP now the scores' gradient).
enum class AttnPhase { Scores, Output, BackwardValues, BackwardKeys };

inline std::vector<AttnGemm> attentionGemms(const AttentionDims &d, int64_t b,
                                            AttnPhase phase) {
  const int64_t s = d.seq, t = d.keys(), hd = d.headDim, vd = d.valueDim();
  const int64_t H = d.heads, kvH = d.kvHeads, group = H / kvH;
  const int64_t qs = H * hd, ks = kvH * hd, os = H * vd, vs = kvH * vd;
  const int64_t q0 = b * s * qs, o0 = b * s * os, k0 = b * t * ks,
                v0 = b * t * vs, mat = s * t;
  // A product is described for query head h = j * group + r by its
  // buffers' offsets at (j, r) = (0, 0), and how far they move per kv
  // head j (perJ) and per query head r of a group (perR; 0 on the kv side).
  struct Operand {
    AttnBuf buf;
    int64_t off, ld, perJ, perR;
  };
  std::vector<AttnGemm> out;
  // Products that overwrite their output batch over the longer of j and r
  // (one call when either is 1: multi-head or multi-query attention);
  // those that accumulate into a kv head (dK, dV) batch over j, one call
  // per r in order, so each kv head sums its query heads r = 0, 1, ...
  auto add = [&](bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                 float alpha, float beta, Operand A, Operand B, Operand C,
                 bool accumulates) {
    const bool overJ = accumulates || kvH >= group;
    const int64_t outer = overJ ? group : kvH;
    for (int64_t i = 0; i < outer; ++i) {
      AttnGemm g;
      g.transA = ta, g.transB = tb, g.m = m, g.n = n, g.k = k;
      g.alpha = alpha, g.beta = beta;
      auto place = [&](const Operand &o, AttnBuf &buf, int64_t &off,
                       int64_t &ld, int64_t &stride) {
        buf = o.buf;
        ld = o.ld;
        off = o.off + i * (overJ ? o.perR : o.perJ);
        stride = overJ ? o.perJ : o.perR;
      };
      place(A, g.a, g.offA, g.lda, g.strideA);
      place(B, g.b, g.offB, g.ldb, g.strideB);
      place(C, g.c, g.offC, g.ldc, g.strideC);
      g.batch = overJ ? kvH : group;
      out.push_back(g);
    }
  };
  const Operand Q{AttnBuf::Q, q0, qs, group * hd, hd},
      DQ{AttnBuf::DQ, q0, qs, group * hd, hd},
      O{AttnBuf::O, o0, os, group * vd, vd},
      DO{AttnBuf::DO, o0, os, group * vd, vd},
      K{AttnBuf::K, k0, ks, hd, 0}, DK{AttnBuf::DK, k0, ks, hd, 0},
      V{AttnBuf::V, v0, vs, vd, 0}, DV{AttnBuf::DV, v0, vs, vd, 0},
      P{AttnBuf::P, 0, t, group * mat, mat},
      PV{AttnBuf::PV, 0, t, group * mat, mat},
      DP{AttnBuf::DP, 0, t, group * mat, mat};
  switch (phase) {
  case AttnPhase::Scores: // P_h = scale Q_h K_j^T
    add(false, true, s, t, hd, d.softmaxScale(), 0.0f, Q, K, P, false);
    break;
  case AttnPhase::Output: // O_h = PV_h V_j
    add(false, false, s, vd, t, 1.0f, 0.0f, PV, V, O, false);
    break;
  case AttnPhase::BackwardValues: // dV_j += PV_h^T dO_h; dP_h = dO_h V_j^T
    add(true, false, t, vd, s, 1.0f, 1.0f, PV, DO, DV, true);
    add(false, true, s, t, vd, 1.0f, 0.0f, DO, V, DP, false);
    break;
  case AttnPhase::BackwardKeys: // dQ_h = dP_h K_j; dK_j += dP_h^T Q_h
    add(false, false, s, hd, t, 1.0f, 0.0f, DP, K, DQ, false);
    add(true, false, t, hd, s, 1.0f, 1.0f, DP, Q, DK, true);
    break;
  }
  return out;
}

} // namespace trident::rt::detail

#endif // TRIDENT_RUNTIME_COMMON_ATTENTIONGEMMS_H
