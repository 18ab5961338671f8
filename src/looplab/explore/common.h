// Helpers shared by the illustrations: parameter parsing with ranges, number formatting, the
// JSON pieces (readouts, series, plots), and small dense linear algebra.
#pragma once

#include "looplab/util/numeric.h"

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "looplab/explore/explore.h"

namespace looplab::explore::detail {

using json = nlohmann::json;

struct ParamSpec {
  std::string name, label;
  double min = 0, max = 0, def = 0;    // for a range
  bool integer = false;                // the range holds whole numbers only
  std::vector<std::string> choices;    // non-empty: a choice among these values
  std::string def_choice;
};

ParamSpec range(std::string name, std::string label, double min, double max, double def, bool integer = false);
ParamSpec choice(std::string name, std::string label, std::vector<std::string> choices, std::string def);

// The validated values of one illustration's parameters.
class Args {
 public:
  Args(const std::string& illustration, std::vector<ParamSpec> specs, const Settings& settings);
  double num(const std::string& name) const;        // a range, or a numeric choice
  const std::string& str(const std::string& name) const;  // a choice
  json to_json() const;                              // the parameter list with ranges and values

 private:
  const ParamSpec& spec(const std::string& name) const;
  std::vector<ParamSpec> specs_;
  std::map<std::string, std::string> text_;
  std::map<std::string, double> value_;
};

std::string fmt(double v, int significant = 3);  // %.*g
json readout(const std::string& key, const std::string& label, double value, int significant = 3);
json readout_text(const std::string& key, const std::string& label, const std::string& text);
json series(const std::string& name, const std::vector<double>& x, const std::vector<double>& y);
json plot(const std::string& title, const std::string& x_label, const std::string& y_label, std::vector<json> series);
json symbol(const std::string& s, const std::string& meaning);


// Skeleton of an illustration's JSON; the caller fills the rest.
json base(int number, const std::string& name, const std::string& title, const std::string& source,
          const std::string& question, const Args& args);

// Dense matrices, row-major.
using Mat = std::vector<std::vector<double>>;
Mat identity(size_t n);
Mat matmul(const Mat& a, const Mat& b);
std::vector<double> matvec(const Mat& a, const std::vector<double>& x);
Mat diag(const std::vector<double>& d);
Mat scale(const Mat& a, double s);
double dot(const std::vector<double>& a, const std::vector<double>& b);
double spectral_norm2x2(const Mat& a);  // largest singular value of a 2x2 matrix
Mat expm(const Mat& a);                 // scaling and squaring with a Taylor series
Mat inverse(const Mat& a);              // Gauss-Jordan with partial pivoting

// Gauss-Legendre nodes and weights on [-1, 1].
void gauss_legendre(int n, std::vector<double>& nodes, std::vector<double>& weights);
double legendre(int n, double x);

}  // namespace looplab::explore::detail

namespace looplab::explore {
nlohmann::json memory_decay(const Settings& s);       // 1
nlohmann::json jacobian_products(const Settings& s);  // 2
nlohmann::json forget_gate(const Settings& s);        // 3
nlohmann::json ssm_dual(const Settings& s);           // 4
nlohmann::json hippo(const Settings& s);              // 5
nlohmann::json discretization(const Settings& s);     // 6
nlohmann::json selective(const Settings& s);          // 7
nlohmann::json lru(const Settings& s);                // 8
}  // namespace looplab::explore
