#===- RuntimeTests.cmake - MPI and CUDA tests of the runtime -------------===#
# Included from test/unit/CMakeLists.txt.

# Collectives, point-to-point, grid mapping, ZeRO, vocab-parallel loss and a
# tensor-parallel MLP on 4 MPI ranks (2 cores: --oversubscribe).
add_executable(trident-runtime-mpi-test
  ${CMAKE_CURRENT_LIST_DIR}/Mpi/RuntimeMpiTest.cpp)
target_link_libraries(trident-runtime-mpi-test PRIVATE TridentRuntimeCpu)
target_compile_options(trident-runtime-mpi-test PRIVATE -fexceptions)
find_program(TRIDENT_MPIEXEC NAMES mpirun mpiexec)
if(TRIDENT_MPIEXEC)
  add_test(NAME runtime-mpi-4
    COMMAND ${TRIDENT_MPIEXEC} -np 4 --oversubscribe --allow-run-as-root
            $<TARGET_FILE:trident-runtime-mpi-test>)
  set_tests_properties(runtime-mpi-4 PROPERTIES TIMEOUT 120
                       ENVIRONMENT "${TRIDENT_MPI_TEST_ENV}")
  # The same with the CPU runtime's asynchronous results held back until
  # wait() (TRIDENT_RT_DEFER_ASYNC, the mode of e2e-cpu's "(deferred)" runs).
  set(TRIDENT_MPI_DEFER_ENV ${TRIDENT_MPI_TEST_ENV} TRIDENT_RT_DEFER_ASYNC=1)
  add_test(NAME runtime-mpi-4-deferred
    COMMAND ${TRIDENT_MPIEXEC} -np 4 --oversubscribe --allow-run-as-root
            $<TARGET_FILE:trident-runtime-mpi-test>)
  set_tests_properties(runtime-mpi-4-deferred PROPERTIES TIMEOUT 120
                       ENVIRONMENT "${TRIDENT_MPI_DEFER_ENV}")
else()
  message(STATUS "Trident: mpirun not found; runtime-mpi-4 is not run")
endif()

# The compare tool's exit codes and messages (built only with the tools).
if(TARGET trident-compare-params)
  add_test(NAME runtime-compare-params
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/compare-params-test.sh
            $<TARGET_FILE:trident-compare-params>
            $<TARGET_FILE:trident-runtime-mpi-test> ${TRIDENT_MPIEXEC})
  set_tests_properties(runtime-compare-params PROPERTIES
                       ENVIRONMENT "${TRIDENT_MPI_TEST_ENV}")
endif()

# The CUDA smoke test's checks against host formulas, run on the CPU
# backend: its reference sums must hold for the CPU twin, so that a failure
# on a GPU points at the CUDA kernels, not at the test.
if(TRIDENT_MPIEXEC)
  add_executable(trident-runtime-smoke-cpu
    ${CMAKE_CURRENT_LIST_DIR}/Cuda/CudaSmoke.cpp)
  target_link_libraries(trident-runtime-smoke-cpu PRIVATE TridentRuntimeCpu)
  target_compile_options(trident-runtime-smoke-cpu PRIVATE -fexceptions)
  add_test(NAME runtime-smoke-cpu
    COMMAND ${TRIDENT_MPIEXEC} -np 1 --allow-run-as-root
            $<TARGET_FILE:trident-runtime-smoke-cpu>)
  set_tests_properties(runtime-smoke-cpu PROPERTIES TIMEOUT 120
                       ENVIRONMENT "${TRIDENT_MPI_TEST_ENV}"
                       PASS_REGULAR_EXPRESSION "cpu smoke: PASSED")
endif()

