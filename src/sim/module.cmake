list(APPEND LINKWISE_SOURCES src/sim/maxmin.cc src/sim/engine.cc src/sim/resources.cc)
list(APPEND LINKWISE_TEST_SOURCES src/sim/maxmin_test.cc src/sim/engine_test.cc)
