"""Bad input raises linkwise.InputError with file, line and value (the command's exit 2); a
failure at run time raises RuntimeError (exit 1)."""
import pytest

import linkwise
from conftest import run_cli, source

BAD = """name: bad
nodes:
  - {id: cpu0, kind: cpu, part: xeon-w9-3495x}
  - {id: gpu0, kind: gpu, part: no-such-gpu}
links:
  - {a: gpu0, b: cpu0, tech: pcie4, width: 16}
"""


def test_bad_file_names_file_line_and_value(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    code, _, err = run_cli(f"topo {path}")
    assert code == 2
    with pytest.raises(linkwise.InputError) as e:
        linkwise.load_chassis(str(path))
    assert e.value.file == str(path)
    assert e.value.line == 4
    assert e.value.value == "no-such-gpu"
    assert str(e.value) in err
    with pytest.raises(linkwise.InputError) as e:
        linkwise.collective(str(path))
    assert e.value.file == str(path) and e.value.line == 4


def test_bad_yaml_text_names_string():
    with pytest.raises(linkwise.InputError) as e:
        linkwise.load_chassis(BAD)
    assert e.value.file == "<string>" and e.value.line == 4


def test_bad_values_are_input_errors():
    with pytest.raises(linkwise.InputError):
        linkwise.load_chassis("no-such-preset")
    with pytest.raises(linkwise.InputError) as e:
        linkwise.collective("dgx-h100", collective="all_smush")
    assert e.value.value == "all_smush"
    with pytest.raises(linkwise.InputError):
        linkwise.train("dgx-h100", model="llama3-8b", plan="tp=3")
    with pytest.raises(TypeError):
        linkwise.serve("dgx-h100", model="llama3.1-8b", no_such_option=1)
    assert issubclass(linkwise.InputError, ValueError)


def test_run_time_failure_is_runtime_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    measured = source("data/measured/h200-gpu-check-2026-11-30.json")
    with pytest.raises(RuntimeError) as e:
        linkwise.calibrate("hgx-h200", measured, fit=True, output=str(blocker / "x.yaml"))
    assert not isinstance(e.value, linkwise.InputError)
