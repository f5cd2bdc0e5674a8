//===- cuda_runtime.h - The CUDA runtime API, emulated on the host -*- C++ -*-===//
//
// Part of the CUDA emulation (docs/runtime.md, "CUDA source on the CPU"):
// the subset of the CUDA runtime API that lib/Runtime/Cuda uses, with the
// documented semantics, on host memory. Kernels (`__global__` functions)
// run on the calling thread, one block at a time, each CUDA thread a fiber
// of its own stack that `__syncthreads` switches away from (EmuKernel.h).
// Only the emulated runtime target (TridentRuntimeCudaEmu) puts this
// directory on its include path; the real backend uses the toolkit's.
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_CUDA_EMU_CUDA_RUNTIME_H
#define TRIDENT_CUDA_EMU_CUDA_RUNTIME_H

#include <cstddef>
#include <cstdint>

#define TRIDENT_CUDA_EMULATION 1

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorNotReady = 600,
  cudaErrorLaunchFailure = 719,
};

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

enum cudaMemPoolAttr { cudaMemPoolAttrReleaseThreshold = 4 };
enum cudaDeviceAttr {
  cudaDevAttrMaxPitch = 11,
  cudaDevAttrComputeCapabilityMajor = 75
};

struct CUstream_st;
struct CUevent_st;
struct CUmemPoolHandle_st;
using cudaStream_t = CUstream_st *;
using cudaEvent_t = CUevent_st *;
using cudaMemPool_t = CUmemPoolHandle_st *;

constexpr unsigned cudaStreamDefault = 0, cudaStreamNonBlocking = 1;
constexpr unsigned cudaEventDefault = 0, cudaEventDisableTiming = 2;

struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1)
      : x(x_), y(y_), z(z_) {}
};

const char *cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError();
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaDeviceGetPCIBusId(char *bus, int len, int device);
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr,
                                   int device);
cudaError_t cudaDeviceSynchronize();

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamQuery(cudaStream_t s);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e,
                                unsigned flags = 0);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned flags);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = nullptr);
cudaError_t cudaEventQuery(cudaEvent_t e);
cudaError_t cudaEventDestroy(cudaEvent_t e);

cudaError_t cudaMalloc(void **p, size_t bytes);
cudaError_t cudaFree(void *p);
cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t s);
cudaError_t cudaFreeAsync(void *p, cudaStream_t s);
template <class T> cudaError_t cudaMalloc(T **p, size_t bytes) {
  return cudaMalloc(reinterpret_cast<void **>(p), bytes);
}
template <class T>
cudaError_t cudaMallocAsync(T **p, size_t bytes, cudaStream_t s) {
  return cudaMallocAsync(reinterpret_cast<void **>(p), bytes, s);
}
cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *pool, int device);
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr,
                                    void *value);

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                       cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind kind, cudaStream_t s = nullptr);
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src,
                         size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src,
                              size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t s = nullptr);
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes,
                            cudaStream_t s = nullptr);
cudaError_t cudaMemset2DAsync(void *p, size_t pitch, int value, size_t width,
                              size_t height, cudaStream_t s = nullptr);

#include "EmuKernel.h"

#endif // TRIDENT_CUDA_EMU_CUDA_RUNTIME_H
