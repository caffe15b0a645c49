"""Each verb's result equals the command's --json output for the same input (the CLI is run)."""
import inspect
import json
import os

import linkwise
import pytest
from conftest import cli_json, source


def test_presets_match_cli():
    assert linkwise.presets() == cli_json("presets")


def test_analyse_matches_topo():
    assert linkwise.analyse("dgx-h100").to_dict() == cli_json("topo dgx-h100")
    path = source("examples/four-gpu-mesh.yaml")
    assert linkwise.analyse(path).to_dict() == cli_json(f"topo {path}")
    want = cli_json(f"topo {path} --nodes 2 --as-designed")
    assert linkwise.analyse(path, nodes=2, as_designed=True).to_dict() == want


def test_collective_matches_cli_by_name_and_by_loaded_chassis():
    want = cli_json("collective dgx-h100 --collective all_gather -b 1M -e 64M -f 4")
    assert linkwise.collective("dgx-h100", collective="all_gather", minbytes="1M", maxbytes="64M",
                               stepfactor=4).to_dict() == want
    box = linkwise.load_chassis("dgx-h100")
    r = linkwise.collective(box, collective="all_gather", minbytes="1M", maxbytes="64M", stepfactor=4)
    assert r.to_dict() == want
    # The library's types as attributes: the last row is the largest size.
    assert r.op == "all_gather" and r.ranks == 8
    assert r.rows[-1].bytes == 64 << 20
    assert r.rows[-1].prediction.busbw_Bps > 0


def test_collective_options_match_flags():
    args = "collective hgx-a100-4nic --gpus 0-3 --dtype half --algo ring -b 8M -e 8M --nodes 2"
    path = source("examples/hgx-a100-4nic.yaml")
    want = cli_json(args.replace("hgx-a100-4nic", path))
    got = linkwise.collective(path, gpus=[0, 1, 2, 3], dtype="half", algo="ring", minbytes="8M",
                              maxbytes="8M", nodes=2)
    assert got.to_dict() == want
    box = linkwise.load_chassis(path, nodes=2)
    assert linkwise.collective(box, gpus="0-3", dtype="half", algo="ring", minbytes=8 << 20,
                               maxbytes=8 << 20).to_dict() == want


def test_chassis_from_yaml_text_and_dict():
    path = source("examples/two-gpu-pcie.yaml")
    with open(path) as f:
        text = f.read()
    want = cli_json(f"collective {path} -b 1M -e 1M")
    assert linkwise.collective(text, minbytes="1M", maxbytes="1M").to_dict() == want
    spec = {
        "name": "two-gpu-pcie",
        "description": "Example: 2x RTX 4090 on CPU root ports of one Xeon w9-3495X, no NVLink",
        "nodes": [
            {"id": "cpu0", "kind": "cpu", "part": "xeon-w9-3495x"},
            {"id": "gpu{0..1}", "kind": "gpu", "part": "rtx-4090"},
            {"id": "nvme0", "kind": "nvme", "part": "micron-7450"},
        ],
        "links": [
            {"a": "gpu0", "b": "cpu0", "tech": "pcie4", "width": 16, "root_complex": 0},
            {"a": "gpu1", "b": "cpu0", "tech": "pcie4", "width": 16, "root_complex": 1},
            {"a": "nvme0", "b": "cpu0", "tech": "pcie4", "width": 4, "root_complex": 2},
        ],
    }
    box = linkwise.load_chassis(spec)
    assert box.name == "two-gpu-pcie" and box.gpus == ["GPU0", "GPU1"]
    assert linkwise.collective(spec, minbytes="1M", maxbytes="1M").to_dict() == want
    assert linkwise.analyse(spec).to_dict() == cli_json(f"topo {path}")


def test_train_matches_cli():
    args = "--model llama3-8b --mode lora --plan tp=8,pp=1,dp=1,zero=1 --tokens 1e9"
    want = cli_json(f"train dgx-h100 {args}")
    got = linkwise.train("dgx-h100", model="llama3-8b", mode="lora",
                         plan="tp=8,pp=1,dp=1,zero=1", tokens=1e9)
    assert got.to_dict() == want
    assert got.kind == "step" and got.fits and got.plan.startswith("tp=8")
    box = linkwise.load_chassis("dgx-h100")
    assert linkwise.train(box, model="llama3-8b", mode="lora", plan="tp=8,pp=1,dp=1,zero=1",
                          tokens=1e9).to_dict() == want


