#include "linkwise/work/plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <sstream>

#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "linkwise/util/limits.h"
#include "linkwise/util/text.h"
#include "linkwise/work/framework.h"

namespace linkwise::work {

std::string Plan::str() const {
  std::string s = fmt::format("tp={},pp={},dp={}", tp, pp, dp);
  if (cp > 1) s += fmt::format(",cp={}", cp);
  if (ep > 1) s += fmt::format(",ep={}", ep);
  s += fmt::format(",zero={}", zero);
  if (vpp > 1) s += fmt::format(",vpp={}", vpp);
  if (!sp && tp > 1) s += ",sp=off";
  if (micro_batch > 0) s += fmt::format(",mb={}", micro_batch);
  if (shard > 0) s += fmt::format(",shard={}", shard);
  if (order != "tp,dp,pp") s += ",order=" + order;
  return s;
}

namespace {

int parse_count(const std::string& key, const std::string& value, int lo, int hi) {
  try {
    std::size_t pos = 0;
    int v = std::stoi(value, &pos);
    if (pos == value.size() && v >= lo && v <= hi) return v;
  } catch (const std::exception&) {
  }
  throw InputError(fmt::format("--plan: '{}' must be a whole number from {} to {}, not '{}'", key,
                               lo, hi, value));
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) out.push_back(item);
  return out;
}

}  // namespace

Plan parse_plan(const std::string& text) {
  Plan p;
  // "order=dp,tp,pp" contains commas: take it off first.
  std::string rest = text;
  if (auto at = rest.find("order="); at != std::string::npos) {
    std::string tail = rest.substr(at + 6);
    std::vector<std::string> dims;
    for (const auto& d : split(tail, ',')) {
      if (d != "tp" && d != "dp" && d != "pp") break;
      dims.push_back(d);
    }
    std::vector<std::string> sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != std::vector<std::string>{"dp", "pp", "tp"})
      throw InputError(
          fmt::format("--plan: 'order' must name tp, dp and pp once each, innermost first "
                      "(e.g. order=dp,tp,pp), not '{}'",
                      tail));
    p.order = fmt::to_string(fmt::join(dims, ","));
    std::size_t end = at + 6 + p.order.size();
    rest = rest.substr(0, at) + (end < rest.size() ? rest.substr(end + 1) : "");
  }
  static const std::vector<std::string> keys = {"tp",  "pp", "dp", "cp",    "ep",   "zero",
                                                "vpp", "sp", "mb", "shard", "order"};
  std::vector<std::string> seen;
  if (text.find("order=") != std::string::npos) seen.push_back("order");
  for (const auto& part : split(rest, ',')) {
    if (part.empty()) continue;
    auto eq = part.find('=');
    if (eq == std::string::npos)
      throw InputError(fmt::format("--plan: expected key=value, not '{}' (keys: {})", part,
                                   fmt::to_string(fmt::join(keys, ", "))));
    std::string k = part.substr(0, eq), v = part.substr(eq + 1);
    if (std::find(seen.begin(), seen.end(), k) != seen.end())
      throw InputError(fmt::format("--plan: '{}' is given twice in '{}'", k, text));
    seen.push_back(k);
    if (k == "tp")
      p.tp = parse_count(k, v, 1, 1 << 20);
    else if (k == "pp")
      p.pp = parse_count(k, v, 1, 1 << 20);
    else if (k == "dp")
      p.dp = parse_count(k, v, 1, 1 << 20);
    else if (k == "cp")
      p.cp = parse_count(k, v, 1, 1 << 20);
    else if (k == "ep")
      p.ep = parse_count(k, v, 1, 1 << 20);
    else if (k == "zero")
      p.zero = parse_count(k, v, 0, 3);
    else if (k == "vpp")
      p.vpp = parse_count(k, v, 1, 1 << 10);
    else if (k == "mb")
      p.micro_batch = parse_count(k, v, 1, 1 << 20);
    else if (k == "shard")
      p.shard = parse_count(k, v, 1, 1 << 20);
    else if (k == "sp") {
      if (v != "on" && v != "off")
        throw InputError(fmt::format("--plan: 'sp' must be on or off, not '{}'", v));
      p.sp = v == "on";
    } else {
      std::string hint = did_you_mean(k, keys);
      throw InputError(fmt::format("--plan: unknown key '{}' (keys: {}){}", limits::quote_value(k),
                                   fmt::to_string(fmt::join(keys, ", ")),
                                   hint.empty() ? "" : "; " + hint));
    }
  }
  // Products of the sizes stay within limits::kMaxPlanGpus, so no count derived from them
  // overflows.
  auto product = [&](std::initializer_list<int> xs) {
    std::int64_t r = 1;
    for (int x : xs) r = limits::checked_mul(r, x).value_or(limits::kMaxPlanGpus + 1);
    return r;
  };
  if (product({p.tp, p.pp, p.dp, p.cp}) > limits::kMaxPlanGpus)
    throw InputError(p.cp > 1
                         ? fmt::format("--plan: tp·pp·dp·cp = {}·{}·{}·{} is more than {} GPUs",
                                       p.tp, p.pp, p.dp, p.cp, limits::kMaxPlanGpus)
                         : fmt::format("--plan: tp·pp·dp = {}·{}·{} is more than {} GPUs", p.tp,
                                       p.pp, p.dp, limits::kMaxPlanGpus));
  if (product({p.tp, p.ep}) > limits::kMaxPlanGpus ||
      product({p.pp, p.vpp}) > limits::kMaxPlanGpus ||
      product({std::max(1, p.micro_batch), p.dp}) > limits::kMaxPlanGpus)
    throw InputError(fmt::format("--plan: tp·ep, pp·vpp and mb·dp must each be at most {}",
                                 limits::kMaxPlanGpus));
  return p;
}

