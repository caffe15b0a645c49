// Built when nccl.h is not found: no real NcclApi.
#include "linkwise/measure/nccl_api.h"

namespace linkwise::measure {
bool built_with_nccl() { return false; }
std::unique_ptr<NcclApi> make_nccl_api(CudaApi&, std::string* reason) {
  if (reason) *reason = "linkwise was built without NCCL";
  return nullptr;
}
}  // namespace linkwise::measure
