// The `linkwise._linkwise` Python extension: the library's verbs over pybind11, each the one
// library call its command makes (apps/linkwise/cmd_*.cc), with the options struct that command
// fills. Results keep the library's own result types; to_dict() is the report's JSON builder, so it
// is the command's --json output. InputError becomes linkwise.InputError (file, line, column,
// value); RuntimeError becomes Python's RuntimeError. Every library call runs without the GIL.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>

#include "linkwise/comm/collective.h"
#include "linkwise/comm/sweep.h"
#include "linkwise/design/search.h"
#include "linkwise/design/space.h"
#include "linkwise/measure/calibrate_run.h"
#include "linkwise/probe/probe_run.h"
#include "linkwise/report/calibrate_report.h"
#include "linkwise/report/catalog_report.h"
#include "linkwise/report/collective_report.h"
#include "linkwise/report/design_report.h"
#include "linkwise/report/probe_report.h"
#include "linkwise/report/serve_report.h"
#include "linkwise/report/topo_report.h"
#include "linkwise/report/train_report.h"
#include "linkwise/topo/analysis.h"
#include "linkwise/topo/chassis.h"
#include "linkwise/topo/spec.h"
#include "linkwise/util/error.h"
#include "linkwise/util/option_spec.h"
#include "linkwise/util/text.h"
#include "linkwise/work/serve_run.h"
#include "linkwise/work/train_run.h"

namespace py = pybind11;
using namespace linkwise;
using ChassisPtr = std::shared_ptr<topo::Chassis>;
using Release = py::call_guard<py::gil_scoped_release>;

namespace {

// A JSON value as Python objects (dict, list, str, int, float, bool, None).
py::object to_python(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      py::dict d;
      for (auto it = j.begin(); it != j.end(); ++it) d[py::str(it.key())] = to_python(it.value());
      return std::move(d);
    }
    case nlohmann::json::value_t::array: {
      py::list l(j.size());
      for (std::size_t i = 0; i < j.size(); ++i) l[i] = to_python(j[i]);
      return std::move(l);
    }
    case nlohmann::json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(j.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(j.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(j.get<double>());
    default:
      return py::none();
  }
}

topo::LinkRates rates(bool as_designed) {
  return as_designed ? topo::LinkRates::kAsDesigned : topo::LinkRates::kAsBuilt;
}

// The value an InputError names: the last 'quoted' part of its message before any "; " that starts
// a list of valid choices ("node 'gpu0': unknown gpu part 'x'" -> x), or "".
std::string quoted_value(const std::string& message) {
  const std::string head = message.substr(0, message.find("; "));
  auto b = head.rfind('\'');
  if (b == std::string::npos || b == 0) return "";
  auto a = head.rfind('\'', b - 1);
  return a == std::string::npos ? "" : head.substr(a + 1, b - a - 1);
}

// A keyword argument's value as an option's text: a str, a path, a number, or a list of them
// joined by commas (gpus=[0, 1] is --gpus 0,1).
std::string text_of(const py::handle& v, const std::string& name) {
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::hasattr(v, "__fspath__")) return py::str(v.attr("__fspath__")()).cast<std::string>();
  if (py::isinstance<py::bool_>(v)) throw py::type_error(name + ": expected text, got a bool");
  if (py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) return py::str(v);
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    std::string joined;
    for (auto item : v) joined += (joined.empty() ? "" : ",") + text_of(item, name);
    return joined;
  }
  throw py::type_error(name + ": expected text, got " + py::str(v.get_type()).cast<std::string>());
}

