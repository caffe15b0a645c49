# measure: CUDA and NCCL benchmarks and calibration. The benchmark logic and calibration are plain C++
# tested with fakes everywhere; the real CUDA and NCCL parts build only where cmake/LinkwiseGpu.cmake
# found them (the copy kernels through nvcc, into an object library of their own).
list(APPEND LINKWISE_SOURCES
  src/measure/stats.cc src/measure/copy_bench.cc src/measure/collectives.cc src/measure/nccl_bench.cc
  src/measure/sustained.cc src/measure/nvml_telemetry.cc src/measure/measurement.cc src/measure/calibrate.cc
  src/measure/fake_gpu.cc src/measure/launch.cc src/measure/bench.cc src/measure/text_matrix.cc
  src/measure/nvbandwidth_log.cc src/measure/p2p_matrix_log.cc src/measure/calibrate_run.cc
  src/measure/nccl_tests_log.cc)
if(LINKWISE_HAVE_CUDA)
  add_library(linkwise_measure_kernels OBJECT src/measure/kernels.cu)
  target_include_directories(linkwise_measure_kernels PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  set_target_properties(linkwise_measure_kernels PROPERTIES
    CUDA_ARCHITECTURES "${LINKWISE_CUDA_ARCHITECTURES}" CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
  list(APPEND LINKWISE_SOURCES src/measure/cuda_real.cc $<TARGET_OBJECTS:linkwise_measure_kernels>)
else()
  list(APPEND LINKWISE_SOURCES src/measure/cuda_none.cc)
endif()
if(LINKWISE_HAVE_NCCL)
  list(APPEND LINKWISE_SOURCES src/measure/nccl_real.cc)
else()
  list(APPEND LINKWISE_SOURCES src/measure/nccl_none.cc)
endif()
list(APPEND LINKWISE_TEST_SOURCES
  src/measure/stats_test.cc src/measure/copy_bench_test.cc src/measure/nccl_bench_test.cc
  src/measure/sustained_test.cc src/measure/measurement_test.cc src/measure/calibrate_test.cc
  src/measure/tool_logs_test.cc src/measure/nccl_tests_log_test.cc src/measure/bench_test.cc)
