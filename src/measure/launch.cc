#include "linkwise/measure/launch.h"

#include <cstdlib>

#ifdef LINKWISE_HAVE_MPI
#include <mpi.h>
#endif

namespace linkwise::measure {

bool launched_by_mpirun() {
  const char* s = std::getenv("OMPI_COMM_WORLD_SIZE");
  return s && std::atoi(s) > 1;
}

#ifdef LINKWISE_HAVE_MPI
std::optional<ProcessGroup> mpi_process_group(std::string*) {
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
