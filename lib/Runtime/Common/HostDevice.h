//===- HostDevice.h - Functions both the host and the device compile ------===//
//
// TRIDENT_HD marks a function that nvcc compiles for the host and the
// device (the CUDA kernels call it) and a host compiler compiles as an
// ordinary inline function (the CPU backend, the CUDA emulation).
//
//===----------------------------------------------------------------------===//

#ifndef TRIDENT_RUNTIME_COMMON_HOSTDEVICE_H
#define TRIDENT_RUNTIME_COMMON_HOSTDEVICE_H

#ifdef __CUDACC__
#define TRIDENT_HD __host__ __device__
#else
#define TRIDENT_HD
#endif

#endif // TRIDENT_RUNTIME_COMMON_HOSTDEVICE_H
