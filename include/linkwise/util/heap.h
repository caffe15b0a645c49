// How the process's heap grows: a command that models a large machine allocates tens of MB in
// small pieces, and faulting them in one 4 KiB page at a time was a fifth of its time
// (docs/PERFORMANCE.md, "1024 GPUs, the whole command").
#pragma once

namespace linkwise {

/// Called once at the start of a program (the linkwise command does): blocks up to 64 MiB come from
/// the heap rather than from mappings of their own, the heap grows 64 MiB at a time and keeps what
/// is freed, and the kernel is asked to back it with transparent huge pages (MADV_HUGEPAGE; where
/// the kernel gives none, or on another C library, nothing changes but the first two). The part of
/// the heap below the first 2 MiB boundary of the advised range is taken by one block that is never
/// written or freed (address space, not memory), so that every later block lies on huge pages.
/// Changes no result, only how memory is obtained.
void use_large_heap_pages();

}  // namespace linkwise
