#pragma once
// The --html report: one self-contained page (no script, no style sheet or font fetched: it opens
// offline) with the summary table, the coverage of shape classes, and for each failing case shown
// its error map as an SVG heatmap of |error| / tolerance (core/compare.h ErrorMap: the output's
// last two dimensions, the others reduced by max), its mismatches per dimension and the line that
// reproduces it. Rendered from the JSON report's head and cases (tools/report_json.h), so check and
// merge draw the same page. The page is well-formed XML (XHTML), so any XML parser reads it.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ts {

// `cases`: the failing cases to draw, besides each group's smallest failure (the head holds it).
std::string html_report(const nlohmann::json& head, const std::vector<nlohmann::json>& cases);
void write_html(const std::string& path, const nlohmann::json& head, const std::vector<nlohmann::json>& cases);

// One error map as an <svg>: a cell per rect, with data-row, data-col and data-ratio attributes
// (for tests and scripts) and a <title> a browser shows on hover.
std::string heatmap_svg(const nlohmann::json& map, const std::string& output);

}  // namespace ts
