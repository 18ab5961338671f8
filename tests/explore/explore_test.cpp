// The chapter 7 illustrations: every number the seed prints at its default slider values (to the
// printed digits), the JSON shape of every illustration, non-default values against closed
// forms, and the errors for bad parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "looplab/explore/explore.h"
#include "looplab/util/error.h"

namespace {

using looplab::explore::run;
using looplab::explore::Settings;
using json = nlohmann::json;

// |value - printed| within half a unit of the printed string's last decimal place.
void expect_printed(double value, const std::string& printed, const std::string& what) {
  const double p = std::stod(printed);
  const auto dot = printed.find('.');
  const int places = dot == std::string::npos ? 0 : static_cast<int>(printed.size() - dot - 1);
  const double tol = 0.5 * std::pow(10.0, -places) * (1 + 1e-9);
  EXPECT_LE(std::abs(value - p), tol) << what << ": computed " << value << ", seed prints " << printed;
}

const json& readout(const json& j, const std::string& key) {
  for (const auto& r : j.at("readouts"))
    if (r.at("key") == key) return r;
  ADD_FAILURE() << "no readout " << key;
  static const json none = {{"text", ""}, {"value", nullptr}};
  return none;
}

// The readout shows the seed's text and its value rounds to it.
void expect_readout(const json& j, const std::string& key, const std::string& printed) {
  const json& r = readout(j, key);
  EXPECT_EQ(r.at("text").get<std::string>(), printed) << key;
  if (r.at("value").is_number()) expect_printed(r.at("value").get<double>(), printed, key);
}

bool contains(const json& j, const std::string& field, const std::string& text) {
  return j.at(field).get<std::string>().find(text) != std::string::npos;
}

// ---- the seed's numbers at the default values ----

TEST(ExploreSeed, MemoryDecay) {
  const json j = run("memory-decay");
  expect_readout(j, "weight_lag3", "0.512");
  expect_readout(j, "state_after_3", "2.95");
  expect_readout(j, "memory", "fades");
  expect_readout(j, "steps_to_1e", "4.48");
  EXPECT_TRUE(contains(j, "summary", "1/(1 - a) = 5."));  // settles at 5
  EXPECT_TRUE(contains(j, "calculation", "0.8^3 = 0.512"));
  EXPECT_TRUE(contains(j, "calculation", "= 2.95"));
  expect_printed(j["check"]["values"]["state_after_3"], "-0.25", "check");
}

TEST(ExploreSeed, JacobianProducts) {
  const json j = run("jacobian-products");
  expect_readout(j, "product_size", "6.19");
  expect_readout(j, "bound", "6.19");
  expect_readout(j, "bound_over_actual", "1");
  expect_readout(j, "grows", "yes, it grows");
  EXPECT_TRUE(contains(j, "calculation", "1.2^10 = 6.19"));
  EXPECT_NE(j["predict_first"]["question"].get<std::string>().find("1.2^10 = 6.19"), std::string::npos);
  const json& v = j["check"]["values"];
  expect_printed(v["aligned"], "6.19", "aligned");
  expect_printed(v["alternating"], "0.0000619", "alternating");
  expect_printed(v["pair_factor"], "0.144", "pair");
  expect_printed(v["ratio"], "100000", "ratio");
  EXPECT_TRUE(contains(j["check"], "answer", "0.144^5 = 0.0000619"));
  EXPECT_TRUE(contains(j["check"], "answer", "by a factor 100000"));
}

TEST(ExploreSeed, ForgetGate) {
  const json j = run("forget-gate");
  expect_readout(j, "input_gate", "0.2");
  expect_readout(j, "cell_after_4", "0.887");
  expect_readout(j, "kept_4", "0.41");
  expect_readout(j, "kept_20", "0.0115");
  EXPECT_TRUE(contains(j, "summary", "(41%)"));
  EXPECT_TRUE(contains(j, "calculation", "0.8 x 2 + 0.2 x 0 = 1.6"));
  EXPECT_TRUE(contains(j, "calculation", "0.8 x 1.6 + 0.2 x 1 = 1.48"));
  EXPECT_TRUE(contains(j, "calculation", "f^4 = 0.41"));
  const auto& cells = j["plots"][0]["series"][0]["y"];
  expect_printed(cells[1], "1.6", "c1");
  expect_printed(cells[2], "1.48", "c2");
  expect_printed(j["check"]["values"]["kept_10"], "0.349", "check");
}

TEST(ExploreSeed, SsmDual) {
  const json j = run("ssm-dual");
  expect_readout(j, "K0", "0.5");
  expect_readout(j, "K1", "0.65");
  expect_readout(j, "y2", "1.6");
  expect_readout(j, "gap", "0");
  EXPECT_TRUE(contains(j, "calculation", "K2 u0 + K1 u1 + K0 u2 = 0.595 + 0 + 1 = 1.595"));
  EXPECT_TRUE(contains(j, "calculation", "Start term at t = 2: 0."));
  EXPECT_TRUE(contains(j, "calculation", "Recurrence: 1.595"));
  expect_printed(j["plots"][1]["series"][0]["y"][2], "1.595", "recurrence y2");
  expect_printed(j["plots"][0]["series"][1]["y"][2], "0.595", "K2");
}

TEST(ExploreSeed, Hippo) {
  const json j = run("hippo");
  expect_readout(j, "max_error", "0.000665");
  expect_readout(j, "decimal_places", "3.2");
  expect_readout(j, "crossings", "1");
  expect_readout(j, "max_polynomial_crossings", "7");
  expect_printed(j["rnn_comparison"]["kept_10"], "0.904", "0.99^10");
  expect_printed(j["rnn_comparison"]["kept_100"], "0.366", "0.99^100");
  EXPECT_LT(readout(j, "max_error")["value"].get<double>(), 0.001);  // predict-first: better than 0.001
  EXPECT_EQ(j["check"]["values"]["m"], 8);
}

TEST(ExploreSeed, Discretization) {
  const json j = run("discretization");
  expect_readout(j, "zoh_multiplier", "0.223");
  expect_readout(j, "euler_multiplier", "-0.5");
  expect_readout(j, "euler_worst_error", "0.723");
  expect_readout(j, "euler_verdict", "stable");
  expect_readout(j, "zoh_worst_error", "0");
  const json& v = j["values"];
  expect_printed(v["z"], "1.5", "z");
  expect_printed(v["zoh_b"], "0.777", "ZOH B-bar");
  expect_printed(v["euler_b"], "1.5", "Euler B-bar");
  expect_printed(v["steady_state"], "1", "steady");
  expect_printed(j["check"]["values"]["euler_max_step"], "0.5", "check");
}

TEST(ExploreSeed, Selective) {
  const json j = run("selective");
  expect_readout(j, "key_delta", "1.31");
  expect_readout(j, "filler_delta", "0.0486");
  expect_readout(j, "key_left", "0.496");
  expect_readout(j, "key_over_filler", "2.86");
  expect_readout(j, "fixed_key_left", "0.0322");
  const json& v = j["values"];
  expect_printed(readout(j, "filler_delta")["value"], "0.04859", "softplus(-3)");
  expect_printed(v["filler_keep"], "0.9526", "filler keep");
  expect_printed(v["filler_write"], "0.04743", "filler write");
  expect_printed(readout(j, "key_delta")["value"], "1.313", "key Delta");
  expect_printed(v["key_write"], "0.7311", "key write");
  expect_printed(v["carried_after_key"], "0.678", "carried");
  EXPECT_TRUE(contains(j, "calculation", "0.731 x 0.678 = 0.496"));
  EXPECT_TRUE(contains(j, "calculation", "8 fillers follow"));
}

TEST(ExploreSeed, Lru) {
  const json j = run("lru");
  expect_readout(j, "r", "0.99");
  expect_readout(j, "memory_length", "100");
  expect_readout(j, "steps_per_turn", "undefined (no rotation)");
  expect_readout(j, "steady_response", "101");
  expect_printed(j["values"]["theta"], "0", "theta");
  expect_printed(j["values"]["distance_squared"].get<double>() * 1e5, "9.901", "|1-lambda|^2 x 1e5");
  EXPECT_TRUE(contains(j["predict_first"], "question", "state of 100."));
  expect_printed(j["check"]["values"]["distance"], "0.62", "check |1 - lambda|");
  expect_printed(j["check"]["values"]["response"], "1.6", "check response");
}

// ---- the JSON schema, for every illustration and every choice ----

void expect_string(const json& j, const std::string& key) {
  ASSERT_TRUE(j.contains(key)) << "missing " << key;
  EXPECT_TRUE(j[key].is_string()) << key << " is not a string";
  EXPECT_FALSE(j[key].get<std::string>().empty()) << key << " is empty";
}

void validate(const json& j) {
  ASSERT_TRUE(j.is_object());
  for (const char* k : {"name", "title", "source", "question", "summary", "conclusion", "calculation", "conditions", "why_it_matters"})
    expect_string(j, k);
  ASSERT_TRUE(j.contains("number") && j["number"].is_number_integer());
  ASSERT_TRUE(j["parameters"].is_array() && !j["parameters"].empty());
  for (const auto& p : j["parameters"]) {
    expect_string(p, "name");
    expect_string(p, "label");
    expect_string(p, "kind");
    if (p["kind"] == "choice") {
      ASSERT_TRUE(p["choices"].is_array());
      EXPECT_TRUE(p["default"].is_string() && p["value"].is_string());
    } else {
      for (const char* k : {"min", "max", "default", "value"}) EXPECT_TRUE(p[k].is_number()) << k;
      EXPECT_LE(p["min"].get<double>(), p["value"].get<double>());
      EXPECT_LE(p["value"].get<double>(), p["max"].get<double>());
    }
  }
  for (const char* k : {"predict_first", "check"}) {
    ASSERT_TRUE(j[k].is_object()) << k;
    expect_string(j[k], "question");
    expect_string(j[k], "answer");
  }
  ASSERT_TRUE(j["readouts"].is_array() && j["readouts"].size() >= 4);
  for (const auto& r : j["readouts"]) {
    expect_string(r, "key");
    expect_string(r, "label");
    expect_string(r, "text");
    EXPECT_TRUE(r["value"].is_number() || r["value"].is_string() || r["value"].is_null());
  }
  ASSERT_TRUE(j["plots"].is_array());
  ASSERT_EQ(j["plots"].size(), 2u);
  for (const auto& p : j["plots"]) {
    expect_string(p, "title");
    expect_string(p, "x_label");
    expect_string(p, "y_label");
    ASSERT_TRUE(p["series"].is_array() && !p["series"].empty());
    for (const auto& s : p["series"]) {
      expect_string(s, "name");
      ASSERT_TRUE(s["x"].is_array() && s["y"].is_array());
      EXPECT_EQ(s["x"].size(), s["y"].size());
      EXPECT_GE(s["x"].size(), 2u);
      for (const auto& v : s["x"]) EXPECT_TRUE(v.is_number());
      for (const auto& v : s["y"]) EXPECT_TRUE(v.is_number() || v.is_null());
    }
  }
  ASSERT_TRUE(j["equations"].is_array() && !j["equations"].empty());
  for (const auto& e : j["equations"]) EXPECT_TRUE(e.is_string());
  ASSERT_TRUE(j["symbols"].is_array() && !j["symbols"].empty());
  for (const auto& s : j["symbols"]) {
    expect_string(s, "symbol");
    expect_string(s, "meaning");
  }
}

TEST(ExploreSchema, EveryIllustrationAtDefaultsAndOtherValues) {
  ASSERT_EQ(looplab::explore::registry().size(), 8u);
  for (const auto& ill : looplab::explore::registry()) {
    SCOPED_TRACE(ill.name);
    const json j = run(ill.name);
    validate(j);
    EXPECT_EQ(j["name"], ill.name);
    EXPECT_FALSE(looplab::explore::to_text(j).empty());
    // Every choice, and each range at its ends.
    for (const auto& p : j["parameters"]) {
      const std::string name = p["name"];
      if (p["kind"] == "choice") {
        for (const auto& c : p["choices"]) validate(run(ill.name, {{name, c.get<std::string>()}}));
      } else {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", p["min"].get<double>());
        validate(run(ill.name, {{name, buf}}));
        std::snprintf(buf, sizeof buf, "%.17g", p["max"].get<double>());
        validate(run(ill.name, {{name, buf}}));
      }
    }
  }
}

// ---- non-default values against closed forms ----

TEST(ExploreClosedForm, MemoryDecayHalf) {
  const json j = run("memory-decay", {{"a", "0.5"}});
  EXPECT_NEAR(readout(j, "weight_lag3")["value"].get<double>(), 0.125, 1e-12);
  EXPECT_NEAR(readout(j, "state_after_3")["value"].get<double>(), (1 - std::pow(0.5, 4)) / (1 - 0.5), 1e-12);  // 1.875
  EXPECT_NEAR(readout(j, "steps_to_1e")["value"].get<double>(), 1 / std::log(2.0), 1e-12);
  const json g = run("memory-decay", {{"a", "1.1"}});
  EXPECT_EQ(readout(g, "memory")["text"], "grows");
  EXPECT_TRUE(readout(g, "steps_to_1e")["value"].is_null());
}

TEST(ExploreClosedForm, JacobianAlternatingGain2) {
  const json j = run("jacobian-products", {{"gain", "2"}, {"arrangement", "alternating"}});
  EXPECT_NEAR(readout(j, "product_size")["value"].get<double>(), std::pow(2 * 2 * 0.1, 5), 1e-12);  // 0.01024
  EXPECT_NEAR(readout(j, "bound")["value"].get<double>(), 1024, 1e-9);
  EXPECT_EQ(readout(j, "grows")["text"], "no, it shrinks");
}

TEST(ExploreClosedForm, ForgetGateHalf) {
  const json j = run("forget-gate", {{"f", "0.5"}, {"c0", "-4"}});
  const double f = 0.5, cand[4] = {0, 1, -1, 0.5};
  double c4 = std::pow(f, 4) * -4;
  for (int k = 0; k < 4; ++k) c4 += (1 - f) * std::pow(f, 3 - k) * cand[k];
  EXPECT_NEAR(readout(j, "cell_after_4")["value"].get<double>(), c4, 1e-12);
  EXPECT_NEAR(readout(j, "kept_20")["value"].get<double>(), std::pow(0.5, 20), 1e-18);
}

TEST(ExploreClosedForm, SsmDualNonzeroStart) {
  const double a = 0.5;
  const json j = run("ssm-dual", {{"a", "0.5"}, {"start", "nonzero"}});
  const auto& kernel = j["plots"][0]["series"][1]["y"];
  for (int l = 0; l < 6; ++l) EXPECT_NEAR(kernel[l].get<double>(), std::pow(a, l) - 0.5 * std::pow(0.3, l), 1e-12);
  // Recurrence = history sum + C A^(t+1) h(-1) = history + a^(t+1) - 0.5 x 0.3^(t+1).
  const auto& rec = j["plots"][1]["series"][0]["y"];
  const auto& hist = j["plots"][1]["series"][1]["y"];
  double gap = 0;
  for (int t = 0; t < 6; ++t) {
    const double start = std::pow(a, t + 1) - 0.5 * std::pow(0.3, t + 1);
    EXPECT_NEAR(rec[t].get<double>(), hist[t].get<double>() + start, 1e-12);
    gap = std::max(gap, std::abs(start));
  }
  EXPECT_NEAR(readout(j, "gap")["value"].get<double>(), gap, 1e-12);
  EXPECT_NEAR(readout(j, "gap_corrected")["value"].get<double>(), 0, 1e-12);
}

TEST(ExploreClosedForm, HippoCoefficients) {
  // sin(2 pi s) on one period: c_0 = 0, c_1 = (3/2) int x sin(pi (x + 1)) dx = -3/pi.
  const json j = run("hippo", {{"m", "4"}});
  EXPECT_NEAR(j["coefficients"][0].get<double>(), 0, 1e-13);
  EXPECT_NEAR(j["coefficients"][1].get<double>(), -3 / M_PI, 1e-12);
  EXPECT_NEAR(j["coefficients"][2].get<double>(), 0, 1e-13);  // odd signal about the window's middle
  const json ten = run("hippo", {{"periods", "10"}});
  EXPECT_EQ(readout(ten, "crossings")["value"], 19);
  EXPECT_GT(readout(ten, "max_error")["value"].get<double>(), 0.5);
}

TEST(ExploreClosedForm, DiscretizationUnstableEuler) {
  const json j = run("discretization", {{"delta", "2.5"}, {"rate", "2"}});
  EXPECT_NEAR(readout(j, "zoh_multiplier")["value"].get<double>(), std::exp(-5.0), 1e-14);
  EXPECT_NEAR(readout(j, "euler_multiplier")["value"].get<double>(), -4, 1e-14);
  EXPECT_EQ(readout(j, "euler_verdict")["text"], "unstable");
  EXPECT_NEAR(j["values"]["zoh_b"].get<double>(), (1 - std::exp(-5.0)) / 2, 1e-14);
  // Steps at t = 0, 2.5, 5: Euler x = 0, 2.5, -7.5; exact (1 - e^(-2t))/2.
  EXPECT_NEAR(readout(j, "euler_worst_error")["value"].get<double>(), 7.5 + (1 - std::exp(-10.0)) / 2, 1e-12);
}

TEST(ExploreClosedForm, SelectiveStrongKey) {
  const json j = run("selective", {{"w", "10"}});
  const double key_delta = std::log1p(std::exp(7.0)), filler = std::log1p(std::exp(-3.0));
  EXPECT_NEAR(readout(j, "key_delta")["value"].get<double>(), key_delta, 1e-12);
  EXPECT_NEAR(readout(j, "key_left")["value"].get<double>(), (1 - std::exp(-key_delta)) * std::exp(-8 * filler), 1e-12);
}

TEST(ExploreClosedForm, LruQuarterTurn) {
  const json j = run("lru", {{"nu", "0.1"}, {"turns", "0.25"}});
  const double r = std::exp(-0.1);
  EXPECT_NEAR(readout(j, "steady_response")["value"].get<double>(), 1 / std::sqrt(1 + r * r), 1e-12);  // |1 - i r|
  EXPECT_NEAR(readout(j, "steps_per_turn")["value"].get<double>(), 4, 1e-12);
  EXPECT_NEAR(readout(j, "memory_length")["value"].get<double>(), 10, 1e-9);
}

// ---- errors ----

TEST(ExploreErrors, BadNamesAndValues) {
  EXPECT_THROW(run("nope"), looplab::Error);
  EXPECT_THROW(run("memory-decay", {{"b", "1"}}), looplab::Error);
  EXPECT_THROW(run("memory-decay", {{"a", "1.5"}}), looplab::Error);
  EXPECT_THROW(run("memory-decay", {{"a", "x"}}), looplab::Error);
  EXPECT_THROW(run("hippo", {{"m", "8.5"}}), looplab::Error);
  EXPECT_THROW(run("hippo", {{"periods", "2"}}), looplab::Error);
  EXPECT_THROW(run("jacobian-products", {{"arrangement", "random"}}), looplab::Error);
  EXPECT_THROW(looplab::explore::parse_setting("a0.5"), looplab::Error);
  EXPECT_THROW(looplab::explore::parse_settings({"a=0.5", "a=0.6"}), looplab::Error);
  EXPECT_EQ(looplab::explore::parse_settings({"a=0.5", "b=x=y"}), (looplab::explore::Settings{{"a", "0.5"}, {"b", "x=y"}}));
  EXPECT_NO_THROW(run("lru", {{"turns", "0.10"}}));
  try {
    run("memory-decay", {{"a", "1.5"}});
  } catch (const looplab::Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of range [-1, 1.2]"), std::string::npos) << e.what();
  }
}

}  // namespace