int micro_batches(const Plan& plan, const Job& job) {
  int mb = plan.micro_batch > 0 ? plan.micro_batch : job.micro_batch;
  return static_cast<int>(job.global_batch / (static_cast<std::int64_t>(mb) * plan.dp));
}

std::string plan_problem(const Plan& p, const Model& m, const Job& job, int gpus_available) {
  if (p.gpus() > gpus_available)
    return fmt::format("plan {} needs tp·pp·dp{} = {} GPUs but the chassis has {}", p.str(),
                       p.cp > 1 ? "·cp" : "", p.gpus(), gpus_available);
  if (m.heads % p.tp != 0)
    return fmt::format("tp={} does not divide the {} attention heads of {}", p.tp, m.heads, m.id);
  if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
    return fmt::format("tp={} neither divides nor is a multiple of the {} KV heads of {}", p.tp,
                       m.kv_heads, m.id);
  if (m.ffn % p.tp != 0)
    return fmt::format("tp={} does not divide the FFN width {} of {}", p.tp, m.ffn, m.id);
  if (m.layers % (p.pp * p.vpp) != 0)
    return p.vpp > 1
               ? fmt::format("pp·vpp = {} does not divide the {} layers of {}", p.pp * p.vpp,
                             m.layers, m.id)
               : fmt::format("pp={} does not divide the {} layers of {}", p.pp, m.layers, m.id);
  if (p.vpp > 1 && p.pp == 1) return "vpp > 1 (interleaving) needs pp > 1";
  if (p.ep > 1 && !m.moe()) return fmt::format("ep={} but {} has no experts", p.ep, m.id);
  if (m.experts % p.ep != 0)
    return fmt::format("ep={} does not divide the {} experts of {}", p.ep, m.experts, m.id);
  if (p.dp % p.ep != 0) return fmt::format("ep={} does not divide dp={}", p.ep, p.dp);
  int mb = p.micro_batch > 0 ? p.micro_batch : job.micro_batch;
  if (job.global_batch % (static_cast<std::int64_t>(mb) * p.dp) != 0)
    return fmt::format(
        "the global batch ({} sequences) is not a multiple of micro-batch × dp = {} × {}",
        job.global_batch, mb, p.dp);
  if (p.shard > 0 && (p.zero < 3 || p.dp % p.shard != 0 || p.shard >= p.dp))
    return fmt::format("shard={} needs zero=3 and a shard group that divides dp={} and is smaller",
                       p.shard, p.dp);
  if (std::string why = framework_problem(job, p); !why.empty()) return why;
  if (p.cp > 1) {
    // Megatron-Core's context parallelism: Transformer Engine splits every sequence into 2·cp
    // chunks (load-balanced causal attention: rank i holds chunks i and 2·cp-1-i) and runs its
    // attention as a ring of fused-attention blocks; MoE expert parallelism and HSDP beside it
    // are not modelled.
    if (job.seq % (2 * static_cast<std::int64_t>(p.cp)) != 0)
      return fmt::format(
          "cp={} splits each sequence into 2·cp = {} equal chunks: the sequence of {} tokens is "
          "not a multiple of {}",
          p.cp, 2 * p.cp, job.seq, 2 * p.cp);
    if (!job.flash_attention)
      return fmt::format(
          "cp={} needs fused attention (context parallelism runs its ring in "
          "Transformer Engine's fused attention)",
          p.cp);
    if (job.framework != Framework::kMegatron)
      return fmt::format(
          "cp={} is modelled as Megatron-Core runs it: it needs --framework megatron", p.cp);
    if (p.ep > 1) return fmt::format("cp={} beside ep={} is not modelled", p.cp, p.ep);
    if (p.shard > 0)
      return fmt::format("cp={} beside HSDP (shard={}) is not modelled", p.cp, p.shard);
  }
  int micro = static_cast<int>(job.global_batch / (static_cast<std::int64_t>(mb) * p.dp));
  if (p.vpp > 1 && micro % p.pp != 0)
    return fmt::format(
        "the interleaved schedule needs the {} micro-batches to be a multiple of pp={}", micro,
        p.pp);
  return "";
}

