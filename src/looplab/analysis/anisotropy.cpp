// Table 3 of the paper (appendix B.2): Gaussian draws projected onto each recall's stability
// region (analysis/geometry.h), their anisotropy beside the paper's values.
#include "looplab/analysis/geometry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "looplab/util/error.h"
#include "looplab/util/numeric.h"
#include "looplab/util/random.h"

namespace looplab::geometry {

namespace {
double squared_distance(Point a, Point b) {
  const double dx = a.x - b.x, dy = a.y - b.y;
  return dx * dx + dy * dy;
}
}  // namespace

// ---- table 3 ---------------------------------------------------------------------------------

std::vector<Point> gaussian_points(uint64_t seed, int64_t n, double sigma) {
  Random z(seed);
  std::vector<Point> pts(n);
  for (auto& p : pts) {
    const auto [a, b] = z.normal_pair();
    p.x = sigma * a;
    p.y = sigma * b;
  }
  return pts;
}

double log_range(Point p, double eps) { return std::abs(std::log((std::abs(p.x) + eps) / (std::abs(p.y) + eps))); }

double balance(Point p, double eps) {
  const double ax = std::abs(p.x), ay = std::abs(p.y);
  return (std::min(ax, ay) + eps) / (std::max(ax, ay) + eps);
}

Summary summarize(std::vector<double> v) {
  if (v.empty()) throw Error("summarize: no values");
  const MeanAndError m = mean_and_standard_error(v);
  return {m.mean, m.standard_error, median(std::move(v))};
}

AnisotropyResult anisotropy(int64_t n, const std::vector<double>& sigmas, uint64_t seed) {
  if (n < 2) throw Error("anisotropy: n must be at least 2 (got " + std::to_string(n) + ")");
  if (n > 100000000) throw Error("anisotropy: n must be at most 100000000 (got " + std::to_string(n) + ")");
  if (sigmas.empty()) throw Error("anisotropy: give at least one sigma");
  for (double s : sigmas)
    if (!std::isfinite(s) || !(s > 0)) throw Error("anisotropy: every sigma must be a finite number > 0 (got " + number_text(s) + ")");
  AnisotropyResult r;
  r.seed = seed;
  r.n = n;
  r.sigmas = sigmas;
  for (double sigma : sigmas) {
    const std::vector<Point> pts = gaussian_points(seed, n, sigma);
    for (Recall placement : {Recall::kInternal, Recall::kExternal}) {
      std::vector<double> lr(n), bal(n);
      int64_t inside = 0, on_axis = 0;
      double dsum = 0;
      for (int64_t i = 0; i < n; ++i) {
        const Point q = project(placement, pts[i]);
        lr[i] = log_range(q, r.eps);
        bal[i] = balance(q, r.eps);
        inside += q.x == pts[i].x && q.y == pts[i].y;
        on_axis += q.x == 0 || q.y == 0;
        dsum += std::sqrt(squared_distance(q, pts[i]));
      }
      AnisotropyRow row;
      row.sigma = sigma;
      row.placement = placement;
      row.log_range = summarize(std::move(lr));
      row.balance = summarize(std::move(bal));
      row.inside_fraction = static_cast<double>(inside) / n;
      row.on_axis_fraction = static_cast<double>(on_axis) / n;
      row.mean_distance = dsum / n;
      r.rows.push_back(row);
    }
  }
  return r;
}

const std::vector<PaperRow>& paper_table3() {
  using P = Recall;
  static const std::vector<PaperRow> rows = {
      {0.5, P::kInternal, {9.3359, 0.0831, 4.6835}, {0.2250, 0.0030, 0.0092}},
      {0.5, P::kExternal, {1.1524, 0.0102, 0.8946}, {0.4417, 0.0028, 0.4088}},
      {1, P::kInternal, {9.6840, 0.0865, 4.6835}, {0.2225, 0.0030, 0.0092}},
      {1, P::kExternal, {1.2031, 0.0098, 1.0320}, {0.4144, 0.0027, 0.3563}},
      {2, P::kInternal, {10.1580, 0.0888, 4.9472}, {0.1803, 0.0026, 0.0071}},
      {2, P::kExternal, {1.4412, 0.0093, 1.4045}, {0.3315, 0.0025, 0.2455}},
      {4, P::kInternal, {11.1402, 0.0884, 18.1294}, {0.0943, 0.0017, 0.0000}},
      {4, P::kExternal, {1.9594, 0.0106, 1.7632}, {0.2197, 0.0020, 0.1715}},
  };
  return rows;
}

const PaperRow* paper_row(double sigma, Recall placement) {
  for (const PaperRow& r : paper_table3())
    if (r.sigma == sigma && r.placement == placement) return &r;
  return nullptr;
}

namespace {

nlohmann::json summary_json(const Summary& s) { return {{"mean", s.mean}, {"standard_error", s.standard_error}, {"median", s.median}}; }

// Our mean against the paper's: the difference in units of the combined standard error (both are
// means of independent samples of n draws).
double z_score(const Summary& ours, const Summary& paper) {
  return (ours.mean - paper.mean) / std::sqrt(ours.standard_error * ours.standard_error + paper.standard_error * paper.standard_error);
}
// Our median against the paper's: relative difference (absolute when the paper's is 0).
double median_rel(const Summary& ours, const Summary& paper) {
  return paper.median == 0 ? std::abs(ours.median) : std::abs(ours.median - paper.median) / std::abs(paper.median);
}
// Within 5%; against the paper's printed 0.0000, below half its last printed digit.
bool median_matches(const Summary& ours, const Summary& paper) {
  return paper.median == 0 ? std::abs(ours.median) < 5e-5 : median_rel(ours, paper) <= 0.05;
}

}  // namespace

nlohmann::json to_json(const AnisotropyResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const AnisotropyRow& row : r.rows) {
    nlohmann::json j = {{"sigma", row.sigma},
                        {"placement", to_string(row.placement)},
                        {"log_range", summary_json(row.log_range)},
                        {"balance", summary_json(row.balance)},
                        {"inside_fraction", row.inside_fraction},
                        {"on_axis_fraction", row.on_axis_fraction},
                        {"mean_distance", row.mean_distance}};
    if (const PaperRow* p = paper_row(row.sigma, row.placement)) {
      j["paper"] = {{"log_range", summary_json(p->log_range)}, {"balance", summary_json(p->balance)}};
      nlohmann::json c = nlohmann::json::object();
      for (const auto& [name, o, q] : {std::tuple<const char*, const Summary&, const Summary&>{"log_range", row.log_range, p->log_range},
                                       {"balance", row.balance, p->balance}}) {
        const double z = z_score(o, q);
        c[std::string(name) + "_mean_z"] = z;
        c[std::string(name) + "_mean_match"] = std::abs(z) <= 3;
        c[std::string(name) + "_median_rel"] = q.median == 0 ? nlohmann::json(nullptr) : nlohmann::json(median_rel(o, q));
        c[std::string(name) + "_median_match"] = median_matches(o, q);
      }
      j["comparison"] = c;
    } else {
      j["paper"] = nullptr;
    }
    rows.push_back(std::move(j));
  }
  return {{"experiment", "projected-point anisotropy (paper appendix B.2, table 3)"},
          {"n", r.n},
          {"seed", r.seed},
          {"eps", r.eps},
          {"sigmas", r.sigmas},
          {"rng", "std::mt19937_64(seed), Box-Muller; point i = sigma * (z[2i], z[2i+1]), same z for every sigma"},
          {"rows", rows}};
}

