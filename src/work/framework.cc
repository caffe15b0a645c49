#include "linkwise/work/framework.h"

#include <fmt/format.h>

#include <algorithm>

#include "linkwise/work/compute.h"
#include "linkwise/work/memory.h"

namespace linkwise::work {

namespace {
// Megatron-core DistributedDataParallel: bucket_size = max(40000000, 1000000 * dp) parameters, dp
// the data-parallel size without context parallelism (get_data_parallel_world_size(); the buckets
// are reduced over the dp·cp group) (megatron/core/distributed/distributed_data_parallel.py).
double megatron_bucket(int dp) { return std::max(40e6, 1e6 * dp); }
// PyTorch DDP bucket_cap_mb = 25 (torch.nn.parallel.DistributedDataParallel), fp32 gradients: 25
// MiB / 4 B.
constexpr double kDdpBucketParams = 25.0 * (1 << 20) / 4;
// DeepSpeed reduce_bucket_size default 5e8 elements (deepspeed.ai/docs/config-json).
constexpr double kDeepSpeedReduceBucket = 5e8;
// PyTorch AdamW's HBM bytes per fp32 parameter. Fused (torch.optim.AdamW(fused=True),
// aten/src/ATen/native/cuda/FusedAdamWKernel.cu): one kernel reads weight, gradient and both
// moments and writes weight and moments, 7 x 4 = 28. Foreach or per parameter (the default
// torch.optim form and Composer's DecoupledAdamW): one pass of HBM per tensor operation, 80
// (FrameworkTraits below, fsdp). Clipping by norm: read every gradient for the norm (4), scale it
// in place (8): 12.
constexpr double kFusedAdamBytes = 28, kForeachAdamBytes = 80, kClipBytes = 12;
// Host time per rank of a torch.distributed list collective as DeepSpeed 0.3 issued it: one tensor
// view made in Python (narrow, ~2 us: pytorch/pytorch issue #41383, "approx 2 us", half of it
// Python) and one copy_ of it in C++ (~1 us of ATen dispatch, same issue) through cudaMemcpyAsync
// (5-7 us per call, Wu et al. 2026, arXiv 2602.21548, section 5.2; 6 taken). derived: 2 + 1 + 6 = 9
// us.
constexpr double kCopyLaunch_s = 9e-6;
}  // namespace

FrameworkTraits framework_traits(const Job& job, const Plan& p) {
  FrameworkTraits t;
  t.framework = job.framework;
  bool half = job.precision == Precision::kFp16;
  // --grad-reduce: fp32 (4 bytes) or the job's 16-bit type (2) on the wire, where the framework's
  // default is the other.
  const bool fp32_given = job.grad_fp32 == Switch::kOn, half_given = job.grad_fp32 == Switch::kOff;
  // The PyTorch stacks' AdamW (torch.optim or Composer's): fused or one kernel per tensor
  // operation, and whether the stack clips the gradients by norm; their bytes are set after the
  // switch.
  bool torch_adam = false, torch_adam_fused = false, torch_clips = true;
  switch (job.framework) {
    case Framework::kMegatron:
      // --tp-comm-overlap is off unless asked for (Megatron-LM arguments.py, store_true; NeMo's
      // fine-tuning performance recipes set MegatronCommOverlapCallback(tp_comm_overlap=False)).
      t.tp_overlap_style = TpOverlapStyle::kUserbuffers;
      t.grad_overlap =
          p.zero >= 3;  // DDP: overlap_grad_reduce = False; Megatron-FSDP overlaps its collectives
      t.grad_bytes = half ? 2 : 4;
      t.fused_elementwise = true;
      // Causal attention as its kernels run it. Megatron-core's GPT layers pass the causal mask to
      // Transformer Engine's DotProductAttention, whose FlashAttention-2 and cuDNN kernels skip the
      // tiles above the diagonal (Dao 2023, "FlashAttention-2", section 3.1.1). Under context
      // parallelism TE's ring (AttnFuncWithCPAndKVP2P, transformer_engine/pytorch/attention.py)
      // holds chunks i and 2cp-1-i on rank i and runs, per step, the causal diagonal block (step
      // 0), all queries against the first half of the arriving K,V (step i <= rank) or the second
      // half of the queries against all of it (i > rank): 2c² scores of chunk size c every step,
      // cp · 2c² in all, half of the rank's 2c x 2cp·c whole matrix.
      t.causal_attention = true;
      break;
    case Framework::kFsdp:
    case Framework::kFsdp1:
    case Framework::kHf:
      // torchtitan parallelism.enable_async_tensor_parallel defaults to False (it needs
      // torch.compile); AutoModel's 70B recipes turn it on.
      t.tp_overlap_style = TpOverlapStyle::kAsyncTp;
      t.grad_overlap = true;
      t.grad_bytes = 4;
      t.fused_elementwise = false;
      t.hopper_attention = false;
      t.reduce_every_micro_batch = p.zero == 2;
      t.gather_every_micro_batch = p.zero == 2;
      // The optimizer steps in eager PyTorch, one pass of HBM per tensor operation on fp32
      // tensors (4 bytes each read or written): exp_avg lerp or mul + add (read m, g, write m: 8 +
      // 12 for Composer's two ops), exp_avg_sq mul and addcmul (8 + 12), sqrt, divide by the bias
      // correction, add eps (8 each), addcdiv into the weight (read w, m, denominator, write w:
      // 16): 80 bytes, the same for Composer's DecoupledAdamW
      // (composer/optim/decoupled_weight_decay.py, adamw(): per-parameter in-place ops;
      // llm-foundry's MPT yamls set weight_decay 0.0, which skips its param.mul_) and
      // torch.optim.AdamW's default foreach implementation on CUDA
      // (_multi_tensor_adamw, whose weight-decay mul_ makes up for Composer's split lerp).
      // Gradient clipping by norm (llm-foundry's MPT yamls: gradient_clipping norm 1.0; torchtitan
      // max_norm 1.0): FSDP's clip_grad_norm_ reads every local gradient for the norm (4) and
      // scales it in place (8): 12. derived: 80 + 12 = 92.
      torch_adam = true;
      // Those bytes stream at the element-wise kernel's share of the peak: torch.optim's foreach
      // and fused AdamW and Composer's per-tensor ops are PyTorch element-wise kernels
      // (TensorIterator, or multi_tensor_apply over chunks of the tensor lists:
      // aten/src/ATen/native/cuda/ ForeachBinaryOpList.cu, FusedAdamWKernel.cu), each a pass over
      // HBM like the eager add the share is measured on (compute.h). Checked against the optimizer
      // phase of the H200 training steps (data/measured/h200-train-steps-2026-12-01, fused AdamW,
      // 28 bytes per parameter): Qwen3 0.6B 4.8 ms and Llama 3.2 3B 26.0 ms are 3.48 and 3.46 TB/s,
      // 0.72 of the 4.8 TB/s peak, the add's share (not a source: those steps are validation rows).
      t.optimizer_share = eager_kernel_share(EagerKernel::kElementwise);
      // Activation checkpointing through PyTorch's non-reentrant torch.utils.checkpoint (FSDP2's
      // and torchtitan's checkpoint_wrapper; Composer's with llm-foundry's
      // activation_checkpointing_reentrant false), which stops the recomputation early by default
      // since PyTorch 2.1 (pytorch/pytorch PR #90105, the rewrite; PR #96866, March 2023, early
      // stop on by default: _StopRecomputationError once as many tensors are saved as the forward
      // saved). Autograd saves an op's inputs before its kernel runs
      // (tools/autograd/gen_variable_type.py emits the SavedVariables ahead of the call), so the
      // stop comes inside the block's last saving op, the MLP's down projection: its GEMM and the
      // residual add after it are not run again. Hugging Face's gradient checkpointing defaults to
      // use_reentrant=True (transformers modeling_utils.py, gradient_checkpointing_enable), whose
      // recomputation runs the whole block.
      t.recompute_early_stop = job.framework != Framework::kHf;
      if (job.framework == Framework::kHf) {
        // Hugging Face Trainer through accelerate: DDP at zero=0 (25 MiB buckets, overlapped),
        // FSDP1 (FullyShardedDataParallelPlugin, fsdp_version 1 by default) for zero 2 and 3, with
        // the FlatParameter's in-place gather and the fp32 cast and pre-divide of the gradient.
        // Its compute is eager PyTorch as transformers writes the model (hf_stack.h): fp32
        // weights under torch.autocast, element-wise work one kernel per operation, host time per
        // operation, the loss over the whole vocabulary in fp32.
        t.scatter_copy_per_byte =
            p.shard_size() >= 4 ? (4.0 + 2.0 + 4.0 + 8.0) / 4.0 : (4.0 + 6.0) / 4.0;
        t.lora_adapter_units = job.mode == Mode::kLora;  // PEFT's fsdp_auto_wrap_policy
        // SDPA's backend order puts cuDNN attention first on sm90/sm100 once the cuDNN PyTorch
        // bundles is newer than 9.15 (sdp_utils.cpp check_prefer_cudnn_attention, in 2.10; the
        // bundled cuDNN crosses it in 2.11: huggingface/transformers PR #48163, closed because
        // "on recent torch the default is already cuDNN"): Hopper-native fused attention.
        t.hopper_attention = true;
        // torch.optim.AdamW(fused=True) (the measured script; the Trainer's adamw_torch_fused): one
        // kernel reads the fp32 weight, gradient and two moments and writes three: 28 bytes. The
        // Trainer's max_grad_norm 1.0 clipping (read 4, scale 8: 12 more) is not counted: the
        // validation rows' script does not clip.
        torch_adam_fused = true, torch_clips = false;
      } else if (job.framework == Framework::kFsdp) {
        // torchtitan's optimizer.implementation defaults to "fused" (torchtitan/config/
        // job_config.py, Optimizer; until 2025 a `fused` flag, off: foreach, torchtitan/
        // optimizer.py build_optimizers): torch.optim.AdamW(fused=True) reads the fp32 weight,
        // gradient and two moments and writes three in one kernel, 28 bytes, and the clipping's
        // 12 (above): 40.
        torch_adam_fused = true;
        // FSDP2 (torch.distributed.fsdp.fully_shard, _fsdp_collectives.py): the all-gather output
        // is one flat buffer; foreach_all_gather_copy_out splits it into each parameter's tensor
        // with torch.split_with_sizes_copy on the compute stream (read and write the gathered
        // bytes: 2 per byte; the copy-in of the local shard, 2/shard, is left out as small).
        // foreach_reduce copies the unsharded bf16 gradients into the fp32 reduce-scatter input
        // (torch._chunk_cat: read 2, write 4 bytes per element, i.e. 6/4 per fp32 byte on the
        // wire); fp32 and bf16 reductions divide inside NCCL (ReduceOp.AVG /
        // PreMulSum, _get_gradient_divide_factors), so no separate pre-divide. Not modelled: each
        // gradient's dim 0 is padded to a multiple of the world size (_get_dim0_padded_size), which
        // grows a LoRA A matrix's (r rows) input once the shard group exceeds r ranks.
        // With a 16-bit reduce_dtype (--grad-reduce half) _chunk_cat copies the bf16 gradients
        // into a bf16 input: read 2, write 2 per element, 2 per byte on the wire.
        t.gather_copy_per_byte = 2;
        t.grad_bytes = half_given ? 2 : 4;
        t.scatter_copy_per_byte = half_given ? (2.0 + 2.0) / 2.0 : (2.0 + 4.0) / 4.0;
      } else {
        // FSDP1 (FlatParameter, llm-foundry/Composer): the gather writes the flat parameter in
        // place (no copy-out). The module's parameters are views of the flat parameter
        // (FlatParamHandle._get_unflat_views: torch.split, then view), so autograd assembles
        // the flat gradient from the parameters' gradients in SplitWithSizesBackward, whose
        // split_with_sizes_backward concatenates them (at::cat: read 2, write 2 bytes per bf16
        // element; torch/csrc/autograd/FunctionsManual.cpp). The post-backward hook casts the
        // bf16 flat gradient to the fp32 reduce dtype (read 2, write 4) and _reduce_grad
        // pre-divides it in place by _gradient_predivide_factor (> 1 from 4 ranks up; read 4,
        // write 4) before the reduce-scatter: 18/4 per fp32 byte on the wire
        // (torch/distributed/fsdp/_runtime_utils.py, _post_backward_hook, _reduce_grad).
        // With a 16-bit reduce dtype (--grad-reduce half: MixedPrecision(param_dtype=bf16,
        // reduce_dtype=None), which FSDP reads as reduce_dtype = param_dtype, pytorch/pytorch PR
        // #90631; Composer's "DEFAULT" from PR #2047, March 2023, until PR #2628, October 2023)
        // there is no cast: the concatenation and the pre-divide in bf16 (read 2, write 2), 8/2
        // per bf16 byte on the wire.
        t.grad_bytes = half_given ? 2 : 4;
        if (half_given)
          t.scatter_copy_per_byte = p.shard_size() >= 4 ? (4.0 + 4.0) / 2.0 : 4.0 / 2.0;
        else
          t.scatter_copy_per_byte =
              p.shard_size() >= 4 ? (4.0 + 2.0 + 4.0 + 8.0) / 4.0 : (4.0 + 6.0) / 4.0;
        // llm-foundry's attention (llmfoundry/models/layers/attention.py, flash_attn_fn, 2023
        // releases) calls flash_attn.bert_padding.unpad_input on query, key and value and
        // pad_input on the output in every layer, with a key_padding_mask of all ones when nothing
        // is padded: IndexFirstAxis gathers (torch.gather; backward torch.zeros + scatter_),
        // IndexPutFirstAxis pads (torch.zeros + index put; backward a gather)
        // (Dao-AILab/flash-attention, flash_attn/bert_padding.py).
        t.attention_unpad = true;
        // Composer's train metrics (composer/trainer/trainer.py, _train_microbatch ->
        // _eval_train_metrics: under torch.no_grad() and the run's autocast, every micro-batch,
        // on the training forward's own outputs): ComposerMPTCausalLM's train metrics are
        // LanguageCrossEntropy and LanguagePerplexity (llm-foundry modeling_mpt.py; always on
        // before llm-foundry PR #642, October 2023, and on by default since: use_train_metrics),
        // and LanguagePerplexity subclasses LanguageCrossEntropy, whose update runs
        // torch.nn.CrossEntropyLoss(reduction='sum') over all the logits (composer/metrics/nlp.py):
        // two full cross-entropy passes a micro-batch, where the loss itself is flash-attn's fused
        // cross-entropy (loss_fn fused_crossentropy, the default since mosaicml/examples PR #251).
        t.metric_loss_passes = 2;
        // LoRA: a FlatParameter needs uniform requires_grad under use_orig_params=False, and with
        // use_orig_params=True a unit mixing frozen and trainable weights keeps a gradient of the
        // whole flat size and reduce-scatters it all (PyTorch FSDP docs, "FSDP has some
        // constraints on freezing parameters", quoted in discuss.pytorch.org/t/190511). Hence
        // llm-foundry marks every PEFT module with parameters (lora_A.default, lora_B.default)
        // _fsdp_wrap = True (llmfoundry/models/hf/hf_fsdp.py, prepare_hf_causal_lm_model_for_fsdp:
        // "PEFT layers should be individually wrapped"), as PEFT's fsdp_auto_wrap_policy does for
        // Accelerate (huggingface/accelerate PR #2253): each adapter matrix is a unit of its own
        // and the block's unit is all frozen.
        t.lora_adapter_units = job.mode == Mode::kLora;
      }
      break;
    case Framework::kDeepSpeed:
    case Framework::kDeepSpeed03:
      t.grad_overlap = p.zero >= 3;  // overlap_comm: true for stage 3, false otherwise
      t.grad_bytes = 2;
      t.fused_elementwise = false;
      t.hopper_attention = false;
      t.reduce_every_micro_batch = p.zero == 2;
      t.zero3_reduce_bucket_params = kDeepSpeedReduceBucket;
      t.per_module_gather = true;
      t.bucket_params = kDeepSpeedReduceBucket;
      // The recomputed forward runs the sub-modules' forward hooks, which gather and, after it,
      // release the weights (DeepSpeed issue #4784: pre_sub_module_forward_function runs in the
      // recomputation, frozen weights included: huggingface/transformers issue #47254); the
      // backward's pre-backward hook gathers them again. Under LoRA the whole layer is counted
      // again, frozen weights too: PR #8130, which would have kept frozen weights gathered
      // through the recomputation, was closed unmerged, and what its successor PR #8148 (merged
      // July 2026) changes for frozen weights' gathers is not modelled.
      t.zero3_regather_for_recompute = true;
      if (job.framework == Framework::kDeepSpeed03) {
        // DeepSpeed 0.3.x (stage 3 first shipped in 0.3.13, March 2021) as deepspeed, except how
        // stage 3 issues its collectives, which DeepSpeed PR #1188 (June 2021) changed:
        //  * every parameter all-gather called torch.cuda.synchronize() before launching (PR #1188:
        //  "the
        //    async version is not async at all, because each all_gather calls
        //    torch.cuda.synchronize()"; issue #1069: "a torch.cuda.synchronize() sync point when
        //    pre_launch next all_gather"): the device drains, so no gather or gradient
        //    reduce-scatter runs beside the compute;
        //  * one all-gather per parameter, ~0.13 ms pre-launch + ~0.25 ms launch of host time each
        //    (issue #1069, 8 A100 p4d box, DeepSpeed 0.3.16, PyTorch 1.8);
        //  * the gathered partitions copied out one tensor per rank (PR #1188: "the existing
        //    _allgather_params has explicit memcpy after the all-gather op"; PyTorch 1.8
        //    ProcessGroupNCCL::allgather copies outputTensors[i][j] one by one), and the gradient
        //    reduce-scatter's inputs copied in the same way (ProcessGroupNCCL::reduce_scatter
        //    flattens its input list): one copy_ per rank, kCopyLaunch_s each.
        t.grad_overlap = false;
        t.zero3_blocking = true;
        t.zero3_call_s =
            0.13e-3 + 0.25e-3 - 8 * kCopyLaunch_s;  // #1069 timed 8 ranks: their copies out
        t.zero3_call_per_rank_s = kCopyLaunch_s;
        // _allgather_param allocates the gathered parameter with torch.zeros (one write of the
        // gathered bytes) and gathers into a list of per-rank views; PyTorch 1.8's
        // ProcessGroupNCCL::allgather gathers into a flat tensor of its own and copies it out
        // into the list (one read and one write): 3 bytes moved per byte gathered.
        // _reduce_scatter_gradient passes a list of per-rank gradient views, which
        // ProcessGroupNCCL::reduce_scatter flattens into its own input first (read and write): 2.
        // (DeepSpeed v0.3.13 deepspeed/runtime/zero/partition_parameters.py.)
        t.gather_copy_per_byte = 3;
        // stage3.py average_tensor divides every gradient bucket in place by the world size before
        // reducing it (tensor.div_: read and write, 2 per byte) besides the flattening: 4.
        t.scatter_copy_per_byte = 2 + 2;
        // average_tensor hands the bucket's parameters to reduce_gradients_at_owner, whose
        // _reduce_scatter_gradients issues one torch.distributed.reduce_scatter per parameter
        // (partition_parameters.py, v0.3.13-0.3.16): every bias and norm of a layer is a collective
        // of its own, with the host time per call and per rank of any other.
        t.zero3_reduce_per_parameter = true;
        // stage3_param_persistence_threshold 1e5 (the stage-3 constructor's default; the
        // DeepSpeedExamples Megatron-LM-v1.1.5-ZeRO3 config gives 8.2e4): smaller parameters are
        // not gathered per module but at the end of every optimizer step ("Gathering persisting
        // parameters": persistent_parameters[0].all_gather), through _allgather_params, which
        // gathers them into one flat buffer and copies each parameter's piece out of each rank's
        // partition with its own narrow and copy_ (a Python loop over parameters and ranks).
        t.persistence_threshold = 1e5;
      }
      break;
  }
  if (job.grad_overlap != Switch::kDefault) t.grad_overlap = job.grad_overlap == Switch::kOn;
  // --attention cudnn|flash: the kernel the container selected (Transformer Engine:
  // NVTE_FUSED_ATTN, NVTE_FLASH_ATTN; PyTorch: the SDPA backend).
  if (job.cudnn_attention != Switch::kDefault)
    t.hopper_attention = job.cudnn_attention == Switch::kOn;
  if (job.recompute_early_stop != Switch::kDefault)
    t.recompute_early_stop = job.recompute_early_stop == Switch::kOn;
  // The PyTorch stacks' AdamW as one kernel (28 bytes a parameter) or one per tensor operation
  // (80), the framework's or --optimizer-impl's, with the clipping the stack runs (12).
  if (torch_adam) {
    const bool fused = job.fused_optimizer == Switch::kDefault ? torch_adam_fused
                                                               : job.fused_optimizer == Switch::kOn;
    t.optimizer_bytes_per_param =
        (fused ? kFusedAdamBytes : kForeachAdamBytes) + (torch_clips ? kClipBytes : 0);
  }
  // --master-weights bf16: every tensor the step reads and writes (weights, gradients, moments)
  // is bf16, half the fp32 bytes.
  if (job.fp32_master == Switch::kOff) t.optimizer_bytes_per_param /= 2;
  t.tp_per_projection = job.tp_per_projection == Switch::kOn;
  // Hugging Face's Trainer runs every micro-batch but the last under accelerate's no_sync
  // (transformers trainer.py, _inner_training_loop: sync_context = accelerator.no_sync unless the
  // accumulation plugin's sync_each_batch, off by default, or DeepSpeed), which FSDP honours.
  const bool sync_last_default = job.framework == Framework::kHf;
  t.zero3_sync_last =
      p.zero >= 3 && (job.grad_sync_last == Switch::kDefault ? sync_last_default
                                                             : job.grad_sync_last == Switch::kOn);
  if (fp32_given) t.grad_bytes = 4;
  if (half_given) t.grad_bytes = 2;
  // Both styles overlap the sequence-parallel all-gathers and reduce-scatters (Megatron-LM asserts
  // sequence parallelism for --tp-comm-overlap): nothing to overlap at tp = 1 or without SP.
  t.tp_overlap = job.tp_overlap == Switch::kOn && t.tp_overlap_style != TpOverlapStyle::kNone &&
                 p.tp > 1 && p.sp;
  if (job.fused_elementwise != Switch::kDefault)
    t.fused_elementwise = job.fused_elementwise == Switch::kOn;
  if (job.framework == Framework::kMegatron)
    t.bucket_params = t.grad_overlap ? megatron_bucket(p.dp) : 0;
  if (job.framework == Framework::kFsdp || job.framework == Framework::kHf)
    t.bucket_params = kDdpBucketParams;
  return t;
}

std::string framework_problem(const Job& job, const Plan& p) {
  if (job.tp_overlap == Switch::kOn &&
      (job.framework == Framework::kDeepSpeed || job.framework == Framework::kDeepSpeed03))
    return "deepspeed has no TP communication overlap (--tp-overlap on needs megatron or fsdp)";
  if (job.tp_overlap == Switch::kOn && p.tp > 1 && !p.sp)
    return "--tp-overlap on overlaps the sequence-parallel all-gathers and reduce-scatters: it "
           "needs sp=on";
  if ((job.framework == Framework::kFsdp || job.framework == Framework::kFsdp1 ||
       job.framework == Framework::kHf) &&
      p.zero == 1 && p.dp > 1)
    return "fsdp has no ZeRO-1 (zero=2 is SHARD_GRAD_OP, zero=3 FULL_SHARD; or --framework "
           "megatron/deepspeed)";
  return "";
}

std::pair<double, double> framework_copy_s(const Model& m, const Job& job, const Plan& p,
                                           double hbm_bytes_per_s) {
  const FrameworkTraits fw = framework_traits(job, p);
  if (p.dp <= 1 || hbm_bytes_per_s <= 0 || !(p.zero >= 3 || fw.gather_every_micro_batch))
    return {0, 0};
  if (fw.gather_copy_per_byte <= 0 && fw.scatter_copy_per_byte <= 0) return {0, 0};
  double weights = 0;  // one layer's parameters on this GPU, gathered as 16-bit values
  for (double u : zero3_units(m, p, fw.per_module_gather)) weights += u;
  double gathered = block_gather_bytes(job) * weights * fw.gather_copy_per_byte;
  // Gathers in the backward as step_traffic counts them (zero=2 SHARD_GRAD_OP: none).
  double back_gathers = p.zero >= 3 ? 1 : 0;
  if (p.zero >= 3 && fw.zero3_regather_for_recompute && job.recompute == Recompute::kFull)
    back_gathers += 1;
  // Gradients copied around the reduce-scatter: every weight's, or under LoRA the adapters' only.
  const double trainable = job.mode == Mode::kLora ? layer_trainable_params(m, job, p) : weights;
  double scattered = 0;
  if (p.zero >= 3 || fw.reduce_every_micro_batch)
    scattered = fw.grad_bytes * trainable * fw.scatter_copy_per_byte;
  return {gathered / hbm_bytes_per_s, (back_gathers * gathered + scattered) / hbm_bytes_per_s};
}

std::pair<double, double> attention_unpad_s(const Model& m, const Job& job, const Plan& p,
                                            double hbm_bytes_per_s) {
  if (!job.flash_attention || hbm_bytes_per_s <= 0 || !framework_traits(job, p).attention_unpad)
    return {0, 0};
  const int mb = p.micro_batch > 0 ? p.micro_batch : job.micro_batch;
  const double tokens = static_cast<double>(job.seq) * mb;
  const double d = m.head_dim > 0 ? m.head_dim : static_cast<double>(m.hidden) / m.heads;
  const double q = m.heads * d / p.tp;                      // query (and output) elements
  const double kv = std::max(m.kv_heads, p.tp) * d / p.tp;  // key, value elements each
  const double forward = 4 * (q + 2 * kv) + 6 * q, backward = 6 * (q + 2 * kv) + 4 * q;
  return {tokens * forward / hbm_bytes_per_s, tokens * backward / hbm_bytes_per_s};
}

std::vector<double> layer_parameter_tensors(const Model& m, const Plan& p) {
  double h = m.hidden, d = m.head_dim > 0 ? m.head_dim : h / m.heads, f = m.ffn;
  double t = p.tp, experts = static_cast<double>(m.experts) / p.ep;
  double qkv = (m.heads + 2.0 * m.kv_heads) * d / t;  // output features of q, k and v
  std::vector<double> u;
  if (m.gated_ffn) {  // Llama: q, k, v, o, gate, up, down; input and post-attention RMSNorm
    u.insert(u.end(), {h * m.heads * d / t, h * m.kv_heads * d / t, h * m.kv_heads * d / t,
                       m.heads * d * h / t, h, h});
    for (int e = 0; e < static_cast<int>(experts); ++e)
      u.insert(u.end(), {h * f / t, h * f / t, f * h / t});
  } else {  // Megatron GPT: query_key_value, dense, h_to_4h, 4h_to_h with biases; two LayerNorms
    u.insert(u.end(), {h * qkv, qkv, m.heads * d * h / t, h, h, h, h, h});
    for (int e = 0; e < static_cast<int>(experts); ++e)
      u.insert(u.end(), {h * f / t, f / t, f * h / t, h});
  }
  if (m.moe()) u.push_back(h * m.experts);
  return u;
}

std::vector<double> zero3_units(const Model& m, const Plan& p, bool per_module) {
  double h = m.hidden, d = m.head_dim > 0 ? m.head_dim : h / m.heads, f = m.ffn;
  double t = p.tp, experts = static_cast<double>(m.experts) / p.ep;
  double q = h * m.heads * d / t, kv = h * m.kv_heads * d / t, o = m.heads * d * h / t;
  double router = m.moe() ? h * m.experts : 0;
  std::vector<double> u;
  if (!per_module) {
    u.push_back(q + 2 * kv + o + experts * (m.gated_ffn ? 3 : 2) * h * f / t + router + 2 * h);
    return u;
  }
  if (m.gated_ffn) {  // Llama-style modules: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj,
                      // down_proj
    u.insert(u.end(), {q, kv, kv, o});
    for (int e = 0; e < static_cast<int>(experts); ++e)
      u.insert(u.end(), {h * f / t, h * f / t, f * h / t});
  } else {  // GPT-style: fused query_key_value, dense, dense_h_to_4h, dense_4h_to_h
    u.insert(u.end(), {q + 2 * kv, o});
    for (int e = 0; e < static_cast<int>(experts); ++e) u.insert(u.end(), {h * f / t, f * h / t});
  }
  if (router > 0) u.push_back(router);
  return u;
}

}  // namespace linkwise::work
