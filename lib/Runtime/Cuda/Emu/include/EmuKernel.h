//===- EmuKernel.h - CUDA kernels as host code (the emulation) ----*- C++ -*-===//
//
// What nvcc gives a kernel, for a host compiler: the built-in index
// variables, `__syncthreads`, the qualifiers, and TRIDENT_LAUNCH, which is
// `kernel<<<grid, block, shmem, stream>>>` under nvcc (CudaState.h) and a
// call of emu::launch here. Only CudaKernels.cu's kernels are written for
// it: no warp intrinsics but the warp matrix functions (mma.h), no
// atomics, no dynamic shared memory.
//
// A launch runs every block of the grid in order on the calling thread.
// In a block the CUDA threads run as fibers in thread order, each up to its
// next `__syncthreads` (or its end), so a barrier holds exactly as on a
// GPU; `__shared__` becomes `static` (one block at a time uses it). A
// launch is checked as the CUDA runtime checks it (block and grid limits),
// and, beyond that, every pointer argument must point into memory from
// cudaMalloc (a host pointer would fault on a GPU) and every thread of a
// block must pass the same number of barriers.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_CUDA_EMU_EMUKERNEL_H
#define TRIDENT_CUDA_EMU_EMUKERNEL_H

#include <cmath>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

namespace trident::emu {

/// The CUDA thread that runs now (set by the scheduler at every switch;
/// one launch runs at a time, under the emulation's lock).
struct ThreadIds {
  uint3 thread, block;
  dim3 blockSize, gridSize;
};
extern ThreadIds ids;

void syncthreads();

/// Runs `body(closure)` once per CUDA thread of the grid; `pointers` are
/// the launch's pointer arguments (checked). Errors go to cudaGetLastError.
void launchGrid(const char *name, dim3 grid, dim3 block, size_t shmem,
                cudaStream_t stream, void (*body)(void *), void *closure,
                const void *const *pointers, const unsigned char *writes,
                int nPointers);

/// A kernel argument of class type that holds pointers lists them with a
/// function `emuPointers(const T &)` found by argument-dependent lookup
/// (returning a range of `const void *`), so that they are checked too.
template <class T>
concept ListsPointers = requires(const T &v) { emuPointers(v); };

template <class... P> struct Launch {
  void (*kernel)(P...);
  const char *name;
  dim3 grid, block;
  size_t shmem;
  cudaStream_t stream;

  template <class... A> void operator()(A &&...a) const {
    static_assert(sizeof...(A) == sizeof...(P), "kernel argument count");
    std::tuple<P...> args(static_cast<P>(std::forward<A>(a))...);
    std::vector<const void *> pointers;
    std::vector<unsigned char> writes; // through a pointer to non-const
    std::apply(
        [&](const auto &...v) {
          (
              [&] {
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_pointer_v<T>) {
                  pointers.push_back(static_cast<const void *>(v));
                  writes.push_back(
                      !std::is_const_v<std::remove_pointer_t<T>>);
                } else if constexpr (ListsPointers<T>) {
                  for (const void *q : emuPointers(v)) {
                    pointers.push_back(q);
                    writes.push_back(0); // listed pointers are read
                  }
                }
              }(),
              ...);
        },
        args);
    struct Closure {
      void (*kernel)(P...);
      std::tuple<P...> *args;
    } c{kernel, &args};
    launchGrid(
        name, grid, block, shmem, stream,
        [](void *p) {
          auto *c = static_cast<Closure *>(p);
          std::apply(c->kernel, *c->args); // each thread its own copies
        },
        &c, pointers.data(), writes.data(),
        int(pointers.size()));
  }
};

template <class... P>
Launch<P...> launch(void (*kernel)(P...), const char *name, dim3 grid,
                    dim3 block, size_t shmem, cudaStream_t stream) {
  return Launch<P...>{kernel, name, grid, block, shmem, stream};
}

} // namespace trident::emu

inline void __syncthreads() { trident::emu::syncthreads(); }

#define threadIdx (::trident::emu::ids.thread)
#define blockIdx (::trident::emu::ids.block)
#define blockDim (::trident::emu::ids.blockSize)
#define gridDim (::trident::emu::ids.gridSize)

#define TRIDENT_LAUNCH(kernel, grid, block, shmem, stream)                     \
  ::trident::emu::launch(kernel, #kernel, grid, block, shmem, stream)

#endif // TRIDENT_CUDA_EMU_EMUKERNEL_H
