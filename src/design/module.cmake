list(APPEND LINKWISE_SOURCES src/design/space.cc src/design/search.cc
     src/design/design_options.cc)
list(APPEND LINKWISE_TEST_SOURCES src/design/design_test.cc)