def test_train_search_matches_cli():
    want = cli_json("train dgx-h100 --model llama3-8b --mode lora --top 2")
    got = linkwise.train(linkwise.load_chassis("dgx-h100"), model="llama3-8b", mode="lora", top=2)
    assert got.to_dict() == want


def test_serve_matches_cli():
    want = cli_json("serve dgx-h100 --model llama3.1-8b --tp 2 --concurrency 16")
    got = linkwise.serve("dgx-h100", model="llama3.1-8b", tp=2, concurrency=16)
    assert got.to_dict() == want
    box = linkwise.load_chassis("dgx-h100")
    assert linkwise.serve(box, model="llama3.1-8b", tp=2, concurrency=16).to_dict() == want


def test_design_matches_cli():
    path = source("examples/design/isv-rnd.yaml")
    want = cli_json(f"design {path} --top 1 --threads 1")
    got = linkwise.design(path, top=1, threads=1).to_dict()
    # "seconds" is the search's own wall time: it differs between any two runs.
    assert got.pop("seconds") > 0 and want.pop("seconds") > 0
    assert got == want


def test_design_and_analyse_keywords_are_the_flags():
    params = inspect.signature(linkwise.design).parameters
    assert [(k, params[k].default) for k in ("top", "threads", "out")] == [
        ("top", 5), ("threads", 0), ("out", "")]
    assert [k for k, _, _ in linkwise.AnalyseOptions._options] == [
        "chassis", "nodes", "as_designed"]
    path = source("examples/design/isv-rnd.yaml")
    with pytest.raises(linkwise.InputError, match="--top: Value 0 not in range 1 to 100"):
        linkwise.design(path, top=0)
    with pytest.raises(TypeError):
        linkwise.design(path, dot=True)


def test_probe_matches_cli(sysfs_root):
    want = cli_json(f"probe --sysfs-root {sysfs_root} --name box")
    got = linkwise.probe(sysfs_root, name="box")
    assert got.to_dict() == want
    assert got.chassis().gpus == ["GPU0"]
    want = cli_json(f"probe --check --sysfs-root {sysfs_root}")
    got = linkwise.probe(sysfs_root, check=True)
    assert got.to_dict() == want
    assert isinstance(got.healthy, bool) and got.kind == "check"


def test_probe_of_a_chassis_writes_its_files(tmp_path):
    out, xml = tmp_path / "a.yaml", tmp_path / "a.xml"
    want = cli_json(f"probe --chassis dgx-h100 -o {tmp_path / 'b.yaml'} --nccl-out {tmp_path / 'b.xml'}")
    got = linkwise.probe(chassis="dgx-h100", output=out, nccl_out=xml)
    assert got.to_dict() == want and got.kind == "imported"
    assert out.read_text() == (tmp_path / "b.yaml").read_text()
    assert xml.read_text() == (tmp_path / "b.xml").read_text()
    assert got.chassis().name == "dgx-h100"


def test_calibrate_matches_cli(tmp_path):
    measured = source("data/measured/h200-gpu-check-2026-11-30.json")
    want = cli_json(f"calibrate hgx-h200 {measured}")
    assert linkwise.calibrate("hgx-h200", measured).to_dict() == want
    out = tmp_path / "fitted.yaml"
    want = cli_json(f"calibrate hgx-h200 {measured} --fit -o {out}")
    got = linkwise.calibrate("hgx-h200", measured, fit=True, output=str(out))
    assert got.to_dict() == want
    assert got.fitted_yaml == out.read_text()


def test_result_keys_read_as_attributes():
    r = linkwise.analyse("dgx-h100")
    assert r.schema_version == r.to_dict()["schema_version"]


def test_calls_from_threads_agree():
    from concurrent.futures import ThreadPoolExecutor
    box = linkwise.load_chassis("dgx-h100")
    ops = ["all_reduce", "all_gather", "reduce_scatter", "broadcast"] * 2
    one = [linkwise.collective(box, collective=op, minbytes="1M", maxbytes="4M").to_dict() for op in ops]
    with ThreadPoolExecutor(4) as pool:
        many = list(pool.map(
            lambda op: linkwise.collective(box, collective=op, minbytes="1M", maxbytes="4M").to_dict(), ops))
    assert many == one
