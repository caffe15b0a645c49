#include "linkwise/work/serve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_map>

#include "linkwise/comm/predict.h"
#include "linkwise/comm/transport.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/util/error.h"
#include "linkwise/work/compute.h"
#include "linkwise/work/memory.h"
#include "work/serve_impl.h"

namespace linkwise::work {

const char* to_string(NumberFormat f) {
  switch (f) {
    case NumberFormat::kBf16:
      return "bf16";
    case NumberFormat::kFp8:
      return "fp8";
    case NumberFormat::kInt4:
      return "int4";
  }
  return "?";
}

NumberFormat parse_number_format(const std::string& s, const std::string& flag) {
  if (s == "bf16") return NumberFormat::kBf16;
  if (s == "fp8") return NumberFormat::kFp8;
  if (s == "int4") return NumberFormat::kInt4;
  throw InputError(fmt::format("{} must be bf16, fp8 or int4, not '{}'", flag, s));
}

const char* to_string(Arrivals a) {
  switch (a) {
    case Arrivals::kBurst:
      return "burst";
    case Arrivals::kPoisson:
      return "poisson";
    case Arrivals::kDefault:
      break;
  }
  return "default";
}

const char* to_string(FrontEnd f) {
  switch (f) {
    case FrontEnd::kOffline:
      return "offline (no HTTP)";
    case FrontEnd::kNim:
      return "NIM";
    case FrontEnd::kSglang:
      return "SGLang HTTP server";
    case FrontEnd::kTrtllmServe:
      return "trtllm-serve";
    case FrontEnd::kVllmApiServer:
      break;
  }
  return "vLLM API server";
}

FrontEnd parse_front_end(const std::string& s, const std::string& flag) {
  if (s == "vllm") return FrontEnd::kVllmApiServer;
  if (s == "offline") return FrontEnd::kOffline;
  if (s == "nim") return FrontEnd::kNim;
  if (s == "sglang") return FrontEnd::kSglang;
  if (s == "trtllm-serve") return FrontEnd::kTrtllmServe;
  throw InputError(
      fmt::format("{} must be vllm, offline, nim, sglang or trtllm-serve, not '{}'", flag, s));
}

const char* to_string(KvAdmission a) { return a == KvAdmission::kPrompt ? "prompt" : "whole-life"; }

KvAdmission parse_kv_admission(const std::string& s, const std::string& flag) {
  if (s == "whole-life") return KvAdmission::kWholeLife;
  if (s == "prompt") return KvAdmission::kPrompt;
  throw InputError(fmt::format("{} must be whole-life or prompt, not '{}'", flag, s));
}

Arrivals parse_arrivals(const std::string& s, const std::string& flag) {
  if (s == "burst") return Arrivals::kBurst;
  if (s == "poisson") return Arrivals::kPoisson;
  throw InputError(fmt::format("{} must be burst or poisson, not '{}'", flag, s));
}

double bytes_per_value(NumberFormat f) {
  switch (f) {
    case NumberFormat::kBf16:
      return 2;
    case NumberFormat::kFp8:
      return 1;
    // 4 bits plus a 2-byte scale per group of 128 weights (AWQ, Lin et al. 2024, section 4; GPTQ
    // group size 128): 0.5 + 2/128 bytes.
    case NumberFormat::kInt4:
      return 0.5 + 2.0 / 128;
  }
  return 2;
}

std::vector<int> sweep_concurrencies(int max) {
  std::vector<int> out;
  for (int c = 1; c <= max; c *= 2) out.push_back(c);
  if (out.empty() || out.back() != max) out.push_back(max);
  return out;
}

namespace detail {

double head_dim(const Model& m) {
  return m.head_dim > 0 ? m.head_dim : static_cast<double>(m.hidden) / m.heads;
}

EngineFigures engine_figures(double gpu_memory_bytes, const std::string& part) {
  EngineFigures e;
  // vLLM V1 defaults (vllm/engine/arg_utils.py, EngineArgs._set_default_args_v1, v0.8-v0.10): on
  // GPUs with at least 70 GiB the OpenAI server batches up to 8192 tokens per step and 1024
  // sequences, on smaller ones 2048 tokens and 256 sequences. A100s take the small defaults
  // whatever their memory (`"a100" not in device_name`: larger budgets cut the A100's throughput,
  // vLLM PR #17885; checked by tests/engine/test_arg_utils.py, test_defaults_with_usage_context).
  bool a100 = part.rfind("a100", 0) == 0;
  bool big = gpu_memory_bytes >= 70.0 * (1ull << 30) && !a100;
  e.max_batched_tokens = big ? 8192 : 2048;
  e.max_seqs = big ? 1024 : 256;
  return e;
}

double front_end_latency_s(const ServeOptions& o) {
  switch (o.front_end) {
    case FrontEnd::kVllmApiServer:
      return kVllmApiServerLatencyS + o.tokenizer_batch_wait_s;
    case FrontEnd::kSglang:
      return kSglangFrontEndLatencyS;
    case FrontEnd::kOffline:
    case FrontEnd::kNim:
    case FrontEnd::kTrtllmServe:
      break;
  }
  return 0;
}

}  // namespace detail

using detail::head_dim;

ServeModel::ServeModel(const topo::Chassis& chassis, Model model, ServeOptions options)
    : impl_(std::make_unique<Impl>(chassis, std::move(model), std::move(options))) {}
ServeModel::~ServeModel() = default;
ServeModel::ServeModel(ServeModel&&) noexcept = default;

const ServeMemory& ServeModel::memory() const { return impl_->mem; }
int ServeModel::max_concurrency_fit() const { return impl_->fit_box; }
int ServeModel::max_batched_tokens() const { return impl_->engine.max_batched_tokens; }

bool ServeModel::burst_past_kv(int requests) const {
  const Impl& m = *impl_;
  const ServeOptions& o = m.opt;
  const double per_replica = std::ceil(static_cast<double>(requests) / m.replicas);
  const double hit = o.prefix_hit;
  return per_replica > m.engine.max_seqs ||
         per_replica * ((1 - hit) * o.input + o.output) > m.mem.kv_tokens - hit * o.input;
}

ServeModel::Impl::Impl(const topo::Chassis& c, Model m, ServeOptions o)
    : chassis(c), model(std::move(m)), opt(std::move(o)) {
  validate();
  place();
  size_memory();
  build_comms();
}

void ServeModel::Impl::validate() {
  const Model& m = model;
  if (opt.tp < 1) throw InputError(fmt::format("--tp must be at least 1, not {}", opt.tp));
  if (opt.pp < 1) throw InputError(fmt::format("--pp must be at least 1, not {}", opt.pp));
  if (opt.replicas < 0)
    throw InputError(fmt::format("--replicas must be at least 1, not {}", opt.replicas));
  if (m.heads % opt.tp != 0)
    throw InputError(
        fmt::format("--tp {} does not divide the {} attention heads of {}", opt.tp, m.heads, m.id));
  if (m.ffn % opt.tp != 0)
    throw InputError(
        fmt::format("--tp {} does not divide the FFN width {} of {}", opt.tp, m.ffn, m.id));
  if (opt.pp > m.layers)
    throw InputError(fmt::format("--pp {} exceeds the {} layers of {}", opt.pp, m.layers, m.id));
  if (opt.input < 1)
    throw InputError(fmt::format("--input must be at least 1 token, not {}", opt.input));
  if (opt.output < 1)
    throw InputError(fmt::format("--output must be at least 1 token, not {}", opt.output));
  int max_ctx = m.max_context > 0 ? m.max_context : m.seq;
  if (static_cast<long long>(opt.input) + opt.output > max_ctx)
    throw InputError(fmt::format(
        "--input {} + --output {} = {} tokens exceeds the {}-token context of {}", opt.input,
        opt.output, static_cast<long long>(opt.input) + opt.output, max_ctx, m.id));
  if (opt.concurrency < 0)
    throw InputError(fmt::format("--concurrency must be at least 1, not {}", opt.concurrency));
  if (!(opt.rate >= 0) || !std::isfinite(opt.rate))
    throw InputError(
        fmt::format("--rate must be a positive number of requests/s, not {}", opt.rate));
  if (opt.concurrency > 0 && opt.rate > 0)
    throw InputError("--concurrency (closed loop) and --rate (open loop) exclude each other");
  if (!opt.chunked_prefill && opt.max_batched_tokens > 0 &&
      opt.input * (1 - opt.prefix_hit) > opt.max_batched_tokens)
    throw InputError(fmt::format(
        "--no-chunked-prefill: a prompt of {} tokens does not fit the {}-token budget of a step "
        "(--max-batched-tokens)",
        opt.input, opt.max_batched_tokens));
  if (opt.rate > 0 && opt.arrivals == Arrivals::kBurst)
    throw InputError(
        "--arrivals burst describes a closed loop's clients; an open loop (--rate) arrives as "
        "poisson");
  if (!(opt.prefix_hit >= 0 && opt.prefix_hit < 1))
    throw InputError(
        fmt::format("--prefix-cache must be a hit fraction in [0, 1), not {}", opt.prefix_hit));
  if (opt.kv_precision_given && opt.kv_precision == NumberFormat::kInt4)
    throw InputError(
        "--kv-precision must be bf16 or fp8 (no serving engine keeps an int4 KV cache)");
  if (!opt.kv_precision_given)
    opt.kv_precision =
        opt.precision == NumberFormat::kFp8 ? NumberFormat::kFp8 : NumberFormat::kBf16;
  if (opt.expert_parallel && !m.moe())
    throw InputError(
        fmt::format("--expert-parallel needs a mixture-of-experts model; {} is dense", m.id));
  if (opt.expert_parallel && m.experts % opt.tp != 0)
    throw InputError(
        fmt::format("--tp {} does not divide the {} experts of {}", opt.tp, m.experts, m.id));
  if (opt.max_batched_tokens < 0 || opt.max_seqs < 0)
    throw InputError("--max-batched-tokens and --max-seqs must be positive");
  if (opt.requests < 0)
    throw InputError(fmt::format("--requests must be at least 1, not {}", opt.requests));
  if (opt.requests > 0 && opt.rate > 0)
    throw InputError(
        "--requests describes a closed loop's finite benchmark, not an open loop (--rate)");
  if (opt.requests > 0 && opt.concurrency > opt.requests)
    throw InputError(fmt::format(
        "--requests {} is fewer than the {} clients of --concurrency: a finite benchmark's clients "
        "send at least one request each",
        opt.requests, opt.concurrency));
  if (opt.lora_rank < 0)
    throw InputError(fmt::format("--lora-rank must be positive, not {}", opt.lora_rank));
}

void ServeModel::Impl::place() {
  std::vector<int> gpus;
  if (opt.gpus.empty()) {
    gpus = chassis.gpus();
  } else {
    // Each item: a GPU number (3), a range (0-3), or a name (GPU3, gpu3, b1/gpu3).
    auto digits = [](const std::string& t) {
      return !t.empty() && t.size() < 7 &&
             std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    std::vector<std::string> names;
    for (const auto& item : opt.gpus) {
      auto dash = item.find('-');
      if (dash != std::string::npos && digits(item.substr(0, dash)) &&
          digits(item.substr(dash + 1))) {
        int lo = std::stoi(item.substr(0, dash)), hi = std::stoi(item.substr(dash + 1));
        if (hi < lo) throw InputError(fmt::format("--gpus: range '{}' runs backwards", item));
        if (hi - lo > 4096)
          throw InputError(fmt::format("--gpus: range '{}' is longer than any chassis", item));
        for (int g = lo; g <= hi; ++g) names.push_back(fmt::format("GPU{}", g));
      } else {
        names.push_back(digits(item) ? "GPU" + item : item);
      }
    }
    for (const auto& name : names) {
      int n = chassis.find_display(name);
      if (n < 0 || chassis.node(n).kind != topo::NodeKind::kGpu)
        throw InputError(fmt::format("--gpus: '{}' is not a GPU of {}", name, chassis.name()));
      if (std::find(gpus.begin(), gpus.end(), n) != gpus.end())
        throw InputError(fmt::format("--gpus: '{}' is listed twice", name));
      gpus.push_back(n);
    }
  }
  int per = opt.tp * opt.pp;
  if (static_cast<int>(gpus.size()) < per)
    throw InputError(fmt::format("--tp {} x --pp {} needs {} GPUs; {} has {}{}", opt.tp, opt.pp,
                                 per, chassis.name(), gpus.size(),
                                 opt.gpus.empty() ? "" : " in --gpus"));
  int most = static_cast<int>(gpus.size()) / per;
  replicas = opt.replicas > 0 ? opt.replicas : most;
  if (replicas > most)
    throw InputError(
        fmt::format("--replicas {} of tp {} x pp {} needs {} GPUs; only {} are available", replicas,
                    opt.tp, opt.pp, static_cast<long long>(replicas) * per, gpus.size()));
  // GPUs no replica takes: named in --gpus, a mistake (exit 2); the chassis' own GPUs beyond a
  // multiple of tp x pp, a note.
  if (const std::size_t used = static_cast<std::size_t>(replicas) * per; used < gpus.size()) {
    std::string idle;
    for (std::size_t i = used; i < gpus.size(); ++i)
      idle += (i == used ? "" : ", ") + chassis.display_name(gpus[i]);
    const auto what = fmt::format("{} replica{} of tp {} x pp {} use{} {} of the {} GPUs", replicas,
                                  replicas == 1 ? "" : "s", opt.tp, opt.pp,
                                  replicas == 1 ? "s" : "", used, gpus.size());
    if (!opt.gpus.empty())
      throw InputError(fmt::format("--gpus: {} would be left idle ({}): {}", idle, what,
                                   opt.replicas > 0
                                       ? fmt::format("list {} GPUs or drop --replicas", used)
                                       : fmt::format("list a multiple of {} GPUs", per)));
    if (opt.replicas == 0) notes.push_back(fmt::format("{} idle: {}", idle, what));
  }
  groups.assign(replicas, {});
  for (int r = 0; r < replicas; ++r)
    for (int i = 0; i < per; ++i) groups[r].push_back(gpus[r * per + i]);
  // The slowest GPU sets every replica's pace.
  Precision compute = opt.precision == NumberFormat::kFp8 ? Precision::kFp8 : Precision::kAuto;
  bool first = true;
  for (const auto& g : groups)
    for (int n : g) {
      const auto& node = chassis.node(n);
      Precision p = compute;
      if (p == Precision::kFp8 && node.fig("fp8_dense_tflops", -1) <= 0)
        p = Precision::kAuto;  // weight-only fp8
      GpuSpec s = gpu_spec(node, p);
      if (first || s.memory_bytes_per_s < gpu.memory_bytes_per_s || s.peak_flops < gpu.peak_flops ||
          s.memory_bytes < gpu.memory_bytes) {
        if (!first && s.part != gpu.part)
          notes.push_back(fmt::format("mixed GPUs: {} paces every replica", s.part));
        gpu = s;
        gpu_node = n;
        // Attention runs in 16 bits whatever the weights (FlashAttention-2/3 in vLLM and SGLang).
        attention_peak_flops = gpu_spec(node, Precision::kAuto).peak_flops;
        fp8_matmuls = p == Precision::kFp8;
      }
      first = false;
    }
  // 16-bit weights on a GPU without BF16 (Volta, Turing) run as fp16 at its fp16 rate
  // (gpu_spec's kAuto); vLLM refuses bfloat16 below compute capability 8.0 and asks for
  // --dtype half (vllm/platforms/cuda.py, check_if_supports_dtype).
  if (opt.precision == NumberFormat::kBf16 &&
      chassis.node(gpu_node).fig("bf16_dense_tflops", -1) <= 0)
    notes.push_back(fmt::format(
        "{} has no BF16 tensor cores: 16-bit weights run as fp16 (vLLM: --dtype half)", gpu.part));
  if (opt.precision == NumberFormat::kFp8 &&
      chassis.node(gpu_node).fig("fp8_dense_tflops", -1) <= 0)
    notes.push_back(
        fmt::format("{} has no FP8 tensor cores: fp8 weights are widened to 16 bits in the matmuls "
                    "(weight-only, as Marlin kernels run them)",
                    gpu.part));
  // The GPU as the step's GEMMs see it (stage_step): the weight matmuls at the weights' peak and
  // the burst η (times the FP8 figure on FP8 tensor cores), the LM head at the 16-bit peak.
  gemm_gpu = gpu;
  gemm_gpu.gemm_efficiency = gpu.burst_gemm_efficiency * (fp8_matmuls ? kFp8GemmShareOfEta : 1.0);
  head_gpu = gpu;
  head_gpu.peak_flops = attention_peak_flops;
  head_gpu.gemm_efficiency = gpu.burst_gemm_efficiency;
  engine = detail::engine_figures(gpu.memory_bytes, gpu.part);
  if (opt.max_batched_tokens > 0) engine.max_batched_tokens = opt.max_batched_tokens;
  if (opt.max_seqs > 0) engine.max_seqs = opt.max_seqs;
}

void ServeModel::Impl::size_memory() {
  const Model& m = model;
  double wb = bytes_per_value(opt.precision), kvb = bytes_per_value(opt.kv_precision);
  double d = head_dim(m), tp = opt.tp;
  layers_stage = std::ceil(static_cast<double>(m.layers) / opt.pp);
  // Embedding and output projection stay in 16 bits in quantized checkpoints (AWQ, GPTQ and FP8
  // leave them unquantized); on the first and last stage, split tp ways over the vocabulary.
  double embed_bytes = 2 * m.embedding_params() / tp;
  double stage_embed = opt.pp == 1 ? embed_bytes : embed_bytes / 2;
  // Norms stay 16-bit; everything else in layer_params is a matmul weight.
  double matmul_params = m.layer_params() - 2.0 * m.hidden;
  // With expert parallelism each GPU holds E/tp whole experts instead of a 1/tp slice of each: the
  // same bytes.
  double layer_bytes = matmul_params * wb / tp + 2.0 * 2 * m.hidden;
  w_layer_bytes = layer_bytes;
  w_expert_bytes_layer = m.moe() ? m.experts * m.expert_params() * wb / tp : 0;
  w_stage_bytes = layers_stage * layer_bytes + stage_embed;
  kv_heads_gpu = std::max(1.0, m.kv_heads / tp);  // replicated when tp > g (vLLM, Megatron)
  mem.kv_bytes_per_token = 2 * layers_stage * kv_heads_gpu * d * kvb;
  mem.kv_bytes_per_token_model = 2.0 * m.layers * m.kv_heads * d * kvb;
  mem.capacity = gpu.memory_bytes;
  mem.weights = w_stage_bytes;
  // Activation peak of the profiling step (B tokens through one layer, 16-bit): residual and norm
  // output, Q/K/V, attention output, the MLP's gate and up halves and their product, and the fp32
  // logits of the sequences sampled in a step.
  double B = engine.max_batched_tokens;
  double qkv = (m.heads + 2.0 * std::max<double>(m.kv_heads, tp)) * d / tp;
  double f_local = static_cast<double>(m.ffn) / tp * (m.moe() ? m.top_k : 1);
  mem.activations = 2 * B * (3.0 * m.hidden + qkv + m.heads * d / tp + 3 * f_local) +
                    4.0 * std::min<double>(B, engine.max_seqs) * m.vocab / tp;
  mem.runtime = kRuntimeBytes;
  mem.reserved = (1 - kGpuMemoryUtilization) * mem.capacity;
  mem.kv_cache = mem.capacity - mem.reserved - mem.runtime - mem.weights - mem.activations;
  double shortfall = -mem.kv_cache;
  if (mem.kv_cache < mem.kv_bytes_per_token * (opt.input + opt.output)) {
    throw InputError(
        fmt::format("{} does not fit on {} with tp {} x pp {} in {}: each GPU needs {:.1f} GiB of "
                    "weights, {:.1f} GiB of "
                    "activations and {:.1f} GiB of runtime and reserve, {:.1f} GiB for one "
                    "request's KV cache, of {:.1f} GiB{}",
                    model.id, gpu.part, opt.tp, opt.pp, to_string(opt.precision),
                    mem.weights / kGiB, mem.activations / kGiB, (mem.runtime + mem.reserved) / kGiB,
                    mem.kv_bytes_per_token * (opt.input + opt.output) / kGiB, mem.capacity / kGiB,
                    shortfall > 0 ? fmt::format(" (short by {:.1f} GiB)", shortfall / kGiB) : ""));
  }
  mem.fits = true;
  mem.kv_tokens = mem.kv_cache / mem.kv_bytes_per_token;
  double hit = opt.prefix_hit;
  double shared = hit * opt.input;  // one copy of the shared prefix
  // A request holds its prompt (less the shared prefix) and the tokens it has generated. Admitted
  // for its whole life (KvAdmission::kWholeLife) it is counted at its end, input + output.
  // Admitted when its first chunk fits (kPrompt, vLLM V1: vllm/v1/core/sched/scheduler.py
  // allocates blocks for the tokens each step schedules and preempts the latest running request,
  // to recompute it later, when any running request's tokens find too few), the running set grows
  // until the cache is full. With Poisson arrivals (requests spread over their lives) each holds
  // input + output/2 on average, and a steady state whose freed blocks (a finished request's input
  // + output) match the blocks its decodes and admitted prompts take needs no preemption. A closed
  // loop with burst arrivals and fixed lengths keeps its clients in step: they reach their ends
  // together, so without preemption no more of them fit than whole lives do (input + output);
  // beyond that vLLM preempts and recomputes all through the run, which only the replay steps
  // through (docs/serving.md, "Memory and admission").
  const bool spread = opt.rate > 0 || !burst_arrivals();
  double per_seq =
      (1 - hit) * opt.input +
      (opt.kv_admission == KvAdmission::kPrompt && spread ? opt.output / 2.0 : opt.output);
  fit_replica = static_cast<int>(
      std::min<double>(engine.max_seqs, std::floor((mem.kv_tokens - shared) / per_seq)));
  fit_replica = std::max(fit_replica, 1);
  fit_box = fit_replica * replicas;
}

void ServeModel::Impl::build_comms() {
  // The chassis file's `nccl:` settings, as the engine's NCCL communicators run them.
  const comm::CommOptions nccl = comm::nccl_options(chassis);
  for (const auto& g : groups) {
    Replica r;
    for (int s = 0; s < opt.pp; ++s) {
      std::vector<int> ranks(g.begin() + s * opt.tp, g.begin() + (s + 1) * opt.tp);
      if (opt.tp > 1) r.tp.push_back(std::make_unique<comm::Communicator>(chassis, ranks, nccl));
      if (s + 1 < opt.pp)
        r.pp.push_back(std::make_unique<comm::Communicator>(
            chassis, std::vector<int>{g[s * opt.tp], g[(s + 1) * opt.tp]}, nccl));
    }
    reps.push_back(std::move(r));
  }
}

double ServeModel::Impl::collective(const comm::Communicator& c, comm::Op op, double bytes,
                                    std::string* link, std::string* algo) const {
  // Sizes repeat within a sweep: round up to 64 bytes, and above 64 KiB to steps of 1/256 of a
  // doubling (0.3%), and remember.
  double key_bytes = std::max(64.0, std::ceil(bytes / 64) * 64);
  if (key_bytes > 65536) key_bytes = std::exp2(std::ceil(std::log2(key_bytes) * 256) / 256);
  auto key = std::make_tuple(&c, static_cast<int>(op), key_bytes);
  auto it = cache.find(key);
  if (it == cache.end()) {
    auto p = c.predict(op, key_bytes);
    Cached v{p.time_s, p.bottlenecks.empty() ? std::string() : p.bottlenecks.front(),
             fmt::format("{}/{}", comm::to_string(p.algorithm), comm::to_string(p.protocol))};
    it = cache.emplace(key, std::move(v)).first;
  }
  if (link) *link = it->second.link;
  if (algo) *algo = it->second.algo;
  return it->second.time_s;
}

StepTime ServeModel::Impl::stage_step(int replica, int stage, double D, double ctx_d, double C,
                                      double ctx_p, bool last) const {
  const Model& m = model;
  double tp = opt.tp, d = head_dim(m), L = layers_stage;
  double M = D + C;
  StepTime t;
  if (M <= 0) return t;
  double eta = gpu.burst_gemm_efficiency, W = gpu.memory_bytes_per_s * kMemoryEfficiency;
  // Weight matmuls: each GEMM of the layer through the shared GEMM model (work/compute.h
  // gemm_parts: tile and wave quantization, split-K, its own bytes at the memory rate), at m = the
  // step's M tokens, its weight at the checkpoint's bytes per value.
  const GpuSpec& lin = gemm_gpu;
  const double wb = bytes_per_value(opt.precision), h = m.hidden;
  double lin_c = 0, lin_m = 0, launches = 0, wbytes = 0;
  auto add = [&](const GpuSpec& g, double rows, double n, double k, double count, double bytes,
                 double times) {
    GemmTime p = gemm_parts(g, rows, n, k, count, bytes);
    (p.memory_bound() ? lin_m : lin_c) += times * std::max(p.compute_s, p.memory_s);
    launches += times * p.launch_s;
    wbytes += times * bytes * n * k * count;
  };
  const double up = m.gated_ffn ? 2 : 1;
  // The dense layer's GEMMs at M rows. For one count of row tiles each side is a line in M
  // (gemm_parts at two row counts of the same tiles gives it), kept per tile count: a sweep
  // evaluates the step at thousands of M.
  const int row_tiles = static_cast<int>(std::ceil(M / lin.tile_m));
  if (row_tiles >= static_cast<int>(gemm_lines.size())) gemm_lines.resize(row_tiles + 1);
  auto& lines = gemm_lines[row_tiles];
  const int dense = m.moe() ? 2 : 4;  // QKV, output; gate/up and down when not MoE
  if (!lines.valid) {
    const double shapes[4][2] = {{(m.heads / tp + 2 * kv_heads_gpu) * d, h},  // QKV
                                 {h, m.heads * d / tp},                       // output projection
                                 {up * m.ffn / tp, h},                        // gate and up
                                 {h, m.ffn / tp}};                            // down
    const double hi = row_tiles * lin.tile_m, lo = hi - 0.5;
    for (int i = 0; i < dense; ++i) {
      GemmTime a = gemm_parts(lin, hi, shapes[i][0], shapes[i][1], 1, wb);
      GemmTime b = gemm_parts(lin, lo, shapes[i][0], shapes[i][1], 1, wb);
      auto& g = lines.gemm[i];
      g.compute_per_row = a.compute_s / hi;
      g.memory_per_row = (a.memory_s - b.memory_s) / (hi - lo);
      g.memory0 = a.memory_s - g.memory_per_row * hi;
      g.launch = a.launch_s;
      g.weight_bytes = wb * shapes[i][0] * shapes[i][1];
    }
    lines.valid = true;
  }
  for (int i = 0; i < dense; ++i) {
    const auto& g = lines.gemm[i];
    double c = g.compute_per_row * M, mem = g.memory0 + g.memory_per_row * M;
    (mem >= c ? lin_m : lin_c) += L * std::max(c, mem);
    launches += L * g.launch;
    wbytes += L * g.weight_bytes;
  }
  if (m.moe()) {
    // Experts some token visits, each with the tokens routed to it (vLLM's fused MoE kernel runs
    // them as one grouped GEMM): tp ways over the FFN width, or E/tp whole experts per GPU under
    // expert parallelism. The router: M x E.
    double k = m.top_k, E = m.experts;
    double hit = 1 - std::pow(1 - k / E, M);  // share of experts some token visits
    double rows = M * k / (E * hit);
    double local = opt.expert_parallel ? E / tp * hit : E * hit;
    double f = opt.expert_parallel ? static_cast<double>(m.ffn) : m.ffn / tp;
    add(lin, rows, up * f, h, local, wb, L);
    add(lin, rows, h, f, local, wb, L);
    add(lin, M, E, h, 1, wb, L);
  }
  double lin_flops = L * M * m.layer_matmul_flops_per_token() / tp;
  double head_tokens = D + (C > 0 ? 1 : 0);
  if (last && head_tokens > 0) {
    // The LM head stays in 16 bits (quantized checkpoints leave it), on the last tokens only; as
    // a line in its rows per count of tile rows, as above.
    const int head_tiles = static_cast<int>(std::ceil(head_tokens / head_gpu.tile_m));
    if (head_tiles >= static_cast<int>(head_lines.size())) head_lines.resize(head_tiles + 1);
    auto& g = head_lines[head_tiles];
    if (g.launch == 0) {
      const double hi = head_tiles * head_gpu.tile_m, lo = hi - 0.5, n = m.vocab / tp;
      GemmTime a = gemm_parts(head_gpu, hi, n, h), b = gemm_parts(head_gpu, lo, n, h);
      g.compute_per_row = a.compute_s / hi;
      g.memory_per_row = (a.memory_s - b.memory_s) / (hi - lo);
      g.memory0 = a.memory_s - g.memory_per_row * hi;
      g.launch = a.launch_s;
      g.weight_bytes = 2 * n * h;
    }
    double c = g.compute_per_row * head_tokens, mem = g.memory0 + g.memory_per_row * head_tokens;
    (mem >= c ? lin_m : lin_c) += std::max(c, mem);
    launches += g.launch;
    wbytes += g.weight_bytes;
    lin_flops += head_tokens * 2.0 * m.hidden * m.vocab / tp;
  }
  // Attention: causal, every decoding token against its context, prompt tokens against their
  // prefix.
  double attn_flops = L * 4 * (m.heads / tp) * d * (D * ctx_d + C * ctx_p);
  double kv_tok = mem.kv_bytes_per_token / layers_stage;  // per layer
  double chunks = C > 0 ? std::max(1.0, C / engine.max_batched_tokens) : 0;
  double kv_bytes = L * kv_tok * (D * ctx_d + chunks * (ctx_p - C / 2 + C) + M);
  double attn_c = attn_flops / (attention_peak_flops * eta * kFlashFactor), attn_m = kv_bytes / W;
  // Element-wise (norms, residual adds, rotary, activation function), 16-bit in and out.
  double f_local = static_cast<double>(m.ffn) / tp * m.top_k;
  double elem = L * M * 2 * (12.0 * m.hidden + 3 * f_local) / W;
  t.compute = lin_c + (attn_c > attn_m ? attn_c : 0);
  t.memory = lin_m + (attn_c > attn_m ? 0 : attn_m) + elem;
  t.flops = lin_flops + attn_flops;
  t.bytes = wbytes + kv_bytes + elem * W;
  // The GEMMs' own launches (gemm_parts) and the gaps of the layer's other kernels.
  t.kernels =
      launches +
      L * ((opt.tp > 1 ? kKernelsPerLayerTp : kKernelsPerLayer) - kGemmsPerLayer) * kKernelGapS;
  if (opt.tp > 1) {
    const auto& c = *reps[replica].tp[stage];
    double act = M * m.hidden * 2.0;
    double ar = collective(c, comm::Op::kAllReduce, act);
    if (opt.expert_parallel) {
      // Attention all-reduce, then tokens to their experts and back (all-to-all of M·k·h·2 / tp per
      // rank).
      double a2a = collective(c, comm::Op::kAllToAll, M * m.top_k * m.hidden * 2.0);
      t.comm = L * (ar + 2 * a2a);
    } else {
      t.comm = L * 2 * ar;
    }
    if (last && head_tokens > 0) {
      // The LM head is split tp ways over the vocabulary, so every sampled token's logits are
      // gathered from all ranks once a step: vLLM V1 all-gathers them, every worker runs the
      // sampler (vllm/model_executor/layers/logits_processor.py `_gather_logits`; PR #9856: "the
      // logits_processor has an AllGather instead of a Gather"; V0 gathers them to the driver, the
      // same bytes into one rank), 16-bit logits of the whole vocabulary per sampled token
      // (TensorRT-LLM's column-parallel LM head gathers its output too: `ColumnLinear(...,
      // gather_output=True)` in tensorrt_llm/models/llama/model.py). Timed as an all-gather.
      t.comm += collective(c, comm::Op::kAllGather, head_tokens * m.vocab * 2.0);
    }
  }
  t.total = t.compute + t.memory + t.kernels + t.comm;
  return t;
}

StepTime ServeModel::Impl::step(double D, double ctx_d, double C, double ctx_p) const {
  StepTime worst;
  for (int r = 0; r < replicas; ++r) {
    StepTime acc;
    double slowest = 0;
    for (int s = 0; s < opt.pp; ++s) {
      // pp micro-batches in flight, each D/pp sequences and C/pp prompt tokens.
      StepTime st = stage_step(r, s, D / opt.pp, ctx_d, C / opt.pp, ctx_p, s + 1 == opt.pp);
      if (st.total >= slowest) {
        slowest = st.total;
        acc = st;
      }
    }
    double send = 0;
    for (const auto& c : reps[r].pp)
      send +=
          collective(*c, comm::Op::kSendRecv, std::max(1.0, (D + C) / opt.pp) * model.hidden * 2.0);
    StepTime t = acc;
    double k = opt.pp;
    t.compute *= k;
    t.memory *= k;
    t.kernels *= k;
    t.comm *= k;
    t.pp_send = send;
    t.comm += send;
    t.overhead = kStepOverheadS;
    t.total = t.compute + t.memory + t.kernels + t.comm + t.overhead;
    if (r == 0 || t.total > worst.total) worst = t;
  }
  return worst;
}

double ServeModel::Impl::offload_time(double running, double ctx) const {
  if (!opt.kv_offload || running <= fit_replica) return 0;
  // Sequences beyond what GPU memory holds bring their KV cache in over the GPU's PCIe link each
  // step.
  double bytes = (running - fit_replica) * ctx * mem.kv_bytes_per_token;
  return bytes / h2d_bytes_per_s();
}

double ServeModel::Impl::h2d_bytes_per_s() const {
  // Host memory reaches the GPU over its PCIe uplink, or over a direct link to a CPU (NVLink-C2C).
  const auto& node = chassis.node(gpu_node);
  if (node.pcie_uplink >= 0) return chassis.link(node.pcie_uplink).effective_bytes_per_s();
  for (int l : chassis.incident(gpu_node)) {
    const auto& link = chassis.link(l);
    if (chassis.node(link.other(gpu_node)).kind == topo::NodeKind::kCpu)
      return link.effective_bytes_per_s();
  }
  throw InputError(fmt::format(
      "{} has no link to host memory: --kv-offload and --lora-rank need one", node.name));
}

StepTime ServeModel::step(double D, double ctx_d, double C, double ctx_p) const {
  return impl_->step(D, ctx_d, C, ctx_p);
}

}  // namespace linkwise::work
