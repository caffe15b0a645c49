list(APPEND LINKWISE_SOURCES src/work/model.cc src/work/job.cc src/work/plan.cc src/work/memory.cc
  src/work/compute.cc src/work/overlap.cc src/work/step.cc src/work/step_sim.cc src/work/traffic.cc src/work/framework.cc src/work/hf_stack.cc src/work/checkpoint.cc src/work/search.cc src/work/train_run.cc
  src/work/validation.cc src/work/serve.cc src/work/serve_loop.cc src/work/serve_load.cc src/work/serve_validation.cc src/work/serve_run.cc
  src/work/serve_replay.cc src/work/serve_front.cc)
list(APPEND LINKWISE_TEST_SOURCES src/work/model_test.cc src/work/compute_shapes_test.cc src/work/overlap_test.cc src/work/step_test.cc src/work/cp_test.cc src/work/serve_test.cc src/work/train_run_test.cc src/work/hf_stack_test.cc)
