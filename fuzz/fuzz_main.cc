// libFuzzer main for one target, chosen at compile time by LINKWISE_FUZZ_TARGET (see
// CMakeLists.txt).
#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return linkwise::fuzz::LINKWISE_FUZZ_TARGET(data, size);
}
