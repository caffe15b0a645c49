// work::run_serve: the serving prediction behind `linkwise serve` (options -> result, no
// rendering).
#include "linkwise/work/serve_run.h"

#include <fmt/format.h>

#include <sstream>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"

namespace linkwise::work {

ServeOptions make_serve_options(const ServeRunOptions& o) {
  ServeOptions s;
  s.tp = o.tp;
  s.pp = o.pp;
  s.replicas = o.replicas;
  std::stringstream ss(o.gpus);
  for (std::string g; std::getline(ss, g, ',');)
    if (!g.empty()) s.gpus.push_back(g);
  if (!o.gpus.empty() && s.gpus.empty())
    throw InputError(fmt::format(
        "--gpus: '{}' names no GPU; give e.g. 0,1 or 0-3, or leave --gpus out for every GPU",
        o.gpus));
  s.input = o.input;
  s.output = o.output;
  s.concurrency = o.concurrency;
  s.rate = o.rate;
  if (!o.arrivals.empty()) s.arrivals = parse_arrivals(o.arrivals, "--arrivals");
  s.precision = parse_number_format(o.precision, "--precision");
  if (!o.kv_precision.empty()) {
    s.kv_precision = parse_number_format(o.kv_precision, "--kv-precision");
    s.kv_precision_given = true;
  }
  s.prefix_hit = o.prefix_hit;
  s.expert_parallel = o.expert_parallel;
  s.kv_offload = o.kv_offload;
  if (o.load == "gds")
    s.load = LoadPath::kGds;
  else if (o.load != "page-cache")
    throw InputError(fmt::format("--load must be page-cache or gds, not '{}'", o.load));
  s.lora_rank = o.lora_rank;
  s.max_batched_tokens = o.max_batched_tokens;
  s.max_seqs = o.max_seqs;
  s.chunked_prefill = !o.no_chunked_prefill;
  s.requests = o.requests;
  if (!o.front_end.empty()) s.front_end = parse_front_end(o.front_end, "front_end");
  return s;
}

ServeRun run_serve(const ServeRunOptions& o) {
  ServeRun run;
  if (o.validation) {
    if (!o.chassis.empty() || !o.model.empty())
      throw InputError(
          "--validation runs each published case on its own machine; it takes no CHASSIS or "
          "--model");
    run.validation = true;
    run.rows = run_serve_validation();
    return run;
  }
  if (o.chassis.empty())
    throw InputError("serve needs a CHASSIS (a preset name or a chassis file)");
  if (o.model.empty())
    throw InputError("serve needs --model (a preset such as llama3.1-70b, or a model YAML file)");
  if (!o.sweep.empty() && o.sweep != "concurrency")
    throw InputError(fmt::format("--sweep takes 'concurrency', not '{}'", o.sweep));
  if (!o.sweep.empty() && o.rate > 0)
    throw InputError("--sweep concurrency is a closed loop; it takes no --rate");
  auto chassis = topo::load_chassis(o.chassis, 0, topo::link_rates(o.as_designed));
  return run_serve(o, chassis);
}

ServeRun run_serve(const ServeRunOptions& o, const topo::Chassis& chassis) {
  ServeRun run;
  if (o.model.empty())
    throw InputError("serve needs --model (a preset such as llama3.1-70b, or a model YAML file)");
  if (!o.sweep.empty() && o.sweep != "concurrency")
    throw InputError(fmt::format("--sweep takes 'concurrency', not '{}'", o.sweep));
  if (!o.sweep.empty() && o.rate > 0)
    throw InputError("--sweep concurrency is a closed loop; it takes no --rate");
  auto model = find_model(o.model);
  std::vector<int> points = o.sweep.empty() ? std::vector<int>{} : sweep_concurrencies(o.sweep_max);
  run.sweep = !points.empty();
  run.result = serve(chassis, model, make_serve_options(o), points);
  if (auto links = topo::link_rates_note(chassis); !links.empty())
    run.result.notes.push_back(links);
  return run;
}

}  // namespace linkwise::work