# The CUDA backend's sources on the CPU (TridentRuntimeCudaEmu: the CUDA
# runtime, cuBLAS and NCCL emulated; docs/runtime.md, "CUDA source on the
# CPU"), on every machine: the smoke test's checks of every CUDA kernel
# against host formulas, also with one-rank NCCL communicators; the MPI
# test on 4 ranks sharing one emulated GPU (host-staged collectives) and
# on 4 emulated GPUs (NCCL, emulated over MPI).
if(TRIDENT_MPIEXEC)
  add_executable(trident-runtime-smoke-cuda-emu
    ${CMAKE_CURRENT_LIST_DIR}/Cuda/CudaSmoke.cpp)
  target_link_libraries(trident-runtime-smoke-cuda-emu PRIVATE
    TridentRuntimeCudaEmu)
  target_compile_options(trident-runtime-smoke-cuda-emu PRIVATE -fexceptions)
  add_executable(trident-runtime-mpi-test-cuda-emu
    ${CMAKE_CURRENT_LIST_DIR}/Mpi/RuntimeMpiTest.cpp)
  target_link_libraries(trident-runtime-mpi-test-cuda-emu PRIVATE
    TridentRuntimeCudaEmu)
  target_compile_options(trident-runtime-mpi-test-cuda-emu PRIVATE -fexceptions)
  # The emulation itself: CUDA's semantics, and each of its checks fires
  # (its expected complaints are printed, so no FAIL_REGULAR_EXPRESSION).
  add_executable(trident-cuda-emu-selftest
    ${CMAKE_CURRENT_LIST_DIR}/Cuda/EmuSelfTest.cpp)
  target_include_directories(trident-cuda-emu-selftest BEFORE PRIVATE
    ${PROJECT_SOURCE_DIR}/lib/Runtime/Cuda/Emu/include)
  target_link_libraries(trident-cuda-emu-selftest PRIVATE
    TridentRuntimeCudaEmu)
  add_test(NAME cuda-emu-selftest
    COMMAND ${TRIDENT_MPIEXEC} -np 2 --oversubscribe --allow-run-as-root
            $<TARGET_FILE:trident-cuda-emu-selftest>)
  set_tests_properties(cuda-emu-selftest PROPERTIES TIMEOUT 120
                       ENVIRONMENT "${TRIDENT_MPI_TEST_ENV};TRIDENT_CUDA_EMU_DEVICES=2"
                       PASS_REGULAR_EXPRESSION "emu self-test: PASSED")
  add_test(NAME runtime-smoke-cuda-emu
    COMMAND ${TRIDENT_MPIEXEC} -np 1 --allow-run-as-root
            $<TARGET_FILE:trident-runtime-smoke-cuda-emu>)
  set_tests_properties(runtime-smoke-cuda-emu PROPERTIES TIMEOUT 300
                       ENVIRONMENT "${TRIDENT_MPI_TEST_ENV}"
                       PASS_REGULAR_EXPRESSION "cuda smoke: PASSED"
                       FAIL_REGULAR_EXPRESSION "cuda-emu")
  # Blocks, and threads between barriers, in reverse order: a kernel whose
  # threads or blocks race gives other results in one of the two orders.
  # Not in the sanitizer pass: the order changes which results a race
  # gives, not which addresses a kernel touches, so the instrumented run
  # above checks the same accesses (and this one took 72 s there in CI).
  if(NOT TRIDENT_SANITIZE)
    add_test(NAME runtime-smoke-cuda-emu-reverse
      COMMAND ${TRIDENT_MPIEXEC} -np 1 --allow-run-as-root
              $<TARGET_FILE:trident-runtime-smoke-cuda-emu>)
    set_tests_properties(runtime-smoke-cuda-emu-reverse PROPERTIES TIMEOUT 300
                         ENVIRONMENT "${TRIDENT_MPI_TEST_ENV};TRIDENT_CUDA_EMU_ORDER=reverse"
                         PASS_REGULAR_EXPRESSION "cuda smoke: PASSED"
                         FAIL_REGULAR_EXPRESSION "cuda-emu")
  endif()
  add_test(NAME runtime-smoke-cuda-emu-nccl-self
    COMMAND bash ${PROJECT_SOURCE_DIR}/test/e2e/nccl-self.sh
            ${CMAKE_CURRENT_BINARY_DIR}/nccl-self-smoke-emu.out
            ${TRIDENT_MPIEXEC} -np 1 --allow-run-as-root
            $<TARGET_FILE:trident-runtime-smoke-cuda-emu>)
  set_tests_properties(runtime-smoke-cuda-emu-nccl-self PROPERTIES
                       TIMEOUT 300 ENVIRONMENT "${TRIDENT_MPI_TEST_ENV}"
                       FAIL_REGULAR_EXPRESSION "cuda-emu")
  add_test(NAME runtime-mpi-4-cuda-emu
    COMMAND ${TRIDENT_MPIEXEC} -np 4 --oversubscribe --allow-run-as-root
            $<TARGET_FILE:trident-runtime-mpi-test-cuda-emu>)
  set_tests_properties(runtime-mpi-4-cuda-emu PROPERTIES TIMEOUT 300
                       ENVIRONMENT "${TRIDENT_MPI_TEST_ENV}"
                       FAIL_REGULAR_EXPRESSION "cuda-emu")
  # 4 ranks on 2 GPUs: no world NCCL communicator (ranks share GPUs); the
  # groups of distinct GPUs get their own, the others stage through host
  # memory, in one run.
  add_test(NAME runtime-mpi-4-cuda-emu-2gpu
    COMMAND ${TRIDENT_MPIEXEC} -np 4 --oversubscribe --allow-run-as-root
            $<TARGET_FILE:trident-runtime-mpi-test-cuda-emu>)
  set_tests_properties(runtime-mpi-4-cuda-emu-2gpu PROPERTIES TIMEOUT 300
                       ENVIRONMENT "${TRIDENT_MPI_TEST_ENV};TRIDENT_CUDA_EMU_DEVICES=2;TRIDENT_CUDA_EMU_REPORT=1"
                       FAIL_REGULAR_EXPRESSION "cuda-emu;, 0 NCCL calls;[1-9][0-9]* split")
  add_test(NAME runtime-mpi-4-cuda-emu-nccl
    COMMAND ${TRIDENT_MPIEXEC} -np 4 --oversubscribe --allow-run-as-root
            $<TARGET_FILE:trident-runtime-mpi-test-cuda-emu>)
  # (Every rank must have made NCCL calls, on communicators split from the
  # world's: the emulation's exit report.)
  set_tests_properties(runtime-mpi-4-cuda-emu-nccl PROPERTIES TIMEOUT 300
                       ENVIRONMENT "${TRIDENT_MPI_TEST_ENV};TRIDENT_CUDA_EMU_DEVICES=4;TRIDENT_CUDA_EMU_REPORT=1"
                       FAIL_REGULAR_EXPRESSION "cuda-emu;, 0 NCCL calls;\\(0 split\\)")