std::string to_csv(const AnisotropyResult& r) {
  std::string out =
      "sigma,placement,n,log_range_mean,log_range_se,log_range_median,balance_mean,balance_se,balance_median,"
      "inside_fraction,on_axis_fraction,mean_distance,paper_log_range_mean,paper_log_range_se,"
      "paper_log_range_median,paper_balance_mean,paper_balance_se,paper_balance_median\n";
  for (const AnisotropyRow& row : r.rows) {
    out += number_text(row.sigma) + "," + to_string(row.placement) + "," + std::to_string(r.n);
    for (double v : {row.log_range.mean, row.log_range.standard_error, row.log_range.median, row.balance.mean, row.balance.standard_error,
                     row.balance.median, row.inside_fraction, row.on_axis_fraction, row.mean_distance})
      out += "," + number_text(v);
    const PaperRow* p = paper_row(row.sigma, row.placement);
    if (p) {
      for (double v : {p->log_range.mean, p->log_range.standard_error, p->log_range.median, p->balance.mean, p->balance.standard_error,
                       p->balance.median})
        out += "," + number_text(v);
    } else {
      out += ",,,,,,";
    }
    out += "\n";
  }
  return out;
}

std::string to_text(const AnisotropyResult& r) {
  std::ostringstream out;
  out << "Projected-point anisotropy (paper table 3): n = " << r.n << " draws per sigma, seed " << r.seed
      << ", eps = 1e-8\n"
      << "x = lg (recall), y = lh (sublayer); exact Euclidean projection onto the closed regions.\n"
      << "Means: ours (SE) | paper (SE) | z = difference / combined SE, '*' when |z| > 3.\n"
      << "Medians: ours | paper | '*' when they differ by more than 5% (against 0.0000: by 0.00005).\n\n";
  char buf[256];
  auto cell_mean = [&](const Summary& o, const Summary* p) {
    std::string s = fixed_text(o.mean, 4) + " (" + fixed_text(o.standard_error, 4) + ")";
    if (p) {
      const double z = z_score(o, *p);
      std::snprintf(buf, sizeof buf, " | %s (%s) z=%+.1f%s", fixed_text(p->mean, 4).c_str(), fixed_text(p->standard_error, 4).c_str(), z,
                    std::abs(z) > 3 ? "*" : "");
      s += buf;
    }
    return s;
  };
  auto cell_median = [&](const Summary& o, const Summary* p) {
    std::string s = fixed_text(o.median, 4);
    if (p) s += " | " + fixed_text(p->median, 4) + (median_matches(o, *p) ? "" : " *");
    return s;
  };
  for (const char* metric : {"log-range", "balance"}) {
    const bool lr = std::string(metric) == "log-range";
    out << metric << "\n";
    std::snprintf(buf, sizeof buf, "  %-6s %-9s %-44s %-20s\n", "sigma", "placement", "mean (SE) | paper (SE)",
                  "median | paper");
    out << buf;
    for (const AnisotropyRow& row : r.rows) {
      const PaperRow* p = paper_row(row.sigma, row.placement);
      const Summary& o = lr ? row.log_range : row.balance;
      const Summary* ps = p ? (lr ? &p->log_range : &p->balance) : nullptr;
      std::snprintf(buf, sizeof buf, "  %-6s %-9s %-44s %-20s\n", number_text(row.sigma).c_str(), to_string(row.placement).c_str(),
                    cell_mean(o, ps).c_str(), cell_median(o, ps).c_str());
      out << buf;
    }
    out << "\n";
  }
  out << "draws already inside / projected onto an axis / mean distance moved\n";
  for (const AnisotropyRow& row : r.rows) {
    std::snprintf(buf, sizeof buf, "  sigma %-5s %-9s %6.2f%% %6.2f%%  %.4f\n", number_text(row.sigma).c_str(),
                  to_string(row.placement).c_str(), 100 * row.inside_fraction, 100 * row.on_axis_fraction,
                  row.mean_distance);
    out << buf;
  }
  return out.str();
}

}  // namespace looplab::geometry
