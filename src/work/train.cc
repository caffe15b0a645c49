#include "linkwise/work/train.h"

#include <sstream>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"

namespace linkwise::work {

namespace {

Job make_job(const TrainRequest& o) {
  Job j;
  j.mode = parse_mode(o.mode);
  j.precision = parse_precision(o.precision);
  j.recompute = parse_recompute(o.recompute);
  j.seq = o.seq;
  j.micro_batch = o.micro_batch;
  j.global_batch = o.global_batch;
  j.flash_attention = o.flash_attention;
  j.offload_optimizer = o.offload_optimizer;
  j.lora.rank = o.lora_rank;
  j.lora.targets.clear();
  std::stringstream ss(o.lora_targets);
  for (std::string t; std::getline(ss, t, ',');)
    if (!t.empty()) j.lora.targets.push_back(t);
  return j;
}

}  // namespace

TrainResult run_train(const TrainRequest& o) {
  if (o.chassis.empty()) throw InputError("train needs a CHASSIS (a preset name or a chassis file)");
  if (o.model.empty()) throw InputError("train needs --model (a preset such as llama3-70b, or a model YAML file)");
  auto chassis = topo::load_chassis(o.chassis, o.nodes);
  StepModel sm(chassis, find_model(o.model), make_job(o));
  TrainResult r;
  auto& s = r.setup;
  s.model_id = sm.model().id;
  s.model_name = sm.model().name;
  s.total_params = sm.model().total_params();
  s.chassis = chassis.name();
  s.chassis_gpus = static_cast<int>(chassis.gpus().size());
  s.gpu_part = sm.gpu().part;
  s.job = sm.job();
  s.notes = sm.notes();
  r.tokens = o.tokens.empty() ? 0 : std::stod(o.tokens);
  if (o.scaling) {
    r.scaling = scaling(sm);
    return r;
  }
  if (o.plan == "auto") {
    SearchOptions so;
    so.top = o.top;
    r.search = search_plans(sm, so);
    r.best = r.search->best.front();
  } else {
    r.best = sm.simulate(parse_plan(o.plan));
  }
  if (r.tokens > 0) r.run_time_s = time_to_train_s(r.best, r.tokens);
  return r;
}

}  // namespace linkwise::work
