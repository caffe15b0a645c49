// How `linkwise bench` runs its ranks: one process driving every local GPU (nccl-tests -g N), or
// one process per GPU under mpirun (OpenMPI), as nccl-tests runs across boxes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace linkwise::measure {

struct ProcessGroup {
  int rank = 0, size = 1;
  int local_rank = 0;  ///< the process's index on its box: its GPU
  /// Rank 0's string, on every process.
  std::function<std::string(const std::string&)> broadcast = [](const std::string& s) { return s; };
  /// Sum of a value over processes.
  std::function<double(double)> sum = [](double v) { return v; };
  /// Every process's string, in rank order, on rank 0; nothing on the others.
  std::function<std::vector<std::string>(const std::string&)> gather = [](const std::string& s) {
    return std::vector<std::string>{s};
  };
  std::function<void()> finalize = [] {};
};

/// Whether this process was started by mpirun (OpenMPI's OMPI_COMM_WORLD_SIZE is set).
bool launched_by_mpirun();
/// Initialises MPI and returns the group; null with `reason` when linkwise was built without MPI.
std::optional<ProcessGroup> mpi_process_group(std::string* reason);

}  // namespace linkwise::measure
