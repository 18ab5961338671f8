// looplab analyze regions | anisotropy | phase: thin wrappers over src/looplab/explore/geometry.h.
// Each prints text by default, JSON with --json, and writes a CSV file (atomically) with --csv.
#include "looplab/cli/commands.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "looplab/explore/geometry.h"
#include "looplab/io/atomic_file.h"
#include "looplab/util/error.h"
#include "looplab/util/list.h"

namespace looplab::cli {

namespace {

namespace ag = looplab::geometry;

// The output every geometry command shares: CSV to a file (atomically) when asked, then JSON
// or text on stdout.
template <typename Result>
void emit(const Result& r, const std::string& csv, bool json) {
  if (!csv.empty()) write_file_atomic(csv, ag::to_csv(r));
  if (json) {
    std::cout << ag::to_json(r).dump(2) << "\n";
    return;
  }
  std::cout << ag::to_text(r);
  if (!csv.empty()) std::printf("wrote %s\n", csv.c_str());
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
            emit(ag::region_grid(o->xmin, o->xmax, o->ymin, o->ymax, o->n), o->csv, o->json);
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
            const std::vector<double> sigmas = parse_positive_numbers(o->sigma, "anisotropy: --sigma");
            if (o->n < 2) throw Error("anisotropy: --n must be at least 2 (got " + std::to_string(o->n) + ")");
            emit(ag::anisotropy(o->n, sigmas, o->seed), o->csv, o->json);
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
            emit(ag::phase_portrait(o->lx, o->ly, o->steps, o->starts, o->radius), o->csv, o->json);
          }};
}

}  // namespace

void add_geometry_commands(CLI::App* analyze, std::vector<Command>& out) {
  out.push_back(add_regions(analyze));
  out.push_back(add_anisotropy(analyze));
  out.push_back(add_phase(analyze));
}

}  // namespace looplab::cli
