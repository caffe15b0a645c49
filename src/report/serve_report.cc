#include "linkwise/report/serve_report.h"

#include <fmt/format.h>

#include <sstream>

#include "linkwise/report/json.h"
#include "linkwise/report/table.h"

namespace linkwise::report {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string ms(double s) { return fmt::format("{:.1f}", 1e3 * s); }
std::string pct(double x) { return fmt::format("{:.0f}%", 100 * x); }

nlohmann::json point_json(const work::ServePoint& p) {
  const auto& t = p.decode;
  return {{"concurrency", p.concurrency},
          {"rate", p.rate},
          {"running_per_replica", p.running},
          {"running_peak_per_replica", p.running_peak},
          {"steady_running_per_replica", p.steady_running},
          {"ttft_s", p.ttft_s},
          {"itl_s", p.itl_s},
          {"e2e_s", p.e2e_s},
          {"queue_s", p.queue_s},
          {"output_tokens_per_s", p.output_tokens_per_s},
          {"output_tokens_per_s_per_user", p.tokens_per_s_per_user},
          {"requests_per_s", p.requests_per_s},
          {"comm_fraction", p.comm_fraction},
          {"kv_full", p.kv_full},
          {"overloaded", p.overloaded},
          {"bound", p.bound},
          {"step",
           {{"total_s", t.total},
            {"compute_s", t.compute},
            {"memory_s", t.memory},
            {"comm_s", t.comm},
            {"pp_send_s", t.pp_send},
            {"kernels_s", t.kernels},
            {"overhead_s", t.overhead},
            {"offload_s", t.offload},
            {"bytes_per_gpu", t.bytes},
            {"flops_per_gpu", t.flops}}}};
}

}  // namespace

nlohmann::json serve_json(const work::ServeResult& r) {
  const auto& m = r.memory;
  const auto& p = r.point;
  nlohmann::json j = point_json(p);
  j["model"] = r.model;
  j["chassis"] = r.chassis;
  j["gpu"] = r.gpu_part;
  j["tp"] = r.tp;
  j["pp"] = r.pp;
  j["replicas"] = r.replicas;
  j["gpus"] = r.gpus;
  j["precision"] = r.weights_format;
  j["kv_precision"] = r.kv_format;
  j["arrivals"] = r.arrivals;
  j["chunked_prefill"] = r.chunked_prefill;
  j["async_scheduling"] = r.async_scheduling;
  j["kv_admission"] = r.kv_admission;
  j["kv_cache_GiB"] = m.kv_cache / kGiB;
  j["max_concurrency_fit"] = r.max_concurrency_fit;
  j["memory_per_gpu"] = {{"capacity_GiB", m.capacity / kGiB},
                         {"weights_GiB", m.weights / kGiB},
                         {"kv_cache_GiB", m.kv_cache / kGiB},
                         {"activations_GiB", m.activations / kGiB},
                         {"runtime_GiB", m.runtime / kGiB},
                         {"reserved_GiB", m.reserved / kGiB},
                         {"kv_bytes_per_token", m.kv_bytes_per_token},
                         {"kv_bytes_per_token_model", m.kv_bytes_per_token_model}};
  j["comm_link"] = r.comm_link;
  j["comm_algorithm"] = r.comm_algorithm;
  j["allreduces_per_token"] = r.allreduces_per_token;
  j["allreduce_bytes_per_token"] = r.allreduce_bytes_per_token;
  j["load_time_s"] = r.load.seconds;
  j["load"] = {{"seconds", r.load.seconds},
               {"bytes_from_drives", r.load.bytes_from_drives},
               {"bytes_to_gpus", r.load.bytes_to_gpus},
               {"drives", r.load.drives},
               {"bottleneck", r.load.bottleneck},
               {"notes", r.load.notes}};
  if (r.lora_bytes > 0) j["lora"] = {{"adapter_bytes", r.lora_bytes}, {"swap_s", r.lora_swap_s}};
  j["bottleneck"] = r.bottleneck;
  j["notes"] = r.notes;
  j["replayed"] = !r.replayed.empty();
  if (!r.replayed.empty()) j["preemptions"] = r.preemptions;
  if (!r.sweep.empty()) {
    j["sweep"] = nlohmann::json::array();
    for (const auto& s : r.sweep) j["sweep"].push_back(point_json(s));
    j["bends"] = nlohmann::json::array();
    for (const auto& b : r.bends)
      j["bends"].push_back({{"concurrency", b.concurrency}, {"what", b.what}});
  }
  return with_schema(std::move(j));
}

