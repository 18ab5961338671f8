// looplab analyze regions | anisotropy | phase: thin wrappers over src/looplab/analysis/geometry.h.
// Each prints text by default, JSON with --json, and writes a CSV file (atomically) with --csv.
#include "looplab/cli/cmd_analyze_geometry.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "looplab/analysis/geometry.h"
#include "looplab/io/atomic_file.h"
#include "looplab/util/error.h"

namespace looplab::cli {

namespace {

namespace ag = looplab::analysis;

// "0.5,1,2,4" -> {0.5, 1, 2, 4}; every item a finite number > 0.
std::vector<double> parse_sigmas(const std::string& text) {
  std::vector<double> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
    if (item.empty()) throw Error("anisotropy: --sigma: empty item in '" + text + "' (want e.g. 0.5,1,2,4)");
    errno = 0;
    char* end = nullptr;
    const double v = std::strtod(item.c_str(), &end);
    if (end != item.c_str() + item.size() || errno == ERANGE)
      throw Error("anisotropy: --sigma: '" + item + "' is not a number (want e.g. 0.5,1,2,4)");
    if (!std::isfinite(v) || !(v > 0)) throw Error("anisotropy: --sigma: '" + item + "' must be a finite number > 0");
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

Command add_regions(CLI::App* parent) {
  struct Options {
    double xmin = -10, xmax = 10, ymin = -6, ymax = 6;
    int64_t n = 201;
    std::string csv;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* app = parent->add_subcommand(
      "regions", "Figure 5: where external |(1+lh) lg| < 1 and internal |1 + lg lh| < 1 hold (x = lg, y = lh)");
  app->add_option("--xmin", o->xmin, "left edge (lg)")->capture_default_str();
  app->add_option("--xmax", o->xmax, "right edge (lg)")->capture_default_str();
  app->add_option("--ymin", o->ymin, "bottom edge (lh)")->capture_default_str();
  app->add_option("--ymax", o->ymax, "top edge (lh)")->capture_default_str();
  app->add_option("--n", o->n, "grid points per axis (n x n, edges included)")->capture_default_str();
  app->add_option("--csv", o->csv, "write x,y,internal,external per grid point to FILE");
  app->add_flag("--json", o->json, "print the grid as JSON");
  return {app, [o] {
            const ag::RegionGrid g = ag::region_grid(o->xmin, o->xmax, o->ymin, o->ymax, o->n);
            if (!o->csv.empty()) write_file_atomic(o->csv, ag::to_csv(g));
            if (o->json) {
              std::cout << ag::to_json(g).dump(2) << "\n";
              return;
            }
            std::printf("Stability regions on a %lld x %lld grid over lg in [%g, %g] (x), lh in [%g, %g] (y)\n",
                        static_cast<long long>(g.n), static_cast<long long>(g.n), g.xmin, g.xmax, g.ymin, g.ymax);
            std::printf("  internal |1 + lg lh| < 1:    %6.2f%% of the grid\n", 100 * g.internal_fraction);
            std::printf("  external |(1 + lh) lg| < 1:  %6.2f%% of the grid\n", 100 * g.external_fraction);
            std::printf("  both:                        %6.2f%% of the grid\n\n", 100 * g.both_fraction);
            std::printf("B both, I internal only, E external only, . neither; axes - and |\n");
            std::cout << ag::region_map(g.xmin, g.xmax, g.ymin, g.ymax, 73, 25);
            if (!o->csv.empty()) std::printf("wrote %s\n", o->csv.c_str());
          }};
}

Command add_anisotropy(CLI::App* parent) {
  struct Options {
    int64_t n = 10000;
    std::string sigma = "0.5,1,2,4";
    uint64_t seed = 0;
    std::string csv;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* app = parent->add_subcommand(
      "anisotropy", "Table 3: project N(0, sigma^2 I) draws onto both regions; log-range and balance vs the paper");
  app->add_option("--n", o->n, "draws per sigma")->capture_default_str();
  app->add_option("--sigma", o->sigma, "comma-separated standard deviations")->capture_default_str();
  app->add_option("--seed", o->seed, "seed of the draws (std::mt19937_64 + Box-Muller)")->capture_default_str();
  app->add_option("--csv", o->csv, "write one row per (sigma, placement) to FILE");
  app->add_flag("--json", o->json, "print the result as JSON");
  return {app, [o] {
            const std::vector<double> sigmas = parse_sigmas(o->sigma);
            if (o->n < 2) throw Error("anisotropy: --n must be at least 2 (got " + std::to_string(o->n) + ")");
            const ag::AnisotropyResult r = ag::anisotropy(o->n, sigmas, o->seed);
            if (!o->csv.empty()) write_file_atomic(o->csv, ag::to_csv(r));
            if (o->json) {
              std::cout << ag::to_json(r).dump(2) << "\n";
              return;
            }
            std::cout << ag::to_text(r);
            if (!o->csv.empty()) std::printf("wrote %s\n", o->csv.c_str());
          }};
}

Command add_phase(CLI::App* parent) {
  struct Options {
    double lx = 0, ly = 0;
    int64_t steps = 30, starts = 16;
    double radius = 1;
    std::string csv;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* app = parent->add_subcommand("phase", "Figure 2: trajectories of (x, y) -> (lx x, ly y) from a ring of starts");
  app->add_option("--lx", o->lx, "eigenvalue along x")->required();
  app->add_option("--ly", o->ly, "eigenvalue along y")->required();
  app->add_option("--steps", o->steps, "iterations per trajectory")->capture_default_str();
  app->add_option("--starts", o->starts, "starting points, evenly spaced on the circle")->capture_default_str();
  app->add_option("--radius", o->radius, "radius of the circle of starts")->capture_default_str();
  app->add_option("--csv", o->csv, "write trajectory,step,x,y,fate to FILE");
  app->add_flag("--json", o->json, "print the trajectories as JSON");
  return {app, [o] {
            const ag::PhasePortrait p = ag::phase_portrait(o->lx, o->ly, o->steps, o->starts, o->radius);
            if (!o->csv.empty()) write_file_atomic(o->csv, ag::to_csv(p));
            if (o->json) {
              std::cout << ag::to_json(p).dump(2) << "\n";
              return;
            }
            std::printf("(x, y) -> (%g x, %g y): the fixed point (0, 0) is %s\n", p.lx, p.ly, p.fixed_point.c_str());
            std::printf("%-4s %-24s %-16s %s\n", "#", "start", "fate", "last point");
            for (size_t i = 0; i < p.trajectories.size(); ++i) {
              const ag::Trajectory& t = p.trajectories[i];
              char start[64], last[96];
              std::snprintf(start, sizeof start, "(%.4g, %.4g)", t.start.x, t.start.y);
              std::snprintf(last, sizeof last, "(%.4g, %.4g) after %zu steps%s", t.points.back().x, t.points.back().y,
                            t.points.size() - 1, t.escaped ? ", escaped" : "");
              std::printf("%-4zu %-24s %-16s %s\n", i, start, ag::fate_name(t.fate), last);
            }
            if (!o->csv.empty()) std::printf("wrote %s\n", o->csv.c_str());
          }};
}

}  // namespace

void add_geometry_commands(CLI::App* analyze, std::vector<Command>& out) {
  out.push_back(add_regions(analyze));
  out.push_back(add_anisotropy(analyze));
  out.push_back(add_phase(analyze));
}

}  // namespace looplab::cli
