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

import inspect as _inspect
import json as _json
import os as _os

from . import _linkwise
from ._linkwise import (  # noqa: F401  (re-exported)
    CalibrateOptions,
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


def _options(cls, verb, options):
    """A ``cls`` options object with ``options`` set. Each keyword is one of the command's flags
    (``cls._options``: keyword, flag, help, from the library's description of them); ``None``
    leaves a default."""
    o = cls()
    known = {k for k, _, _ in cls._options}
    for k, v in options.items():
        if k not in known:
            raise TypeError(f"{verb}() got an unexpected keyword argument '{k}'")
        if v is not None:
            setattr(o, k, v)
    return o


def _flag(cls, keyword):
    return next(f for k, f, _ in cls._options if k == keyword)


def _described(cls):
    """Gives a verb the signature of its command's flags: its own positional parameters, then
    each option as a keyword with the library's default, and their help in the docstring."""

    def wrap(verb):
        P = _inspect.Parameter
        params = [p for p in _inspect.signature(verb).parameters.values()
                  if p.kind != P.VAR_KEYWORD]
        leading = {p.name for p in params}
        defaults = cls()
        params += [P(k, P.KEYWORD_ONLY, default=getattr(defaults, k))
                   for k, _, _ in cls._options if k not in leading]
        verb.__signature__ = _inspect.Signature(params)
        keywords = "".join(f"\n    ``{k}`` ({f}): {h}"
                           for k, f, h in cls._options if k not in leading)
        verb.__doc__ = (verb.__doc__ or "") + "\n\n    Keywords (the command's flags):\n" + keywords
        return verb

    return wrap


def _on_chassis(run, run_on, o, chassis):
    """Runs on a preset or path as the command does, or on a loaded (or YAML, or dict) chassis
    (``run_on`` reads neither ``nodes`` nor ``as_designed``: the chassis is built with them)."""
    name, built = _chassis_arg(chassis, getattr(o, "nodes", 0), o.as_designed)
    if built is not None:
        return run_on(o, built)
    o.chassis = name
    return run(o)


@_described(CollectiveOptions)
def collective(chassis, **options):
    """Predict a collective over a size sweep, as ``linkwise collective``.

    Sizes are given as the command reads them (``8``, ``64K``, ``1G``, or ints). ``gpus``:
    ``"0-3"`` or a list of indices; ``nccl``: ``"NAME=VALUE"`` settings. A loaded
    :class:`Chassis` is reused as is (loading once and sweeping many times is the fast path)."""
    o = _options(CollectiveOptions, "collective", options)
    return _on_chassis(_linkwise._collective, _linkwise._collective_on, o, chassis)


@_described(TrainOptions)
def train(chassis=None, model=None, **options):
    """Predict a training job, as ``linkwise train``: the best plan (or the one given), its step
    time and breakdown, memory, busiest links and time to train. Options left unset are searched
    over by the plan search, as flags left unset are."""
    if model is not None:
        options["model"] = model
    o = _options(TrainOptions, "train", options)
    o.given = ([_flag(TrainOptions, "chassis")] if chassis is not None else []) + [
        _flag(TrainOptions, k) for k, v in options.items() if v is not None]
    if chassis is None:
        return _linkwise._train(o)
    return _on_chassis(_linkwise._train, _linkwise._train_on, o, chassis)


@_described(ServeOptions)
def serve(chassis=None, model=None, **options):
    """Predict serving, as ``linkwise serve``: latency, throughput, KV cache, links, cold
    start."""
    if model is not None:
        options["model"] = model
    o = _options(ServeOptions, "serve", options)
    if chassis is None:
        return _linkwise._serve(o)
    return _on_chassis(_linkwise._serve, _linkwise._serve_on, o, chassis)


def design(space, top=5, threads=0, out=None):
    """Search a design space (a YAML file, or YAML text) for the best chassis, as
    ``linkwise design``. ``out``: a folder to write each ranked and front design into."""
    space = _os.fspath(space)
    is_text = "\n" in space
    return _linkwise._design(space, is_text, "<string>", top, threads, out or "")


@_described(ProbeOptions)
def probe(sysfs_root=None, **options):
    """Read a machine and fold it into a chassis, as ``linkwise probe``: this one, a copy of sysfs
    at ``sysfs_root``, NCCL's topology dump ``nccl_xml``, or a designed ``chassis`` (preset or
    file); ``check=True`` checks its links as ``--check`` (``expect``: the designed chassis).
    ``output`` writes the chassis YAML (``-o``), ``nccl_out`` an NCCL topology file; all files are
    produced before any is written. ``result.chassis()`` builds the chassis read."""
    return _linkwise._probe(_options(ProbeOptions, "probe", dict(options, sysfs_root=sysfs_root)))


@_described(CalibrateOptions)
def calibrate(chassis, measured, **options):
    """Hold a measurement file (``linkwise bench -o``) against the model's predictions, as
    ``linkwise calibrate``; ``fit=True`` fits link efficiencies (``result.fitted_yaml``), written
    to ``output`` when given."""
    o = _options(CalibrateOptions, "calibrate", dict(options, measured=measured))
    if o.output and not o.fit:
        raise _input_error("output is the fitted chassis: give fit=True too")
    return _linkwise._calibrate(o, load_chassis(chassis, o.nodes))
