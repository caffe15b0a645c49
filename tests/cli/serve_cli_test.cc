// linkwise serve: real output, the JSON fields, the sweep and the exact messages and exit code 2
// for bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli/cli_runner.h"

namespace linkwise::testing {
namespace {

TEST(ServeCli, JsonFields) {
  auto r = run_cli(
      "serve inference-appliance --model llama3.1-70b --tp 4 --input 8192 --output 512 "
      "--concurrency 32 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"ttft_s", "itl_s", "e2e_s", "output_tokens_per_s", "requests_per_s",
                        "kv_cache_GiB", "load_time_s"})
    EXPECT_GT(j[k].get<double>(), 0) << k;
  EXPECT_EQ(j["concurrency"], 32);
  EXPECT_GT(j["max_concurrency_fit"].get<int>(), 0);
  EXPECT_GE(j["comm_fraction"].get<double>(), 0);
  EXPECT_LE(j["comm_fraction"].get<double>(), 1);
  EXPECT_FALSE(j["bottleneck"].get<std::string>().empty());
  EXPECT_EQ(j["comm_link"], "4 SHM channels");  // SHM: NCCL's channels through host memory
  EXPECT_EQ(j["tp"], 4);
  EXPECT_EQ(j["replicas"], 1);
  // Little's law: 32 users, each one request per e2e.
  EXPECT_NEAR(j["requests_per_s"].get<double>() * j["e2e_s"].get<double>(), 32, 0.5);
}

TEST(ServeCli, TextReport) {
  auto r = run_cli(
      "serve inference-appliance --model qwen2.5-coder-32b --tp 2 --concurrency 1 --lora-rank 16");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"2 replicas of tp 2", "time to first token", "inter-token latency",
                        "memory per GPU", "KV cache per token", "links: 4 SHM channels",
                        "cold start:", "LoRA adapter swap", "bottleneck: "})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST(ServeCli, SweepShowsTheBends) {
  // Whole-life admission: throughput never falls as users are added (the extra clients wait for a
  // slot). With vLLM's admission by prompt (the default) it may fall past the KV cache, where the
  // replayed point recomputes preempted sequences (docs/serving.md, "Replay"): 256 users there.
  auto r = run_cli(
      "serve dgx-h100 --model llama3.1-70b --tp 8 --input 8192 --output 512 --sweep concurrency "
      "--kv-admission whole-life --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["sweep"].size(), 9u);  // 1, 2, 4, ..., 256
  EXPECT_EQ(j["sweep"][8]["concurrency"], 256);
  double prev = 0;
  for (const auto& p : j["sweep"]) {
    EXPECT_GE(p["output_tokens_per_s"].get<double>(), prev * 0.99);
    prev = p["output_tokens_per_s"].get<double>();
  }
  ASSERT_FALSE(j["bends"].empty());
  auto t = run_cli(
      "serve dgx-h100 --model llama3.1-70b --tp 8 --input 8192 --output 512 --sweep concurrency");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("bends at "), std::string::npos) << t.out;
}

