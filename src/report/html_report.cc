#include "linkwise/report/html_report.h"

#include <fmt/format.h>

#include "linkwise/report/drawing.h"
#include "svg.h"

namespace linkwise::report {

std::string html_report(const ReportInputs& in) {
  std::string out = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" +
                    svg::escape(in.chassis->name()) + "</title></head><body>\n";
  DrawOptions d;
  d.utilisation = in.utilisation;
  std::string drawing = chassis_svg(*in.chassis, d);
  out += drawing.substr(drawing.find("<svg"));
  out += "</body></html>\n";
  return out;
}

}  // namespace linkwise::report
