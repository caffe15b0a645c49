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
  py::class_<comm::SweepFlags>(m, "SweepFlags")
      .def(py::init<>())
      .def_readwrite("min", &comm::SweepFlags::min)
      .def_readwrite("max", &comm::SweepFlags::max)
      .def_readwrite("factor", &comm::SweepFlags::factor)
      .def_readwrite("step", &comm::SweepFlags::step);
  py::class_<comm::SweepRequest>(m, "CollectiveOptions",
                                 "What `linkwise collective` asks (comm::SweepRequest)")
      .def(py::init<>())
      .def_readwrite("chassis", &comm::SweepRequest::chassis)
      .def_readwrite("nodes", &comm::SweepRequest::nodes)
      .def_readwrite("as_designed", &comm::SweepRequest::as_designed)
      .def_readwrite("op", &comm::SweepRequest::op)
      .def_readwrite("redop", &comm::SweepRequest::redop)
      .def_readwrite("root", &comm::SweepRequest::root)
      .def_readwrite("dtype", &comm::SweepRequest::dtype)
      .def_readwrite("algo", &comm::SweepRequest::algo)
      .def_readwrite("gpus", &comm::SweepRequest::gpus)
      .def_readwrite("sweep", &comm::SweepRequest::sweep)
      .def_readwrite("nccl", &comm::SweepRequest::nccl);
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
  py::class_<TrainOptions>(m, "TrainOptions", "What `linkwise train` asks (work::TrainOptions)")
      .def(py::init<>())
      .def_readwrite("chassis", &TrainOptions::chassis)
      .def_readwrite("model", &TrainOptions::model)
      .def_readwrite("mode", &TrainOptions::mode)
      .def_readwrite("precision", &TrainOptions::precision)
      .def_readwrite("recompute", &TrainOptions::recompute)
      .def_readwrite("plan", &TrainOptions::plan)
      .def_readwrite("lora_targets", &TrainOptions::lora_targets)
      .def_readwrite("framework", &TrainOptions::framework)
      .def_readwrite("grad_overlap", &TrainOptions::grad_overlap)
      .def_readwrite("elementwise", &TrainOptions::elementwise)
      .def_readwrite("base_weights", &TrainOptions::base_weights)
      .def_readwrite("tokens", &TrainOptions::tokens)
      .def_readwrite("checkpoint_every", &TrainOptions::checkpoint_every)
      .def_readwrite("checkpoint_unsharded", &TrainOptions::checkpoint_unsharded)
      .def_readwrite("checkpoint_async", &TrainOptions::checkpoint_async)
      .def_readwrite("seq", &TrainOptions::seq)
      .def_readwrite("micro_batch", &TrainOptions::micro_batch)
      .def_readwrite("global_batch", &TrainOptions::global_batch)
      .def_readwrite("nodes", &TrainOptions::nodes)
      .def_readwrite("lora_rank", &TrainOptions::lora_rank)
      .def_readwrite("top", &TrainOptions::top)
      .def_readwrite("as_designed", &TrainOptions::as_designed)
      .def_readwrite("scaling", &TrainOptions::scaling)
      .def_readwrite("offload", &TrainOptions::offload)
      .def_readwrite("no_flash", &TrainOptions::no_flash)
      .def_readwrite("validation", &TrainOptions::validation)
      .def_readwrite("given", &TrainOptions::given);
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
  py::class_<ServeRunOptions>(m, "ServeOptions",
                              "What `linkwise serve` asks (work::ServeRunOptions)")
      .def(py::init<>())
      .def_readwrite("chassis", &ServeRunOptions::chassis)
      .def_readwrite("model", &ServeRunOptions::model)
      .def_readwrite("gpus", &ServeRunOptions::gpus)
      .def_readwrite("precision", &ServeRunOptions::precision)
      .def_readwrite("kv_precision", &ServeRunOptions::kv_precision)
      .def_readwrite("load", &ServeRunOptions::load)
      .def_readwrite("arrivals", &ServeRunOptions::arrivals)
      .def_readwrite("sweep", &ServeRunOptions::sweep)
      .def_readwrite("tp", &ServeRunOptions::tp)
      .def_readwrite("pp", &ServeRunOptions::pp)
      .def_readwrite("replicas", &ServeRunOptions::replicas)
      .def_readwrite("input", &ServeRunOptions::input)
      .def_readwrite("output", &ServeRunOptions::output)
      .def_readwrite("concurrency", &ServeRunOptions::concurrency)
      .def_readwrite("lora_rank", &ServeRunOptions::lora_rank)
      .def_readwrite("max_batched_tokens", &ServeRunOptions::max_batched_tokens)
      .def_readwrite("max_seqs", &ServeRunOptions::max_seqs)
      .def_readwrite("sweep_max", &ServeRunOptions::sweep_max)
      .def_readwrite("rate", &ServeRunOptions::rate)
      .def_readwrite("prefix_hit", &ServeRunOptions::prefix_hit)
      .def_readwrite("as_designed", &ServeRunOptions::as_designed)
      .def_readwrite("expert_parallel", &ServeRunOptions::expert_parallel)
      .def_readwrite("kv_offload", &ServeRunOptions::kv_offload)
      .def_readwrite("validation", &ServeRunOptions::validation)
      .def_readwrite("no_chunked_prefill", &ServeRunOptions::no_chunked_prefill)
      .def_readwrite("requests", &ServeRunOptions::requests)
      .def_readwrite("front_end", &ServeRunOptions::front_end);
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
  py::class_<ProbeRequest>(m, "ProbeOptions", "What `linkwise probe` asks (probe::ProbeRequest)")
      .def(py::init<>())
      .def_readwrite("sysfs_root", &ProbeRequest::sysfs_root)
      .def_readwrite("nccl_in", &ProbeRequest::nccl_in)
      .def_readwrite("chassis", &ProbeRequest::chassis)
      .def_readwrite("name", &ProbeRequest::name)
      .def_readwrite("check", &ProbeRequest::check)
      .def_readwrite("strict", &ProbeRequest::strict)
      .def_readwrite("no_nvml", &ProbeRequest::no_nvml)
      .def_readwrite("expect", &ProbeRequest::expect)
      .def_readwrite("yaml_out", &ProbeRequest::yaml_out)
      .def_readwrite("nccl_out", &ProbeRequest::nccl_out);
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
  m.def(
      "_calibrate",
      [](std::shared_ptr<topo::Chassis> c, const std::string& measured, double threshold, bool fit,
         const std::string& output) {
        measure::CalibrateRequest req;
        req.measured = measured;
        req.threshold_pct = threshold;
        req.fit = fit;
        CalibrateResult r{measure::run_calibrate(req, *c), output};
        if (r.run.fit && !output.empty()) write_file_atomic(output, r.run.fit_yaml);
        return r;
      },
      py::arg("chassis"), py::arg("measured"), py::arg("threshold"), py::arg("fit"),
      py::arg("output"), Release());
}
