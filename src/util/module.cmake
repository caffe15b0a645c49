list(APPEND LINKWISE_SOURCES src/util/error.cc src/util/text.cc src/util/yaml_util.cc
  src/util/stop_signals.cc)
list(APPEND LINKWISE_TEST_SOURCES src/util/text_test.cc src/util/stop_signals_test.cc
  src/util/option_spec_test.cc)
