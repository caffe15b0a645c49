list(APPEND LINKWISE_SOURCES src/report/table.cc src/report/topo_report.cc src/report/collective_report.cc
  src/report/serve_report.cc src/report/train_report.cc src/report/budget_report.cc src/report/design_report.cc)