std::string serve_text(const work::ServeResult& r) {
  std::ostringstream o;
  const auto& p = r.point;
  const auto& m = r.memory;
  o << fmt::format("{} on {}: {} replica{} of tp {} x pp {} ({} x {}), weights {}, KV cache {}\n",
                   r.model, r.chassis, r.replicas, r.replicas == 1 ? "" : "s", r.tp, r.pp, r.gpus,
                   r.gpu_part, r.weights_format, r.kv_format);
  o << "engine: " << r.engine << "\n";
  for (const auto& n : r.notes) o << "note: " << n << "\n";
  o << "\n";
  Table t;
  t.header({p.rate > 0 ? fmt::format("at {:g} requests/s", p.rate)
                       : fmt::format("at {} users", p.concurrency),
            ""});
  t.row({"time to first token", fmt::format("{} ms", ms(p.ttft_s))});
  if (p.queue_s > 0) t.row({"  of which waiting for a slot", fmt::format("{} ms", ms(p.queue_s))});
  t.row({"inter-token latency", fmt::format("{} ms", ms(p.itl_s))});
  t.row({"end-to-end latency", fmt::format("{:.2f} s", p.e2e_s)});
  t.row({"output tokens/s per user", fmt::format("{:.1f}", p.tokens_per_s_per_user)});
  t.row({"output tokens/s per box", fmt::format("{:.0f}", p.output_tokens_per_s)});
  t.row({"requests/s", fmt::format("{:.3f}", p.requests_per_s)});
  if (p.running_peak > 0)  // what the replay that gave the figures above ran
    t.row({"batched per replica, replayed",
           fmt::format("{:.1f} sequences mean, {:.0f} peak", p.running, p.running_peak)});
  else
    t.row({"sequences batched per replica", fmt::format("{:.1f}", p.running)});
  o << t.render() << "\n";
  Table mt;
  mt.header({"memory per GPU", "GiB"});
  mt.row({"weights", fmt::format("{:.1f}", m.weights / kGiB)});
  mt.row({"KV cache", fmt::format("{:.1f}", m.kv_cache / kGiB)});
  mt.row({"activations", fmt::format("{:.1f}", m.activations / kGiB)});
  mt.row({"runtime (CUDA context, graphs, NCCL)", fmt::format("{:.1f}", m.runtime / kGiB)});
  mt.row({"left free by the engine", fmt::format("{:.1f}", m.reserved / kGiB)});
  mt.row({"capacity", fmt::format("{:.1f}", m.capacity / kGiB)});
  o << mt.render();
  o << fmt::format(
      "KV cache per token: {:.0f} KiB for the model, {:.0f} KiB on each GPU; {} requests fit on "
      "the "
      "box at once\n\n",
      m.kv_bytes_per_token_model / 1024, m.kv_bytes_per_token / 1024, r.max_concurrency_fit);
  const auto& s = p.decode;
  Table st;
  // A replayed point keeps the steady state's mean step (and bound): say at which batch.
  st.header({p.running_peak > 0 ? fmt::format("mean engine step (steady state at {:.1f} sequences)",
                                              p.steady_running)
                                : std::string("mean engine step"),
             "ms", "share"});
  auto row = [&](const char* name, double v) {
    if (v > 0) st.row({name, ms(v), pct(v / s.total)});
  };
  row("weights and KV cache from memory", s.memory);
  row("tensor-core compute", s.compute);
  if (s.comm > 0)
    st.row({fmt::format("links: {}{}", r.comm_link.empty() ? "collectives" : r.comm_link,
                        r.comm_algorithm.empty() ? "" : " (" + r.comm_algorithm + ")"),
            ms(s.comm), pct(s.comm / s.total)});
  row("kernel launches", s.kernels);
  row("engine overhead", s.overhead);
  row("KV offload over PCIe", s.offload);
  st.row({"step", ms(s.total), "100%"});
  o << st.render();
  if (r.allreduces_per_token > 0)
    o << fmt::format(
        "tensor parallel: {:.0f} all-reduces of {:.0f} bytes per decoded token and sequence\n",
        r.allreduces_per_token, r.allreduce_bytes_per_token);
  o << "\n";
  if (r.load.drives > 0) {
    o << fmt::format(
        "cold start: {:.1f} s to load {:.1f} GB into {} GPUs from {} NVMe drive{} (bound by {})\n",
        r.load.seconds, r.load.bytes_to_gpus / 1e9, r.gpus, r.load.drives,
        r.load.drives == 1 ? "" : "s", r.load.bottleneck);
  }
  for (const auto& n : r.load.notes) o << "  " << n << "\n";
  if (r.lora_bytes > 0)
    o << fmt::format("LoRA adapter swap: {:.0f} MB from host memory in {} ms\n", r.lora_bytes / 1e6,
                     ms(r.lora_swap_s));
  o << "bottleneck: " << r.bottleneck << "\n";
  if (!r.replayed.empty()) o << r.replayed << "\n";
  return fit_width(o.str());
}

