#include "linkwise/measure/launch.h"

#include <cstdlib>
#include <vector>

#ifdef LINKWISE_HAVE_MPI
// Only MPI's C interface is used, and libmpi is opened on first use rather than linked: loading
// OpenMPI and the libraries it needs took about 1.2 ms of every linkwise command's start
// (docs/PERFORMANCE.md). The calls below go through MPI_FN (the symbol of that name in libmpi), and
// OpenMPI's predefined handles (MPI_COMM_WORLD, MPI_INT, ...), which are addresses of libmpi's
// globals, through the same look-up.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <dlfcn.h>
#include <mpi.h>

#include <stdexcept>
#endif

namespace linkwise::measure {

bool launched_by_mpirun() {
  const char* s = std::getenv("OMPI_COMM_WORLD_SIZE");
  return s && std::atoi(s) > 1;
}

#ifdef LINKWISE_HAVE_MPI
namespace {

void* libmpi() {
  static void* handle = [] {
    void* h = nullptr;
    // RTLD_GLOBAL: OpenMPI's components, loaded by libmpi, resolve their symbols against it.
    for (const char* name : {"libmpi.so.40", "libmpi.so.12", "libmpi.so"})
      if ((h = dlopen(name, RTLD_NOW | RTLD_GLOBAL))) break;
    return h;
  }();
  return handle;
}

void* mpi_symbol(const char* name) {
  void* p = libmpi() ? dlsym(libmpi(), name) : nullptr;
  if (!p) throw std::runtime_error(std::string("MPI: libmpi has no symbol ") + name);
  return p;
}

}  // namespace

#define MPI_FN(f) reinterpret_cast<decltype(&f)>(mpi_symbol(#f))
#ifdef OMPI_PREDEFINED_GLOBAL
#undef OMPI_PREDEFINED_GLOBAL
#define OMPI_PREDEFINED_GLOBAL(type, global) (static_cast<type>(mpi_symbol(#global)))
#endif
#define MPI_Initialized MPI_FN(MPI_Initialized)
#define MPI_Init MPI_FN(MPI_Init)
#define MPI_Comm_rank MPI_FN(MPI_Comm_rank)
#define MPI_Comm_size MPI_FN(MPI_Comm_size)
#define MPI_Comm_split_type MPI_FN(MPI_Comm_split_type)
#define MPI_Comm_free MPI_FN(MPI_Comm_free)
#define MPI_Bcast MPI_FN(MPI_Bcast)
#define MPI_Allreduce MPI_FN(MPI_Allreduce)
#define MPI_Gather MPI_FN(MPI_Gather)
#define MPI_Gatherv MPI_FN(MPI_Gatherv)
#define MPI_Finalize MPI_FN(MPI_Finalize)

std::optional<ProcessGroup> mpi_process_group(std::string* reason) {
  if (!libmpi()) {
    if (reason) *reason = std::string("could not load libmpi: ") + dlerror();
    return std::nullopt;
  }
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) MPI_Init(nullptr, nullptr);
  ProcessGroup g;
  MPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g.size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g.rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &g.local_rank);
  MPI_Comm_free(&local);
  g.broadcast = [](const std::string& s) {
    unsigned long n = s.size();
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG, 0, MPI_COMM_WORLD);
    std::string out = s;
    out.resize(n);
    MPI_Bcast(out.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
    return out;
  };
  g.sum = [](double v) {
    double out = 0;
    MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return out;
  };
  g.gather = [size = g.size, rank = g.rank](const std::string& s) {
    int n = static_cast<int>(s.size());
    std::vector<int> counts(rank == 0 ? size : 0), offsets(counts.size());
    MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string all;
    if (rank == 0) {
      long total = 0;
      for (int r = 0; r < size; ++r) offsets[r] = static_cast<int>(total), total += counts[r];
      all.resize(total);
    }
    MPI_Gatherv(s.data(), n, MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR, 0,
                MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (int r = 0; r < static_cast<int>(counts.size()); ++r)
      out.push_back(all.substr(offsets[r], counts[r]));
    return out;
  };
  g.finalize = [] { MPI_Finalize(); };
  return g;
}
#else
std::optional<ProcessGroup> mpi_process_group(std::string* reason) {
  if (reason)
    *reason =
        "linkwise was built without MPI; rebuild where OpenMPI is installed to run under mpirun";
  return std::nullopt;
}
#endif

}  // namespace linkwise::measure
