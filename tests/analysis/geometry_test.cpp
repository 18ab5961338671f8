// The scalar-model geometry (src/looplab/analysis/geometry.h): the projection against brute-force
// searches that share nothing with it (a dense search of every boundary piece, and a polar scan
// of the disc around the point for closer region points), idempotence, the figure-5 grid against
// the inequalities, the table-3 statistics against a plain recomputation, the RNG's documented
// construction, the phase-portrait classification against closed forms, and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "looplab/analysis/geometry.h"
#include "looplab/util/random.h"
#include "looplab/util/error.h"

namespace {

using looplab::Error;
using namespace looplab::geometry;
using looplab::Random;
using looplab::Recall;

constexpr Recall kBoth[] = {Recall::kInternal, Recall::kExternal};

double dist(Point a, Point b) { return std::hypot(a.x - b.x, a.y - b.y); }

// The nearest point to p on the branch of x * v = c (in the plane (x, v)) whose x has sign `side`,
// by a dense log-spaced scan of |x| over [1e-6, 1e6] and a golden-section refinement around the
// best sample. Independent of the quartic.
double brute_branch(double a, double b, double c, double side) {
  auto d2 = [&](double t) {  // t = log |x|
    const double x = side * std::exp(t), v = c / x;
    return (x - a) * (x - a) + (v - b) * (v - b);
  };
  const double lo = std::log(1e-6), hi = std::log(1e6);
  const int n = 6000;
  int best = 0;
  double best_d = d2(lo);
  for (int i = 1; i <= n; ++i) {
    const double d = d2(lo + (hi - lo) * i / n);
    if (d < best_d) {
      best_d = d;
      best = i;
    }
  }
  // Golden section on the two cells around the best sample (the distance along a branch is
  // unimodal near its minimum at this resolution).
  double l = lo + (hi - lo) * std::max(best - 1, 0) / n, r = lo + (hi - lo) * std::min(best + 1, n) / n;
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 200; ++i) {
    const double m1 = r - g * (r - l), m2 = l + g * (r - l);
    if (d2(m1) < d2(m2)) r = m2; else l = m1;
  }
  return std::sqrt(std::min(best_d, d2(0.5 * (l + r))));
}

// The distance from p to the closed region by brute force over every boundary piece.
double brute_distance(Recall placement, Point p) {
  if (in_closed_region(placement, p)) return 0;
  double best = std::numeric_limits<double>::infinity();
  if (placement == Recall::kInternal) {
    best = std::min({std::abs(p.x), std::abs(p.y)});  // the axes
    for (double side : {-1.0, 1.0}) best = std::min(best, brute_branch(p.x, p.y, -2, side));
  } else {
    for (double c : {-1.0, 1.0})
      for (double side : {-1.0, 1.0}) best = std::min(best, brute_branch(p.x, 1 + p.y, c, side));
  }
  return best;
}

// A random point: a mix of scales, points near the singular line y = -1, near the axes and near
// the boundary curves, so that every boundary piece and both sides of it get exercised.
Point random_point(std::mt19937_64& rng, int kind) {
  std::uniform_real_distribution<double> u(-1, 1);
  switch (kind % 6) {
    case 0: return {4 * u(rng), 4 * u(rng)};
    case 1: return {25 * u(rng), 25 * u(rng)};
    case 2: return {30 * u(rng), -1 + 1e-3 * u(rng)};  // near the singular line of external
    case 3: return {1e-3 * u(rng), 10 * u(rng)};       // near the x = 0 axis
    case 4: {                                           // near x (1 + y) = +-1
      const double x = 8 * u(rng);
      if (std::abs(x) < 1e-3) return {x, 0};
      return {x, (u(rng) > 0 ? 1 : -1) / x - 1 + 1e-2 * u(rng)};
    }
    default: {  // near x y = -2
      const double x = 8 * u(rng);
      if (std::abs(x) < 1e-3) return {x, 0};
      return {x, -2 / x + 1e-2 * u(rng)};
    }
  }
}

