// Host traffic of a long run: checkpoint writes (and dataset reads) through the box's PCIe tree to
// host memory and its NVMe drives, and their share of the wall-clock time.
//
// A checkpoint holds the trainable parameters' model states: bf16 weights + fp32 master + Adam m
// and v, 14 bytes per trainable parameter (Rajbhandari et al. 2020, section 3.1, less the
// gradients), plus the frozen base's weights for full jobs only (LoRA saves its adapters). Sharded
// (Megatron's distributed checkpoint, PyTorch DCP): every GPU of a box copies its share to host
// memory at once, over its own PCIe path; unsharded: one GPU copies the box's whole share. The box
// then writes its share to its NVMe drives at their summed sequential write rate (catalog
// `write_bytes_per_s`); a box without drives writes to network storage, which is not modelled (only
// the copy to host memory is counted). The step waits for the copies to host memory and, without
// `async` (Megatron --async-save), for the drive writes too:
//   exposed per checkpoint = d2h (+ write), share = exposed / (every · step + exposed).
// Dataset reads: tokens per step x 4 bytes (int32 token ids) per box from its drives, overlapped
// with the step (data loader workers); reported, normally negligible.
#pragma once

#include "linkwise/work/step.h"

namespace linkwise::work {

struct CheckpointCost {
  double bytes = 0;                ///< one checkpoint, whole job
  double box_bytes = 0;            ///< what one box writes
  double d2h_s = 0;                ///< GPUs to host memory, over the PCIe tree (engine)
  double write_s = 0;              ///< host memory to the box's drives (or NICs)
  double exposed_s = 0;            ///< per checkpoint, what the step waits for
  double share = 0;                ///< of wall-clock time
  std::string sink;                ///< "8 NVMe drives (30.4 GB/s)"
  double read_bytes_per_step = 0;  ///< dataset tokens read per step per box
};

/// Cost of a checkpoint every `every_steps` steps of `step` (a plan of `model`); `sharded` as
/// above.
CheckpointCost checkpoint_cost(StepModel& model, const StepResult& step, int every_steps,
                               bool sharded, bool async);

}  // namespace linkwise::work
