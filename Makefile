# linkwise: two commands.
#   make run   installs missing Debian packages, builds in Release into build/, runs the main job:
#              a LoRA fine-tune of Llama 3 70B on the training appliance, its best plan and bottleneck
#   make test  the same, then runs the whole test suite through CTest
BUILD_DIR ?= build
JOBS ?= 2
CMAKE_FLAGS ?=

# Debian 12 packages the build needs. CUDA, NCCL and OpenMPI are optional and detected.
DEB_PACKAGES := build-essential cmake ninja-build pkg-config ccache \
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libboost-graph-dev \
  libgtest-dev libgmock-dev libbenchmark-dev

.PHONY: all deps configure build run test bench clean

all: build

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
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

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j$(JOBS)

bench: build
	./$(BUILD_DIR)/bench/linkwise_bench

clean:
	rm -rf $(BUILD_DIR)