TEST(GeometryRegions, MembershipFollowsTheInequalities) {
  // Axis convention: x = lg, y = lh.
  EXPECT_TRUE(is_stable(Recall::kExternal, {0.5, 0.5}));     // |1.5 * 0.5| = 0.75
  EXPECT_FALSE(is_stable(Recall::kExternal, {0.8, 0.5}));    // 1.2
  EXPECT_TRUE(is_stable(Recall::kExternal, {100, -1}));      // the singular line y = -1 is inside
  EXPECT_FALSE(is_stable(Recall::kExternal, {-1, 100}));     // ... and x = -1 is not special
  EXPECT_TRUE(is_stable(Recall::kInternal, {2, -0.5}));      // |1 - 1| = 0
  EXPECT_FALSE(is_stable(Recall::kInternal, {2, 0.5}));      // 2
  EXPECT_FALSE(is_stable(Recall::kInternal, {0, 3}));        // |1| = 1: open condition fails
  EXPECT_TRUE(in_closed_region(Recall::kInternal, {0, 3}));  // ... closed one holds
  EXPECT_TRUE(in_closed_region(Recall::kInternal, {1, -2}));
  EXPECT_FALSE(in_closed_region(Recall::kInternal, {1, -2.001}));
  EXPECT_TRUE(in_closed_region(Recall::kExternal, {2, -0.5}));  // |0.5 * 2| = 1
}

TEST(GeometryProjection, CriticalPointsAreTheQuarticsRoots) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-20, 20);
  for (int i = 0; i < 2000; ++i) {
    const double a = u(rng), b = u(rng), c = i % 2 ? -2.0 : (i % 4 ? 1.0 : -1.0);
    const std::vector<double> roots = hyperbola_critical_points(a, b, c);
    ASSERT_GE(roots.size(), 2u) << a << " " << b << " " << c;  // P(0) = -c^2 < 0: one per branch
    ASSERT_LE(roots.size(), 4u);
    EXPECT_LT(roots.front(), 0);
    EXPECT_GT(roots.back(), 0);
    for (double x : roots) {
      const double p = (((x - a) * x) * x + b * c) * x - c * c;
      const double scale = std::pow(std::abs(x), 4) + std::abs(a) * std::pow(std::abs(x), 3) +
                           std::abs(b * c * x) + c * c;
      EXPECT_LE(std::abs(p), 1e-13 * scale) << "x=" << x << " a=" << a << " b=" << b << " c=" << c;
    }
  }
  // (3, 3) and y = 1/x: P = (x - 1)(x + 1)(x^2 - 3x + 1), four real roots; (0.1, 0.1):
  // P = (x^2 - 1)(x^2 - 0.1x + 1), two.
  EXPECT_EQ(hyperbola_critical_points(3, 3, 1).size(), 4u);
  EXPECT_EQ(hyperbola_critical_points(0.1, 0.1, 1).size(), 2u);
  EXPECT_THROW(hyperbola_critical_points(1, 1, 0), Error);
}

TEST(GeometryProjection, MatchesABruteForceSearchOfTheBoundary) {
  std::mt19937_64 rng(2024);
  int inside = 0, outside = 0;
  for (int i = 0; i < 3000; ++i) {
    const Point p = random_point(rng, i);
    for (Recall pl : kBoth) {
      const Point q = project(pl, p);
      ASSERT_TRUE(in_closed_region(pl, q)) << to_string(pl) << " " << p.x << "," << p.y;
      const double d = dist(p, q), brute = brute_distance(pl, p);
      if (brute == 0) {
        ++inside;
        EXPECT_EQ(q.x, p.x);
        EXPECT_EQ(q.y, p.y);
        continue;
      }
      ++outside;
      // Never farther than any boundary point the brute force found; and the brute force, being
      // a search, can only be (slightly) farther.
      EXPECT_LE(d, brute * (1 + 1e-12) + 1e-12) << to_string(pl) << " p=(" << p.x << ", " << p.y << ")";
      EXPECT_GE(d, brute - 1e-7 * (1 + brute)) << to_string(pl) << " p=(" << p.x << ", " << p.y << ")";
    }
  }
  EXPECT_GT(inside, 1000);
  EXPECT_GT(outside, 1000);
}

