// `linkwise train` as one call: a job on a chassis, its best plan (searched, or the one given), the
// scaling curve, or the wall-clock time of a run.
//
//   work::TrainRequest r;  r.chassis = "dgx-h100";  r.model = "llama3-70b";  r.mode = "lora";
//   work::TrainResult t = work::run_train(r);   // t.best: the best plan's step
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "linkwise/work/search.h"

namespace linkwise::work {

/// The job and what to do with it, as the command line gives them (parsed and checked by run_train).
struct TrainRequest {
  std::string chassis;                 ///< a preset name or a chassis YAML file
  int nodes = 0;                       ///< copies of the chassis; 0: as the file says
  std::string model;                   ///< a model preset or YAML file
  std::string mode = "pretrain", precision = "auto", recompute = "selective";
  int seq = 0, micro_batch = 1, global_batch = 0;  ///< 0: the default
  bool flash_attention = true, offload_optimizer = false;
  int lora_rank = 16;
  std::string lora_targets = "q,k,v,o";  ///< comma-separated
  std::string plan = "auto";           ///< a plan, or "auto" to search
  int top = 5;                         ///< plans listed by the search
  bool scaling = false;                ///< the best plan at each GPU count instead
  std::string tokens;                  ///< tokens to train (a positive number), or empty
};

/// What the job is, as resolved (defaults filled in) for the report's header.
struct TrainSetup {
  std::string model_id, model_name;
  double total_params = 0;
  std::string chassis;
  int chassis_gpus = 0;
  std::string gpu_part;
  Job job;
  std::vector<std::string> notes;
};

struct TrainResult {
  TrainSetup setup;
  std::optional<std::vector<ScalingPoint>> scaling;  ///< with --scaling (then nothing below is set)
  std::optional<SearchResult> search;                ///< with --plan auto
  StepResult best;                                   ///< the searched best, or the plan given
  double tokens = 0;                                 ///< tokens to train, 0: not asked
  double run_time_s = 0;                             ///< time_to_train_s(best, tokens)
};

/// Parses the request (InputError naming what is wrong), builds the step model and runs it.
TrainResult run_train(const TrainRequest& request);

}  // namespace linkwise::work
