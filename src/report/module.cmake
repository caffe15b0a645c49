list(APPEND LINKWISE_SOURCES src/report/table.cc src/report/topo_report.cc src/report/nccl_tests_table.cc src/report/collective_report.cc
  src/report/catalog_report.cc src/report/train_report.cc src/report/probe_report.cc src/report/bench_report.cc
  src/report/calibrate_report.cc src/report/serve_report.cc src/report/budget_report.cc src/report/design_report.cc
  src/report/svg.cc src/report/drawing_layout.cc src/report/drawing.cc src/report/report_run.cc src/report/html_report.cc
  src/report/charts.cc)
list(APPEND LINKWISE_TEST_SOURCES src/report/table_test.cc src/report/topo_report_test.cc src/report/collective_report_test.cc src/report/nccl_tests_table_test.cc
  src/report/catalog_report_test.cc src/report/probe_report_test.cc src/report/calibrate_report_test.cc
  src/report/train_report_test.cc src/report/bench_report_test.cc
  src/report/drawing_test.cc src/report/html_report_test.cc)
