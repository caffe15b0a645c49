# The catalog's parser and code generator go into linkwise_parser (CMakeLists.txt), which the
# library and linkwise_catalog_gen share. At build time linkwise_catalog_gen parses and checks
# data/catalog.yaml and writes it as tables (catalog_data.cc) that Catalog::builtin() reads: an
# invalid catalog fails the build, and the program parses no YAML for it when it runs.
list(APPEND LINKWISE_PARSER_SOURCES src/hw/catalog.cc src/hw/catalog_codegen.cc)
list(APPEND LINKWISE_SOURCES src/hw/catalog_builtin.cc ${CMAKE_CURRENT_BINARY_DIR}/catalog_data.cc)
list(APPEND LINKWISE_TEST_SOURCES src/hw/catalog_test.cc)

add_executable(linkwise_catalog_gen src/hw/catalog_gen_main.cc)
target_link_libraries(linkwise_catalog_gen PRIVATE linkwise_parser yaml-cpp fmt::fmt)
target_include_directories(linkwise_catalog_gen PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/include
  ${CMAKE_CURRENT_SOURCE_DIR}/src)
target_compile_options(linkwise_catalog_gen PRIVATE -Wall -Wextra)
add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/catalog_data.cc
  COMMAND linkwise_catalog_gen ${CMAKE_CURRENT_SOURCE_DIR}/data/catalog.yaml
    ${CMAKE_CURRENT_BINARY_DIR}/catalog_data.cc
  DEPENDS linkwise_catalog_gen ${CMAKE_CURRENT_SOURCE_DIR}/data/catalog.yaml
  COMMENT "Checking data/catalog.yaml and writing it as tables (catalog_data.cc)"
  VERBATIM)
