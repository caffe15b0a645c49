# The optional Python module (python/): pybind11 over linkwise::core. AUTO builds it when Python 3's
# headers and pybind11 are found (Debian: python3-dev, pybind11-dev), ON requires them, OFF skips it.
# Sets LINKWISE_HAVE_PYTHON.
set(LINKWISE_HAVE_PYTHON OFF)
if(NOT LINKWISE_PYTHON STREQUAL "OFF")
  # The system Python first: its Debian packages (python3-pytest, python3-matplotlib) are the ones
  # the tests and examples/notebook.py use, whatever other python3 comes first on PATH. Another
  # interpreter: -DPython3_EXECUTABLE=...
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 QUIET COMPONENTS Interpreter Development.Module)
  if(Python3_FOUND)
    find_package(pybind11 CONFIG QUIET)
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(LINKWISE_HAVE_PYTHON ON)
  elseif(LINKWISE_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "LINKWISE_PYTHON=ON but Python 3 headers or pybind11 were not found "
                        "(Debian: python3-dev pybind11-dev)")
  endif()
endif()
message(STATUS "linkwise: Python module ${LINKWISE_HAVE_PYTHON}")

# The module is a shared object that links the static linkwise::core: the library is compiled
# position-independent when the module is built (-fPIC; a PIE default is not enough: thread_local
# variables get a TLS model a shared object cannot hold).
function(linkwise_python_needs_pic target)
  if(LINKWISE_HAVE_PYTHON)
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
endfunction()