std::vector<int> Placement::tp_group(int dp_r, int pp_r) const {
  std::vector<int> g;
  for (int t = 0; t < tp; ++t) g.push_back(node(t, dp_r, pp_r));
  return g;
}
std::vector<int> Placement::dp_group(int tp_r, int pp_r) const {
  std::vector<int> g;
  for (int d = 0; d < dp; ++d) g.push_back(node(tp_r, d, pp_r));
  return g;
}
std::vector<int> Placement::ep_group(int tp_r, int block, int pp_r) const {
  std::vector<int> g;
  for (int d = block * ep; d < (block + 1) * ep; ++d) g.push_back(node(tp_r, d, pp_r));
  return g;
}

std::vector<int> Placement::cp_group(int tp_r, int block, int pp_r) const {
  std::vector<int> g;
  for (int d = block * cp; d < (block + 1) * cp; ++d) g.push_back(node(tp_r, d, pp_r));
  return g;
}

std::vector<int> Placement::shard_group(int tp_r, int block, int pp_r) const {
  int n = shard > 0 ? shard : dp;
  std::vector<int> g;
  for (int d = block * n; d < (block + 1) * n; ++d) g.push_back(node(tp_r, d, pp_r));
  return g;
}
std::vector<int> Placement::replica_group(int tp_r, int j, int pp_r) const {
  int n = shard > 0 ? shard : dp;
  std::vector<int> g;
  for (int d = j; d < dp; d += n) g.push_back(node(tp_r, d, pp_r));
  return g;
}

Placement place(const Plan& plan, const topo::Chassis& chassis) {
  const auto& all = chassis.gpus();
  if (plan.gpus() > static_cast<int>(all.size()))
    throw InputError(fmt::format("plan {} needs {} GPUs but {} has {}", plan.str(), plan.gpus(),
                                 chassis.name(), all.size()));
  Placement pl;
  pl.gpus.assign(all.begin(), all.begin() + plan.gpus());
  pl.tp = plan.tp, pl.pp = plan.pp, pl.dp = plan.data_ranks(), pl.ep = plan.ep, pl.cp = plan.cp,
  pl.shard = plan.shard;
  pl.stride.assign(3, 1);
  int s = 1;
  for (const auto& d : split(plan.order, ',')) {
    int idx = d == "tp" ? 0 : d == "dp" ? 1 : 2;
    pl.stride[idx] = s;
    s *= idx == 0 ? plan.tp : idx == 1 ? pl.dp : plan.pp;
  }
  return pl;
}

}  // namespace linkwise::work
