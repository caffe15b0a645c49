"""linkwise: interconnect models of multi-accelerator machines, from Python.

The same library as the ``linkwise`` command, called directly (no JSON round trip). Each verb is
the one library call its command makes; each result keeps the library's result and renders with
the command's own builders: ``to_dict()`` equals the command's ``--json`` output and ``text()``
its table. Bad input raises :class:`InputError` (the command's exit code 2) with ``file``,
``line``, ``column`` and ``value``; a failure at run time raises :class:`RuntimeError` (exit 1).

    >>> import linkwise
    >>> box = linkwise.load_chassis("dgx-h100")
    >>> r = linkwise.collective(box, collective="all_reduce", minbytes="1G", maxbytes="1G")
    >>> round(r.rows[0].prediction.busbw_Bps / 1e9)

docs/python.md describes every function.
"""

import json as _json
import os as _os

from . import _linkwise
from ._linkwise import (  # noqa: F401  (re-exported)
    CalibrateResult,
    Chassis,
    CollectiveOptions,
    CollectiveResult,
    DesignResult,
    InputError,
    ProbeOptions,
    ProbeResult,
    ServeOptions,
    ServeResult,
    TopoResult,
    TrainOptions,
    TrainResult,
    presets,
)

__all__ = [
    "Chassis", "InputError", "load_chassis", "presets", "analyse", "collective", "train", "serve",
    "design", "probe", "calibrate",
]


def _keys_as_attributes(cls):
    """Lets a result's JSON keys be read as attributes where the class has none of that name."""

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        d = self.to_dict()
        if name in d:
            return d[name]
        raise AttributeError(f"{cls.__name__} has no attribute or JSON key '{name}'")

    cls.__getattr__ = __getattr__
    return cls


for _cls in (TopoResult, CollectiveResult, TrainResult, ServeResult, DesignResult, ProbeResult,
             CalibrateResult):
    _keys_as_attributes(_cls)


def load_chassis(source, nodes=0, as_designed=False):
    """A built :class:`Chassis` from a preset name, a chassis YAML file, YAML text or a dict.

    ``source``: a Chassis (returned as is), a dict (a chassis file's content), a string holding a
    newline (YAML text, errors name the file ``<string>``), or a preset name or file path (as the
    command's CHASSIS argument). ``nodes``: copies joined by a network (``--nodes``);
    ``as_designed``: links at their design rate (``--as-designed``).
    """
    if isinstance(source, Chassis):
        return source
    if isinstance(source, dict):
        # JSON is YAML: the dict is read by the chassis file parser, one key per line, so an
        # error's line points into the dict as json.dumps(source, indent=2) lays it out.
        return _linkwise._chassis_from_yaml(_json.dumps(source, indent=2), "<dict>", nodes,
                                            as_designed)
    if isinstance(source, _os.PathLike):
        source = _os.fspath(source)
    if not isinstance(source, str):
        raise TypeError("a chassis is a preset name, a file path, YAML text, a dict or a Chassis")
    if "\n" in source:
        return _linkwise._chassis_from_yaml(source, "<string>", nodes, as_designed)
    return _linkwise._load_chassis(source, nodes, as_designed)


def _input_error(message):
    e = InputError(message)
    e.file = e.line = e.column = e.value = None
    e.message = message
    return e


def _chassis_arg(chassis, nodes, as_designed):
    """(name, None) for a preset or path with default loading, else (None, built Chassis)."""
    if isinstance(chassis, (str, _os.PathLike)) and "\n" not in _os.fspath(chassis):
        return _os.fspath(chassis), None
    if isinstance(chassis, Chassis):
        if nodes or as_designed:
            raise _input_error("nodes and as_designed apply when a chassis is loaded: "
                               "pass them to load_chassis")
        return None, chassis
    return None, load_chassis(chassis, nodes, as_designed)


def analyse(chassis, nodes=0, as_designed=False):
    """Analyse a chassis as ``linkwise topo --json`` does: path classes, bandwidths, bisection."""
    return _linkwise._analyse(load_chassis(chassis, nodes, as_designed))


def collective(chassis, collective="all_reduce", gpus=None, minbytes="8", maxbytes="8G", stepfactor=None,
               stepbytes=None, dtype="float", algo="auto", nodes=0, as_designed=False, nccl=(),
               redop="sum", root=0):
    """Predict a collective over a size sweep, as ``linkwise collective``.

    Sizes are given as the command reads them (``8``, ``64K``, ``1G``, or ints). ``gpus``:
    ``"0-3"`` or a list of indices; ``nccl``: ``"NAME=VALUE"`` settings. ``collective``, ``redop`` and
    ``root`` are the command's ``--collective``, ``-o/--op`` and ``-r/--root`` (nccl-tests' meanings). A loaded
    :class:`Chassis` is reused as is (loading once and sweeping many times is the fast path).
    """
    o = CollectiveOptions()
    o.op, o.dtype, o.algo, o.redop, o.root = collective, dtype, algo, redop, root
    if gpus is not None:
        o.gpus = gpus if isinstance(gpus, str) else ",".join(str(g) for g in gpus)
    s = o.sweep
    s.min, s.max = str(minbytes), str(maxbytes)
    if stepfactor is not None:
        s.factor = str(stepfactor)
    if stepbytes is not None:
        s.step = str(stepbytes)
    o.sweep = s
    o.nccl = [nccl] if isinstance(nccl, str) else list(nccl)
    name, built = _chassis_arg(chassis, nodes, as_designed)
    if built is not None:
        return _linkwise._collective_on(o, built)
    o.chassis, o.nodes, o.as_designed = name, nodes, as_designed
    return _linkwise._collective(o)


