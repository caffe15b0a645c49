list(APPEND LINKWISE_SOURCES src/topo/spec.cc src/topo/chassis.cc src/topo/paths.cc src/topo/flow.cc src/topo/analysis.cc
  src/topo/budget.cc)
list(APPEND LINKWISE_TEST_SOURCES src/topo/spec_test.cc src/topo/chassis_test.cc src/topo/analysis_test.cc
  src/topo/paths_test.cc src/topo/flow_test.cc src/topo/budget_test.cc)