// A keyword argument stored into its option's field, checked as the command checks the flag.
template <class S>
struct Assign {
  const OptionSpec<S>& spec;
  const py::handle& v;
  std::string name() const { return spec.python_name(); }
  // A number within the option's range; the field's default (not given) is let through too.
  template <class T>
  T checked_number(T unset) const {
    if (py::isinstance<py::bool_>(v) ||
        !(py::isinstance<py::int_>(v) ||
          (std::is_same_v<T, double> && py::isinstance<py::float_>(v))))
      throw py::type_error(name() + ": expected a number, got " +
                           py::str(v.get_type()).cast<std::string>());
    T x = v.cast<T>();
    if (x == unset) return x;
    // The command line's messages (CLI11's Range and PositiveNumber checks).
    auto bound = [](double b) {
      return std::is_same_v<T, int> ? std::to_string(int(b)) : std::to_string(b);
    };
    const std::string given = py::str(v).cast<std::string>();
    if (spec.lo < spec.hi && (x < spec.lo || x > spec.hi))
      throw InputError(spec.cli_name() + ": Value " + given + " not in range " + bound(spec.lo) +
                       " to " + bound(spec.hi));
    if (spec.positive && !(x > 0))
      throw InputError(spec.cli_name() + ": Number less or equal to 0: (" + given + ")");
    return x;
  }
  void operator()(std::string& f, const std::string&) const { f = text_of(v, name()); }
  void operator()(std::optional<std::string>& f, const std::optional<std::string>&) const {
    if (v.is_none())
      f.reset();
    else
      f = text_of(v, name());
  }
  void operator()(std::vector<std::string>& f, const std::vector<std::string>&) const {
    f.clear();
    if (py::isinstance<py::str>(v))
      f.push_back(v.cast<std::string>());
    else
      for (auto item : v) f.push_back(text_of(item, name()));
  }
  void operator()(bool& f, bool) const { f = py::bool_(py::reinterpret_borrow<py::object>(v)); }
  void operator()(int& f, int unset) const { f = checked_number<int>(unset); }
  void operator()(double& f, double unset) const { f = checked_number<double>(unset); }
  void operator()(std::optional<int>& f, const std::optional<int>& unset) const {
    if (v.is_none())
      f.reset();
    else
      f = checked_number<int>(unset.value_or(0));
  }
};

// A command's options as properties of its options class, one per keyword argument
// (util/option_spec.h); `_options` lists (keyword, flag, help) for the verbs in __init__.py.
template <class S>
void def_options(py::class_<S>& cls, const std::vector<OptionSpec<S>>& specs) {
  py::list described;
  for (const auto& spec : specs) {
    const OptionSpec<S>* sp = &spec;
    std::visit(
        [&](auto field) {
          cls.def_property(
              spec.python_name().c_str(), [field](S& s) { return field(s); },
              [field, sp](S& s, const py::object& v) {
                S fresh{};
                Assign<S>{*sp, v}(field(s), field(fresh));
              });
        },
        spec.field);
    described.append(py::make_tuple(spec.python_name(), spec.cli_name(), spec.help));
  }
  cls.attr("_options") = described;
}

// Results: the library's result plus what its report needs.
struct TopoResult {
  ChassisPtr chassis;
  topo::TopoAnalysis analysis;
};
struct CalibrateResult {
  measure::CalibrateRun run;
  std::string output;  ///< where the fitted chassis was written, or ""
};

}  // namespace

