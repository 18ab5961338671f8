// The stability-region geometry of the scalar model; see geometry.h and docs/analysis.md.
#include "looplab/analysis/geometry.h"

#include "looplab/util/numeric.h"
#include "looplab/util/random.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <tuple>

#include "looplab/util/error.h"

namespace looplab::geometry {

namespace {

constexpr double kPi = 3.14159265358979323846;
// project()'s domain: the quartic's terms (up to the fourth power of its root bound) stay finite.
constexpr double kMaxCoordinate = 1e50;

double dist2(Point a, Point b) {
  const double dx = a.x - b.x, dy = a.y - b.y;
  return dx * dx + dy * dy;
}

// ---- real roots of P(x) = x^4 - a x^3 + b c x - c^2 by bracketing --------------------------
//
// P'' = 12 x^2 - 6 a x vanishes at 0 and a/2 only, so P' is monotone between -B, those two and
// B, and has at most one root in each piece; P in turn is monotone between consecutive roots of
// P' and has at most one root in each of those pieces. B bounds every root of P and of P'
// (Cauchy: 1 + the largest coefficient of the monic polynomial). Bisection on a sign change
// then finds every simple root; a root of even multiplicity (a tangency: P touches zero without
// changing sign) is a root of P' too and is caught there.

struct Quartic {
  double a, bc, c2;
  double p(double x) const { return (((x - a) * x) * x + bc) * x - c2; }
  double dp(double x) const { return (4 * x - 3 * a) * x * x + bc; }
  double scale(double x) const {  // the size of P's terms at x: rounding in p(x) is ~1e-16 of this
    const double ax = std::abs(x);
    return ax * ax * ax * ax + std::abs(a) * ax * ax * ax + std::abs(bc) * ax + c2;
  }
};

// The root of f in [lo, hi], given f(lo) and f(hi) of opposite signs (or one of them zero).
template <class F>
double bisect(const F& f, double lo, double hi, double flo) {
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (mid <= lo || mid >= hi) break;
    const double fm = f(mid);
    if (fm == 0) return mid;
    if ((fm < 0) == (flo < 0)) {
      lo = mid;
      flo = fm;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

// The roots of a function monotone on each [breaks[i], breaks[i+1]].
template <class F>
std::vector<double> piecewise_monotone_roots(const F& f, const std::vector<double>& breaks) {
  std::vector<double> roots;
  for (size_t i = 0; i + 1 < breaks.size(); ++i) {
    const double lo = breaks[i], hi = breaks[i + 1];
    if (!(lo < hi)) continue;
    const double flo = f(lo), fhi = f(hi);
    if (flo == 0) {
      roots.push_back(lo);
    } else if (fhi == 0) {
      roots.push_back(hi);
    } else if ((flo < 0) != (fhi < 0)) {
      roots.push_back(bisect(f, lo, hi, flo));
    }
  }
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  return roots;
}

struct CriticalPoints {
  std::vector<double> roots;        // of P
  std::vector<double> extra;        // of P' (candidates that cover tangencies)
};

CriticalPoints critical_points(double a, double b, double c) {
  const Quartic q{a, b * c, c * c};
  const double bound = 1 + std::max({std::abs(a), std::abs(q.bc), q.c2});  // >= the bound for P'
  const double h0 = std::min(0.0, 0.5 * a), h1 = std::max(0.0, 0.5 * a);
  const std::vector<double> dbreaks = {-bound, h0, h1, bound};
  CriticalPoints out;
  out.extra = piecewise_monotone_roots([&](double x) { return q.dp(x); }, dbreaks);
  std::vector<double> breaks = {-bound};
  for (double r : out.extra)
    if (r > -bound && r < bound) breaks.push_back(r);
  breaks.push_back(bound);
  std::vector<double> roots = piecewise_monotone_roots([&](double x) { return q.p(x); }, breaks);
  // Tangencies: a root of P' where P vanishes to rounding.
  for (double r : out.extra)
    if (std::abs(q.p(r)) <= 64 * std::numeric_limits<double>::epsilon() * q.scale(r)) roots.push_back(r);
  // Newton polish: keep a step only while it lowers |P| (bisection already got within a few ulps).
  for (double& r : roots) {
    for (int i = 0; i < 4; ++i) {
      const double d = q.dp(r);
      if (d == 0) break;
      const double next = r - q.p(r) / d;
      if (!(std::abs(q.p(next)) < std::abs(q.p(r)))) break;
      r = next;
    }
  }
  std::sort(roots.begin(), roots.end());
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  roots.erase(std::remove(roots.begin(), roots.end(), 0.0), roots.end());  // P(0) = -c^2 != 0 anyway
  out.roots = std::move(roots);
  out.extra.erase(std::remove(out.extra.begin(), out.extra.end(), 0.0), out.extra.end());
  return out;
}

// The candidates on the hyperbola x * v = c (c != 0) nearest to (a, b) in the (x, v) plane:
// the closest of P's critical points, plus P''s roots as a safety net.
Point nearest_on_hyperbola(double a, double b, double c) {
  const CriticalPoints cp = critical_points(a, b, c);
  Point best{std::numeric_limits<double>::quiet_NaN(), 0};
  double best_d = std::numeric_limits<double>::infinity();
  auto consider = [&](double x) {
    const Point p{x, c / x};
    const double d = dist2(p, {a, b});
    if (d < best_d) {
      best_d = d;
      best = p;
    }
  };
  for (double x : cp.roots) consider(x);
  for (double x : cp.extra) consider(x);
  return best;
}

// Moves y towards `target` a few ulps at a time until the point is in the closed region (the
// computed hyperbola point can miss it by a rounding error).
Point into_region(Recall placement, Point p, double target) {
  for (int i = 0; i < 256 && !in_closed_region(placement, p); ++i) p.y = std::nextafter(p.y, target);
  if (!in_closed_region(placement, p)) p.y = target;  // target is inside: y = 0 or y = -1
  return p;
}

}  // namespace


void need_placement(Recall r) {
  if (r != Recall::kInternal && r != Recall::kExternal)
    throw Error("the toy model places its recall internally or externally, not '" + to_string(r) + "'");
}

bool is_stable(Recall placement, Point p) {
  need_placement(placement);
  return placement == Recall::kInternal ? std::abs(1 + p.x * p.y) < 1 : std::abs((1 + p.y) * p.x) < 1;
}

bool in_closed_region(Recall placement, Point p) {
  need_placement(placement);
  return placement == Recall::kInternal ? std::abs(1 + p.x * p.y) <= 1 : std::abs((1 + p.y) * p.x) <= 1;
}

std::vector<double> hyperbola_critical_points(double a, double b, double c) {
  if (c == 0 || !std::isfinite(a) || !std::isfinite(b) || !std::isfinite(c))
    throw Error("hyperbola_critical_points: needs finite a, b and c != 0");
  return critical_points(a, b, c).roots;
}

Point project(Recall placement, Point p) {
  if (!(std::abs(p.x) <= kMaxCoordinate) || !(std::abs(p.y) <= kMaxCoordinate))
    throw Error("project: the point (" + number_text(p.x) + ", " + number_text(p.y) + ") must have finite coordinates of size at most 1e50");
  if (in_closed_region(placement, p)) return p;
  std::vector<Point> candidates;
  double target = 0;
  if (placement == Recall::kInternal) {
    // Region -2 <= x y <= 0: bounded by the axes (x y = 0) and the hyperbola x y = -2.
    candidates.push_back({0, p.y});
    candidates.push_back({p.x, 0});
    candidates.push_back(nearest_on_hyperbola(p.x, p.y, -2));
    target = 0;
  } else {
    // Region |x v| <= 1 with v = 1 + y: bounded by the hyperbolas x v = 1 and x v = -1.
    const double v = 1 + p.y;
    for (double c : {1.0, -1.0}) {
      const Point q = nearest_on_hyperbola(p.x, v, c);
      candidates.push_back({q.x, q.y - 1});
    }
    target = -1;
  }
  Point best = p;
  double best_d = std::numeric_limits<double>::infinity();
  for (const Point& q : candidates) {
    if (!std::isfinite(q.x) || !std::isfinite(q.y)) continue;
    const double d = dist2(q, p);
    if (d < best_d) {
      best_d = d;
      best = q;
    }
  }
  return into_region(placement, best, target);
}

// ---- figure 5 --------------------------------------------------------------------------------

namespace {


void check_box(double xmin, double xmax, double ymin, double ymax) {
  for (double v : {xmin, xmax, ymin, ymax})
    if (!std::isfinite(v)) throw Error("regions: the box bounds must be finite numbers");
  if (!(xmin < xmax)) throw Error("regions: need xmin < xmax (got " + number_text(xmin) + " and " + number_text(xmax) + ")");
  if (!(ymin < ymax)) throw Error("regions: need ymin < ymax (got " + number_text(ymin) + " and " + number_text(ymax) + ")");
}

}  // namespace

RegionGrid region_grid(double xmin, double xmax, double ymin, double ymax, int64_t n) {
  check_box(xmin, xmax, ymin, ymax);
  if (n < 1) throw Error("regions: n must be at least 1 (got " + std::to_string(n) + ")");
  if (n > 10000) throw Error("regions: n must be at most 10000 (got " + std::to_string(n) + ")");
  RegionGrid g;
  g.xmin = xmin;
  g.xmax = xmax;
  g.ymin = ymin;
  g.ymax = ymax;
  g.n = n;
  g.xs = linspace(xmin, xmax, n);
  g.ys = linspace(ymin, ymax, n);
  g.internal.resize(n * n);
  g.external.resize(n * n);
  int64_t ni = 0, ne = 0, nb = 0;
  for (int64_t iy = 0; iy < n; ++iy)
    for (int64_t ix = 0; ix < n; ++ix) {
      const Point p{g.xs[ix], g.ys[iy]};
      const bool in = is_stable(Recall::kInternal, p), ex = is_stable(Recall::kExternal, p);
      g.internal[iy * n + ix] = in;
      g.external[iy * n + ix] = ex;
      ni += in;
      ne += ex;
      nb += in && ex;
    }
  const double total = static_cast<double>(n * n);
  g.internal_fraction = ni / total;
  g.external_fraction = ne / total;
  g.both_fraction = nb / total;
  return g;
}

nlohmann::json to_json(const RegionGrid& g) {
  nlohmann::json internal = nlohmann::json::array(), external = nlohmann::json::array();
  for (int64_t iy = 0; iy < g.n; ++iy) {
    nlohmann::json ri = nlohmann::json::array(), re = nlohmann::json::array();
    for (int64_t ix = 0; ix < g.n; ++ix) {
      ri.push_back(static_cast<int>(g.internal[iy * g.n + ix]));
      re.push_back(static_cast<int>(g.external[iy * g.n + ix]));
    }
    internal.push_back(std::move(ri));
    external.push_back(std::move(re));
  }
  return {{"x_axis", "lg (recall Jacobian eigenvalue)"},
          {"y_axis", "lh (sublayer Jacobian eigenvalue)"},
          {"internal_condition", "|1 + x y| < 1"},
          {"external_condition", "|(1 + y) x| < 1"},
          {"box", {{"xmin", g.xmin}, {"xmax", g.xmax}, {"ymin", g.ymin}, {"ymax", g.ymax}}},
          {"n", g.n},
          {"xs", g.xs},
          {"ys", g.ys},
          {"internal", internal},
          {"external", external},
          {"internal_fraction", g.internal_fraction},
          {"external_fraction", g.external_fraction},
          {"both_fraction", g.both_fraction}};
}

std::string to_csv(const RegionGrid& g) {
  std::string out = "x,y,internal,external\n";
  for (int64_t iy = 0; iy < g.n; ++iy)
    for (int64_t ix = 0; ix < g.n; ++ix) {
      out += number_text(g.xs[ix]) + "," + number_text(g.ys[iy]) + "," + (g.internal[iy * g.n + ix] ? "1" : "0") + "," +
             (g.external[iy * g.n + ix] ? "1" : "0") + "\n";
    }
  return out;
}

std::string region_map(double xmin, double xmax, double ymin, double ymax, int cols, int rows) {
  check_box(xmin, xmax, ymin, ymax);
  if (cols < 2 || rows < 2) throw Error("regions: the map needs at least 2 columns and 2 rows");
  const std::vector<double> xs = linspace(xmin, xmax, cols), ys = linspace(ymin, ymax, rows);
  auto nearest_zero = [](const std::vector<double>& v) {
    if (v.front() > 0 || v.back() < 0) return -1;
    int best = 0;
    for (int i = 1; i < static_cast<int>(v.size()); ++i)
      if (std::abs(v[i]) < std::abs(v[best])) best = i;
    return best;
  };
  const int zx = nearest_zero(xs), zy = nearest_zero(ys);
  std::string out;
  for (int r = rows - 1; r >= 0; --r) {
    for (int c = 0; c < cols; ++c) {
      const Point p{xs[c], ys[r]};
      const bool in = is_stable(Recall::kInternal, p), ex = is_stable(Recall::kExternal, p);
      char ch = in && ex ? 'B' : in ? 'I' : ex ? 'E' : '.';
      if (ch == '.' && c == zx) ch = '|';
      if (ch == '.' && r == zy) ch = c == zx ? '+' : '-';
      out += ch;
    }
    out += '\n';
  }
  return out;
}

// ---- figure 2 --------------------------------------------------------------------------------

const char* fate_name(Fate f) {
  switch (f) {
    case Fate::converges: return "converges";
    case Fate::diverges: return "diverges";
    case Fate::stable_manifold: return "stable-manifold";
    case Fate::neutral: return "neutral";
  }
  return "?";
}

Fate classify(double lx, double ly, Point start) {
  const std::array<double, 2> lambda = {std::abs(lx), std::abs(ly)};
  const std::array<bool, 2> active = {start.x != 0, start.y != 0};
  bool expanding = false, neutral = false, unstable_elsewhere = false;
  for (int i = 0; i < 2; ++i) {
    if (active[i]) {
      expanding |= lambda[i] > 1;
      neutral |= lambda[i] == 1;
    } else {
      unstable_elsewhere |= lambda[i] > 1;
    }
  }
  if (expanding) return Fate::diverges;
  if (neutral) return Fate::neutral;
  return unstable_elsewhere ? Fate::stable_manifold : Fate::converges;
}

PhasePortrait phase_portrait(double lx, double ly, int64_t steps, int64_t starts, double radius, double escape_radius) {
  if (!std::isfinite(lx) || !std::isfinite(ly)) throw Error("phase: lx and ly must be finite numbers");
  if (steps < 1 || steps > 100000) throw Error("phase: steps must be in [1, 100000] (got " + std::to_string(steps) + ")");
  if (starts < 1 || starts > 100000) throw Error("phase: starts must be in [1, 100000] (got " + std::to_string(starts) + ")");
  if (!std::isfinite(radius) || !(radius > 0)) throw Error("phase: the radius must be a finite number > 0");
  if (!(escape_radius > radius)) throw Error("phase: the escape radius must exceed the radius");
  PhasePortrait pp;
  pp.lx = lx;
  pp.ly = ly;
  pp.steps = steps;
  pp.radius = radius;
  pp.escape_radius = escape_radius;
  const double ax = std::abs(lx), ay = std::abs(ly);
  pp.fixed_point = ax < 1 && ay < 1                           ? "attracting"
                   : (ax < 1 && ay > 1) || (ax > 1 && ay < 1) ? "saddle"
                   : ax > 1 && ay > 1                         ? "repelling"
                                                              : "non-hyperbolic";
  for (int64_t k = 0; k < starts; ++k) {
    Point s;
    // Exact points on the axes where 4k/starts is whole: cos and sin of pi/2 are not 0 in doubles.
    if ((4 * k) % starts == 0) {
      const int64_t quarter = (4 * k) / starts;
      const double c[4] = {1, 0, -1, 0}, sn[4] = {0, 1, 0, -1};
      s = {radius * c[quarter], radius * sn[quarter]};
    } else {
      const double theta = 2 * kPi * static_cast<double>(k) / static_cast<double>(starts);
      s = {radius * std::cos(theta), radius * std::sin(theta)};
    }
    Trajectory t;
    t.start = s;
    t.fate = classify(lx, ly, s);
    t.points.push_back(s);
    Point p = s;
    for (int64_t i = 0; i < steps; ++i) {
      p = {lx * p.x, ly * p.y};
      t.points.push_back(p);
      if (std::hypot(p.x, p.y) > escape_radius) {
        t.escaped = true;
        break;
      }
    }
    pp.trajectories.push_back(std::move(t));
  }
  return pp;
}

nlohmann::json to_json(const PhasePortrait& p) {
  nlohmann::json ts = nlohmann::json::array();
  for (const Trajectory& t : p.trajectories) {
    nlohmann::json pts = nlohmann::json::array();
    for (const Point& q : t.points) pts.push_back({q.x, q.y});
    ts.push_back({{"start", {t.start.x, t.start.y}}, {"fate", fate_name(t.fate)}, {"escaped", t.escaped}, {"points", pts}});
  }
  return {{"map", "(x, y) -> (lx x, ly y)"},
          {"lx", p.lx},
          {"ly", p.ly},
          {"steps", p.steps},
          {"radius", p.radius},
          {"escape_radius", p.escape_radius},
          {"fixed_point", p.fixed_point},
          {"trajectories", ts}};
}

std::string to_csv(const PhasePortrait& p) {
  std::string out = "trajectory,step,x,y,fate\n";
  for (size_t i = 0; i < p.trajectories.size(); ++i) {
    const Trajectory& t = p.trajectories[i];
    for (size_t s = 0; s < t.points.size(); ++s)
      out += std::to_string(i) + "," + std::to_string(s) + "," + number_text(t.points[s].x) + "," + number_text(t.points[s].y) + "," +
             fate_name(t.fate) + "\n";
  }
  return out;
}

std::string to_text(const RegionGrid& g) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Stability regions on a %lld x %lld grid over lg in [%g, %g] (x), lh in [%g, %g] (y)\n"
                "  internal |1 + lg lh| < 1:    %6.2f%% of the grid\n"
                "  external |(1 + lh) lg| < 1:  %6.2f%% of the grid\n"
                "  both:                        %6.2f%% of the grid\n\n"
                "B both, I internal only, E external only, . neither; axes - and |\n",
                static_cast<long long>(g.n), static_cast<long long>(g.n), g.xmin, g.xmax, g.ymin, g.ymax,
                100 * g.internal_fraction, 100 * g.external_fraction, 100 * g.both_fraction);
  return buf + region_map(g.xmin, g.xmax, g.ymin, g.ymax, 73, 25);
}

std::string to_text(const PhasePortrait& p) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "(x, y) -> (%g x, %g y): the fixed point (0, 0) is %s\n%-4s %-24s %-16s %s\n", p.lx,
                p.ly, p.fixed_point.c_str(), "#", "start", "fate", "last point");
  std::string out = buf;
  for (size_t i = 0; i < p.trajectories.size(); ++i) {
    const Trajectory& t = p.trajectories[i];
    char start[64], last[96];
    std::snprintf(start, sizeof start, "(%.4g, %.4g)", t.start.x, t.start.y);
    std::snprintf(last, sizeof last, "(%.4g, %.4g) after %zu steps%s", t.points.back().x, t.points.back().y,
                  t.points.size() - 1, t.escaped ? ", escaped" : "");
    std::snprintf(buf, sizeof buf, "%-4zu %-24s %-16s %s\n", i, start, fate_name(t.fate), last);
    out += buf;
  }
  return out;
}

}  // namespace looplab::geometry