TEST(GeometryProjection, NoRegionPointIsCloserOnAPolarScan) {
  // Independent of any reasoning about boundaries: scan the disc of radius 0.999 d around p (d
  // the projection's distance) on a polar grid; no grid point may lie in the closed region.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 300; ++i) {
    const Point p = random_point(rng, i);
    for (Recall pl : kBoth) {
      const double d = dist(p, project(pl, p));
      if (d == 0) continue;
      int found = 0;
      for (int ir = 1; ir <= 60; ++ir)
        for (int ia = 0; ia < 720; ++ia) {
          const double r = 0.999 * d * ir / 60, t = 2 * M_PI * ia / 720;
          found += in_closed_region(pl, {p.x + r * std::cos(t), p.y + r * std::sin(t)});
        }
      EXPECT_EQ(found, 0) << to_string(pl) << " p=(" << p.x << ", " << p.y << ") d=" << d;
    }
  }
}

TEST(GeometryProjection, KnownPoints) {
  // Internal, first quadrant: the nearer axis.
  Point q = project(Recall::kInternal, {3, 1});
  EXPECT_EQ(q.x, 3);
  EXPECT_EQ(q.y, 0);
  q = project(Recall::kInternal, {-1, -4});
  EXPECT_EQ(q.x, 0);
  EXPECT_EQ(q.y, -4);
  // Internal, beyond x y = -2 on the diagonal but inside the vertex's centre of curvature (the
  // vertex (sqrt 2, -sqrt 2) has radius of curvature 2, so the centre is at distance 4 from the
  // origin): the vertex is the nearest point.
  q = project(Recall::kInternal, {2, -2});
  EXPECT_NEAR(q.x, std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(q.y, -std::sqrt(2.0), 1e-12);
  q = project(Recall::kInternal, {-2.5, 2.5});
  EXPECT_NEAR(q.x, -std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(q.y, std::sqrt(2.0), 1e-12);
  // Beyond the centre of curvature the vertex is a local maximum of the distance: from (3, -3)
  // the nearest points are (1, -2) and (2, -1), at distance sqrt 5 < 2.243 (the vertex's).
  q = project(Recall::kInternal, {3, -3});
  EXPECT_NEAR(dist(q, {3, -3}), std::sqrt(5.0), 1e-12);
  EXPECT_TRUE((std::abs(q.x - 1) < 1e-12 && std::abs(q.y + 2) < 1e-12) ||
              (std::abs(q.x - 2) < 1e-12 && std::abs(q.y + 1) < 1e-12))
      << q.x << "," << q.y;
  // External: in (x, v = 1 + y) the boundary is x v = +-1, with vertices (1, 1), (-1, -1), ...
  // and radius of curvature sqrt 2 there. (1.8, 0.8) is (1.8, 1.8) in (x, v), on the diagonal
  // inside the centre of curvature (2, 2): its nearest point is the vertex, (1, 0) in (x, y).
  q = project(Recall::kExternal, {1.8, 0.8});
  EXPECT_NEAR(q.x, 1, 1e-12);
  EXPECT_NEAR(q.y, 0, 1e-12);
  q = project(Recall::kExternal, {-1.5, -2.5});  // (x, v) = (-1.5, -1.5): vertex (-1, -1), y = -2
  EXPECT_NEAR(q.x, -1, 1e-12);
  EXPECT_NEAR(q.y, -2, 1e-12);
  // (0.5, -2) on x v = -1 moved 0.2 times the outward normal (2, -0.5): (0.9, -2.1) in (x, v), and
  // 0.5 is a root of x^4 - 0.9 x^3 + 2.1 x - 1; the curvature radius there (4.4) is far larger.
  q = project(Recall::kExternal, {0.9, -3.1});
  EXPECT_NEAR(q.x, 0.5, 1e-12);
  EXPECT_NEAR(q.y, -3, 1e-12);
  // A point inside stays put, bit for bit.
  q = project(Recall::kExternal, {100, -1});
  EXPECT_EQ(q.x, 100);
  EXPECT_EQ(q.y, -1);
  EXPECT_THROW(project(Recall::kInternal, {NAN, 0}), Error);
  EXPECT_THROW(project(Recall::kExternal, {0, INFINITY}), Error);
  EXPECT_THROW(project(Recall::kExternal, {2e50, 0}), Error);
  // Large but allowed: (1e40, 2) goes to the x axis (internal) and to about (1e40, -1) (external:
  // in (x, v) the point (1e40, 3) is 3 above the branch x v = 1, which is flat there).
  q = project(Recall::kInternal, {1e40, 2});
  EXPECT_EQ(q.x, 1e40);
  EXPECT_EQ(q.y, 0);
  q = project(Recall::kExternal, {1e40, 2});
  EXPECT_NEAR(q.y, -1, 1e-12);
  EXPECT_NEAR(dist(q, {1e40, 2}), 3, 1e-12);
  q = project(Recall::kInternal, {1e40, -3e40});  // nearest: the hyperbola hugging the y axis
  EXPECT_LT(std::abs(q.x), 1e-30);
  EXPECT_EQ(q.y, -3e40);
}

TEST(GeometryProjection, IsIdempotent) {
  std::mt19937_64 rng(99);
  for (int i = 0; i < 5000; ++i) {
    const Point p = random_point(rng, i);
    for (Recall pl : kBoth) {
      const Point q = project(pl, p), qq = project(pl, q);
      EXPECT_EQ(q.x, qq.x);
      EXPECT_EQ(q.y, qq.y);
    }
  }
}

TEST(GeometryGrid, Figure5GridFollowsTheInequalities) {
  const RegionGrid g = region_grid(-10, 10, -6, 6, 41);
  ASSERT_EQ(g.xs.size(), 41u);
  EXPECT_EQ(g.xs.front(), -10);
  EXPECT_EQ(g.xs.back(), 10);
  EXPECT_EQ(g.ys.front(), -6);
  EXPECT_EQ(g.ys.back(), 6);
  EXPECT_DOUBLE_EQ(g.xs[20], 0);
  int ni = 0, ne = 0;
  for (int iy = 0; iy < 41; ++iy)
    for (int ix = 0; ix < 41; ++ix) {
      const double x = g.xs[ix], y = g.ys[iy];
      const bool in = std::abs(1 + x * y) < 1, ex = std::abs((1 + y) * x) < 1;
      EXPECT_EQ(g.internal[iy * 41 + ix], in) << x << "," << y;
      EXPECT_EQ(g.external[iy * 41 + ix], ex) << x << "," << y;
      ni += in;
      ne += ex;
    }
  EXPECT_DOUBLE_EQ(g.internal_fraction, ni / (41.0 * 41.0));
  EXPECT_DOUBLE_EQ(g.external_fraction, ne / (41.0 * 41.0));
  // CSV: header plus one row per point, and the JSON's nested arrays agree with the flat ones.
  const std::string csv = to_csv(g);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 41 * 41 + 1);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "x,y,internal,external");
  const nlohmann::json j = to_json(g);
  EXPECT_EQ(j["internal"][7][3].get<int>(), g.internal[7 * 41 + 3]);
  EXPECT_EQ(j["external"][30][12].get<int>(), g.external[30 * 41 + 12]);
  // The one-point grid is the box's centre.
  const RegionGrid one = region_grid(0, 2, -2, 0, 1);
  EXPECT_EQ(one.xs[0], 1);
  EXPECT_EQ(one.ys[0], -1);
  EXPECT_EQ(one.internal[0], 1);  // |1 - 1| = 0
  // The character map: the origin row/column and a known cell.
  const std::string map = region_map(-1, 1, -1, 1, 3, 3);
  // Rows y = 1, 0, -1; columns x = -1, 0, 1. (-1, 1): internal only; (1, -1): both; the x axis
  // is outside both except at x = 0, where external holds (and the axis marks '-' show).
  EXPECT_EQ(map, "IE.\n-E-\nEEB\n");
}