endif()

# The MPI test against the CUDA runtime: built here (so that it keeps
# compiling), run on a GPU by ctest's runtime-mpi-4-cuda (below) and by
# scripts/gpu-check.sh.
if(TARGET TridentRuntimeCuda)
  add_executable(trident-runtime-mpi-test-cuda
    ${CMAKE_CURRENT_LIST_DIR}/Mpi/RuntimeMpiTest.cpp)
  target_link_libraries(trident-runtime-mpi-test-cuda PRIVATE TridentRuntimeCuda)
  target_compile_options(trident-runtime-mpi-test-cuda PRIVATE -fexceptions)
endif()

# CUDA: a tiny program must compile and link against TridentRuntimeCuda
# (no GPU is needed to build it; scripts/gpu-check.sh runs it on a GPU).
if(TARGET TridentRuntimeCuda)
  add_executable(trident-runtime-cuda-smoke
    ${CMAKE_CURRENT_LIST_DIR}/Cuda/CudaSmoke.cpp)
  target_link_libraries(trident-runtime-cuda-smoke PRIVATE TridentRuntimeCuda)
  target_compile_options(trident-runtime-cuda-smoke PRIVATE -fexceptions)
  add_test(NAME runtime-cuda-link
    COMMAND trident-runtime-cuda-smoke --link-only)
  set_tests_properties(runtime-cuda-link PROPERTIES
    PASS_REGULAR_EXPRESSION "linked backend cuda")
  # On a GPU (test/e2e/gpu-gate.sh: skipped, exit 77, where nvidia-smi
  # lists none): the smoke test's kernels against host formulas on one
  # rank, and the MPI test on 4 ranks (host-staged collectives where ranks
  # share a GPU, NCCL where each has its own).
  if(TRIDENT_MPIEXEC)
    set(TRIDENT_GPU_GATE ${PROJECT_SOURCE_DIR}/test/e2e/gpu-gate.sh)
    add_test(NAME runtime-smoke-cuda
      COMMAND bash ${TRIDENT_GPU_GATE} ${TRIDENT_MPIEXEC} -np 1
              --allow-run-as-root $<TARGET_FILE:trident-runtime-cuda-smoke>)
    set_tests_properties(runtime-smoke-cuda PROPERTIES TIMEOUT 300
                         SKIP_RETURN_CODE 77 RESOURCE_LOCK gpu
                         ENVIRONMENT "${TRIDENT_MPI_TEST_ENV}"
                         FAIL_REGULAR_EXPRESSION "cuda smoke: FAILED")
    # The same with one-rank NCCL communicators for the groups of one
    # (TRIDENT_CUDA_NCCL_SELF=1): NCCL's collectives, their in-place forms
    # and events on one GPU (ranks sharing a GPU cannot use NCCL).
    add_test(NAME runtime-smoke-cuda-nccl-self
      COMMAND bash ${TRIDENT_GPU_GATE} bash
              ${PROJECT_SOURCE_DIR}/test/e2e/nccl-self.sh
              ${CMAKE_CURRENT_BINARY_DIR}/nccl-self-smoke.out
              ${TRIDENT_MPIEXEC} -np 1 --allow-run-as-root
              $<TARGET_FILE:trident-runtime-cuda-smoke>)
    set_tests_properties(runtime-smoke-cuda-nccl-self PROPERTIES TIMEOUT 300
                         SKIP_RETURN_CODE 77 RESOURCE_LOCK gpu
                         ENVIRONMENT "${TRIDENT_MPI_TEST_ENV}")
    add_test(NAME runtime-mpi-4-cuda
      COMMAND bash ${TRIDENT_GPU_GATE} --ranks 4 ${TRIDENT_MPIEXEC} -np 4 --oversubscribe
              --allow-run-as-root $<TARGET_FILE:trident-runtime-mpi-test-cuda>)
    set_tests_properties(runtime-mpi-4-cuda PROPERTIES TIMEOUT 300
                         SKIP_RETURN_CODE 77 RESOURCE_LOCK gpu
                         ENVIRONMENT "${TRIDENT_MPI_TEST_ENV}")
  endif()
else()
  message(STATUS "Trident: CUDA runtime not built; runtime-cuda-link skipped")
endif()
