"""Shared helpers of the Python tests: the built CLI to compare with, the source tree's inputs."""
import json
import os
import shlex
import subprocess

import pytest

# Without the built module (Python headers or pybind11 missing) the tests skip, not fail.
pytest.importorskip("linkwise._linkwise")

SOURCE_DIR = os.environ.get("LINKWISE_SOURCE_DIR",
                            os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
CLI = os.environ.get("LINKWISE_CLI", os.path.join(SOURCE_DIR, "build", "linkwise"))


def run_cli(args):
    """(exit code, stdout, stderr) of `linkwise ARGS`."""
    p = subprocess.run([CLI] + shlex.split(args), capture_output=True, text=True, check=False)
    return p.returncode, p.stdout, p.stderr


def cli_json(args):
    """The parsed --json output of `linkwise ARGS --json`, which must exit 0."""
    code, out, err = run_cli(args + " --json")
    assert code == 0, err
    return json.loads(out)


def source(rel):
    return os.path.join(SOURCE_DIR, rel)


@pytest.fixture
def sysfs_root(tmp_path):
    """A copy of sysfs with one socket and one H100 PCIe GPU on a Gen5 x16 root port."""
    root = tmp_path / "sysroot"

    def write(rel, text, mode="w"):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, mode) as f:
            f.write(text)

    (root / "sys/bus/pci/devices").mkdir(parents=True)
    (root / "proc").mkdir(parents=True)
    write("sys/devices/system/node/node0/cpulist", "0-3\n")
    info = ""
    for c in range(4):
        write(f"sys/devices/system/cpu/cpu{c}/topology/physical_package_id", "0\n")
        info += (f"processor\t: {c}\nvendor_id\t: GenuineIntel\n"
                 "model name\t: Intel(R) Xeon(R) Platinum 8480+\n\n")
    write("proc/cpuinfo", info)

    def config(vendor, device, class_code, port_type):
        b = bytearray(4096)
        b[0:2] = vendor.to_bytes(2, "little")
        b[2:4] = device.to_bytes(2, "little")
        b[6:8] = (0x0010).to_bytes(2, "little")  # status: capability list
        b[9:12] = class_code.to_bytes(3, "little")
        b[0x0e] = 0x01 if class_code >> 8 == 0x0604 else 0
        b[0x34] = 0x40
        b[0x40] = 0x10  # PCI Express capability
        b[0x42:0x44] = (0x2 | (port_type << 4)).to_bytes(2, "little")
        b[0x52:0x54] = (0x1045).to_bytes(2, "little")  # link status: Gen5 x16
        return bytes(b)

    def device(rel, addr, vendor, dev, class_code, port_type):
        d = "sys/devices/pci0000:17/" + rel
        write(d + "/vendor", f"0x{vendor:04x}\n")
        write(d + "/device", f"0x{dev:04x}\n")
        write(d + "/class", f"0x{class_code:06x}\n")
        write(d + "/numa_node", "0\n")
        for k in ("current_link_speed", "max_link_speed"):
            write(d + "/" + k, "32.0 GT/s PCIe\n")
        for k in ("current_link_width", "max_link_width"):
            write(d + "/" + k, "16\n")
        write(d + "/config", config(vendor, dev, class_code, port_type), "wb")
        os.symlink("../../../" + d[4:], root / "sys/bus/pci/devices" / addr)

    device("0000:17:01.0", "0000:17:01.0", 0x8086, 0x347a, 0x060400, 4)
    device("0000:17:01.0/0000:18:00.0", "0000:18:00.0", 0x10DE, 0x2331, 0x030200, 0)
    return str(root)
