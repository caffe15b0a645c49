list(APPEND LINKWISE_SOURCES src/util/error.cc src/util/text.cc src/util/yaml_util.cc)
list(APPEND LINKWISE_TEST_SOURCES src/util/text_test.cc src/util/option_spec_test.cc)
