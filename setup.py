"""Builds the linkwise._linkwise extension with the project's CMake (pyproject.toml holds the
metadata). The build directory is LINKWISE_BUILD_DIR when set (an existing CMake build, e.g.
build/: only its _linkwise target is built; setuptools' files go to its pip/ folder), else a fresh
one under build-pip/."""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE_DIR = os.path.dirname(os.path.abspath(__file__))
# setuptools' own files (build/, *.egg-info) go beside the CMake build, not into the source tree.
SETUPTOOLS_DIR = os.path.join(os.path.abspath(os.environ["LINKWISE_BUILD_DIR"]), "pip") \
    if os.environ.get("LINKWISE_BUILD_DIR") else os.path.join(SOURCE_DIR, "build-pip")
os.makedirs(SETUPTOOLS_DIR, exist_ok=True)  # egg_base must exist


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = os.environ.get("LINKWISE_BUILD_DIR")
        if build:
            build = os.path.abspath(build)
        else:
            build = os.path.join(SOURCE_DIR, "build-pip", "cmake")
            subprocess.check_call([
                "cmake", "-S", SOURCE_DIR, "-B", build, "-G", "Ninja",
                "-DCMAKE_BUILD_TYPE=Release", "-DLINKWISE_PYTHON=ON", "-DLINKWISE_TESTS=OFF",
                "-DLINKWISE_BENCH=OFF", "-DLINKWISE_CUDA=OFF", "-DLINKWISE_NCCL=OFF",
                "-DLINKWISE_MPI=OFF", f"-DPython3_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", build, "--target", "_linkwise",
                               "-j", os.environ.get("JOBS", "2")])
        built = glob.glob(os.path.join(build, "python", "linkwise", "_linkwise*.so"))
        if not built:
            raise RuntimeError(f"no _linkwise module built in {build}")
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    ext_modules=[Extension("linkwise._linkwise", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": SETUPTOOLS_DIR}, "egg_info": {"egg_base": SETUPTOOLS_DIR}},
)
