//===- CudaKernelsEmu.cpp - CudaKernels.cu for the host compiler ----------===//
//
// The CUDA kernels, unchanged, compiled against the emulation headers
// (include/cuda_runtime.h, include/EmuKernel.h) for TridentRuntimeCudaEmu.
//
//===----------------------------------------------------------------------===//

// threadIdx.x is unsigned, as in CUDA, where nvcc does not warn about
// comparing it with an int.
#pragma GCC diagnostic ignored "-Wsign-compare"

#include "../CudaKernels.cu"
