#include "bench/op_count.h"

#include <ATen/record_function.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <memory>
#include <mutex>

namespace looplab::bench {

namespace {

std::atomic<int64_t> top_calls{0}, all_calls{0};
// This thread's depth of ATen operators: an operator started at depth 0 is a top-level one.
thread_local int depth = 0;
std::mutex names_mutex;
std::map<std::string, int64_t> names;
std::map<std::string, double> seconds;
std::thread::id timed_thread;  // count_ops's caller: its top-level operators are timed
thread_local std::chrono::steady_clock::time_point started;

// The hook sees other records too, in the same scope: autograd's nodes ("autograd::engine::
// evaluate_function: MulBackward0"), which enclose the operators of a backward. Only ATen's
// operators count, and only they nest.
bool is_operator(const at::RecordFunction& fn) { return std::strncmp(fn.name(), "aten::", 6) == 0; }

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  if (!is_operator(fn)) return nullptr;
  all_calls.fetch_add(1, std::memory_order_relaxed);
  if (depth++ == 0) {
    top_calls.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(names_mutex);
    ++names[fn.name()];
    if (std::this_thread::get_id() == timed_thread) started = std::chrono::steady_clock::now();
  }
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  if (!is_operator(fn) || --depth != 0 || std::this_thread::get_id() != timed_thread) return;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::lock_guard<std::mutex> lock(names_mutex);
  seconds[fn.name()] += s;
}

}  // namespace

OpCount count_ops(const std::function<void()>& work) {
  top_calls = 0, all_calls = 0;
  names.clear();
  seconds.clear();
  timed_thread = std::this_thread::get_id();
  const at::CallbackHandle handle =
      at::addGlobalCallback(at::RecordFunctionCallback(&on_start, &on_end).scopes({at::RecordScope::FUNCTION}));
  try {
    work();
  } catch (...) {
    at::removeCallback(handle);
    throw;
  }
  at::removeCallback(handle);
  return {top_calls.load(), all_calls.load(), names, seconds};
}

OpCount operator-(const OpCount& a, const OpCount& b) {
  OpCount d{a.top - b.top, a.all - b.all, a.top_names, a.top_seconds};
  for (const auto& [name, n] : b.top_names) d.top_names[name] -= n;
  for (const auto& [name, s] : b.top_seconds) d.top_seconds[name] -= s;
  for (auto it = d.top_names.begin(); it != d.top_names.end();) {
    if (it->second != 0) {
      ++it;
      continue;
    }
    d.top_seconds.erase(it->first);
    it = d.top_names.erase(it);
  }
  return d;
}

}  // namespace looplab::bench
