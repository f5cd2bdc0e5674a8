//===- MoEExperts.h - A mixture of experts' rows, per element -------------===//
//
// The work of Common/MoE.cpp around the experts' GEMMs, one row or one
// element at a time, for the host and the device: the CPU backend runs
// these functions in loops (Cpu/CpuKernels.cpp), the CUDA backend in its
// kernels (Cuda/CudaKernels.cu), so both compute every value alike and sum
// in the same order.
//
// The rows routed to this rank's experts are laid out in expert order (an
// expert's rows in token order), indices in int32 (rt::DType::I32):
// row q's token, its (token, choice) slot in [n, k], its weight and its
// local expert; begin[e] .. begin[e + 1] - 1 are local expert e's rows;
// slotRow[t * k + j] is 1 + the row of slot (t, j), or 0 where another
// rank holds its expert.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_RUNTIME_COMMON_MOEEXPERTS_H
#define TRIDENT_RUNTIME_COMMON_MOEEXPERTS_H

#include "Activations.h"
#include "trident/Runtime/Runtime.h"

#include <cstdint>

namespace trident::rt::moe {

/// The shape of one call: n tokens of hidden size h, k choices each; the
/// experts' hidden size f (fin = 2f gated); local experts first ..
/// first + local - 1; and the experts' activation.
struct ExpertSpec {
  int64_t n = 0, h = 0, f = 0, fin = 0, k = 0, first = 0, local = 0;
  bool gated = false, outBiasHere = true;
  Activation act = Activation::Silu;
  float swigluLimit = 0.0f;
};

TRIDENT_HD inline float activate(Activation a, float v) {
  switch (a) {
  case Activation::Silu:
    return act::silu(v);
  case Activation::Relu:
    return act::relu(v);
  case Activation::Gelu:
    return act::geluErf(v);
  case Activation::GeluTanh:
    return act::geluTanh(v);
  }
  return v;
}

TRIDENT_HD inline float activateGrad(Activation a, float v) {
  switch (a) {
  case Activation::Silu:
    return act::siluGrad(v);
  case Activation::Relu:
    return act::reluGrad(v);
  case Activation::Gelu:
    return act::geluErfGrad(v);
  case Activation::GeluTanh:
    return act::geluTanhGrad(v);
  }
  return 1.0f;
}

/// gpt-oss's clamped SwiGLU of one (gate, up) pair (OpenAI 2025,
/// "gpt-oss-120b & gpt-oss-20b Model Card"; transformers' GptOssExperts)
/// and its partial derivatives (the clamps pass the gradient where the
/// value is inside, bounds included, as torch.clamp's backward does).
struct ClampedSwiglu {
  float value, dGate, dUp;
};
TRIDENT_HD inline ClampedSwiglu clampedSwiglu(float gate, float up,
                                              float limit) {
  const float g = limit < gate ? limit : gate;                    // std::min
  const float u = up < -limit ? -limit : limit < up ? limit : up; // clamp
  const float sig = act::sigmoid(kGptOssSwigluAlpha * g);
  const float glu = g * sig;
  const float dglu = sig + kGptOssSwigluAlpha * g * sig * (1.0f - sig);
  return {(u + 1.0f) * glu, gate <= limit ? (u + 1.0f) * dglu : 0.0f,
          up >= -limit && up <= limit ? glu : 0.0f};
}

/// Element j of a row's hidden activation from its first linear's output
/// `a` (fin wide): act(a_j), act(a_j) * a_{f+j} gated, or the clamped
/// SwiGLU.
TRIDENT_HD inline float hiddenValue(const ExpertSpec &s, const float *a,
                                    int64_t j) {
  if (s.swigluLimit > 0.0f)
    return clampedSwiglu(a[j], a[s.f + j], s.swigluLimit).value;
  return s.gated ? activate(s.act, a[j]) * a[s.f + j] : activate(s.act, a[j]);
}

/// The gradient of element j of the hidden activation (du) back to `a`:
/// da_j, and gated da_{f+j}.
TRIDENT_HD inline void hiddenGrad(const ExpertSpec &s, const float *a, float du,
                                  float *da, int64_t j) {
  const float gv = a[j];
  if (s.swigluLimit > 0.0f) {
    ClampedSwiglu c = clampedSwiglu(gv, a[s.f + j], s.swigluLimit);
    da[j] = du * c.dGate;
    da[s.f + j] = du * c.dUp;
  } else if (s.gated) {
    const float up = a[s.f + j];
    da[j] = du * up * activateGrad(s.act, gv);
    da[s.f + j] = du * activate(s.act, gv);
  } else {
    da[j] = du * activateGrad(s.act, gv);
  }
}

/// The choices (`expert` [n, k], global indices) are counted and laid out
/// in chunks of kChoiceChunk, one thread per (chunk, expert) on the
/// device; an expert's rows keep the choices' order whatever the chunks.
constexpr int64_t kChoiceChunk = 1024;

/// How many of choices [from, to) went to expert e.
TRIDENT_HD inline int64_t choiceCount(const int32_t *expert, int64_t from,
                                      int64_t to, int64_t e) {
  int64_t c = 0;
  for (int64_t q = from; q < to; ++q)
    c += expert[q] == e ? 1 : 0;
  return c;
}

/// Lays out local expert e's rows among choices [from, to) from row q on:
/// their token, slot, weight (from `choiceWeight` [n, k]) and expert, and
/// slotRow.
TRIDENT_HD inline void
fillExpertRows(const ExpertSpec &s, const int32_t *expert,
               const float *choiceWeight, int64_t e, int64_t from, int64_t to,
               int64_t q, int32_t *token, int32_t *slot, float *weight,
               int32_t *rowExpert, int32_t *slotRow) {
  for (int64_t c = from; c < to; ++c) {
    if (expert[c] != s.first + e)
      continue;
    token[q] = int32_t(c / s.k);
    slot[q] = int32_t(c);
    weight[q] = choiceWeight[c];
    rowExpert[q] = int32_t(e);
    slotRow[c] = int32_t(q + 1);
    ++q;
  }
}

/// Element i of token t's sum over its rows (`rows` [M, h]) in local
/// expert order: weight * (row + the expert's bias) with weights and a
/// bias [local, h] (either null: none), else the rows themselves.
TRIDENT_HD inline float combineToken(const ExpertSpec &s, const float *rows,
                                     const float *weight, const float *bias,
                                     const int32_t *rowExpert,
                                     const int32_t *slotRow, int64_t t,
                                     int64_t i) {
  float acc = 0.0f;
  int64_t last = -1;
  for (int64_t pass = 0; pass < s.k; ++pass) {
    int64_t next = -1, nextE = 0;
    for (int64_t j = 0; j < s.k; ++j) {
      const int64_t r = int64_t(slotRow[t * s.k + j]) - 1;
      if (r < 0)
        continue;
      const int64_t e = rowExpert[r];
      if (e > last && (next < 0 || e < nextE)) {
        next = r;
        nextE = e;
      }
    }
    if (next < 0)
      break;
    last = nextE;
    const float o = rows[next * s.h + i];
    acc += weight ? weight[next] * (bias ? o + bias[nextE * s.h + i] : o) : o;
  }
  return acc;
}

/// A row's weight gradient: u . back (the hidden activation and the
/// gradient reaching it before the weight), plus bOut . dy where this rank
/// adds the output bias (bOut the expert's [h], null: none).
TRIDENT_HD inline float rowGateGrad(const ExpertSpec &s, const float *u,
                                    const float *back, const float *bOut,
                                    const float *dy) {
  double dg = 0;
  for (int64_t j = 0; j < s.f; ++j)
    dg += double(u[j]) * back[j];
  if (bOut && s.outBiasHere)
    for (int64_t i = 0; i < s.h; ++i)
      dg += double(bOut[i]) * dy[i];
  return float(dg);
}

/// Column c summed over rows begin .. end - 1 of `rows` [M, cols] in order
/// onto acc, each times its weight (null: 1): an expert bias's gradient.
TRIDENT_HD inline float expertColumnSum(const float *rows, const float *weight,
                                        int64_t begin, int64_t end,
                                        int64_t cols, int64_t c, float acc) {
  for (int64_t q = begin; q < end; ++q)
    acc += weight ? weight[q] * rows[q * cols + c] : rows[q * cols + c];
  return acc;
}

} // namespace trident::rt::moe

#endif // TRIDENT_RUNTIME_COMMON_MOEEXPERTS_H
