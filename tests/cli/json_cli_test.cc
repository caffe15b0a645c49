// Every command's --json against docs/json.md: an object with schema_version 1, the keys the
// document lists for it, and no percentage anywhere (no key ends in _pct).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace linkwise::testing {
namespace {

// Keys ending in _pct anywhere in `j`, as paths.
void percentages(const nlohmann::json& j, const std::string& at, std::vector<std::string>& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      if (k.size() >= 4 && k.compare(k.size() - 4, 4, "_pct") == 0) out.push_back(at + "." + k);
      percentages(it.value(), at + "." + k, out);
    }
  } else if (j.is_array()) {
    for (const auto& x : j) percentages(x, at + "[]", out);
  }
}

struct Case {
  std::string args;
  std::vector<std::string> keys;  ///< top-level keys docs/json.md lists
  std::string list;               ///< a list of objects among them, or ""
  std::vector<std::string> item;  ///< keys of each of its items
};

nlohmann::json checked(const Case& c) {
  auto r = run_cli(c.args);
  EXPECT_EQ(r.exit_code, 0) << c.args << "\n" << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.is_object()) << c.args;
  EXPECT_EQ(j.value("schema_version", 0), 1) << c.args;
  for (const auto& k : c.keys) EXPECT_TRUE(j.contains(k)) << c.args << ": no '" << k << "'";
  if (!c.list.empty()) {
    EXPECT_TRUE(j[c.list].is_array()) << c.args;
    EXPECT_FALSE(j[c.list].empty()) << c.args;
    for (const auto& x : j[c.list])
      for (const auto& k : c.item)
        EXPECT_TRUE(x.contains(k)) << c.args << ": no '" << c.list << "[]." << k << "'";
  }
  std::vector<std::string> pct;
  percentages(j, "", pct);
  EXPECT_TRUE(pct.empty()) << c.args << ": " << (pct.empty() ? "" : pct.front());
  return j;
}

TEST(JsonCli, EveryCommandFollowsTheDocumentedSchema) {
  const std::string ref = source_dir() + "/data/measured/public-reference.json";
  const std::vector<Case> cases = {
      {"presets --json", {"presets"}, "presets", {"id", "description"}},
      {"catalog --json", {"entries"}, "entries", {"id", "kind", "name"}},
      {"catalog nvlink4 --json", {"id", "figures", "attributes"}, "", {}},
      {"topo dgx-h100 --json",
       {"chassis", "boxes", "gpus", "matrix", "matrix_complete", "pairs", "pairs_complete",
        "bisection_GBps", "bisection_nvlink_GBps", "bisection_exact", "lanes", "warnings"},
       "pairs",
       {"a", "b", "class", "hops", "path_GBps", "maxflow_GBps"}},
      {"collective dgx-h100 -b 1M -e 4M --json",
       {"chassis", "op", "ranks", "boxes", "dtype", "bound_busbw_GBps", "bound_cut", "rings",
        "notes", "rows"},
       "rows",
       {"bytes", "count", "time_us", "algbw_GBps", "busbw_GBps", "algorithm", "protocol",
        "ratio_to_bound", "bottlenecks", "saturated_resources"}},
      {"train dgx-h100 --model llama3-8b --mode lora --top 2 --tokens 1e9 --json",
       {"chassis",
        "model",
        "plan",
        "gpus",
        "simulated",
        "micro_batches",
        "step_time_s",
        "tokens_per_step",
        "tokens_per_s",
        "mfu",
        "hfu",
        "memory_per_gpu_GiB",
        "memory_capacity_GiB",
        "headroom_GiB",
        "fits",
        "memory",
        "breakdown",
        "links",
        "bottleneck",
        "notes",
        "candidates",
        "ranking",
        "tokens",
        "run_time_s"},
       "links",
       {"link", "tech", "busy_fraction", "bytes_per_step", "traffic"}},
      {"train dgx-h100 --model llama3-8b --scaling --json",
       {"scaling"},
       "scaling",
       {"gpus", "fits"}},
      {"train --validation --json",
       {"cases"},
       "cases",
       {"case", "gpus", "plan", "metric", "measured", "predicted", "error", "source", "open",
        "step_time_s", "mfu", "memory_GiB", "memory_capacity_GiB"}},
      {"serve inference-appliance --model llama3.1-8b --concurrency 4 --json",
       {"model",
        "chassis",
        "gpu",
        "tp",
        "pp",
        "replicas",
        "gpus",
        "precision",
        "kv_precision",
        "arrivals",
        "chunked_prefill",
        "async_scheduling",
        "concurrency",
        "ttft_s",
        "itl_s",
        "e2e_s",
        "output_tokens_per_s",
        "requests_per_s",
        "kv_cache_GiB",
        "max_concurrency_fit",
        "memory_per_gpu",
        "comm_fraction",
        "load_time_s",
        "load",
        "bottleneck",
        "notes"},
       "",
       {}},
      {"serve dgx-h100 --model llama3.1-70b --tp 8 --sweep concurrency --sweep-max 8 --json",
       {"concurrency", "ttft_s", "itl_s", "sweep", "bends"},
       "sweep",
       {"concurrency", "ttft_s", "itl_s", "e2e_s", "output_tokens_per_s", "requests_per_s",
        "comm_fraction"}},
      {"design " + source_dir() + "/examples/design/inference-appliance-space.yaml --top 2 --json",
       {"space", "candidates", "generated", "feasible", "distinct_models", "excluded",
        "not_generated", "seconds", "threads", "ranked", "front", "relaxations"},
       "ranked",
       {"rank", "id", "name", "candidate", "objective", "on_front", "cost_usd", "power_w", "parts",
        "retimers", "budgets", "workloads"}},
      {"probe --chassis dgx-h100 --json",
       {"chassis", "gpus", "matrix", "pairs", "warnings", "notes"},
       "",
       {}},
      {"calibrate dgx-h100 " + ref + " --json",
       {"chassis", "threshold", "entries"},
       "entries",
       {"kind", "measured_GBps", "chassis", "predicted_GBps", "error", "flagged", "bound",
        "method"}},
      {"bench --fake-gpus gpus=2,p2p=300,bus=250 --sizes 1M -e 64K -n 2 -w 1 --json",
       {"format", "machine", "tool", "measurements", "devices", "nccl", "latency_us", "notes",
        "complete"},
       "nccl",
       {"op", "ranks", "nccl_version", "rows", "avg_busbw_GBps", "wrong_total", "columns"}},
  };
  for (const auto& c : cases) checked(c);
}

TEST(JsonCli, FractionsAreFractions) {
  auto j =
      checked({"calibrate dgx-h100 " + source_dir() + "/data/measured/public-reference.json --json",
               {},
               "",
               {}});
  EXPECT_DOUBLE_EQ(j["threshold"].get<double>(), 0.10);  // --threshold 10 (percent) is 0.10
  for (const auto& e : j["entries"]) {
    // error = (predicted - measured) / measured
    const double p = e["predicted_GBps"], m = e["measured_GBps"];
    EXPECT_NEAR(e["error"].get<double>(), (p - m) / m, 1e-9) << e.dump();
  }
  auto b = checked(
      {"bench --fake-gpus gpus=2,p2p=300,bus=250 --sizes 1M -e 64K -n 2 -w 1 --json", {}, "", {}});
  for (const auto& row : b["nccl"][0]["rows"]) {
    EXPECT_TRUE(row.contains("busbw_GBps"));
    EXPECT_TRUE(row.contains("bytes"));
  }
}

}  // namespace
}  // namespace linkwise::testing
