list(APPEND LINKWISE_SOURCES src/hw/catalog.cc)
list(APPEND LINKWISE_TEST_SOURCES src/hw/catalog_test.cc)