std::string serve_sweep_text(const work::ServeResult& r) {
  std::ostringstream o;
  o << fmt::format("{} on {}: {} replica{} of tp {} x pp {}, {} sequences fit\n\n", r.model,
                   r.chassis, r.replicas, r.replicas == 1 ? "" : "s", r.tp, r.pp,
                   r.max_concurrency_fit);
  Table t;
  t.header({"users", "TTFT ms", "ITL ms", "e2e s", "tok/s/user", "tok/s box", "req/s", "links",
            "bound"});
  for (const auto& p : r.sweep)
    t.row({std::to_string(p.concurrency), ms(p.ttft_s), ms(p.itl_s), fmt::format("{:.2f}", p.e2e_s),
           fmt::format("{:.1f}", p.tokens_per_s_per_user),
           fmt::format("{:.0f}", p.output_tokens_per_s), fmt::format("{:.2f}", p.requests_per_s),
           pct(p.comm_fraction), p.bound});
  o << t.render() << "\n";
  if (r.bends.empty()) o << "the curve does not bend in this range: memory-bound throughout\n";
  for (const auto& b : r.bends) o << fmt::format("bends at {} users: {}\n", b.concurrency, b.what);
  return fit_width(o.str());
}

std::string serve_validation_markdown(const std::vector<work::ServeValidationRow>& rows) {
  auto cell = [](double pred, double meas, double scale, const char* fmtspec) {
    if (meas <= 0)
      return fmt::format(fmt::runtime(std::string(fmtspec) + " / not published"), pred * scale);
    return fmt::format(fmt::runtime(std::string(fmtspec) + " / " + fmtspec + " ({:+.0f}%)"),
                       pred * scale, meas * scale, 100 * (pred - meas) / meas);
  };
  std::string out =
      "| case | machine | TTFT ms predicted / measured | ITL ms | output tok/s | bound |\n"
      "|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    const auto& p = r.predicted;
    out += fmt::format("| {} | {} {} | {} | {} | {} | {} |\n", r.c.name, r.c.chassis,
                       fmt::format("{}", fmt::join(r.c.options.gpus, ",")),
                       cell(p.ttft_s, r.c.ttft_s, 1e3, "{:.1f}"),
                       cell(p.itl_s, r.c.itl_s, 1e3, "{:.2f}"),
                       cell(p.output_tokens_per_s, r.c.output_tokens_per_s, 1, "{:.0f}"), p.bound);
  }
  out += fmt::format("\nmedian |error|: TTFT {:.1f}%, ITL {:.1f}%, output tokens/s {:.1f}%\n",
                     100 * work::serve_validation_median(rows, 0),
                     100 * work::serve_validation_median(rows, 1),
                     100 * work::serve_validation_median(rows, 2));
  out += "\nsources and commands:\n";
  for (const auto& r : rows) {
    // The TTFT distribution where the source gives it and the row is replayed: median and P99,
    // predicted / measured (not in the medians above).
    std::string spread;
    if (r.c.ttft_median_s > 0 && r.ttft_median_s > 0)
      spread = fmt::format("; TTFT median {:.1f} / {:.1f} ms, P99 {:.1f} / {:.1f} ms",
                           r.ttft_median_s * 1e3, r.c.ttft_median_s * 1e3, r.ttft_p99_s * 1e3,
                           r.c.ttft_p99_s * 1e3);
    out += fmt::format("- {}: {}; measured with: {}{}{}\n", r.c.name, r.c.source, r.c.command,
                       spread, r.c.open.empty() ? "" : "; open: " + r.c.open);
  }
  return out;
}

nlohmann::json serve_validation_json(const std::vector<work::ServeValidationRow>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rows) {
    j.push_back({{"case", r.c.name},
                 {"source", r.c.source},
                 {"command", r.c.command},
                 {"chassis", r.c.chassis},
                 {"model", r.c.model},
                 {"open", r.c.open},
                 {"kv_admission", work::to_string(r.c.options.kv_admission)},
                 {"replayed", r.replayed},
                 {"preemptions", r.preemptions},
                 {"measured",
                  {{"ttft_s", r.c.ttft_s},
                   {"ttft_median_s", r.c.ttft_median_s},
                   {"ttft_p99_s", r.c.ttft_p99_s},
                   {"itl_s", r.c.itl_s},
                   {"output_tokens_per_s", r.c.output_tokens_per_s}}},
                 {"predicted",
                  {{"ttft_s", r.predicted.ttft_s},
                   {"ttft_median_s", r.ttft_median_s},
                   {"ttft_p99_s", r.ttft_p99_s},
                   {"itl_s", r.predicted.itl_s},
                   {"output_tokens_per_s", r.predicted.output_tokens_per_s}}},
                 {"error",
                  {{"ttft", r.ttft_error},
                   {"itl", r.itl_error},
                   {"output_tokens_per_s", r.throughput_error}}}});
  }
  return j;
}

std::string serve_output(const work::ServeRun& run, bool json) {
  if (run.validation)
    return json ? serve_validation_json(run.rows).dump(2) + "\n"
                : serve_validation_markdown(run.rows);
  if (json) return serve_json(run.result).dump(2) + "\n";
  return run.sweep ? serve_sweep_text(run.result) : serve_text(run.result);
}

}  // namespace linkwise::report
