#include "linkwise/report/train_report.h"

#include <fmt/format.h>

namespace linkwise::report {

std::string scaling_verdict_text(const work::ScalingVerdict& v, int largest) {
  std::string s;
  if (v.to == 0) {
    s = fmt::format("per-GPU throughput holds within 2 % up to {} GPUs\n", largest);
  } else {
    s = fmt::format("per-GPU throughput falls most from {} to {} GPUs ({:+.1f} %); what grew most: {}, {:.0f} % -> {:.0f} % "
                    "of the step",
                    v.from, v.to, 100 * v.per_gpu_change, v.term, 100 * v.term_share_from, 100 * v.term_share_to);
    if (!v.link.empty())
      s += fmt::format("; busiest link {} ({}) busy {:.0f} % of the step", v.link, v.tech, 100 * v.link_busy);
    s += "\n";
  }
  if (v.stops_paying > 0)
    s += fmt::format("adding GPUs stops paying at {} GPUs: total tokens/s no higher than at half as many\n", v.stops_paying);
  return s;
}

nlohmann::json scaling_verdict_json(const work::ScalingVerdict& v) {
  nlohmann::json j = {{"falls_from", v.from}, {"falls_to", v.to}, {"per_gpu_change", v.per_gpu_change},
                      {"term", v.term}, {"term_share_from", v.term_share_from}, {"term_share_to", v.term_share_to},
                      {"link", v.link}, {"tech", v.tech}, {"link_busy_fraction", v.link_busy},
                      {"stops_paying_at", v.stops_paying}};
  return j;
}

std::string checkpoint_text(const work::CheckpointCost& c, int every) {
  return fmt::format("checkpoint every {} steps: {:.1f} GB ({:.1f} GB per box); GPUs to host memory {:.3g} s over the "
                     "PCIe tree, to {} {:.3g} s; the step waits {:.3g} s: {:.2f} % of wall time; dataset reads "
                     "{:.1f} MB per step per box\n",
                     every, c.bytes / 1e9, c.box_bytes / 1e9, c.d2h_s, c.sink, c.write_s, c.exposed_s, 100 * c.share,
                     c.read_bytes_per_step / 1e6);
}

nlohmann::json checkpoint_json(const work::CheckpointCost& c, int every) {
  return {{"every_steps", every},       {"bytes", c.bytes},     {"box_bytes", c.box_bytes}, {"d2h_s", c.d2h_s},
          {"write_s", c.write_s},       {"sink", c.sink},       {"exposed_s", c.exposed_s}, {"share", c.share},
          {"read_bytes_per_step", c.read_bytes_per_step}};
}

std::string job_choices(const work::Job& job) {
  std::string overlap = job.grad_overlap == work::Switch::kDefault ? "" : job.grad_overlap == work::Switch::kOn ? ", overlap on" : ", overlap off";
  std::string el = job.fused_elementwise == work::Switch::kDefault ? "" : job.fused_elementwise == work::Switch::kOn ? ", fused" : ", eager";
  return fmt::format("{}, recompute {}{}{}{}", work::to_string(job.framework), work::to_string(job.recompute), overlap, el,
                     job.offload_optimizer ? ", offload" : "");
}

std::string search_notes_text(const work::SearchResult& r) {
  std::string s;
  if (r.best.size() > 1) s += work::why_first_beats_second(r.best[0], r.best[1]) + "\n";
  if (!r.passed_over.empty())
    s += fmt::format("passed over {}: communication-bound, and a plan within 5 % of it is not\n", r.passed_over);
  return s;
}

}  // namespace linkwise::report