TEST(ServeCli, OpenLoop) {
  auto r = run_cli("serve dgx-h100 --model llama3.1-8b --replicas 8 --rate 10 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["requests_per_s"].get<double>(), 10, 1e-6);
  EXPECT_FALSE(j["overloaded"].get<bool>());
}

// A GPU without BF16 (the catalog's T4, Turing) serves 16-bit weights as fp16: the run goes on at
// the fp16 rate and says so, where asking it for fp8 compute would be refused.
TEST(ServeCli, SixteenBitWeightsOnAGpuWithoutBf16RunAsFp16) {
  const std::string box = temp_dir() + "/t4.yaml";
  std::ofstream(box) << "name: one-t4\n"
                        "description: one T4 on a Xeon Gold 6248\n"
                        "nodes:\n"
                        "  - {id: cpu0, kind: cpu, part: xeon-gold-6248}\n"
                        "  - {id: gpu0, kind: gpu, part: t4}\n"
                        "links:\n"
                        "  - {a: gpu0, b: cpu0, tech: pcie3, width: 16}\n";
  auto r = run_cli("serve " + box + " --model qwen2.5-0.5b --concurrency 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(flat(r.out).find("t4 has no BF16 tensor cores: 16-bit weights run as fp16"),
            std::string::npos)
      << r.out;
  auto h = run_cli("serve dgx-h100 --model qwen2.5-0.5b --concurrency 1");
  ASSERT_EQ(h.exit_code, 0) << h.err;
  EXPECT_EQ(flat(h.out).find("no BF16 tensor cores"), std::string::npos) << h.out;
}

TEST(ServeCli, ContextLongerThanTheModelAllows) {
  auto r = run_cli(
      "serve inference-appliance --model qwen2.5-coder-32b --tp 2 --input 32000 --output 1000");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--input 32000 + --output 1000 = 33000 tokens exceeds the 32768-token "
                       "context of qwen2.5-coder-32b"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(ServeCli, TpNotDividingTheHeads) {
  auto r = run_cli("serve inference-appliance --model qwen2.5-coder-32b --tp 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--tp 3 does not divide the 40 attention heads of qwen2.5-coder-32b"),
            std::string::npos)
      << r.err;
}

TEST(ServeCli, WritesTheReportToAFileOnlyWhenItRuns) {
  std::string dir = temp_dir();
  auto r = run_cli("serve inference-appliance --model llama3.1-8b --concurrency 4 --json -o " +
                   dir + "/s.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  r = run_cli("serve inference-appliance --model llama3.1-70b --gpus GPU0 -o " + dir + "/bad.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(run_cli("topo " + dir + "/bad.json").exit_code, 0);  // no file was written
}

TEST(ServeCli, ModelThatCannotFit) {
  auto r = run_cli("serve inference-appliance --model llama3.1-70b --gpus GPU0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("llama3.1-70b does not fit on h100-pcie with tp 1 x pp 1 in bf16"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(ServeCli, BadFlags) {
  auto r = run_cli("serve inference-appliance --model llama3.1-8b --precision fp4");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--precision must be bf16, fp8 or int4, not 'fp4'"), std::string::npos)
      << r.err;
  r = run_cli("serve inference-appliance --model llama3.1-8b --gpus ,,");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--gpus: ',,' names no GPU"), std::string::npos) << r.err;
  r = run_cli("serve inference-appliance --model llama3.1-8b --concurrency 4 --rate 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("exclude each other"), std::string::npos) << r.err;
  r = run_cli("serve inference-appliance --model llama3.1-8b --concurrency 4 --arrivals steady");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--arrivals must be burst or poisson, not 'steady'"), std::string::npos)
      << r.err;
  r = run_cli("serve inference-appliance --model llama3.1-8b --rate 2 --arrivals burst");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("an open loop (--rate) arrives as poisson"), std::string::npos) << r.err;
  r = run_cli(
      "serve inference-appliance --model llama3.1-8b --input 9000 --max-batched-tokens 8192 "
      "--no-chunked-prefill");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("a prompt of 9000 tokens does not fit the 8192-token budget"),
            std::string::npos)
      << r.err;
  for (const char* rate : {"inf", "0", "-1", "nan"}) {  // a short message, not CLI11's range
    r = run_cli(std::string("serve inference-appliance --model llama3.1-8b --rate ") + rate);
    EXPECT_EQ(r.exit_code, 2) << rate;
    EXPECT_NE(r.err.find("--rate"), std::string::npos) << r.err;
    EXPECT_LT(r.err.size(), 200u) << r.err;
    EXPECT_EQ(r.out, "") << rate;
  }
  r = run_cli("serve inference-appliance --model llama3.1-8b --concurrency 4 --requests 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--requests 1 is fewer than the 4 clients of --concurrency"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  r = run_cli("serve inference-appliance --model llama3.1-8b --rate 2 --requests 300");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--requests describes a closed loop's finite benchmark"), std::string::npos)
      << r.err;
}

// --front-end on real output: one user, so nothing queues; vLLM's API server adds its 4 ms a
// request (work::kVllmApiServerLatencyS, tenstorrent/tt-inference-server issue 190) and its CPU
// time to tokenize the 1024-token prompt (work::kVllmTokenizeCpuS, 2 us a token: 2.048 ms) to TTFT
// over the engine alone (offline), NIM's front end nothing; --endpoint chat 12 ms more of CPU
// (work::kVllmChatRequestCpuS). E2E grows by the same 6.048 ms but for a trace:
// the longer cycle (the engine idles while the next request crosses the front end) changes the mean
// step's mix of prompt and decode work, which moves ITL by about 0.1 us (0.001 %), times 127
// tokens.
TEST(ServeCli, FrontEndAddsItsTimeBeforeTheFirstToken) {
  auto json_of = [](const std::string& front) {
    auto r = run_cli(
        "serve inference-appliance --model llama3.1-8b --input 1024 --output 128 --concurrency 1 "
        "--json" +
        front);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  auto vllm = json_of(""), offline = json_of(" --front-end offline"),
       nim = json_of(" --front-end nim");
  const double kExact = 1e-9;   // s: the same arithmetic, only rounding
  const double kMixS = 50e-6;   // s: the step-mix trace in E2E (127 x ~0.1 us, with margin)
  const double kItlRel = 1e-4;  // the step-mix trace in ITL, relative
  const double front = 4e-3 + 1024 * 2e-6;
  EXPECT_NEAR(vllm["ttft_s"].get<double>() - offline["ttft_s"].get<double>(), front, kExact);
  EXPECT_NEAR(nim["ttft_s"].get<double>(), offline["ttft_s"].get<double>(), kExact);
  // TensorRT-LLM's HTTP server, with no public figure, charges nothing either; SGLang's front end
  // 6.9 ms a request (work::kSglangFrontEndLatencyS: 9.54 ms median TTFT over a 2.632 ms mock
  // forward, tenstorrent/tt-inference-server issue 3560), no CPU time queued.
  EXPECT_NEAR(json_of(" --front-end trtllm-serve")["ttft_s"].get<double>(),
              offline["ttft_s"].get<double>(), kExact);
  EXPECT_NEAR(
      json_of(" --front-end sglang")["ttft_s"].get<double>() - offline["ttft_s"].get<double>(),
      6.9e-3, kExact);
  EXPECT_NEAR(vllm["e2e_s"].get<double>() - offline["e2e_s"].get<double>(), front, kMixS);
  auto chat = json_of(" --endpoint chat");
  EXPECT_NEAR(chat["ttft_s"].get<double>() - vllm["ttft_s"].get<double>(), 12e-3, kExact);
  auto bad_endpoint = run_cli("serve inference-appliance --model llama3.1-8b --endpoint rpc");
  EXPECT_EQ(bad_endpoint.exit_code, 2);
  EXPECT_NE(bad_endpoint.err.find("--endpoint must be chat or completions, not 'rpc'"),
            std::string::npos)
      << bad_endpoint.err;
  EXPECT_NEAR(vllm["itl_s"].get<double>() / offline["itl_s"].get<double>(), 1.0, kItlRel);
  auto bad = run_cli("serve inference-appliance --model llama3.1-8b --front-end http");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(
      bad.err.find("--front-end must be vllm, offline, nim, sglang or trtllm-serve, not 'http'"),
      std::string::npos)
      << bad.err;
}

// Text output with its wrapped lines joined: each line break and the indent after it as one space.
std::string unwrapped(const std::string& out) {
  std::string flat;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] != '\n') {
      flat += out[i];
      continue;
    }
    while (i + 1 < out.size() && out[i + 1] == ' ') ++i;
    flat += ' ';
  }
  return flat;
}

// --tokenizer-batch-wait: vLLM's AsyncMicrobatchTokenizer (vllm-project/vllm PR #19334) holds a
// lone prompt for its 2 ms batch window before tokenizing it. One user on an idle engine: TTFT is
// 2 ms later exactly (kExact, only rounding), E2E 2 ms later but for the step-mix trace of the
// longer cycle (FrontEndAddsItsTimeBeforeTheFirstToken's bound, kMixS). A wait with another front
// end, or a negative one, exits 2.
TEST(ServeCli, TokenizerBatchWaitAddsItsWindowBeforeTheFirstToken) {
  auto json_of = [](const std::string& extra) {
    auto r = run_cli(
        "serve inference-appliance --model llama3.1-8b --input 1024 --output 128 --concurrency 1 "
        "--json" +
        extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const double kExact = 1e-9;  // s
  const double kMixS = 50e-6;  // s
  auto base = json_of(""), waited = json_of(" --tokenizer-batch-wait 0.002");
  EXPECT_NEAR(waited["ttft_s"].get<double>() - base["ttft_s"].get<double>(), 2e-3, kExact);
  EXPECT_NEAR(waited["e2e_s"].get<double>() - base["e2e_s"].get<double>(), 2e-3, kMixS);
  auto text = run_cli(
      "serve inference-appliance --model llama3.1-8b --concurrency 1 --tokenizer-batch-wait 0.002");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(unwrapped(text.out).find("2.0 ms of it the tokenizer's batch wait"), std::string::npos)
      << text.out;
  auto offline = run_cli(
      "serve inference-appliance --model llama3.1-8b --front-end offline --tokenizer-batch-wait "
      "0.002");
  EXPECT_EQ(offline.exit_code, 2);
  EXPECT_NE(offline.err.find("--tokenizer-batch-wait 0.002 is a wait on vLLM's API server; "
                             "--front-end offline has none"),
            std::string::npos)
      << offline.err;
  auto negative =
      run_cli("serve inference-appliance --model llama3.1-8b --tokenizer-batch-wait -1");
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_NE(negative.err.find("--tokenizer-batch-wait"), std::string::npos) << negative.err;
}

// --prompt-only-steps (vLLM V0 without chunked prefill, `_schedule_default`): a step with prompts
// runs prompts only. One user: no other prompt falls between its tokens, so its figures are those
// of whole prompts beside the decodes, exactly (kRel: only rounding). Eight users: the decodes wait
// through the others' prompt steps, so ITL is longer. It needs --no-chunked-prefill (exit 2).
TEST(ServeCli, PromptOnlyStepsHoldTheDecodes) {
  auto json_of = [](const std::string& extra) {
    auto r = run_cli(
        "serve inference-appliance --model llama3.1-8b --input 1024 --output 128 --arrivals "
        "poisson --no-chunked-prefill --no-async-scheduling --json" +
        extra);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const double kRel = 1e-9;
  auto mixed1 = json_of(" --concurrency 1"),
       only1 = json_of(" --concurrency 1 --prompt-only-steps");
  for (const char* k : {"ttft_s", "itl_s", "output_tokens_per_s"})
    EXPECT_NEAR(only1[k].get<double>() / mixed1[k].get<double>(), 1.0, kRel) << k;
  auto mixed8 = json_of(" --concurrency 8"),
       only8 = json_of(" --concurrency 8 --prompt-only-steps");
  EXPECT_GT(only8["itl_s"].get<double>(), mixed8["itl_s"].get<double>());
  auto text = run_cli(
      "serve inference-appliance --model llama3.1-8b --concurrency 8 --no-chunked-prefill "
      "--prompt-only-steps");
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(unwrapped(text.out).find("prompt-only steps (decodes wait, vLLM V0)"),
            std::string::npos)
      << text.out;
  auto bad = run_cli("serve inference-appliance --model llama3.1-8b --prompt-only-steps");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--prompt-only-steps is vLLM V0's scheduling without chunked prefill: "
                         "give --no-chunked-prefill with it"),
            std::string::npos)
      << bad.err;
}

TEST(ServeCli, FiniteBenchmarkAveragesItsFirstCohortIn) {
  // 48 clients of 256-token prompts start together: their 12288 prompt tokens wait at once,
  // several 2048-token steps, where the steady state's prompt waits for one. Over 300 requests the
  // mean TTFT is higher and the rate lower than the steady state's.
  const std::string cmd =
      "serve workstation-rtx4090 --model mistral-7b --input 256 --output 100 --concurrency 48 "
      "--arrivals poisson --json";
  auto steady = run_cli(cmd), finite = run_cli(cmd + " --requests 300");
  ASSERT_EQ(steady.exit_code, 0) << steady.err;
  ASSERT_EQ(finite.exit_code, 0) << finite.err;
  auto s = nlohmann::json::parse(steady.out), f = nlohmann::json::parse(finite.out);
  EXPECT_GT(f["ttft_s"].get<double>(), 1.5 * s["ttft_s"].get<double>());
  EXPECT_LT(f["requests_per_s"].get<double>(), s["requests_per_s"].get<double>());
  // A one-token budget and 100k-token prompts: the cohort's steps that carry chunks of one prompt
  // are taken together, so this is as quick as any other run.
  auto tiny = run_cli(
      "serve inference-appliance --model llama3.1-8b --input 100000 --output 1000 --concurrency 64 "
      "--max-batched-tokens 1 --requests 1000000000 --json");
  ASSERT_EQ(tiny.exit_code, 0) << tiny.err;
  EXPECT_GT(nlohmann::json::parse(tiny.out)["ttft_s"].get<double>(), 0);
}

TEST(ServeCli, BurstArrivalsWaitForTheCohort) {
  // 32 equal clients on one RTX 4090: phase-locked (the default) they wait for each other's
  // prompts; independent (poisson) they mostly find the engine decoding.
  std::string cmd =
      "serve workstation-rtx4090 --model mistral-7b --input 256 --output 128 --concurrency 32 "
      "--json";
  auto burst = run_cli(cmd), poisson = run_cli(cmd + " --arrivals poisson");
  ASSERT_EQ(burst.exit_code, 0) << burst.err;
  ASSERT_EQ(poisson.exit_code, 0) << poisson.err;
  auto b = nlohmann::json::parse(burst.out), p = nlohmann::json::parse(poisson.out);
  EXPECT_GT(b["ttft_s"].get<double>(), 2 * p["ttft_s"].get<double>());
  EXPECT_EQ(b["arrivals"], "burst");
  EXPECT_EQ(p["arrivals"], "poisson");
  EXPECT_EQ(b["chunked_prefill"], true);
}

TEST(ServeCli, V0AsyncOutputProcessingDelaysEachTokenByTheNextStepsHostTime) {
  // --async-output-proc (vLLM V0's default): a step's tokens leave during the next step, once it
  // is scheduled and launched, so TTFT grows by the engine's host time a step (0.5 ms) and the
  // engine line says so.
  std::string cmd =
      "serve dgx-h100 --model llama3.1-8b --gpus 0 --rate 4 --no-async-scheduling --json";
  auto v1 = run_cli(cmd), v0 = run_cli(cmd + " --async-output-proc");
  ASSERT_EQ(v1.exit_code, 0) << v1.err;
  ASSERT_EQ(v0.exit_code, 0) << v0.err;
  auto a = nlohmann::json::parse(v1.out), b = nlohmann::json::parse(v0.out);
  EXPECT_NEAR(b["ttft_s"].get<double>() - a["ttft_s"].get<double>(), 0.5e-3, 1e-6);
  auto text = run_cli(
      "serve dgx-h100 --model llama3.1-8b --gpus 0 --rate 4 --no-async-scheduling "
      "--async-output-proc");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("V0 async output processing"), std::string::npos) << text.out;
}

TEST(ServeCli, V0AsyncOutputProcessingOnlyWithV0sEngine) {
  // --async-output-proc is vLLM V0's: V0 has no async scheduling, turns it off with pipeline
  // parallelism and admits by prompt (whole-life admission is TensorRT-LLM's): exit 2 otherwise.
  std::string cmd = "serve dgx-h100 --model llama3.1-8b --rate 4 --async-output-proc";
  struct Bad {
    std::string flags, message;
  } bad[] = {{"", "give --no-async-scheduling with it"},
             {" --no-async-scheduling --tp 1 --pp 2 --gpus 0,1", "pipeline parallelism (--pp 2)"},
             {" --no-async-scheduling --front-end offline", "is TensorRT-LLM's"},
             {" --no-async-scheduling --front-end nim", "is TensorRT-LLM's"},
             {" --no-async-scheduling --kv-admission whole-life", "is TensorRT-LLM's"}};
  for (const auto& b : bad) {
    auto r = run_cli(cmd + b.flags);
    EXPECT_EQ(r.exit_code, 2) << b.flags << ": " << r.err;
    EXPECT_NE(r.err.find(b.message), std::string::npos) << b.flags << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  auto offline_v0 =
      run_cli(cmd + " --gpus 0 --no-async-scheduling --front-end offline --kv-admission prompt");
  EXPECT_EQ(offline_v0.exit_code, 0) << offline_v0.err;
  // The step-by-step replay has no V0 async output processing: a replayed answer says so.
  auto replayed = run_cli(
      "serve dgx-h100 --model llama3.1-8b --gpus 0 --async-output-proc --no-async-scheduling "
      "--input 1000 --output 1000 --requests 300 --concurrency 300");
  ASSERT_EQ(replayed.exit_code, 0) << replayed.err;
  EXPECT_NE(std::regex_replace(replayed.out, std::regex("\\s+"), " ")
                .find("the replay leaves V0 async output processing out"),
            std::string::npos)
      << replayed.out;
}

TEST(ServeCli, AsyncSchedulingIsTheDefaultAndCanBeTurnedOff) {
  // Independent arrivals at a busy engine: with a step scheduled ahead (vLLM's default since
  // v0.14) each prompt also waits for that step, so TTFT is longer by about a step (the ITL);
  // --no-async-scheduling gives the older engines' TTFT and says so in the JSON.
  std::string cmd = "serve dgx-h100 --model llama3.1-8b --gpus 0 --rate 4 --json";
  auto ahead = run_cli(cmd), sync = run_cli(cmd + " --no-async-scheduling");
  ASSERT_EQ(ahead.exit_code, 0) << ahead.err;
  ASSERT_EQ(sync.exit_code, 0) << sync.err;
  auto a = nlohmann::json::parse(ahead.out), s = nlohmann::json::parse(sync.out);
  EXPECT_EQ(a["async_scheduling"], true);
  EXPECT_EQ(s["async_scheduling"], false);
  double itl = s["itl_s"].get<double>();
  EXPECT_NEAR(a["ttft_s"].get<double>() - s["ttft_s"].get<double>(), itl, 1e-3 * itl);
}

TEST(ServeCli, KvAdmissionByPromptAdmitsMore) {
  // --kv-admission prompt (vLLM V1): a request is admitted when its first chunk fits, so with
  // Poisson arrivals (requests spread over their lives) each holds input + output/2 tokens on
  // average instead of input + output: 1024 + 128 against 1024 + 256 here, more sequences fit. A
  // burst closed loop's clients stay in step and reach their ends together: the whole-life fit.
  // The JSON names the policy.
  std::string cmd = "serve workstation-rtx4090 --model mistral-7b --concurrency 64 --json";
  auto whole = run_cli(cmd + " --kv-admission whole-life"),
       prompt = run_cli(cmd + " --kv-admission prompt --arrivals poisson"),
       burst = run_cli(cmd + " --kv-admission prompt");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  ASSERT_EQ(prompt.exit_code, 0) << prompt.err;
  ASSERT_EQ(burst.exit_code, 0) << burst.err;
  auto w = nlohmann::json::parse(whole.out), p = nlohmann::json::parse(prompt.out),
       b = nlohmann::json::parse(burst.out);
  EXPECT_EQ(w["kv_admission"], "whole-life");
  EXPECT_EQ(p["kv_admission"], "prompt");
  EXPECT_GT(p["max_concurrency_fit"].get<int>(), w["max_concurrency_fit"].get<int>());
  EXPECT_EQ(b["max_concurrency_fit"].get<int>(), w["max_concurrency_fit"].get<int>());
  auto bad = run_cli(cmd + " --kv-admission evict");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--kv-admission"), std::string::npos) << bad.err;
}

TEST(ServeCli, PromptAdmissionPastTheCacheSaysItWasReplayed) {
  // Qwen3 8B on an RTX 4090, 100 in / 2000 out: 15 sequences fit for their whole lives; 20 clients
  // behind vLLM's API server (the default front end, admission by prompt) are past it, so the
  // point is the replay of the 800-request run: 254 preemptions and 802 output tok/s
  // (docs/serving.md, "Memory and admission"), against 664 for the steady state of 15. Behind
  // the offline front end (trtllm-bench: whole lives) nothing is replayed.
  std::string cmd =
      "serve workstation-rtx4090 --model qwen3-8b --input 100 --output 2000 --concurrency 20 "
      "--requests 800";
  auto vllm = run_cli(cmd), offline = run_cli(cmd + " --front-end offline --json");
  ASSERT_EQ(vllm.exit_code, 0) << vllm.err;
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  EXPECT_NE(vllm.out.find("\nreplayed: past the KV cache, vLLM V1 admits by prompt and preempts: "
                          "254 preemptions in a run of 800"),
            std::string::npos)
      << vllm.out;
  EXPECT_TRUE(std::regex_search(vllm.out, std::regex("\noutput tokens/s per box +802\n")))
      << vllm.out;
  // The batch shown is the replay's, not the steady state's 15: the 20 clients less those waiting
  // after a preemption, time-weighted (19.0), at most the 20 clients in one step; the mean step
  // says it is the steady state's at 15.
  EXPECT_NE(vllm.out.find("batched per replica, replayed  19.0 sequences mean, 20 peak"),
            std::string::npos)
      << vllm.out;
  EXPECT_NE(vllm.out.find("mean engine step (steady state at 15.0 sequences)"), std::string::npos)
      << vllm.out;
  auto vj = nlohmann::json::parse(run_cli(cmd + " --json").out);
  EXPECT_NEAR(vj["running_per_replica"].get<double>(), 19.0, 0.05);
  EXPECT_EQ(vj["running_peak_per_replica"].get<double>(), 20);
  EXPECT_EQ(vj["steady_running_per_replica"].get<double>(), 15);
  auto o = nlohmann::json::parse(offline.out);
  EXPECT_EQ(o["running_peak_per_replica"].get<double>(), 0);  // not replayed
  EXPECT_EQ(o["steady_running_per_replica"].get<double>(), 0);
  EXPECT_EQ(o["kv_admission"], "whole-life");
  EXPECT_EQ(o["replayed"], false);
}

TEST(ServeCli, AtOnceRunIsReplayed) {
  // trtllm-bench throughput's run: 3000 requests of 1000/1000 queued at once on one H100 through
  // the offline front end, whole prompts. The steady state does not describe it (the engine starts
  // with the whole run waiting, packs the waiting prompts, drains at the end), so the CLI replays
  // it step by step with trtllm-bench's own limits, as `serve --validation` does for that row.
  // Fixed lengths: every request ends its 1000 tokens, so output tok/s = 1000 x req/s, and the
  // mean E2E is the mean TTFT plus 999 mean ITLs (both exact but for rounding: 1e-6).
  const std::string cmd =
      "serve dgx-h100 --model llama3.1-8b --precision fp8 --input 1000 --output 1000 "
      "--front-end offline --no-chunked-prefill --requests 3000 --concurrency 3000";
  auto text = run_cli(cmd + " --gpus 0"), one = run_cli(cmd + " --gpus 0 --json"),
       two = run_cli(cmd + " --gpus 0,1 --json");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(text.out.find("\nreplayed step by step: all 3000 requests queued at once\n"),
            std::string::npos)
      << text.out;
  auto j = nlohmann::json::parse(one.out);
  EXPECT_EQ(j["replayed"], true);
  for (const char* k : {"ttft_s", "itl_s", "e2e_s", "output_tokens_per_s", "requests_per_s"})
    EXPECT_GT(j[k].get<double>(), 0) << k;
  const double x = j["output_tokens_per_s"].get<double>();
  EXPECT_NEAR(x, 1000 * j["requests_per_s"].get<double>(), 1e-6 * x);
  const double e2e = j["e2e_s"].get<double>();
  EXPECT_NEAR(e2e, j["ttft_s"].get<double>() + 999 * j["itl_s"].get<double>(), 1e-6 * e2e);
  EXPECT_LT(j["ttft_s"].get<double>(), e2e);
  // The batch the replay ran: whole-life admission keeps it within the 503 sequences that fit, and
  // the ramp and drain bring the mean below its peak.
  EXPECT_EQ(j["max_concurrency_fit"], 503);
  EXPECT_EQ(j["running_peak_per_replica"].get<double>(), 503);
  EXPECT_GT(j["running_per_replica"].get<double>(), 400);
  EXPECT_LT(j["running_per_replica"].get<double>(), 503);
  // The validation's row (TensorRT-LLM Llama 3.1 8B fp8 TP1 H100, 1000/1000): the same figure.
  auto v = nlohmann::json::parse(run_cli("serve --validation --json").out);
  bool found = false;
  for (const auto& row : v)
    if (row["case"] == "TensorRT-LLM Llama 3.1 8B fp8 TP1 H100, 1000/1000, max throughput") {
      found = true;
      EXPECT_DOUBLE_EQ(row["predicted"]["output_tokens_per_s"].get<double>(), x);
    }
  EXPECT_TRUE(found);
  // Two replicas run 1500 requests each side by side: about twice one GPU's rate (each replica's
  // run is half as long, so its ramp and drain weigh more: within 10%).
  auto t = nlohmann::json::parse(two.out);
  EXPECT_EQ(t["replicas"], 2);
  EXPECT_EQ(t["replayed"], true);
  EXPECT_NEAR(t["output_tokens_per_s"].get<double>(), 2 * x, 0.1 * 2 * x);
  // The replay keeps the KV cache on the GPUs: with --kv-offload the point stays the steady state
  // and a note says why.
  auto off = run_cli(cmd + " --gpus 0 --kv-offload");
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(off.out.find("replayed step by step"), std::string::npos) << off.out;
  EXPECT_NE(off.out.find("leaves KV offload out"), std::string::npos) << off.out;
}

TEST(ServeCli, AtOnceRunTooLongToReplaySaysSoOnce) {
  // 30000 requests of 100 in / 2000 out queued at once behind vLLM's API server: 30000 x (2000 +
  // 1 chunk) = 6.0e7 request-steps, past the 5e7 a point replays, so the point is the steady state;
  // its 30000 clients are also past the KV cache (15 fit), which one note says with the rest.
  auto r = run_cli(
      "serve workstation-rtx4090 --model qwen3-8b --input 100 --output 2000 --concurrency 30000 "
      "--requests 30000 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["replayed"], false);
  ASSERT_EQ(j["notes"].size(), 1u) << j["notes"].dump();
  const std::string note = j["notes"][0];
  EXPECT_NE(note.find("would replay 6e+07 request-steps"), std::string::npos) << note;
  EXPECT_NE(note.find("past the KV cache"), std::string::npos) << note;
}

TEST(ServeCli, Validation) {
  auto r = run_cli("serve --validation --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_GE(j.size(), 2u);
  int replayed = 0, distributions = 0;
  for (const auto& row : j) {
    EXPECT_FALSE(row["source"].get<std::string>().empty());
    // Each row names its engine's admission: vLLM's by prompt, TensorRT-LLM's (and NIM's) whole
    // lives; only rows admitted by prompt can preempt.
    std::string admission = row["kv_admission"].get<std::string>();
    std::string name = row["case"].get<std::string>();
    EXPECT_EQ(admission, name.rfind("vLLM", 0) == 0 ? "prompt" : "whole-life") << name;
    if (admission == "whole-life") EXPECT_EQ(row["preemptions"].get<long>(), 0) << name;
    replayed += row["replayed"].get<bool>();
    // The TTFT distribution: a row whose source gives the median is replayed and reports the
    // replay's median and P99 beside the source's (0 where there is none).
    if (row["measured"]["ttft_median_s"].get<double>() > 0) {
      EXPECT_TRUE(row["replayed"].get<bool>()) << name;
      EXPECT_GT(row["predicted"]["ttft_median_s"].get<double>(), 0) << name;
      EXPECT_GE(row["predicted"]["ttft_p99_s"].get<double>(),
                row["predicted"]["ttft_median_s"].get<double>())
          << name;
      ++distributions;
    }
  }
  EXPECT_GE(replayed, 1);
  EXPECT_GE(distributions, 1);
}

}  // namespace
}  // namespace linkwise::testing