TEST(GeometryGrid, RejectsBadBoxes) {
  EXPECT_THROW(region_grid(-1, 1, -1, 1, 0), Error);
  EXPECT_THROW(region_grid(-1, 1, -1, 1, -5), Error);
  EXPECT_THROW(region_grid(1, -1, -1, 1, 10), Error);
  EXPECT_THROW(region_grid(-1, 1, 2, 2, 10), Error);
  EXPECT_THROW(region_grid(-1, INFINITY, -1, 1, 10), Error);
}

TEST(GeometryAnisotropy, NormalDrawsAreTheDocumentedBoxMuller) {
  std::mt19937_64 engine(5);
  Random z(5);
  for (int i = 0; i < 100; ++i) {
    const double u1 = ((engine() >> 11) + 1) / 9007199254740992.0, u2 = ((engine() >> 11) + 1) / 9007199254740992.0;
    const double r = std::sqrt(-2 * std::log(u1));
    const auto [a, b] = z.normal_pair();
    EXPECT_EQ(a, r * std::cos(2 * M_PI * u2));
    EXPECT_EQ(b, r * std::sin(2 * M_PI * u2));
  }
  // The first word of std::mt19937_64(5489) is fixed by the standard (10000th is 9981545732273789042).
  std::mt19937_64 standard;
  EXPECT_EQ(Random::uniform_from_word(standard()), ((14514284786278117030ull >> 11) + 1) / 9007199254740992.0);
  EXPECT_EQ(Random::uniform_from_word(0), 1.0 / 9007199254740992.0);
  EXPECT_EQ(Random::uniform_from_word(~0ull), 1.0);
  // Moments of 200,000 draws.
  Random w(1);
  double s1 = 0, s2 = 0;
  const int n = 200000;
  for (int i = 0; i < n / 2; ++i) {
    const auto [a, b] = w.normal_pair();
    s1 += a + b;
    s2 += a * a + b * b;
  }
  EXPECT_NEAR(s1 / n, 0, 0.01);
  EXPECT_NEAR(s2 / n, 1, 0.01);
}

