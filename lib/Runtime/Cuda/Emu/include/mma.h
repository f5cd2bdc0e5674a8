//===- mma.h - Warp matrix functions, emulated on the host ----*- C++ -*-===//
//
// Part of the CUDA emulation (docs/runtime.md, "CUDA source on the CPU"):
// the subset of the toolkit's nvcuda::wmma API that lib/Runtime/Cuda uses,
// with its documented semantics (CUDA C++ Programming Guide, "Warp Matrix
// Functions"): a fragment is a tile that a warp holds together, and
// load_matrix_sync, mma_sync and store_matrix_sync are collective over
// the warp. How a fragment's elements spread over the lanes is
// unspecified, so a kernel may only fill a fragment, load it, multiply and
// store it; here every lane holds the whole tile.
//
// The lanes of a warp run one after another between barriers (fibers,
// EmuKernel.h), not together: so that every lane's loads see memory as
// the warp found it, as on a GPU, a store takes effect from the warp's
// last lane to run (emu::lastLaneOfWarp), when every lane has loaded. A
// kernel must therefore pass a __syncthreads between storing a tile and
// reading it, which a GPU's other warps need anyway.
//
// bf16 products are exact in fp32 and accumulate in fp32 in k order; a
// tensor core's order of accumulation is unspecified (within fp32
// rounding of this).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_CUDA_EMU_MMA_H
#define TRIDENT_CUDA_EMU_MMA_H

#include "cuda_bf16.h"
#include "cuda_runtime.h"

#include <cstddef>
#include <type_traits>

namespace trident::emu {
/// Whether the running CUDA thread is the last lane of its warp to run in
/// the emulation's order (forward or TRIDENT_CUDA_EMU_ORDER=reverse).
bool lastLaneOfWarp();
/// Counts a warp's mma_sync (once a warp) for TRIDENT_CUDA_EMU_REPORT.
void countWarpMma();
} // namespace trident::emu

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

namespace detail {
inline float widen(float x) { return x; }
inline float widen(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class Use, int M, int N, int K> struct Shape;
template <int M, int N, int K> struct Shape<matrix_a, M, N, K> {
  static constexpr int rows = M, cols = K;
};
template <int M, int N, int K> struct Shape<matrix_b, M, N, K> {
  static constexpr int rows = K, cols = N;
};
template <int M, int N, int K> struct Shape<accumulator, M, N, K> {
  static constexpr int rows = M, cols = N;
};
} // namespace detail

/// The whole rows x cols tile, row-major, in every lane.
template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment {
  static constexpr int rows = detail::Shape<Use, M, N, K>::rows;
  static constexpr int cols = detail::Shape<Use, M, N, K>::cols;
  static constexpr int num_elements = rows * cols;
  float x[num_elements];
};

template <class Use, int M, int N, int K, class T, class L>
void fill_fragment(fragment<Use, M, N, K, T, L> &f, float v) {
  for (float &e : f.x)
    e = v;
}

/// A matrix_a or matrix_b tile from memory laid out as the fragment's
/// layout says, rows (row_major) or columns (col_major) ldm elements apart.
template <class Use, int M, int N, int K, class T, class L>
void load_matrix_sync(fragment<Use, M, N, K, T, L> &f, const T *p,
                      unsigned ldm) {
  using F = fragment<Use, M, N, K, T, L>;
  static_assert(!std::is_same_v<L, void>, "an operand fragment has a layout");
  for (int r = 0; r < F::rows; ++r)
    for (int c = 0; c < F::cols; ++c)
      f.x[r * F::cols + c] =
          detail::widen(std::is_same_v<L, row_major> ? p[size_t(r) * ldm + c]
                                                     : p[size_t(c) * ldm + r]);
}

/// An accumulator tile from memory of the given layout.
template <int M, int N, int K>
void load_matrix_sync(fragment<accumulator, M, N, K, float> &f, const float *p,
                      unsigned ldm, layout_t layout) {
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c)
      f.x[r * N + c] = layout == mem_row_major ? p[size_t(r) * ldm + c]
                                               : p[size_t(c) * ldm + r];
}

/// An accumulator tile to memory, from the warp's last lane (above).
template <int M, int N, int K>
void store_matrix_sync(float *p, const fragment<accumulator, M, N, K, float> &f,
                       unsigned ldm, layout_t layout) {
  if (!::trident::emu::lastLaneOfWarp())
    return;
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c)
      (layout == mem_row_major ? p[size_t(r) * ldm + c]
                               : p[size_t(c) * ldm + r]) = f.x[r * N + c];
}

/// d = a b + c.
template <int M, int N, int K, class T, class LA, class LB>
void mma_sync(fragment<accumulator, M, N, K, float> &d,
              const fragment<matrix_a, M, N, K, T, LA> &a,
              const fragment<matrix_b, M, N, K, T, LB> &b,
              const fragment<accumulator, M, N, K, float> &c) {
  float out[M * N];
  for (int r = 0; r < M; ++r)
    for (int n = 0; n < N; ++n) {
      float acc = c.x[r * N + n];
      for (int k = 0; k < K; ++k)
        acc += a.x[r * K + k] * b.x[k * N + n];
      out[r * N + n] = acc;
    }
  for (int e = 0; e < M * N; ++e)
    d.x[e] = out[e];
  ::trident::emu::countWarpMma();
}

} // namespace nvcuda::wmma

#endif // TRIDENT_CUDA_EMU_MMA_H
