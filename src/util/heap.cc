#include "linkwise/util/heap.h"

#include <cstdint>
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace linkwise {

void use_large_heap_pages() {
#if defined(__GLIBC__)
  constexpr std::size_t kStep = std::size_t{64} << 20;  // heap growth and largest heap block
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  static bool done = false;
  if (done) return;
  done = true;
  // Blocks below kStep from the heap (glibc maps every block over 128 KiB on its own by default,
  // and faults it in again each time); grow by kStep; give nothing back below 2·kStep.
  if (!mallopt(M_MMAP_THRESHOLD, static_cast<int>(kStep)) ||
      !mallopt(M_TOP_PAD, static_cast<int>(kStep)) ||
      !mallopt(M_TRIM_THRESHOLD, static_cast<int>(2 * kStep)))
    return;
#if defined(MADV_HUGEPAGE)
  // Grow the heap now, then mark the grown part: the kernel backs what is touched there with 2 MiB
  // pages (one fault instead of 512). The probe is just larger than the free top of the heap, so
  // that it makes the heap grow; malloc writes the new top's header right after it, so that page
  // is touched before the advice: a 2 MiB range holding a touched page keeps 4 KiB pages for
  // good, and the advised range starts at the first boundary past the header. (A 2 MiB probe put
  // the first 2-4 MiB of the heap, which the first allocations use, on 4 KiB pages.)
  const std::size_t top = mallinfo2().keepcost;  // the free top chunk, bytes
  const std::size_t size = top + 4096;
  auto* before = static_cast<char*>(sbrk(0));
  void* probe = std::malloc(size);
  asm volatile("" : : "r"(probe) : "memory");  // kept: the compiler may not drop the pair
  auto* after = static_cast<char*>(sbrk(0));
  std::uintptr_t lo = 0, hi = 0;
  if (probe && before != reinterpret_cast<char*>(-1) && after > before) {
    const auto touched = reinterpret_cast<std::uintptr_t>(probe) + size + 64;  // the top's header
    lo = (touched + kHuge - 1) & ~(kHuge - 1);
    hi = reinterpret_cast<std::uintptr_t>(after) & ~(kHuge - 1);
    if (hi <= lo || madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE) != 0) hi = lo = 0;
  }
  std::free(probe);  // back into the top, which starts where it did
  // The heap below `lo` is never handed out: one block, never freed and never written, fills it
  // (address space only), so that every later block lies in the advised range.
  static void* below_advice = nullptr;
  if (hi > lo) {
    below_advice = std::malloc(lo - reinterpret_cast<std::uintptr_t>(probe) - 64);
    asm volatile("" : : "r"(below_advice) : "memory");
  }
#endif
#endif
}

}  // namespace linkwise