TEST(GeometryAnisotropy, StatisticsMatchAPlainRecomputation) {
  const int64_t n = 501;
  const std::vector<double> sigmas = {0.5, 3};
  const AnisotropyResult r = anisotropy(n, sigmas, 42);
  ASSERT_EQ(r.rows.size(), 4u);
  for (size_t s = 0; s < sigmas.size(); ++s) {
    const std::vector<Point> pts = gaussian_points(42, n, sigmas[s]);
    // The same draws for every sigma, scaled.
    const std::vector<Point> unit = gaussian_points(42, n, 1);
    EXPECT_EQ(pts[17].x, sigmas[s] * unit[17].x);
    for (int k = 0; k < 2; ++k) {
      const AnisotropyRow& row = r.rows[2 * s + k];
      EXPECT_EQ(row.sigma, sigmas[s]);
      EXPECT_EQ(row.placement, kBoth[k]);
      std::vector<double> lr, bal;
      for (const Point& p : pts) {
        const Point q = project(kBoth[k], p);
        const double ax = std::fabs(q.x), ay = std::fabs(q.y);
        lr.push_back(std::fabs(std::log((ax + 1e-8) / (ay + 1e-8))));
        bal.push_back((std::min(ax, ay) + 1e-8) / (std::max(ax, ay) + 1e-8));
      }
      for (int m = 0; m < 2; ++m) {
        std::vector<double>& v = m == 0 ? lr : bal;
        const Summary& got = m == 0 ? row.log_range : row.balance;
        long double sum = 0, sq = 0;
        for (double x : v) sum += x;
        const long double mean = sum / n;
        for (double x : v) sq += (x - mean) * (x - mean);
        std::nth_element(v.begin(), v.begin() + n / 2, v.end());  // n odd: the middle element
        EXPECT_NEAR(got.mean, static_cast<double>(mean), 1e-12);
        EXPECT_NEAR(got.standard_error, static_cast<double>(std::sqrt(sq / (n - 1)) / std::sqrt((long double)n)), 1e-12);
        EXPECT_EQ(got.median, v[n / 2]);
      }
    }
  }
  // A row depends only on (seed, n, sigma).
  const AnisotropyResult alone = anisotropy(n, {3}, 42);
  EXPECT_EQ(alone.rows[0].log_range.mean, r.rows[2].log_range.mean);
  EXPECT_EQ(alone.rows[1].balance.median, r.rows[3].balance.median);
  // Even n: the median averages the two middle values.
  const Summary s = summarize({4, 1, 3, 2});
  EXPECT_EQ(s.median, 2.5);
  EXPECT_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.standard_error, std::sqrt(5.0 / 3.0) / 2, 1e-15);
}

