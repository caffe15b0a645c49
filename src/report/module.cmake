list(APPEND LINKWISE_SOURCES src/report/table.cc src/report/topo_report.cc src/report/collective_report.cc
  src/report/catalog_report.cc src/report/train_report.cc src/report/probe_report.cc src/report/bench_report.cc
  src/report/calibrate_report.cc src/report/serve_report.cc)
