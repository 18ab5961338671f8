#include "looplab/explore/common.h"

#include "looplab/explore/explore.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "looplab/util/error.h"

namespace looplab::explore {

namespace detail {

ParamSpec range(std::string name, std::string label, double min, double max, double def, bool integer) {
  ParamSpec p;
  p.name = std::move(name);
  p.label = std::move(label);
  p.min = min;
  p.max = max;
  p.def = def;
  p.integer = integer;
  return p;
}

ParamSpec choice(std::string name, std::string label, std::vector<std::string> choices, std::string def) {
  ParamSpec p;
  p.name = std::move(name);
  p.label = std::move(label);
  p.choices = std::move(choices);
  p.def_choice = std::move(def);
  return p;
}

namespace {
bool parse_double(const std::string& text, double& out) {
  if (text.empty()) return false;
  try {
    size_t used = 0;
    out = std::stod(text, &used);
    return used == text.size() && std::isfinite(out);
  } catch (const std::exception&) {
    return false;
  }
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}
}  // namespace

Args::Args(const std::string& illustration, std::vector<ParamSpec> specs, const Settings& settings)
    : specs_(std::move(specs)) {
  for (const auto& setting : settings) {
    const std::string& name = setting.first;  // not a structured binding: the lambda captures it
    const bool known = std::any_of(specs_.begin(), specs_.end(), [&](const ParamSpec& p) { return p.name == name; });
    if (!known) {
      std::vector<std::string> names;
      for (const auto& p : specs_) names.push_back(p.name);
      throw Error(illustration + ": unknown parameter '" + name + "' (parameters: " + join(names) + ")");
    }
  }
  for (const ParamSpec& p : specs_) {
    const auto it = settings.find(p.name);
    if (p.choices.empty()) {
      double v = p.def;
      if (it != settings.end()) {
        if (!parse_double(it->second, v))
          throw Error(illustration + ": parameter " + p.name + "='" + it->second + "' is not a number");
        if (v < p.min || v > p.max)
          throw Error(illustration + ": parameter " + p.name + "=" + it->second + " is out of range [" + fmt(p.min, 6) +
                      ", " + fmt(p.max, 6) + "]");
        if (p.integer && v != std::floor(v))
          throw Error(illustration + ": parameter " + p.name + "=" + it->second + " must be a whole number");
      }
      value_[p.name] = v;
      text_[p.name] = fmt(v, 6);
    } else {
      std::string chosen = p.def_choice;
      if (it != settings.end()) {
        chosen.clear();
        double given = 0, c = 0;
        for (const auto& option : p.choices)
          if (option == it->second ||
              (parse_double(it->second, given) && parse_double(option, c) && given == c))
            chosen = option;
        if (chosen.empty())
          throw Error(illustration + ": parameter " + p.name + "='" + it->second + "' is not one of: " + join(p.choices));
      }
      text_[p.name] = chosen;
      double v = 0;
      if (parse_double(chosen, v)) value_[p.name] = v;
    }
  }
}

const ParamSpec& Args::spec(const std::string& name) const {
  for (const auto& p : specs_)
    if (p.name == name) return p;
  throw std::logic_error("explore: no parameter " + name);
}

double Args::num(const std::string& name) const {
  spec(name);
  const auto it = value_.find(name);
  if (it == value_.end()) throw std::logic_error("explore: parameter " + name + " is not numeric");
  return it->second;
}

const std::string& Args::str(const std::string& name) const {
  spec(name);
  return text_.at(name);
}

json Args::to_json() const {
  json out = json::array();
  for (const ParamSpec& p : specs_) {
    json j = {{"name", p.name}, {"label", p.label}};
    if (p.choices.empty()) {
      j["kind"] = p.integer ? "integer" : "number";
      j["min"] = p.min;
      j["max"] = p.max;
      j["default"] = p.def;
      j["value"] = value_.at(p.name);
    } else {
      j["kind"] = "choice";
      j["choices"] = p.choices;
      j["default"] = p.def_choice;
      j["value"] = text_.at(p.name);
    }
    out.push_back(j);
  }
  return out;
}

std::string fmt(double v, int significant) {
  if (std::isnan(v)) return "undefined";
  if (std::isinf(v)) return v > 0 ? "infinite" : "-infinite";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", significant - 1, v);  // rounds to the significant digits
  const double rounded = std::stod(buf);
  if (rounded == 0) return "0";
  const int e = static_cast<int>(std::floor(std::log10(std::abs(rounded))));
  if (e < -7 || e >= 15) {
    std::snprintf(buf, sizeof buf, "%.*g", significant, v);
    return buf;
  }
  // Plain decimal notation (0.0000619, 100000), trailing zeros dropped.
  std::snprintf(buf, sizeof buf, "%.*f", std::max(0, significant - 1 - e), rounded);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

json readout(const std::string& key, const std::string& label, double value, int significant) {
  json j = {{"key", key}, {"label", label}, {"text", fmt(value, significant)}};
  j["value"] = std::isfinite(value) ? json(value) : json(nullptr);
  return j;
}

json readout_text(const std::string& key, const std::string& label, const std::string& text) {
  return {{"key", key}, {"label", label}, {"value", text}, {"text", text}};
}

json series(const std::string& name, const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) throw std::logic_error("explore: series " + name + " has unequal x and y");
  json jy = json::array();
  for (double v : y) jy.push_back(std::isfinite(v) ? json(v) : json(nullptr));
  return {{"name", name}, {"x", x}, {"y", jy}};
}

json plot(const std::string& title, const std::string& x_label, const std::string& y_label, std::vector<json> s) {
  return {{"title", title}, {"x_label", x_label}, {"y_label", y_label}, {"series", s}};
}

json symbol(const std::string& s, const std::string& meaning) { return {{"symbol", s}, {"meaning", meaning}}; }


json base(int number, const std::string& name, const std::string& title, const std::string& source,
          const std::string& question, const Args& args) {
  return {{"number", number}, {"name", name},     {"title", title},
          {"source", source}, {"question", question}, {"parameters", args.to_json()}};
}

Mat identity(size_t n) {
  Mat m(n, std::vector<double>(n, 0.0));
  for (size_t i = 0; i < n; ++i) m[i][i] = 1.0;
  return m;
}

Mat matmul(const Mat& a, const Mat& b) {
  Mat c(a.size(), std::vector<double>(b[0].size(), 0.0));
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t k = 0; k < b.size(); ++k)
      for (size_t j = 0; j < b[0].size(); ++j) c[i][j] += a[i][k] * b[k][j];
  return c;
}

std::vector<double> matvec(const Mat& a, const std::vector<double>& x) {
  std::vector<double> y(a.size(), 0.0);
  for (size_t i = 0; i < a.size(); ++i) y[i] = dot(a[i], x);
  return y;
}

Mat diag(const std::vector<double>& d) {
  Mat m = identity(d.size());
  for (size_t i = 0; i < d.size(); ++i) m[i][i] = d[i];
  return m;
}

Mat scale(const Mat& a, double s) {
  Mat m = a;
  for (auto& row : m)
    for (double& v : row) v *= s;
  return m;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

double spectral_norm2x2(const Mat& m) {
  // Singular values of [[a b][c d]]: s1^2 + s2^2 = a^2+b^2+c^2+d^2 and s1 s2 = |ad - bc|.
  const double a = m[0][0], b = m[0][1], c = m[1][0], d = m[1][1];
  const double fro2 = a * a + b * b + c * c + d * d, det = a * d - b * c;
  const double disc = std::max(0.0, fro2 * fro2 - 4 * det * det);
  return std::sqrt((fro2 + std::sqrt(disc)) / 2);
}

Mat expm(const Mat& a) {
  double norm = 0;  // infinity norm
  for (const auto& row : a) {
    double s = 0;
    for (double v : row) s += std::abs(v);
    norm = std::max(norm, s);
  }
  int squarings = 0;
  while (norm > 0.5) {
    norm /= 2;
    ++squarings;
  }
  const Mat x = scale(a, std::ldexp(1.0, -squarings));
  Mat sum = identity(a.size()), term = identity(a.size());
  for (int k = 1; k <= 20; ++k) {
    term = scale(matmul(term, x), 1.0 / k);
    for (size_t i = 0; i < a.size(); ++i)
      for (size_t j = 0; j < a.size(); ++j) sum[i][j] += term[i][j];
  }
  for (int i = 0; i < squarings; ++i) sum = matmul(sum, sum);
  return sum;
}

Mat inverse(const Mat& a) {
  const size_t n = a.size();
  Mat m = a, inv = identity(n);
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r)
      if (std::abs(m[r][col]) > std::abs(m[pivot][col])) pivot = r;
    if (m[pivot][col] == 0) throw std::logic_error("explore: singular matrix");
    std::swap(m[pivot], m[col]);
    std::swap(inv[pivot], inv[col]);
    const double p = m[col][col];
    for (size_t j = 0; j < n; ++j) {
      m[col][j] /= p;
      inv[col][j] /= p;
    }
    for (size_t r = 0; r < n; ++r) {
      if (r == col) continue;
      const double f = m[r][col];
      for (size_t j = 0; j < n; ++j) {
        m[r][j] -= f * m[col][j];
        inv[r][j] -= f * inv[col][j];
      }
    }
  }
  return inv;
}

