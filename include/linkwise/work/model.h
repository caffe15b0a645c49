// Decoder-only transformer models: dimensions, parameter counts and FLOPs per token.
//
// A model is a stack of `layers` identical blocks (attention + MLP, pre-norm) between a token
// embedding and an output projection to the vocabulary. Presets live in data/models/*.yaml
// (compiled in); a model of one's own is a YAML file with the same keys (docs/training.md).
//
// FLOPs count a multiply-add as 2 and, as Megatron-LM does (Narayanan et al. 2021, section 5.1, eq.
// 3), count the whole s x s attention score matrix (causal masking is not subtracted). Per token
// and layer, forward, with d = head_dim, a heads, g KV heads, f the FFN width, E experts of which k
// are active:
//   projections  2·h·(a·d + 2·g·d) + 2·a·d·h
//   attention    4·s·a·d                      (Q·K^T and scores·V)
//   MLP          k · 2·(gated ? 3 : 2)·h·f
//   router       2·h·E                        (MoE only)
// plus, once per token, the output projection 2·h·V. For GPT-3 shapes (a·d = h, f = 4h, g = a) this
// is 24·h² + 4·s·h per layer, eq. 3 of Narayanan et al. divided by its 3 passes and recompute.
//
//   auto m = linkwise::work::find_model("llama3-70b");
//   double f = m.forward_flops_per_token(8192);   // ~ 1.5e11
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "linkwise/util/error.h"

namespace linkwise::work {

struct Model {
  std::string id;
  std::string name;
  std::string source;  ///< where the dimensions come from
  int layers = 0;
  int hidden = 0;          ///< h, model width
  int heads = 0;           ///< a, attention (query) heads
  int kv_heads = 0;        ///< g, key/value heads (g < a: grouped-query attention)
  int head_dim = 0;        ///< d; 0 in a file means hidden / heads
  int ffn = 0;             ///< f, MLP inner width (per expert)
  bool gated_ffn = false;  ///< SwiGLU-style MLP: three matrices (gate, up, down) instead of two
  int vocab = 0;
  int experts = 1;  ///< E; 1 = dense
  int top_k = 1;    ///< experts each token visits
  bool tied_embeddings = false;
  /// RMSNorm over each query and key head before the rotary embedding (Qwen3: q_norm, k_norm of
  /// head_dim weights); counted in the eager element-wise work of --framework hf, not in
  /// parameters.
  bool qk_norm = false;
  bool dropout = false;  ///< trained with dropout (GPT-2/3); adds masks to the activations
  int seq = 2048;        ///< default training sequence length
  int max_context = 0;   ///< positions the model accepts when serving (prompt + output); 0 = seq
  std::string file;      ///< the file it came from

  bool moe() const { return experts > 1; }
  /// Parameters of one layer's attention block (Q, K, V, O matrices), without norms.
  double attention_params() const;
  /// Parameters of one expert's MLP.
  double expert_params() const;
  /// Parameters of one layer: attention, every expert, router and two norms.
  double layer_params() const;
  /// Embedding and output projection (one of them when tied) and the final norm.
  double embedding_params() const;
  /// All parameters.
  double total_params() const;
  /// Parameters one token passes through (MoE: top_k experts), excluding the embedding lookup.
  double active_params() const;

  /// Forward FLOPs of one layer for one token at sequence length `seq`, split in weight matmuls and
  /// the attention core (scores and their product with V).
  double layer_matmul_flops_per_token() const;
  double attention_core_flops_per_token(int seq) const;
  /// Forward FLOPs per token of the whole model (layers and output projection).
  double forward_flops_per_token(int seq) const;
};

/// Checks a model's dimensions; throws InputError naming the field, its value (and location) of the
/// first bad one.
void validate_model(const Model& m, const SourceLocation& where = {});
/// The same with the location of each field (a YAML file: the line of that key).
void validate_model(const Model& m, const std::function<SourceLocation(const char*)>& where);

/// Parses a model YAML text. Throws InputError with file:line:column.
Model parse_model(const std::string& yaml_text, const std::string& filename);

/// A preset by id (data/models/<id>.yaml) or a model YAML file by path; throws InputError naming
/// the closest preset ids otherwise.
Model find_model(const std::string& id_or_path);

/// The preset models, sorted by id.
std::vector<Model> model_presets();

}  // namespace linkwise::work