# The command-line flag each TrainOptions field stands for, where it is not --field-with-dashes:
# a flag left unset is searched over by --plan auto, and flags a run would ignore are refused.
_TRAIN_FLAGS = {"chassis": "CHASSIS", "no_flash": "--no-flash-attention"}


def _set_options(o, kwargs, what):
    for k, v in kwargs.items():
        if k.startswith("_") or k in ("given",) or not hasattr(o, k):
            raise TypeError(f"{what}() got an unexpected keyword argument '{k}'")
        setattr(o, k, v)


def train(chassis=None, model=None, **options):
    """Predict a training job, as ``linkwise train``: the best plan (or the one given), its step
    time and breakdown, memory, busiest links and time to train.

    Keyword arguments are the command's flags with underscores (``mode="lora"``,
    ``plan="tp=8,pp=1,dp=1,zero=1"``, ``global_batch=64``, ``tokens=1e9``, ``scaling=True``,
    ``validation=True``, ...). Options left unset are searched over by the plan search, as flags
    left unset are.
    """
    o = TrainOptions()
    given = {k: v for k, v in options.items()}
    if model is not None:
        given["model"] = model
    if "tokens" in given:
        given["tokens"] = float(given["tokens"])
    _set_options(o, given, "train")
    o.given = ([_TRAIN_FLAGS["chassis"]] if chassis is not None else []) + [
        _TRAIN_FLAGS.get(k, "--" + k.replace("_", "-")) for k in given]
    if chassis is None:
        return _linkwise._train(o)
    name, built = _chassis_arg(chassis, options.get("nodes", 0), options.get("as_designed", False))
    if built is not None:
        o.nodes, o.as_designed = 0, False
        return _linkwise._train_on(o, built)
    o.chassis = name
    return _linkwise._train(o)


def serve(chassis=None, model=None, **options):
    """Predict serving, as ``linkwise serve``: latency, throughput, KV cache, links, cold start.

    Keyword arguments are the command's flags with underscores (``tp=8``, ``input=1024``,
    ``output=256``, ``concurrency=64``, ``precision="fp8"``, ``sweep="concurrency"``,
    ``prefix_hit=0.5`` for ``--prefix-cache``, ``validation=True``, ...).
    """
    o = ServeOptions()
    if model is not None:
        o.model = model
    _set_options(o, options, "serve")
    if chassis is None:
        return _linkwise._serve(o)
    name, built = _chassis_arg(chassis, 0, options.get("as_designed", False))
    if built is not None:
        o.as_designed = False
        return _linkwise._serve_on(o, built)
    o.chassis = name
    return _linkwise._serve(o)


def design(space, top=5, threads=0, out=None):
    """Search a design space (a YAML file, or YAML text) for the best chassis, as
    ``linkwise design``. ``out``: a folder to write each ranked and front design into."""
    space = _os.fspath(space)
    is_text = "\n" in space
    return _linkwise._design(space, is_text, "<string>", top, threads, out or "")


def probe(sysfs_root=None, name="probed", no_nvml=False, check=False, expect=None, strict=False,
          nccl_xml=None, chassis=None, output=None, nccl_out=None):
    """Read a machine and fold it into a chassis, as ``linkwise probe``: this one, a copy of sysfs
    at ``sysfs_root``, NCCL's topology dump ``nccl_xml``, or a designed ``chassis`` (preset or
    file); ``check=True`` checks its links as ``--check`` (``expect``: the designed chassis).
    ``output`` writes the chassis YAML (``-o``), ``nccl_out`` an NCCL topology file; all files are
    produced before any is written. ``result.chassis()`` builds the chassis read."""
    o = ProbeOptions()
    o.sysfs_root = _os.fspath(sysfs_root) if sysfs_root else ""
    o.nccl_in = _os.fspath(nccl_xml) if nccl_xml else ""
    o.chassis = _os.fspath(chassis) if chassis else ""
    o.name, o.no_nvml, o.check, o.strict = name, no_nvml, check, strict
    o.expect = _os.fspath(expect) if expect else ""
    o.yaml_out = _os.fspath(output) if output else ""
    o.nccl_out = _os.fspath(nccl_out) if nccl_out else ""
    return _linkwise._probe(o)


def calibrate(chassis, measured, threshold=10, fit=False, output=None, nodes=0):
    """Hold a measurement file (``linkwise bench -o``) against the model's predictions, as
    ``linkwise calibrate``; ``fit=True`` fits link efficiencies (``result.fitted_yaml``), written
    to ``output`` when given."""
    if output and not fit:
        raise _input_error("output is the fitted chassis: give fit=True too")
    return _linkwise._calibrate(load_chassis(chassis, nodes), _os.fspath(measured),
                                float(threshold), fit, _os.fspath(output) if output else "")
