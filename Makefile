# linkwise: two commands.
#   make run   installs missing Debian packages, builds in Release into build/, runs the main job:
#              a LoRA fine-tune of Llama 3 70B on the training appliance, its best plan and bottleneck
#   make test  the same, installs TEST_PACKAGES (Chromium, rsvg-convert), runs the test suite (CTest)
# More checks (each in its own build directory; CUDA, NCCL, MPI and benchmarks off):
#   make test-sanitize  the test suite under AddressSanitizer + UndefinedBehaviorSanitizer (build-sanitize/)
#   make test-debug     the test suite of a Debug build, assertions on (build-debug/)
#   make check-format   checks every C++ source against .clang-format (installs clang-format-14)
#   make fuzz           builds the libFuzzer targets with clang++ (build-fuzz/), runs each FUZZ_SECONDS
BUILD_DIR ?= build
JOBS ?= 2
CMAKE_FLAGS ?=
FUZZ_SECONDS ?= 600
# The extra builds need no GPU parts, no benchmarks and no Python module (a sanitized extension
# would need the sanitizer runtime preloaded into Python).
CHECK_FLAGS := -DLINKWISE_CUDA=OFF -DLINKWISE_NCCL=OFF -DLINKWISE_MPI=OFF -DLINKWISE_BENCH=OFF \
  -DLINKWISE_PYTHON=OFF

# Debian 12 packages the build needs. CUDA, NCCL and OpenMPI are optional and detected.
DEB_PACKAGES := build-essential cmake ninja-build pkg-config ccache \
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libboost-graph-dev \
  libgtest-dev libgmock-dev libbenchmark-dev
# What only the tests need, installed by `make test` before it configures: Chromium opens the HTML
# report, rsvg-convert turns drawings into PNG (linkwise draw -o x.png uses it where installed),
# OpenMPI for the test that runs `linkwise design` under mpirun (found at configure time); the
# Python module (python/), its tests, its `pip install .` and examples/notebook.py need Python's
# headers and pybind11 (found at configure time too), pytest, matplotlib, pip, setuptools and wheel.
TEST_PACKAGES := chromium librsvg2-bin libopenmpi-dev openmpi-bin \
  python3-dev pybind11-dev python3-pytest python3-matplotlib python3-pip python3-setuptools \
  python3-wheel

.PHONY: all deps test-deps install-packages configure build run test bench clean test-sanitize test-debug fuzz check-format

all: build

deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(DEB_PACKAGES)"

test-deps:
	@$(MAKE) --no-print-directory install-packages PACKAGES="$(TEST_PACKAGES)"

install-packages:
	@missing=""; for p in $(PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi

configure: deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j$(JOBS)

run: build
	./$(BUILD_DIR)/linkwise train training-appliance --model llama3-70b --mode lora --tokens 1e9

# The test packages first: OpenMPI, Python and pybind11 must be there when CMake configures.
test: test-deps build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS)

test-sanitize: deps
	cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DLINKWISE_SANITIZE=ON $(CHECK_FLAGS) $(CMAKE_FLAGS)
	cmake --build build-sanitize -j$(JOBS)
	cd build-sanitize && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j$(JOBS)

test-debug: deps
	cmake -S . -B build-debug -G Ninja -DCMAKE_BUILD_TYPE=Debug $(CHECK_FLAGS) $(CMAKE_FLAGS)
	cmake --build build-debug -j$(JOBS)
	cd build-debug && ctest --output-on-failure -j$(JOBS)

check-format:
	@dpkg-query -W -f='$${Status}' clang-format-14 2>/dev/null | grep -q "install ok installed" || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-format-14; }
	scripts/check-format.sh

bench: build
	./$(BUILD_DIR)/bench/linkwise_bench

clean:
	rm -rf $(BUILD_DIR)

# libFuzzer targets (clang++ only), each run for FUZZ_SECONDS from a copy of its seed corpus; inputs that
# crash are left in build-fuzz/ as crash-*.
fuzz:
	@command -v clang++ >/dev/null || { echo "make fuzz needs clang++ (apt-get install clang)"; exit 1; }
	cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DLINKWISE_FUZZ=ON -DLINKWISE_TESTS=OFF $(CHECK_FLAGS) $(CMAKE_FLAGS)
	cmake --build build-fuzz -j$(JOBS)
	for t in chassis_yaml model_yaml measurement_json nccl_xml sysfs_tree; do \
	  mkdir -p build-fuzz/corpus/$$t && cp -n fuzz/corpus/$$t/* build-fuzz/corpus/$$t/ ; \
	  (cd build-fuzz && ./fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -timeout=10 \
	    -max_len=65536 corpus/$$t) || exit 1; \
	done