PYBIND11_MODULE(_linkwise, m) {
  m.doc() = "linkwise: interconnect models of multi-accelerator machines (see docs/python.md)";

  static py::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InputError& e) {
      py::object err = py::reinterpret_borrow<py::object>(input_error.ptr())(e.what());
      err.attr("file") = e.where().file.empty() ? py::object(py::none()) : py::str(e.where().file);
      err.attr("line") = e.where().line > 0 ? py::object(py::int_(e.where().line)) : py::none();
      err.attr("column") =
          e.where().column > 0 ? py::object(py::int_(e.where().column)) : py::none();
      std::string value = quoted_value(e.bare_message());
      err.attr("value") = value.empty() ? py::object(py::none()) : py::str(value);
      err.attr("message") = e.bare_message();
      PyErr_SetObject(input_error.ptr(), err.ptr());
    } catch (const RuntimeError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  // --- Chassis ---
  py::class_<topo::Chassis, std::shared_ptr<topo::Chassis>>(m, "Chassis",
                                                            "A built chassis (immutable)")
      .def_property_readonly("name", &topo::Chassis::name)
      .def_property_readonly("description", &topo::Chassis::description)
      .def_property_readonly("boxes", &topo::Chassis::boxes)
      .def_property_readonly(
          "as_designed",
          [](const topo::Chassis& c) { return c.rates() == topo::LinkRates::kAsDesigned; })
      .def_property_readonly("gpus",
                             [](const topo::Chassis& c) {
                               std::vector<std::string> names;
                               for (int g : c.gpus()) names.push_back(c.display_name(g));
                               return names;
                             })
      .def_property_readonly("nodes",
                             [](const topo::Chassis& c) {
                               std::vector<std::string> names;
                               for (const auto& n : c.nodes()) names.push_back(n.name);
                               return names;
                             })
      .def_property_readonly("links",
                             [](const topo::Chassis& c) {
                               std::vector<py::dict> out;
                               for (const auto& l : c.links()) {
                                 py::dict d;
                                 d["a"] = c.node(l.a).name;
                                 d["b"] = c.node(l.b).name;
                                 d["tech"] = l.tech->id;
                                 d["width"] = l.width;
                                 d["bytes_per_s"] = l.effective_bytes_per_s();
                                 out.push_back(d);
                               }
                               return out;
                             })
      .def("to_yaml", [](const topo::Chassis& c) { return topo::chassis_spec_to_yaml(c.spec()); })
      .def("__repr__", [](const topo::Chassis& c) {
        return "<linkwise.Chassis " + c.name() + ": " + std::to_string(c.gpus().size()) +
               " GPUs, " + std::to_string(c.boxes()) + " box(es)>";
      });

  m.def(
      "_load_chassis",
      [](const std::string& source, int nodes, bool as_designed) {
        return std::make_shared<topo::Chassis>(
            topo::load_chassis(source, nodes, rates(as_designed)));
      },
      py::arg("source"), py::arg("nodes") = 0, py::arg("as_designed") = false, Release());
  m.def(
      "_chassis_from_yaml",
      [](const std::string& text, const std::string& filename, int nodes, bool as_designed) {
        return std::make_shared<topo::Chassis>(
            topo::build_chassis(topo::parse_chassis_spec(text, filename), hw::Catalog::builtin(),
                                nodes, true, rates(as_designed)));
      },
      py::arg("text"), py::arg("filename"), py::arg("nodes") = 0, py::arg("as_designed") = false,
      Release());
  m.def(
      "presets", [] { return to_python(report::presets_json()); },
      "The built-in presets, as `linkwise presets --json`");

  // --- analyse (linkwise topo) ---
  py::class_<TopoResult>(m, "TopoResult", "A chassis analysed, as `linkwise topo` prints it")
      .def_property_readonly("chassis", [](const TopoResult& r) { return r.chassis; })
      .def("to_dict",
           [](const TopoResult& r) { return to_python(report::topo_json(*r.chassis, r.analysis)); })
      .def("text", [](const TopoResult& r) { return report::topo_text(*r.chassis, r.analysis); });
  m.def(
      "_analyse",
      [](std::shared_ptr<topo::Chassis> c) {
        return TopoResult{c, topo::analyse(*c)};
      },
      py::arg("chassis"), Release());

  // --- collective ---
  py::class_<comm::SweepRequest> collective_options(
      m, "CollectiveOptions", "What `linkwise collective` asks (comm::SweepRequest)");
  collective_options.def(py::init<>());
  def_options(collective_options, comm::sweep_options());
  py::class_<comm::Prediction>(m, "Prediction")
      .def_property_readonly("op", [](const comm::Prediction& p) { return comm::to_string(p.op); })
      .def_property_readonly("algorithm",
                             [](const comm::Prediction& p) { return comm::to_string(p.algorithm); })
      .def_property_readonly("protocol",
                             [](const comm::Prediction& p) { return comm::to_string(p.protocol); })
      .def_readonly("ranks", &comm::Prediction::ranks)
      .def_readonly("channels", &comm::Prediction::channels)
      .def_readonly("bytes", &comm::Prediction::bytes)
      .def_readonly("time_s", &comm::Prediction::time_s)
      .def_readonly("latency_s", &comm::Prediction::latency_s)
      .def_readonly("algbw_Bps", &comm::Prediction::algbw_Bps)
      .def_readonly("busbw_Bps", &comm::Prediction::busbw_Bps)
      .def_readonly("bottlenecks", &comm::Prediction::bottlenecks)
      .def_readonly("saturated", &comm::Prediction::saturated)
      .def_readonly("choice", &comm::Prediction::choice);
  py::class_<comm::Bound>(m, "Bound")
      .def_readonly("busbw_Bps", &comm::Bound::busbw_Bps)
      .def_readonly("cut", &comm::Bound::cut)
      .def_readonly("cut_bytes_per_s", &comm::Bound::cut_bytes_per_s);
  py::class_<comm::SweepRow>(m, "SweepRow")
      .def_readonly("bytes", &comm::SweepRow::bytes)
      .def_readonly("count", &comm::SweepRow::count)
      .def_readonly("prediction", &comm::SweepRow::prediction)
      .def_readonly("ratio_to_bound", &comm::SweepRow::ratio_to_bound);
  py::class_<comm::SweepResult>(m, "CollectiveResult",
                                "A collective predicted over a size sweep (comm::SweepResult)")
      .def_readonly("chassis", &comm::SweepResult::chassis)
      .def_property_readonly("op", [](const comm::SweepResult& r) { return comm::to_string(r.op); })
      .def_readonly("ranks", &comm::SweepResult::ranks)
      .def_readonly("boxes", &comm::SweepResult::boxes)
      .def_readonly("dtype", &comm::SweepResult::dtype)
      .def_readonly("unit", &comm::SweepResult::unit)
      .def_readonly("bound", &comm::SweepResult::bound)
      .def_property_readonly("rings",
                             [](const comm::SweepResult& r) {
                               std::vector<std::string> s;
                               for (const auto& ring : r.rings) s.push_back(ring.str);
                               return s;
                             })
      .def_readonly("notes", &comm::SweepResult::notes)
      .def_readonly("rows", &comm::SweepResult::rows)
      .def("to_dict",
           [](const comm::SweepResult& r) { return to_python(report::collective_json(r)); })
      .def("text", &report::collective_text);
  m.def(
      "_collective", [](const comm::SweepRequest& o) { return comm::predict_sweep(o); },
      py::arg("options"), Release());
  m.def(
      "_collective_on",
      [](const comm::SweepRequest& o, std::shared_ptr<topo::Chassis> c) {
        return comm::predict_sweep(o, *c);
      },
      py::arg("options"), py::arg("chassis"), Release());

  // --- train ---
  using work::TrainOptions;
  py::class_<TrainOptions> train_options(m, "TrainOptions",
                                         "What `linkwise train` asks (work::TrainOptions)");
  train_options.def(py::init<>()).def_readwrite("given", &TrainOptions::given);
  def_options(train_options, work::train_options());
  py::class_<work::TrainResult>(m, "TrainResult", "A training job predicted (work::TrainResult)")
      .def_property_readonly("kind",
                             [](const work::TrainResult& r) {
                               switch (r.kind) {
                                 case work::TrainResult::Kind::kValidation:
                                   return "validation";
                                 case work::TrainResult::Kind::kScaling:
                                   return "scaling";
                                 default:
                                   return "step";
                               }
                             })
      .def_property_readonly("fits", &work::TrainResult::fits)
      .def_property_readonly("plan", [](const work::TrainResult& r) { return r.step.plan.str(); })
      .def_property_readonly("step_time_s",
                             [](const work::TrainResult& r) { return r.step.step_time_s; })
      .def_property_readonly("tokens_per_s",
                             [](const work::TrainResult& r) { return r.step.tokens_per_s; })
      .def_property_readonly("mfu", [](const work::TrainResult& r) { return r.step.mfu; })
      .def_property_readonly("bottleneck",
                             [](const work::TrainResult& r) { return r.step.bottleneck; })
      .def_property_readonly("fullest_links",
                             [](const work::TrainResult& r) {
                               std::vector<std::tuple<std::string, double, double>> out;
                               for (const auto& l : r.step.links)
                                 out.emplace_back(l.link, l.utilisation, l.busy_fraction);
                               return out;
                             })
      .def_property_readonly("busiest_links",
                             [](const work::TrainResult& r) {
                               std::vector<std::pair<std::string, double>> out;
                               for (const auto& l : r.step.links)
                                 out.emplace_back(l.link, l.busy_fraction);
                               return out;
                             })
      .def_readonly("tokens", &work::TrainResult::tokens)
      .def_readonly("run_time_s", &work::TrainResult::run_time_s)
      .def_readonly("why_first", &work::TrainResult::why_first)
      .def("to_dict", [](const work::TrainResult& r) { return to_python(report::train_json(r)); })
      .def("text", &report::train_text);
  m.def(
      "_train", [](const TrainOptions& o) { return work::run_train(o); }, py::arg("options"),
      Release());
  m.def(
      "_train_on",
      [](const TrainOptions& o, std::shared_ptr<topo::Chassis> c) {
        return work::run_train(o, *c);
      },
      py::arg("options"), py::arg("chassis"), Release());

  // --- serve ---
  using work::ServeRunOptions;
  py::class_<ServeRunOptions> serve_options(m, "ServeOptions",
                                            "What `linkwise serve` asks (work::ServeRunOptions)");
  serve_options.def(py::init<>());
  def_options(serve_options, work::serve_options());
  py::class_<work::ServeRun>(m, "ServeResult", "A model served on a chassis (work::ServeRun)")
      .def_readonly("validation", &work::ServeRun::validation)
      .def_readonly("sweep", &work::ServeRun::sweep)
      .def("to_dict",
           [](const work::ServeRun& r) {
             return to_python(r.validation ? report::serve_validation_json(r.rows)
                                           : report::serve_json(r.result));
           })
      .def("text", [](const work::ServeRun& r) { return report::serve_output(r, false); });
  m.def(
      "_serve", [](const ServeRunOptions& o) { return work::run_serve(o); }, py::arg("options"),
      Release());
  m.def(
      "_serve_on",
      [](const ServeRunOptions& o, std::shared_ptr<topo::Chassis> c) {
        return work::run_serve(o, *c);
      },
      py::arg("options"), py::arg("chassis"), Release());

  // --- design ---
  py::class_<design::DesignResult>(m, "DesignResult",
                                   "The best designs of a design space (design::DesignResult)")
      .def("to_dict",
           [](const design::DesignResult& r) { return to_python(report::design_json(r)); })
      .def("text", &report::design_text);
  m.def(
      "_design",
      [](const std::string& space, bool is_text, const std::string& filename, int top, int threads,
         const std::string& out) {
        auto s = is_text ? design::parse_space(space, filename) : design::load_space(space);
        design::SearchOptions o;
        o.top = top;
        o.threads = threads;
        auto r = design::run_design(s, o);
        if (!out.empty()) design::write_designs(r, out);
        return r;
      },
      py::arg("space"), py::arg("is_text"), py::arg("filename"), py::arg("top"), py::arg("threads"),
      py::arg("out"), Release());

  // --- probe ---
  using probe::ProbeRequest;
  py::class_<ProbeRequest> probe_options(m, "ProbeOptions",
                                         "What `linkwise probe` asks (probe::ProbeRequest)");
  probe_options.def(py::init<>());
  def_options(probe_options, probe::probe_options());
  py::class_<probe::ProbeRun>(m, "ProbeResult",
                              "A machine (or NCCL dump, or chassis) read, checked and converted")
      .def_property_readonly("kind",
                             [](const probe::ProbeRun& r) {
                               switch (r.kind) {
                                 case probe::ProbeRun::Kind::kCheck:
                                   return "check";
                                 case probe::ProbeRun::Kind::kImported:
                                   return "imported";
                                 default:
                                   return "machine";
                               }
                             })
      .def_property_readonly("healthy",
                             [](const probe::ProbeRun& r) -> py::object {
                               if (!r.check) return py::none();
                               return py::bool_(r.check->healthy());
                             })
      .def_readonly("exit_code", &probe::ProbeRun::exit_code)
      .def_property_readonly(
          "notes", [](const probe::ProbeRun& r) { return r.chassis ? r.notes : r.discovery.notes; })
      .def(
          "chassis",
          [](const probe::ProbeRun& r) {
            return std::make_shared<topo::Chassis>(
                r.chassis ? *r.chassis : topo::build_chassis(r.discovery.spec));
          },
          "The chassis read, built", Release())
      .def("to_dict",
           [](const probe::ProbeRun& r) {
             // The command's own output: which JSON a run prints is report::probe_output's choice.
             return to_python(nlohmann::json::parse(report::probe_output(r, true)));
           })
      .def("text", [](const probe::ProbeRun& r) { return report::probe_output(r, false); });
  m.def(
      "_probe",
      [](const ProbeRequest& o) {
        auto run = probe::run_probe(o);
        write_files_atomic(run.files);  // every output produced before any is written
        return run;
      },
      py::arg("options"), Release());

  // --- calibrate ---
  py::class_<CalibrateResult>(m, "CalibrateResult",
                              "Measured figures against the model (measure::CalibrateRun)")
      .def_property_readonly("flagged",
                             [](const CalibrateResult& r) { return r.run.calibration.flagged; })
      .def_property_readonly("fitted_yaml",
                             [](const CalibrateResult& r) -> py::object {
                               if (!r.run.fit) return py::none();
                               return py::str(r.run.fit_yaml);
                             })
      .def("to_dict",
           [](const CalibrateResult& r) {
             const measure::Fit* fit = r.run.fit ? &*r.run.fit : nullptr;
             return to_python(report::calibrate_json(r.run.calibration, fit, r.output));
           })
      .def("text", [](const CalibrateResult& r) {
        const measure::Fit* fit = r.run.fit ? &*r.run.fit : nullptr;
        return report::calibrate_text(r.run.calibration, fit, r.output);
      });
  py::class_<measure::CalibrateRequest> calibrate_options(
      m, "CalibrateOptions", "What `linkwise calibrate` asks (measure::CalibrateRequest)");
  calibrate_options.def(py::init<>());
  def_options(calibrate_options, measure::calibrate_options());
  m.def(
      "_calibrate",
      [](const measure::CalibrateRequest& o, std::shared_ptr<topo::Chassis> c) {
        CalibrateResult r{measure::run_calibrate(o, *c), o.fit_out};
        if (r.run.fit && !o.fit_out.empty()) write_file_atomic(o.fit_out, r.run.fit_yaml);
        return r;
      },
      py::arg("options"), py::arg("chassis"), Release());
}
