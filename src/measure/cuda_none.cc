// Built when the CUDA toolkit is not found: no real CudaApi.
#include "linkwise/measure/cuda_api.h"

namespace linkwise::measure {
bool built_with_cuda() { return false; }
std::unique_ptr<CudaApi> make_cuda_api() { return nullptr; }
}  // namespace linkwise::measure
