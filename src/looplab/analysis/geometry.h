// The geometry part of the paper's fixed-point analysis (section 5.1, figures 2 and 5, appendix
// B.2 and its table 3) for the scalar model, with no LibTorch: the stability regions of external
// and internal recall, the exact Euclidean projection onto them, the figure-5 membership grid,
// the table-3 anisotropy experiment and the figure-2 phase portraits. docs/analysis.md explains
// the definitions and compares table 3 with the paper's.
//
// Axis convention (the paper's figure 5 and its reference code): x = lg, the eigenvalue of the
// recall Jacobian dg/dx (figure 5's horizontal axis "Jg"); y = lh, the eigenvalue of the sublayer
// Jacobian dh/dg (the vertical axis "Jh"). Then
//   external recall is stable iff |(1 + y) x| < 1,   internal recall iff |1 + x y| < 1.
// The internal region is symmetric in x and y; the external one is not: its boundary is the pair
// of hyperbolas x (1 + y) = +-1 around the singular line y = -1 (lh = -1), which lies inside it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "looplab/model/config.h"

namespace looplab::geometry {

// The toy model's two placements of the recall are the model's recall kinds: Recall::kInternal
// and Recall::kExternal (model/config.h); any other is a looplab::Error where one is asked for.
void need_placement(Recall r);

struct Point {
  double x = 0;  // lg
  double y = 0;  // lh
};

// The paper's (open) stability conditions.
bool is_stable(Recall placement, Point p);
// The closed regions |...| <= 1 that project() maps onto (the reference code's membership test).
bool in_closed_region(Recall placement, Point p);

// The nearest point of the closed region to p (Euclidean); p itself when p is inside. Exact up to
// rounding: every boundary piece is a line or a branch of a hyperbola, the nearest point on each
// is found among the real roots of a quartic, and the closest candidate wins. The result always
// passes in_closed_region(), so project(project(p)) == project(p) exactly. Throws looplab::Error
// unless |p.x| and |p.y| are at most 1e50 (beyond, the quartic's fourth powers overflow).
Point project(Recall placement, Point p);

// The critical points x of the squared distance from (a, b) to the hyperbola y = c / x (c != 0):
// the real roots of x^4 - a x^3 + b c x - c^2 = 0, each polished to rounding, in increasing order.
// There are always two to four (at least one per branch). Exposed for the tests.
std::vector<double> hyperbola_critical_points(double a, double b, double c);

// ---- Figure 5: which grid points are stable for each placement -----------------------------

struct RegionGrid {
  double xmin = -10, xmax = 10, ymin = -6, ymax = 6;  // figure 5's box
  int64_t n = 0;
  std::vector<double> xs, ys;  // n values each, from min to max inclusive (the centre if n == 1)
  // [iy * n + ix]: the open stability condition at (xs[ix], ys[iy]).
  std::vector<uint8_t> internal, external;
  double internal_fraction = 0, external_fraction = 0, both_fraction = 0;
};
// Throws looplab::Error unless n >= 1, the bounds are finite and xmin < xmax, ymin < ymax.
RegionGrid region_grid(double xmin, double xmax, double ymin, double ymax, int64_t n);
// The settings with their defaults, for `looplab analyze regions` and the web lab's /api/regions.
struct RegionOptions {
  double xmin = -10, xmax = 10, ymin = -6, ymax = 6;  // the box (x = lg, y = lh): figure 5's
  int64_t n = 201;                                    // grid points per axis, edges included
};
inline RegionGrid region_grid(const RegionOptions& o) { return region_grid(o.xmin, o.xmax, o.ymin, o.ymax, o.n); }
nlohmann::json to_json(const RegionGrid& g);
std::string to_csv(const RegionGrid& g);  // x,y,internal,external; one row per grid point
std::string to_text(const RegionGrid& g);  // the fractions and a character map
// A character map of the box (rows from ymax down to ymin): 'B' both stable, 'I' internal only,
// 'E' external only, '.' neither; '|' and '-' mark the axes where no region is.
std::string region_map(double xmin, double xmax, double ymin, double ymax, int cols, int rows);

// ---- Table 3: the anisotropy of projected Gaussian draws -------------------------------------

// The draws of the experiment: point i is sigma * the i-th normal_pair() of Random(seed)
// (util/random.h: std::mt19937_64 and Box-Muller written out). Every sigma reuses the same z (as the reference code reseeds per sigma), so a row
// depends only on (seed, n, sigma), whichever other sigmas are asked for.
std::vector<Point> gaussian_points(uint64_t seed, int64_t n, double sigma);

double log_range(Point p, double eps = 1e-8);  // |log((|x| + eps) / (|y| + eps))|
double balance(Point p, double eps = 1e-8);    // (min(|x|,|y|) + eps) / (max(|x|,|y|) + eps)

struct Summary {
  double mean = 0, standard_error = 0, median = 0;  // util/numeric.h's mean_and_standard_error, median
};
Summary summarize(std::vector<double> values);  // throws looplab::Error when empty

struct AnisotropyRow {
  double sigma = 0;
  Recall placement = Recall::kInternal;
  Summary log_range, balance;
  double inside_fraction = 0;  // draws already in the closed region (projected onto themselves)
  double on_axis_fraction = 0;  // projections with x == 0 or y == 0 (log-range about 18)
  double mean_distance = 0;    // mean |p - project(p)|
};
struct AnisotropyResult {
  uint64_t seed = 0;
  int64_t n = 0;
  double eps = 1e-8;
  std::vector<double> sigmas;
  std::vector<AnisotropyRow> rows;  // per sigma: internal, then external
};
// Throws looplab::Error unless n >= 2 and every sigma is finite and > 0.
AnisotropyResult anisotropy(int64_t n, const std::vector<double>& sigmas, uint64_t seed);
// The settings with their defaults, for `looplab analyze anisotropy` and /api/anisotropy.
struct AnisotropyOptions {
  int64_t n = 10000;                           // draws per sigma
  std::vector<double> sigmas = {0.5, 1, 2, 4};  // table 3's standard deviations
  uint64_t seed = 0;                           // of the draws (std::mt19937_64 + Box-Muller)
};
inline AnisotropyResult anisotropy(const AnisotropyOptions& o) { return anisotropy(o.n, o.sigmas, o.seed); }
nlohmann::json to_json(const AnisotropyResult& r);
std::string to_csv(const AnisotropyResult& r);
// "sigma,placement,log_range_mean,..." with the paper's table 3 beside ours where it has the sigma.
std::string to_text(const AnisotropyResult& r);

// The paper's table 3 (n = 10000 per sigma): the row for (sigma, placement), if the paper has it.
struct PaperRow {
  double sigma;
  Recall placement;
  Summary log_range, balance;
};
const std::vector<PaperRow>& paper_table3();
const PaperRow* paper_row(double sigma, Recall placement);

// ---- Figure 2: phase portraits of (x, y) -> (lx x, ly y) -----------------------------------

enum class Fate {
  converges,       // every coordinate that starts non-zero has |lambda| < 1
  diverges,        // some coordinate that starts non-zero has |lambda| > 1
  stable_manifold, // converges although the other eigenvalue has |lambda| > 1 (a saddle's stable axis)
  neutral,         // bounded, not converging: a coordinate with |lambda| == 1 starts non-zero
                   // and none with |lambda| > 1 does
};
const char* fate_name(Fate f);  // "converges", "diverges", "stable-manifold", "neutral"
// The fate of the trajectory from `start`, from the closed form (lx^t x0, ly^t y0).
Fate classify(double lx, double ly, Point start);

struct Trajectory {
  Point start;
  Fate fate = Fate::converges;
  std::vector<Point> points;  // start, f(start), ...: steps + 1 points, fewer if it escapes
  bool escaped = false;       // stopped early: |point| > escape_radius
};
struct PhasePortrait {
  double lx = 0, ly = 0;
  int64_t steps = 0;
  double radius = 1, escape_radius = 1e6;
  std::string fixed_point;  // "attracting", "saddle", "repelling", "non-hyperbolic"
  std::vector<Trajectory> trajectories;
};
// `starts` points on the circle of `radius` at angles 2 pi k / starts (k = 0 is on the x axis;
// the angles that are multiples of pi/2 give points exactly on an axis), iterated `steps` times.
// Throws looplab::Error for non-finite eigenvalues or radius, steps < 1, steps > 100000, or
// starts < 1.
PhasePortrait phase_portrait(double lx, double ly, int64_t steps, int64_t starts = 16, double radius = 1,
                             double escape_radius = 1e6);
// The settings with their defaults, for `looplab analyze phase` and /api/phase (lx and ly are
// required there).
struct PhaseOptions {
  double lx = 0, ly = 0;  // the eigenvalues along x and y
  int64_t steps = 30;     // iterations per trajectory
  int64_t starts = 16;    // starting points on the circle
  double radius = 1;      // of the circle of starts
};
inline PhasePortrait phase_portrait(const PhaseOptions& o) {
  return phase_portrait(o.lx, o.ly, o.steps, o.starts, o.radius);
}
nlohmann::json to_json(const PhasePortrait& p);
std::string to_csv(const PhasePortrait& p);  // trajectory,step,x,y,fate
std::string to_text(const PhasePortrait& p);  // one line per trajectory: start, fate, last point

}  // namespace looplab::geometry
