#include "linkwise/work/job.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "linkwise/util/error.h"
#include "linkwise/util/text.h"

namespace linkwise::work {

const char* to_string(Mode m) {
  switch (m) {
    case Mode::kPretrain:
      return "pretrain";
    case Mode::kFullFinetune:
      return "full";
    case Mode::kLora:
      return "lora";
  }
  return "?";
}

const char* to_string(Precision p) {
  switch (p) {
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp8:
      return "fp8";
    case Precision::kFp16:
      return "fp16";
    case Precision::kAuto:
      return "auto";
  }
  return "?";
}

const char* to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
    case Recompute::kOp:
      return "op";
  }
  return "?";
}

const char* to_string(Framework f) {
  switch (f) {
    case Framework::kMegatron:
      return "megatron";
    case Framework::kFsdp:
      return "fsdp";
    case Framework::kDeepSpeed:
      return "deepspeed";
    case Framework::kDeepSpeed03:
      return "deepspeed-0.3";
    case Framework::kFsdp1:
      return "fsdp1";
    case Framework::kHf:
      return "hf";
  }
  return "?";
}

const char* to_string(BaseWeights b) {
  switch (b) {
    case BaseWeights::kAuto:
      return "auto";
    case BaseWeights::kBf16:
      return "bf16";
    case BaseWeights::kFp8:
      return "fp8";
    case BaseWeights::kNf4:
      return "nf4";
  }
  return "?";
}

// Frozen base weights per parameter. fp8: one byte (Transformer Engine fp8 primary weights; the
// transposed copy the input-gradient GEMM needs on Hopper is made per layer in the backward and not
// kept). NF4: 4 bits plus the double-quantized block constants, 0.127 bits per parameter (Dettmers
// et al. 2023, QLoRA, section 3, "Double Quantization"): (4 + 0.127) / 8 bytes.
double base_weight_bytes(const Job& job) {
  BaseWeights b = job.base_weights;
  if (b == BaseWeights::kAuto)
    b = job.precision == Precision::kFp8 ? BaseWeights::kFp8 : BaseWeights::kBf16;
  switch (b) {
    case BaseWeights::kFp8:
      return 1;
    case BaseWeights::kNf4:
      return (4 + 0.127) / 8;
    default:
      return 2;
  }
}

namespace {
template <typename E>
E parse_enum(const std::string& s, const char* what, std::initializer_list<E> all) {
  std::vector<std::string> names;
  for (E e : all) {
    if (s == to_string(e)) return e;
    names.push_back(to_string(e));
  }
  std::string hint = did_you_mean(s, names);
  throw InputError(fmt::format("unknown {} '{}' (one of: {}){}", what, s,
                               fmt::to_string(fmt::join(names, ", ")),
                               hint.empty() ? "" : "; " + hint));
}
}  // namespace

Mode parse_mode(const std::string& s) {
  if (s == "finetune" || s == "full-finetune") return Mode::kFullFinetune;
  return parse_enum(s, "mode", {Mode::kPretrain, Mode::kFullFinetune, Mode::kLora});
}
Precision parse_precision(const std::string& s) {
  return parse_enum(s, "precision",
                    {Precision::kBf16, Precision::kFp16, Precision::kFp8, Precision::kAuto});
}
std::string recompute_text(const Job& job) {
  std::string s = to_string(job.recompute);
  if (job.recompute == Recompute::kFull && job.recompute_every > 1)
    s += fmt::format(" (one block in {})", job.recompute_every);
  return s;
}

Recompute parse_recompute(const std::string& s) {
  return parse_enum(s, "recompute mode",
                    {Recompute::kNone, Recompute::kSelective, Recompute::kFull, Recompute::kOp});
}

Framework parse_framework(const std::string& s) {
  return parse_enum(s, "framework",
                    {Framework::kMegatron, Framework::kFsdp, Framework::kFsdp1,
                     Framework::kDeepSpeed, Framework::kDeepSpeed03, Framework::kHf});
}

BaseWeights parse_base_weights(const std::string& s) {
  return parse_enum(s, "base weight format",
                    {BaseWeights::kAuto, BaseWeights::kBf16, BaseWeights::kFp8, BaseWeights::kNf4});
}

Switch parse_switch(const std::string& s, const char* flag, const char* on, const char* off) {
  if (s == "default") return Switch::kDefault;
  if (s == on) return Switch::kOn;
  if (s == off) return Switch::kOff;
  throw InputError(fmt::format("{} must be {} or {}, not '{}'", flag, on, off, s));
}

void validate_job(const Job& job) {
  if (job.seq < 0) throw InputError(fmt::format("--seq must be positive, not {}", job.seq));
  if (job.micro_batch < 1)
    throw InputError(fmt::format("--micro-batch must be at least 1, not {}", job.micro_batch));
  if (job.global_batch < 0)
    throw InputError(fmt::format("--global-batch must be positive, not {}", job.global_batch));
  if (job.mode == Mode::kLora) {
    if (job.lora.rank < 1)
      throw InputError(fmt::format("--lora-rank must be at least 1, not {}", job.lora.rank));
    static const std::vector<std::string> known = {"q", "k", "v", "o", "gate", "up", "down"};
    if (job.lora.targets.empty())
      throw InputError("--lora-targets needs at least one of q,k,v,o,gate,up,down");
    for (const auto& t : job.lora.targets)
      if (std::find(known.begin(), known.end(), t) == known.end())
        throw InputError(fmt::format("unknown LoRA target '{}' (one of: {})", t,
                                     fmt::to_string(fmt::join(known, ", "))));
  }
}

}  // namespace linkwise::work