double legendre(int n, double x) {
  if (n == 0) return 1.0;
  double p0 = 1.0, p1 = x;
  for (int k = 2; k <= n; ++k) {
    const double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
    p0 = p1;
    p1 = p2;
  }
  return p1;
}

void gauss_legendre(int n, std::vector<double>& nodes, std::vector<double>& weights) {
  nodes.assign(n, 0.0);
  weights.assign(n, 0.0);
  for (int i = 0; i < n; ++i) {
    double x = std::cos(M_PI * (i + 0.75) / (n + 0.5));
    double dp = 0;
    for (int iter = 0; iter < 100; ++iter) {
      const double p = legendre(n, x), pm = legendre(n - 1, x);
      dp = n * (x * p - pm) / (x * x - 1);
      const double dx = p / dp;
      x -= dx;
      if (std::abs(dx) < 1e-15) break;
    }
    const double p = legendre(n, x), pm = legendre(n - 1, x);
    dp = n * (x * p - pm) / (x * x - 1);
    nodes[i] = x;
    weights[i] = 2 / ((1 - x * x) * dp * dp);
  }
}

}  // namespace detail

const std::vector<Illustration>& registry() {
  static const std::vector<Illustration> all = {
      {"memory-decay", "A memory that decays", memory_decay},
      {"jacobian-products", "Repeated multiplication", jacobian_products},
      {"forget-gate", "Select what to retain", forget_gate},
      {"ssm-dual", "The same memory, two descriptions", ssm_dual},
      {"hippo", "A polynomial memory of everything so far", hippo},
      {"discretization", "Turning a continuous memory into steps", discretization},
      {"selective", "Letting each token pick its own timescale", selective},
      {"lru", "A complex memory inside the unit circle", lru},
  };
  return all;
}

