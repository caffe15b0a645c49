list(APPEND LINKWISE_SOURCES src/comm/collective.cc src/comm/router.cc src/comm/rings.cc src/comm/algorithms.cc
     src/comm/communicator.cc src/comm/bound.cc
     src/comm/cutflow.cc src/comm/sweep.cc src/comm/transport.cc src/comm/nccl_channels.cc)
list(APPEND LINKWISE_TEST_SOURCES src/comm/collective_test.cc src/comm/predict_test.cc src/comm/cutflow_test.cc src/comm/sweep_test.cc
     src/comm/transport_test.cc src/comm/bound_test.cc src/comm/validation_pcie_test.cc
     src/comm/nccl_channels_test.cc src/comm/rings_test.cc src/comm/router_test.cc)
