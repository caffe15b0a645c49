#!/usr/bin/env python3
"""Builds the seed corpus under fuzz/corpus/<target>/ from examples/, data/ and the NCCL XML and sysfs
shapes the tests use. Run from the repository root: scripts/make_fuzz_corpus.py [path/to/linkwise]
(the linkwise binary, default build/linkwise, exports each preset as NCCL XML). Regression inputs that
fuzzing found live beside the seeds as regress-*; this script leaves them alone."""
import glob, os, shutil, subprocess, sys

root = os.getcwd()
cli = sys.argv[1] if len(sys.argv) > 1 else "build/linkwise"
corpus = os.path.join(root, "fuzz", "corpus")


def put(target, name, data):
    d = os.path.join(corpus, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


for f in sorted(glob.glob("data/presets/*.yaml") + glob.glob("examples/*.yaml")):
    put("chassis_yaml", "seed-" + os.path.basename(f), open(f, "rb").read())
for f in sorted(glob.glob("data/models/*.yaml")):
    put("model_yaml", "seed-" + os.path.basename(f), open(f, "rb").read())
for f in sorted(glob.glob("data/measured/*.json")):
    put("measurement_json", "seed-" + os.path.basename(f), open(f, "rb").read())

# NCCL XML: every preset exported by linkwise, plus the shape NCCL itself writes.
for f in sorted(glob.glob("data/presets/*.yaml")):
    name = os.path.basename(f)[:-5]
    tmp = os.path.join(corpus, "tmp.xml")
    r = subprocess.run([cli, "probe", "--chassis", name, "--nccl-out", tmp], capture_output=True)
    if r.returncode == 0:
        put("nccl_xml", "seed-" + name + ".xml", open(tmp, "rb").read())
        os.remove(tmp)
put("nccl_xml", "seed-nccl-dump.xml", """<system version="1">
  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
    <pci busid="0000:18:00.0" class="0x060400" vendor="0x1000" device="0xc030" link_speed="32.0 GT/s PCIe" link_width="16">
      <pci busid="0000:1b:00.0" class="0x030200" vendor="0x10de" device="0x2330" link_speed="32.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="90" rank="0" gdr="1"><nvlink target="0000:05:00.0" count="18" tclass="0x068000"/></gpu>
      </pci>
      <pci busid="0000:1c:00.0" class="0x020700" vendor="0x15b3" device="0x1021" link_speed="32.0 GT/s PCIe" link_width="16">
        <nic><net name="mlx5_0" dev="0" speed="400000" port="1" latency="0" guid="0x1" maxconn="131072" gdr="1"/></nic>
      </pci>
    </pci>
    <pci busid="0000:2b:00.0" class="0x030200" vendor="0x10de" device="0x2330" link_speed="32.0 GT/s PCIe" link_width="16">
      <gpu dev="1" sm="90" rank="1" gdr="1"><nvlink target="0000:05:00.0" count="18" tclass="0x068000"/></gpu>
    </pci>
  </cpu>
</system>
""")


# sysfs trees: records "path\0contents\0", '@' before a path makes a symbolic link.
def tree(records):
    out = b""
    for p, c in records:
        out += p.encode() + b"\0" + (c if isinstance(c, bytes) else c.encode()) + b"\0"
    return out


def dev(path, vendor, device, cls, speed="32.0 GT/s PCIe", width="16", port_type=None, numa="0"):
    addr = path.split("/")[-1]
    recs = [("sys/" + path + "/vendor", vendor + "\n"), ("sys/" + path + "/device", device + "\n"),
            ("sys/" + path + "/class", cls + "\n"), ("sys/" + path + "/numa_node", numa + "\n"),
            ("sys/" + path + "/current_link_speed", speed + "\n"), ("sys/" + path + "/max_link_speed", speed + "\n"),
            ("sys/" + path + "/current_link_width", width + "\n"), ("sys/" + path + "/max_link_width", width + "\n"),
            ("@sys/bus/pci/devices/" + addr, "../../../" + path)]
    if port_type is not None:
        # Config space: a PCI Express capability at 0x40 (ID 0x10) whose flags give the port type.
        cfg = bytearray(256)
        cfg[0x06] = 0x10  # status: capability list
        cfg[0x34] = 0x40
        cfg[0x40] = 0x10
        cfg[0x42] = (port_type << 4) | 2
        recs.append(("sys/" + path + "/config", bytes(cfg)))
    return recs


cpus = [("sys/devices/system/node/node0/cpulist", "0-15\n"), ("sys/devices/system/cpu/online", "0-15\n"),
        ("proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Platinum 8480C\nphysical id\t: 0\n"),
        ("proc/cmdline", "BOOT_IMAGE=/vmlinuz iommu=pt\n")]
rp = "devices/pci0000:17/0000:17:01.0"
gpu = rp + "/0000:18:00.0"
base = cpus + dev(rp, "0x8086", "0x352a", "0x060400", port_type=4) + dev(gpu, "0x10de", "0x2330", "0x030200", port_type=0)
put("sysfs_tree", "seed-root-port-gpu", tree(base))
usp = rp + "/0000:18:00.0"
dsp = usp + "/0000:19:00.0"
g2 = dsp + "/0000:1a:00.0"
nic = rp + "/0000:18:00.0/0000:19:01.0/0000:1b:00.0"
sw = (cpus + dev(rp, "0x8086", "0x352a", "0x060400", port_type=4) + dev(usp, "0x1000", "0xc030", "0x060400", port_type=5)
      + dev(dsp, "0x1000", "0xc030", "0x060400", port_type=6)
      + dev(rp + "/0000:18:00.0/0000:19:01.0", "0x1000", "0xc030", "0x060400", port_type=6)
      + dev(g2, "0x10de", "0x20b5", "0x030200", speed="16.0 GT/s PCIe") + dev(nic, "0x15b3", "0x101b", "0x020700"))
put("sysfs_tree", "seed-switch-gpu-nic", tree(sw))
# A device that is its own parent, and two bridges each below the other.
own = cpus + dev("devices/pci0000:17/0000:17:01.0/0000:17:01.0", "0x8086", "0x352a", "0x060400")
put("sysfs_tree", "seed-own-parent", tree(own))
loop = (cpus + dev("devices/pci0000:17/0000:17:02.0/0000:17:01.0", "0x8086", "0x352a", "0x060400")
        + dev("devices/pci0000:17/0000:17:01.0/0000:17:02.0", "0x8086", "0x352a", "0x060400")
        + dev("devices/pci0000:17/0000:17:01.0/0000:17:02.0/0000:18:00.0", "0x10de", "0x2330", "0x030200"))
put("sysfs_tree", "seed-parent-loop", tree(loop))
print("corpus:", {t: len(os.listdir(os.path.join(corpus, t))) for t in sorted(os.listdir(corpus))})
