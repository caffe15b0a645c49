list(APPEND LINKWISE_SOURCES
  src/probe/sysfs.cc src/probe/nvml.cc src/probe/nvml_fake.cc src/probe/config_space.cc src/probe/machine.cc
  src/probe/host.cc src/probe/pci_ids.cc src/probe/discover.cc src/probe/check.cc src/probe/design_diff.cc
  src/probe/nccl_import.cc src/probe/nccl_export.cc src/probe/health.cc src/probe/this_machine.cc
  src/probe/xid.cc src/probe/probe_run.cc src/probe/nvml_snapshot.cc)
list(APPEND LINKWISE_TEST_SOURCES
  src/probe/testing/fixture.cc src/probe/testing/fixture_machines.cc src/probe/discover_test.cc src/probe/machine_test.cc src/probe/nvml_nccl_test.cc
  src/probe/health_test.cc src/probe/xid_test.cc)
