// Frees CudaApi handles when a benchmark leaves, normally or by an exception.
#pragma once

#include <vector>

#include "linkwise/measure/cuda_api.h"

namespace linkwise::measure::detail {

class Handles {
 public:
  explicit Handles(CudaApi& cuda) : cuda_(cuda) {}
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  ~Handles() {
    // A device that failed may fail again while freeing: keep the first error, not a second one.
    try {
      cuda_.release_blocks();
    } catch (...) {
    }
    for (auto e : events_) try {
        cuda_.destroy_event(e);
      } catch (...) {
      }
    for (auto s : streams_) try {
        cuda_.destroy_stream(s);
      } catch (...) {
      }
    for (auto b : buffers_) try {
        cuda_.free(b);
      } catch (...) {
      }
  }
  CudaApi::Buffer buffer(MemoryKind kind, int device, std::size_t bytes) {
    buffers_.push_back(cuda_.alloc(kind, device, bytes));
    return buffers_.back();
  }
  CudaApi::Stream stream(int device) {
    streams_.push_back(cuda_.create_stream(device));
    return streams_.back();
  }
  CudaApi::Event event(int device) {
    events_.push_back(cuda_.create_event(device));
    return events_.back();
  }

 private:
  CudaApi& cuda_;
  std::vector<CudaApi::Buffer> buffers_;
  std::vector<CudaApi::Stream> streams_;
  std::vector<CudaApi::Event> events_;
};

}  // namespace linkwise::measure::detail