TEST(GeometryAnisotropy, MetricsAndOutputs) {
  EXPECT_NEAR(log_range({0, 1}), std::log(1e8 + 1), 1e-9);  // an axis point: about 18.42
  EXPECT_EQ(log_range({-2, 2}), 0);
  EXPECT_NEAR(balance({0.5, -2}), 0.25, 1e-8);
  EXPECT_NEAR(balance({0, 3}), 1e-8 / 3, 1e-15);
  const AnisotropyResult r = anisotropy(100, {1, 0.7}, 3);
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["rows"].size(), 4u);
  EXPECT_EQ(j["rows"][0]["placement"], "internal");
  EXPECT_TRUE(j["rows"][0]["paper"].is_object());  // the paper has sigma = 1
  EXPECT_TRUE(j["rows"][2]["paper"].is_null());    // ... not 0.7
  EXPECT_NEAR(j["rows"][1]["paper"]["log_range"]["median"].get<double>(), 1.0320, 1e-12);
  {
    const nlohmann::json& c = j["rows"][1]["comparison"];
    const AnisotropyRow& row = r.rows[1];
    const double z = (row.log_range.mean - 1.2031) / std::hypot(row.log_range.standard_error, 0.0098);
    EXPECT_NEAR(c["log_range_mean_z"].get<double>(), z, 1e-9);
    EXPECT_EQ(c["log_range_mean_match"].get<bool>(), std::abs(z) <= 3);
    const double rel = std::abs(row.balance.median - 0.3563) / 0.3563;
    EXPECT_NEAR(c["balance_median_rel"].get<double>(), rel, 1e-12);
    EXPECT_EQ(c["balance_median_match"].get<bool>(), rel <= 0.05);
  }
  const std::string csv = to_csv(r);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);
  const std::string text = to_text(r);
  EXPECT_NE(text.find("9.6840 (0.0865)"), std::string::npos) << text;
  EXPECT_THROW(anisotropy(1, {1}, 0), Error);
  EXPECT_THROW(anisotropy(0, {1}, 0), Error);
  EXPECT_THROW(anisotropy(10, {}, 0), Error);
  EXPECT_THROW(anisotropy(10, {0}, 0), Error);
  EXPECT_THROW(anisotropy(10, {-1}, 0), Error);
  EXPECT_THROW(anisotropy(10, {NAN}, 0), Error);
  EXPECT_EQ(paper_table3().size(), 8u);
  EXPECT_EQ(paper_row(4, Recall::kInternal)->log_range.median, 18.1294);
  EXPECT_EQ(paper_row(3, Recall::kInternal), nullptr);
}

