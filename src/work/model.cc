#include "linkwise/work/model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "linkwise/util/text.h"
#include "util/embedded.h"
#include "util/yaml_util.h"

namespace linkwise::work {

namespace {
double hd(const Model& m) {
  return m.head_dim > 0 ? m.head_dim : static_cast<double>(m.hidden) / m.heads;
}
}  // namespace

double Model::attention_params() const {
  double h = hidden, d = hd(*this);
  return h * (heads * d + 2.0 * kv_heads * d) + heads * d * h;
}

double Model::expert_params() const {
  return (gated_ffn ? 3.0 : 2.0) * hidden * static_cast<double>(ffn);
}

double Model::layer_params() const {
  double router = moe() ? static_cast<double>(hidden) * experts : 0;
  return attention_params() + experts * expert_params() + router + 2.0 * hidden;
}

double Model::embedding_params() const {
  return (tied_embeddings ? 1.0 : 2.0) * vocab * static_cast<double>(hidden) + hidden;
}

double Model::total_params() const { return layers * layer_params() + embedding_params(); }

double Model::active_params() const {
  double router = moe() ? static_cast<double>(hidden) * experts : 0;
  return layers * (attention_params() + top_k * expert_params() + router) +
         static_cast<double>(vocab) * hidden;
}

double Model::layer_matmul_flops_per_token() const {
  double router = moe() ? static_cast<double>(hidden) * experts : 0;
  return 2.0 * (attention_params() + top_k * expert_params() + router);
}

double Model::attention_core_flops_per_token(int s) const { return 4.0 * s * heads * hd(*this); }

double Model::forward_flops_per_token(int s) const {
  return layers * (layer_matmul_flops_per_token() + attention_core_flops_per_token(s)) +
         2.0 * hidden * static_cast<double>(vocab);
}

void validate_model(const Model& m, const SourceLocation& where) {
  validate_model(m, [&](const char*) { return where; });
}

void validate_model(const Model& m, const std::function<SourceLocation(const char*)>& where) {
  auto need = [&](bool ok, const char* field, const std::string& what) {
    if (!ok) throw InputError(fmt::format("model '{}': {}", m.id, what), where(field));
  };
  auto positive = [&](int v, const char* field) {
    need(v > 0, field, fmt::format("'{}' must be positive, not {}", field, v));
  };
  need(!m.id.empty(), "id", "needs an id");
  positive(m.layers, "layers");
  positive(m.hidden, "hidden");
  positive(m.heads, "heads");
  need(m.kv_heads > 0 && m.kv_heads <= m.heads && m.heads % m.kv_heads == 0, "kv_heads",
       fmt::format("'kv_heads' ({}) must divide 'heads' ({})", m.kv_heads, m.heads));
  need(m.head_dim >= 0, "head_dim", fmt::format("'head_dim' must be positive, not {}", m.head_dim));
  need(m.head_dim > 0 || m.hidden % m.heads == 0, "heads",
       fmt::format("'heads' ({}) must divide 'hidden' ({}) unless 'head_dim' is given", m.heads,
                   m.hidden));
  positive(m.ffn, "ffn");
  positive(m.vocab, "vocab");
  need(m.experts >= 1, "experts", fmt::format("'experts' must be at least 1, not {}", m.experts));
  need(m.top_k >= 1 && m.top_k <= m.experts, "top_k",
       fmt::format("'top_k' ({}) must be between 1 and 'experts' ({})", m.top_k, m.experts));
  positive(m.seq, "seq");
  need(m.max_context >= 0, "max_context",
       fmt::format("'max_context' must be positive, not {}", m.max_context));
}

Model parse_model(const std::string& text, const std::string& file) {
  using namespace detail;
  YAML::Node n = load_yaml(text, file);
  check_keys(n,
             {"id", "name", "source", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn",
              "gated_ffn", "vocab", "experts", "top_k", "tied_embeddings", "qk_norm", "dropout",
              "seq", "max_context"},
             file, "a model");
  Model m;
  m.file = file;
  auto str = [&](const char* k, std::string& out) {
    if (n[k]) out = as_string(n[k], file, k);
  };
  auto num = [&](const char* k, int& out, bool required) {
    if (n[k])
      out = as_int(n[k], file, k);
    else if (required)
      throw InputError(fmt::format("a model needs '{}'", k), location_of(n, file));
  };
  auto flag = [&](const char* k, bool& out) {
    if (!n[k]) return;
    std::string s = as_string(n[k], file, k);
    if (s != "true" && s != "false")
      throw InputError(fmt::format("'{}' must be true or false, not '{}'", k, s),
                       location_of(n[k], file));
    out = s == "true";
  };
  str("id", m.id);
  if (m.id.empty()) m.id = std::filesystem::path(file).stem().string();
  str("name", m.name);
  if (m.name.empty()) m.name = m.id;
  str("source", m.source);
  num("layers", m.layers, true);
  num("hidden", m.hidden, true);
  num("heads", m.heads, true);
  m.kv_heads = m.heads;
  num("kv_heads", m.kv_heads, false);
  num("head_dim", m.head_dim, false);
  num("ffn", m.ffn, true);
  num("vocab", m.vocab, true);
  num("experts", m.experts, false);
  num("top_k", m.top_k, false);
  num("seq", m.seq, false);
  num("max_context", m.max_context, false);
  flag("gated_ffn", m.gated_ffn);
  flag("tied_embeddings", m.tied_embeddings);
  flag("qk_norm", m.qk_norm);
  flag("dropout", m.dropout);
  validate_model(m, [&](const char* field) {
    return n[field] ? location_of(n[field], file) : location_of(n, file);
  });
  return m;
}

std::vector<Model> model_presets() {
  std::vector<Model> out;
  for (const auto& f : detail::embedded_files()) {
    std::string_view p = f.path;
    if (p.rfind("data/models/", 0) != 0) continue;
    out.push_back(parse_model(std::string(f.contents), std::string(p)));
  }
  std::sort(out.begin(), out.end(), [](const Model& a, const Model& b) { return a.id < b.id; });
  return out;
}

Model find_model(const std::string& id_or_path) {
  if (const auto* f = detail::find_embedded("data/models/" + id_or_path + ".yaml"))
    return parse_model(std::string(f->contents), std::string(f->path));
  std::error_code ec;
  // A file; something there that is not a regular file (a directory, a FIFO) or a name written as a
  // path that is not there is read too, and read_file says what is wrong (exit 2).
  if (std::filesystem::exists(id_or_path, ec) || detail::looks_like_path(id_or_path))
    return parse_model(read_file(id_or_path), id_or_path);
  std::vector<std::string> ids;
  for (const auto& m : model_presets()) ids.push_back(m.id);
  std::string hint = did_you_mean(id_or_path, ids);
  throw InputError(fmt::format(
      "'{}' is neither a model preset nor a model file{}", id_or_path,
      hint.empty() ? " (presets: " + fmt::to_string(fmt::join(ids, ", ")) + ")" : "; " + hint));
}

}  // namespace linkwise::work
