// looplab analyze regions | anisotropy | phase: thin wrappers over src/looplab/analysis/geometry.h.
// Each prints text by default, JSON with --json, and writes a CSV file (atomically) with --csv.
#include "looplab/cli/commands.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "looplab/analysis/geometry.h"
#include "looplab/io/atomic_file.h"
#include "looplab/util/error.h"
#include "looplab/util/list.h"

namespace looplab::cli {

namespace {

namespace ag = looplab::geometry;

// The output every geometry command shares: --csv FILE (written atomically) and --json, else text.
struct Output {
  std::string csv;
  bool json = false;
};

void add_output(CLI::App* app, Output& out, const std::string& csv_rows) {
  app->add_option("--csv", out.csv, "write " + csv_rows + " to FILE");
  app->add_flag("--json", out.json, "print the result as JSON");
}

template <typename Result>
void emit(const Result& r, const Output& out) {
  if (!out.csv.empty()) write_file_atomic(out.csv, ag::to_csv(r));
  std::cout << (out.json ? ag::to_json(r).dump(2) + "\n" : ag::to_text(r));
  if (!out.csv.empty() && !out.json) std::printf("wrote %s\n", out.csv.c_str());
}

Command add_regions(CLI::App* parent) {
  auto o = std::make_shared<std::pair<ag::RegionOptions, Output>>();
  ag::RegionOptions& r = o->first;
  auto* app = parent->add_subcommand(
      "regions", "Figure 5: where external |(1+lh) lg| < 1 and internal |1 + lg lh| < 1 hold (x = lg, y = lh)");
  app->add_option("--xmin", r.xmin, "left edge (lg)")->capture_default_str();
  app->add_option("--xmax", r.xmax, "right edge (lg)")->capture_default_str();
  app->add_option("--ymin", r.ymin, "bottom edge (lh)")->capture_default_str();
  app->add_option("--ymax", r.ymax, "top edge (lh)")->capture_default_str();
  app->add_option("--n", r.n, "grid points per axis (n x n, edges included)")->capture_default_str();
  add_output(app, o->second, "x,y,internal,external per grid point");
  return {app, [o] { emit(ag::region_grid(o->first), o->second); }};
}

Command add_anisotropy(CLI::App* parent) {
  struct Options {
    ag::AnisotropyOptions anisotropy;
    std::string sigma;  // given: replaces anisotropy.sigmas
    Output out;
  };
  auto o = std::make_shared<Options>();
  ag::AnisotropyOptions& a = o->anisotropy;
  auto* app = parent->add_subcommand(
      "anisotropy", "Table 3: project N(0, sigma^2 I) draws onto both regions; log-range and balance vs the paper");
  app->add_option("--n", a.n, "draws per sigma")->capture_default_str();
  std::string sigmas;
  for (double s : a.sigmas) sigmas += (sigmas.empty() ? "" : ",") + CLI::detail::to_string(s);
  app->add_option("--sigma", o->sigma, "comma-separated standard deviations")->default_str(sigmas);
  app->add_option("--seed", a.seed, "seed of the draws (std::mt19937_64 + Box-Muller)")->capture_default_str();
  add_output(app, o->out, "one row per (sigma, placement)");
  return {app, [o] {
            ag::AnisotropyOptions a = o->anisotropy;
            if (!o->sigma.empty()) a.sigmas = parse_positive_numbers(o->sigma, "anisotropy: --sigma");
            if (a.n < 2) throw Error("anisotropy: --n must be at least 2 (got " + std::to_string(a.n) + ")");
            emit(ag::anisotropy(a), o->out);
          }};
}

Command add_phase(CLI::App* parent) {
  auto o = std::make_shared<std::pair<ag::PhaseOptions, Output>>();
  ag::PhaseOptions& p = o->first;
  auto* app = parent->add_subcommand("phase", "Figure 2: trajectories of (x, y) -> (lx x, ly y) from a ring of starts");
  app->add_option("--lx", p.lx, "eigenvalue along x")->required();
  app->add_option("--ly", p.ly, "eigenvalue along y")->required();
  app->add_option("--steps", p.steps, "iterations per trajectory")->capture_default_str();
  app->add_option("--starts", p.starts, "starting points, evenly spaced on the circle")->capture_default_str();
  app->add_option("--radius", p.radius, "radius of the circle of starts")->capture_default_str();
  add_output(app, o->second, "trajectory,step,x,y,fate");
  return {app, [o] { emit(ag::phase_portrait(o->first), o->second); }};
}

}  // namespace

void add_geometry_commands(CLI::App* analyze, std::vector<Command>& out) {
  out.push_back(add_regions(analyze));
  out.push_back(add_anisotropy(analyze));
  out.push_back(add_phase(analyze));
}

}  // namespace looplab::cli