nlohmann::json run(const std::string& name, const Settings& settings) {
  std::string names;
  for (const Illustration& i : registry()) {
    if (i.name == name) return i.compute(settings);
    names += (names.empty() ? "" : ", ") + i.name;
  }
  throw Error("explore: unknown illustration '" + name + "' (one of: " + names + ")");
}

std::pair<std::string, std::string> parse_setting(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw Error("explore: expected PARAM=VALUE, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

Settings parse_settings(const std::vector<std::string>& texts) {
  Settings settings;
  for (const std::string& text : texts) {
    const auto [key, value] = parse_setting(text);
    if (!settings.emplace(key, value).second) throw Error("explore: parameter " + key + " given twice");
  }
  return settings;
}

std::string to_text(const nlohmann::json& j) {
  std::ostringstream o;
  o << j.at("number").get<int>() << ". " << j.at("title").get<std::string>() << "  [" << j.at("name").get<std::string>()
    << "]\n";
  o << "From " << j.at("source").get<std::string>() << "\n\n" << j.at("question").get<std::string>() << "\n\n";
  o << "Parameters:\n";
  for (const auto& p : j.at("parameters")) {
    o << "  " << p.at("name").get<std::string>() << " (" << p.at("label").get<std::string>() << ") = ";
    if (p.at("kind") == "choice") {
      o << p.at("value").get<std::string>() << "   choices:";
      for (const auto& c : p.at("choices")) o << " " << c.get<std::string>();
    } else {
      o << detail::fmt(p.at("value").get<double>(), 6) << "   range [" << detail::fmt(p.at("min").get<double>(), 6)
        << ", " << detail::fmt(p.at("max").get<double>(), 6) << "], default " << detail::fmt(p.at("default").get<double>(), 6);
    }
    o << "\n";
  }
  o << "\nPredict first: " << j.at("predict_first").at("question").get<std::string>() << "\n  "
    << j.at("predict_first").at("answer").get<std::string>() << "\n\n";
  o << j.at("summary").get<std::string>() << "\n\nReadouts:\n";
  for (const auto& r : j.at("readouts"))
    o << "  " << r.at("label").get<std::string>() << ": " << r.at("text").get<std::string>() << "\n";
  o << "\nConclusion: " << j.at("conclusion").get<std::string>() << "\n";
  o << "\nShow the calculation:\n  " << j.at("calculation").get<std::string>() << "\n\nEquations:\n";
  for (const auto& e : j.at("equations")) o << "  " << e.get<std::string>() << "\n";
  o << "Symbols:\n";
  for (const auto& s : j.at("symbols"))
    o << "  " << s.at("symbol").get<std::string>() << ": " << s.at("meaning").get<std::string>() << "\n";
  o << "\nWhere the conclusion applies: " << j.at("conditions").get<std::string>() << "\n\nPlots:\n";
  for (const auto& p : j.at("plots")) {
    o << "  " << p.at("title").get<std::string>() << " (" << p.at("x_label").get<std::string>() << " vs "
      << p.at("y_label").get<std::string>() << "):";
    for (const auto& s : p.at("series")) o << " " << s.at("name").get<std::string>() << " [" << s.at("x").size() << " points];";
    o << "\n";
  }
  o << "\nWhy it matters: " << j.at("why_it_matters").get<std::string>() << "\n";
  o << "\nCheck your understanding: " << j.at("check").at("question").get<std::string>() << "\n  "
    << j.at("check").at("answer").get<std::string>() << "\n";
  return o.str();
}

nlohmann::json list() {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& ill : registry()) {
    const nlohmann::json j = ill.compute({});
    all.push_back({{"name", ill.name}, {"title", ill.title}, {"parameters", j["parameters"]}});
  }
  return all;
}

std::string list_text() {
  std::string out;
  for (const auto& i : list()) {
    std::string params;
    for (const auto& p : i["parameters"]) {
      params += params.empty() ? "" : "; ";
      params += p["name"].get<std::string>() + " ";
      if (p["kind"] == "choice") {
        std::string c;
        for (const auto& x : p["choices"]) c += (c.empty() ? "" : "|") + x.get<std::string>();
        params += c + " (default " + p["default"].get<std::string>() + ")";
      } else {
        char buf[128];
        std::snprintf(buf, sizeof buf, "in [%g, %g] (default %g)", p["min"].get<double>(), p["max"].get<double>(),
                      p["default"].get<double>());
        params += buf;
      }
    }
    char head[256];
    std::snprintf(head, sizeof head, "%-18s %s\n%-18s   ", i["name"].get<std::string>().c_str(),
                  i["title"].get<std::string>().c_str(), "");
    out += head + params + "\n";
  }
  return out;
}

}  // namespace looplab::explore