// The table in docs/analysis.md (`looplab analyze anisotropy --n 10000 --seed 0`): a few printed
// numbers and the verdicts against the paper (22 of 32 cells match; the 10 that do not are the
// internal medians at sigma 0.5, 1, 2 and the four sigma = 4 external cells).
TEST(GeometryAnisotropy, TheDocumentedSeedZeroTable) {
  const AnisotropyResult r = anisotropy(10000, {0.5, 1, 2, 4}, 0);
  const nlohmann::json j = to_json(r);
  auto near4 = [](double v, double printed) { return std::abs(v - printed) <= 0.5e-4 * (1 + 1e-9); };
  EXPECT_TRUE(near4(r.rows[0].log_range.mean, 9.5098)) << r.rows[0].log_range.mean;
  EXPECT_TRUE(near4(r.rows[0].log_range.median, 15.7501)) << r.rows[0].log_range.median;
  EXPECT_TRUE(near4(r.rows[1].log_range.mean, 1.1592)) << r.rows[1].log_range.mean;
  EXPECT_TRUE(near4(r.rows[7].log_range.mean, 2.1547)) << r.rows[7].log_range.mean;
  EXPECT_TRUE(near4(r.rows[7].balance.median, 0.1440)) << r.rows[7].balance.median;
  EXPECT_TRUE(near4(r.rows[4].balance.mean, 0.1760)) << r.rows[4].balance.mean;
  EXPECT_DOUBLE_EQ(r.rows[0].on_axis_fraction, 0.506);
  std::vector<std::string> mismatches;
  int matches = 0;
  for (const auto& row : j["rows"])
    for (const char* key : {"log_range_mean_match", "log_range_median_match", "balance_mean_match", "balance_median_match"}) {
      if (row["comparison"][key].get<bool>()) {
        ++matches;
      } else {
        mismatches.push_back(row["placement"].get<std::string>() + " " +
                             std::to_string(row["sigma"].get<double>()).substr(0, 3) + " " + key);
      }
    }
  EXPECT_EQ(matches, 22);
  const std::vector<std::string> expected = {
      "internal 0.5 log_range_median_match", "internal 0.5 balance_median_match",
      "internal 1.0 log_range_median_match", "internal 1.0 balance_median_match",
      "internal 2.0 log_range_median_match", "internal 2.0 balance_median_match",
      "external 4.0 log_range_mean_match",   "external 4.0 log_range_median_match",
      "external 4.0 balance_mean_match",     "external 4.0 balance_median_match"};
  EXPECT_EQ(mismatches.size(), 10u);
  for (const std::string& m : mismatches)
    EXPECT_NE(std::find(expected.begin(), expected.end(), m), expected.end()) << m;
}

TEST(GeometryAnisotropy, TheInternalRegionSendsQuadrantsOneAndThreeToAnAxis) {
  // Every draw with x y > 0 lands on an axis (log-range about 18), every draw in the closed
  // region stays: the on-axis fraction is the first-and-third-quadrant fraction.
  const int64_t n = 4000;
  const AnisotropyResult r = anisotropy(n, {1}, 9);
  int64_t q13 = 0, inside = 0;
  for (const Point& p : gaussian_points(9, n, 1)) {
    q13 += p.x * p.y > 0;
    inside += in_closed_region(Recall::kInternal, p);
  }
  EXPECT_DOUBLE_EQ(r.rows[0].on_axis_fraction, static_cast<double>(q13) / n);
  EXPECT_DOUBLE_EQ(r.rows[0].inside_fraction, static_cast<double>(inside) / n);
}

// The closed form: after t steps the point is (lx^t x0, ly^t y0).
TEST(GeometryPhase, TrajectoriesFollowTheClosedForm) {
  const PhasePortrait p = phase_portrait(0.9, -0.6, 30, 12, 2);
  ASSERT_EQ(p.trajectories.size(), 12u);
  EXPECT_EQ(p.fixed_point, "attracting");
  for (const Trajectory& t : p.trajectories) {
    ASSERT_EQ(t.points.size(), 31u);
    EXPECT_FALSE(t.escaped);
    EXPECT_NEAR(std::hypot(t.start.x, t.start.y), 2, 1e-15);
    for (size_t s = 0; s < t.points.size(); ++s) {
      EXPECT_NEAR(t.points[s].x, std::pow(0.9, s) * t.start.x, 1e-14);
      EXPECT_NEAR(t.points[s].y, std::pow(-0.6, s) * t.start.y, 1e-14);
    }
    EXPECT_EQ(t.fate, Fate::converges);
  }
  // Starts 0, 3, 6, 9 of 12 lie exactly on the axes.
  EXPECT_EQ(p.trajectories[3].start.x, 0);
  EXPECT_EQ(p.trajectories[3].start.y, 2);
  EXPECT_EQ(p.trajectories[6].start.y, 0);
}

