# error, text and yaml_util are part of linkwise_parser (CMakeLists.txt): the catalog generator needs
# them.
list(APPEND LINKWISE_PARSER_SOURCES src/util/error.cc src/util/text.cc src/util/yaml_util.cc)
list(APPEND LINKWISE_SOURCES src/util/stop_signals.cc src/util/heap.cc)
list(APPEND LINKWISE_TEST_SOURCES src/util/text_test.cc src/util/stop_signals_test.cc
  src/util/option_spec_test.cc)
