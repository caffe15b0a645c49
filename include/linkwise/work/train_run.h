// One call behind `linkwise train`: options in, everything the report shows out.
// The CLI fills TrainOptions from its flags; report::train_text / train_json render the
// TrainResult.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/option_spec.h"
#include "linkwise/work/checkpoint.h"
#include "linkwise/work/job.h"
#include "linkwise/work/search.h"
#include "linkwise/work/step.h"
#include "linkwise/work/validation.h"

namespace linkwise::work {

struct TrainOptions {
  std::string chassis;  ///< preset name or chassis file ("" only with validation)
  std::string model;    ///< model preset or YAML file
  std::string mode = "pretrain", precision = "auto", recompute = "selective";
  std::string plan = "auto";  ///< a plan string or "auto" (search)
  std::string lora_targets = "q,k,v,o";
  std::string framework = "megatron", grad_overlap = "default", elementwise = "default",
              base_weights = "auto", tp_overlap = "default", grad_reduce = "default",
              attention = "default", recompute_early_stop = "default", optimizer_impl = "default",
              master_weights = "fp32", grad_sync = "default", tp_collectives = "per-block";
  double tokens = 0;  ///< tokens to train; 0: no time to train
  int checkpoint_every = 0;
  int recompute_every = 1;  ///< --recompute-every: one block in N recomputed (with full)
  bool checkpoint_unsharded = false, checkpoint_async = false;
  int seq = 0, micro_batch = 1, global_batch = 0, nodes = 0, lora_rank = 16, top = 5;
  bool as_designed =
      false;  ///< links at their design rate, not the trained one the chassis records
  bool scaling = false, offload = false, no_flash = false, validation = false, fp8_gather = false;
  /// Names of the flags given on the command line ("--plan", "--recompute", ..., "CHASSIS" for the
  /// positional): a flag left at its default is searched over, and flags the chosen run would
  /// ignore are rejected (the first in this order is named).
  std::vector<std::string> given;
  bool was_given(const std::string& name) const {
    return std::find(given.begin(), given.end(), name) != given.end();
  }
};

/// What the training job runs on: the header lines of the report.
struct TrainSetup {
  std::string model_id, model_name;
  double model_params = 0;
  std::string chassis_name, gpu_part;
  int chassis_gpus = 0;
  Job job;  ///< after defaults (seq, global batch) are filled in
  std::vector<std::string> notes;
  /// --plan auto: the job's choices the search tries with every plan ("recompute", "optimizer
  /// offload", "framework", "gradient overlap", "element-wise fusion"); `job` holds only their
  /// defaults.
  std::vector<std::string> searched;
};

struct TrainResult {
  enum class Kind { kValidation, kScaling, kStep };
  Kind kind = Kind::kStep;
  std::vector<ValidationRow> validation;  ///< kValidation
  TrainSetup setup;                       ///< kScaling and kStep
  std::vector<ScalingPoint> scaling;      ///< kScaling
  ScalingVerdict verdict;                 ///< kScaling
  std::optional<SearchResult> search;     ///< kStep with --plan auto
  std::string why_first;  ///< why the first plan beats the second ("" when one plan)
  StepResult step;        ///< kStep: the plan given, or the search's best
  std::optional<CheckpointCost> checkpoint;
  int checkpoint_every = 0;
  double tokens = 0, run_time_s = 0;  ///< time to train `tokens` (when > 0)
  /// kStep: false when an explicit plan does not fit in memory (the report still renders).
  bool fits() const { return kind != Kind::kStep || step.memory.fits; }
};

/// `linkwise train`'s options: flags, help, ranges and Python keywords (util/option_spec.h).
/// TrainOptions::given names options by their flag (OptionSpec::cli_name).
const std::vector<OptionSpec<TrainOptions>>& train_options();

/// Throws InputError for a flag the combination given would ignore (e.g. --plan with --scaling).
void check_train_options(const TrainOptions& options);
/// Builds the Job the options describe; throws InputError on an unknown value.
Job make_train_job(const TrainOptions& options);
/// Checks the options, then runs the validation cases, the scaling sweep, or one plan (given or
/// searched) with its checkpoint cost and time to train.
TrainResult run_train(const TrainOptions& options);
/// One plan, its search or the scaling sweep on a chassis already built (options.chassis, nodes,
/// as_designed and validation are not read): many jobs on one chassis load it once.
TrainResult run_train(const TrainOptions& options, const topo::Chassis& chassis);

}  // namespace linkwise::work