TEST(GeometryPhase, Figure2bHasOneStableManifold) {
  // |lx| < 1 < |ly|: only the x axis converges.
  const PhasePortrait p = phase_portrait(0.5, 1.5, 100, 16);
  EXPECT_EQ(p.fixed_point, "saddle");
  for (const Trajectory& t : p.trajectories) {
    if (t.start.y == 0) {
      EXPECT_EQ(t.fate, Fate::stable_manifold);
      EXPECT_FALSE(t.escaped);
      EXPECT_LT(std::abs(t.points.back().x), 1e-29);
    } else {
      EXPECT_EQ(t.fate, Fate::diverges);
      EXPECT_TRUE(t.escaped);  // |1.5^t y0| passes 1e6 within 100 steps for |y0| >= sin(pi/8)
      EXPECT_GT(std::hypot(t.points.back().x, t.points.back().y), 1e6);
    }
  }
  int manifold = 0;
  for (const Trajectory& t : p.trajectories) manifold += t.fate == Fate::stable_manifold;
  EXPECT_EQ(manifold, 2);  // (1, 0) and (-1, 0)
}

TEST(GeometryPhase, ClassificationAgreesWithTheClosedFormLimit) {
  // For random eigenvalues away from |lambda| = 1, the fate says where (lx^t x0, ly^t y0) goes.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-2.5, 2.5);
  for (int i = 0; i < 2000; ++i) {
    const double lx = u(rng), ly = u(rng);
    if (std::abs(std::abs(lx) - 1) < 0.05 || std::abs(std::abs(ly) - 1) < 0.05) continue;
    const Point s = i % 5 == 0 ? Point{u(rng), 0} : i % 5 == 1 ? Point{0, u(rng)} : Point{u(rng), u(rng)};
    const double t = 2000;
    // (0 * inf would be nan: a coordinate that starts at 0 stays 0.)
    const double fx = s.x == 0 ? 0 : std::pow(std::abs(lx), t) * s.x, fy = s.y == 0 ? 0 : std::pow(std::abs(ly), t) * s.y;
    const double far = std::hypot(fx, fy);
    const Fate f = classify(lx, ly, s);
    if (f == Fate::diverges) {
      EXPECT_GT(far, 1e6) << lx << " " << ly;
    } else {
      EXPECT_LT(far, 1e-6) << lx << " " << ly;
      const bool saddle = std::abs(lx) > 1 || std::abs(ly) > 1;
      EXPECT_EQ(f, saddle ? Fate::stable_manifold : Fate::converges);
    }
  }
  // |lambda| == 1 exactly.
  EXPECT_EQ(classify(1, 0.5, {1, 1}), Fate::neutral);
  EXPECT_EQ(classify(-1, 0.5, {0, 1}), Fate::converges);
  EXPECT_EQ(classify(-1, 2, {1, 0}), Fate::neutral);
  EXPECT_EQ(classify(-1, 2, {1, 1}), Fate::diverges);
  EXPECT_EQ(classify(3, 2, {0, 0}), Fate::stable_manifold);  // the fixed point itself
  EXPECT_EQ(classify(0, 0, {1, 1}), Fate::converges);
  EXPECT_EQ(phase_portrait(1, 1, 5).fixed_point, "non-hyperbolic");
  EXPECT_EQ(phase_portrait(2, -3, 5).fixed_point, "repelling");
}

TEST(GeometryPhase, OutputsAndErrors) {
  const PhasePortrait p = phase_portrait(0.5, 2, 3, 4);
  const nlohmann::json j = to_json(p);
  EXPECT_EQ(j["trajectories"].size(), 4u);
  EXPECT_EQ(j["trajectories"][0]["fate"], "stable-manifold");
  EXPECT_EQ(j["trajectories"][1]["fate"], "diverges");
  EXPECT_EQ(j["trajectories"][1]["points"][3][1].get<double>(), 8);
  const std::string csv = to_csv(p);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "trajectory,step,x,y,fate");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 4 * 4);
  EXPECT_NE(csv.find("\n1,3,0,8,diverges\n"), std::string::npos) << csv;
  EXPECT_THROW(phase_portrait(NAN, 1, 5), Error);
  EXPECT_THROW(phase_portrait(0.5, 1, 0), Error);
  EXPECT_THROW(phase_portrait(0.5, 1, 5, 0), Error);
  EXPECT_THROW(phase_portrait(0.5, 1, 5, 4, -1), Error);
}

}  // namespace
