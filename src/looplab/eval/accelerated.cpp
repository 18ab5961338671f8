#include "looplab/eval/accelerated.h"

#include <chrono>
#include <limits>

#include "looplab/eval/evaluate.h"
#include "looplab/util/error.h"
#include "looplab/model/relative_step.h"

namespace looplab {

namespace {

using torch::indexing::None;
using torch::indexing::Slice;

// Keeps the rows of every per-example tensor whose `keep` entry is true.
torch::Tensor keep_rows(const torch::Tensor& t, const torch::Tensor& keep_index) {
  return t.defined() ? t.index_select(0, keep_index) : t;
}

}  // namespace

FixedPointResult solve_fixed_point(const BatchMap& f, const torch::Tensor& x_init, const FixedPointOptions& o) {
  if (o.max_iters < 1) throw Error("fixed-point iteration needs at least one evaluation");
  if (o.tolerance < 0) throw Error("the early-exit tolerance must be >= 0");
  if (o.anderson < 0) throw Error("the Anderson memory must be >= 0");
  torch::InferenceMode inference;
  const int64_t B = x_init.size(0);
  const auto dev = x_init.device();
  const auto cpu_long = torch::TensorOptions().dtype(torch::kInt64);
  const auto dev_long = torch::TensorOptions().dtype(torch::kInt64).device(dev);
  const int64_t m = o.anderson;

  FixedPointResult r;
  r.state = torch::empty_like(x_init);
  r.evaluations = torch::zeros({B}, cpu_long);
  r.converged = torch::zeros({B}, torch::kBool);
  r.relative_step = torch::zeros({B}, torch::kFloat64);
  if (B == 0) return r;

  // Per active example (compacted as examples leave): the original index, the current point.
  torch::Tensor index = torch::arange(B, dev_long);
  torch::Tensor x = x_init.clone();
  const int64_t n = x.numel() / B;

  // Anderson state: ring buffers of the last m accepted (F, G) pairs, newest at `head`.
  torch::Tensor F_hist, G_hist, head, length, accepted_residual, plain_next;
  if (m > 0) {
    F_hist = torch::zeros({B, m, n}, x.options());
    G_hist = torch::zeros({B, m, n}, x.options());
    head = torch::full({B}, m - 1, dev_long);
    length = torch::zeros({B}, dev_long);
    accepted_residual = torch::full({B}, std::numeric_limits<double>::infinity(),
                                    torch::TensorOptions().dtype(torch::kFloat64).device(dev));
    plain_next = torch::ones({B}, torch::TensorOptions().dtype(torch::kBool).device(dev));
  }
  const torch::Tensor slots = torch::arange(m > 0 ? m : 1, dev_long);

  for (int64_t round = 1; round <= o.max_iters && index.size(0) > 0; ++round) {
    const int64_t b = index.size(0);
    const torch::Tensor F = f(x, index);
    if (F.sizes() != x.sizes()) throw Error("fixed-point map changed the state's shape");
    r.total_evaluations += b;
    const torch::Tensor Ff = F.reshape({b, n}), G = (F - x).reshape({b, n});
    const torch::Tensor g_norm = G.norm(2, 1).to(torch::kFloat64);  // the residual, for Anderson's safeguard
    const torch::Tensor rel = relative_step_of(g_norm, x);
    const torch::Tensor converged = o.tolerance > 0 ? (rel < o.tolerance) : torch::zeros({b}, rel.options().dtype(torch::kBool));
    const torch::Tensor done = round == o.max_iters ? torch::ones_like(converged) : converged;

    // Examples leaving: their answer is F, the state at their convergence (or at the budget).
    if (done.any().item<bool>()) {
      const torch::Tensor leaving = done.nonzero().squeeze(1);
      const torch::Tensor orig = index.index_select(0, leaving);
      r.state.index_copy_(0, orig, F.index_select(0, leaving));
      const torch::Tensor orig_cpu = orig.to(torch::kCPU);
      r.evaluations.index_fill_(0, orig_cpu, round);
      r.converged.index_copy_(0, orig_cpu, converged.index_select(0, leaving).to(torch::kCPU));
      r.relative_step.index_copy_(0, orig_cpu, rel.index_select(0, leaving).to(torch::kCPU));
    }
    if (round == o.max_iters) break;
    const torch::Tensor stay = (~done).nonzero().squeeze(1);
    if (stay.size(0) == 0) break;

    torch::Tensor next;
    if (m == 0) {
      next = F;
    } else {
      // Safeguard: a mixed point whose residual grew is rejected.
      const torch::Tensor accept = plain_next | (g_norm <= o.growth * accepted_residual);
      const torch::Tensor reject = ~accept;
      r.rejected += reject.sum().item<int64_t>();
      const torch::Tensor rows = torch::arange(b, dev_long);
      // Accepted points enter the ring.
      const torch::Tensor new_head = torch::where(accept, (head + 1) % m, head);
      const torch::Tensor acc_rows = accept.nonzero().squeeze(1);
      if (acc_rows.size(0) > 0) {
        const torch::Tensor h = new_head.index_select(0, acc_rows);
        F_hist.index_put_({acc_rows, h}, Ff.index_select(0, acc_rows));
        G_hist.index_put_({acc_rows, h}, G.index_select(0, acc_rows));
      }
      head = new_head;
      length = torch::where(accept, torch::clamp_max(length + 1, m), torch::ones_like(length));
      accepted_residual = torch::where(accept, g_norm, accepted_residual);

      // Mixing over the valid slots: min ||sum a_i G_i|| with sum a_i = 1.
      const torch::Tensor age = (head.unsqueeze(1) - slots.unsqueeze(0) + m) % m;  // 0 = newest
      const torch::Tensor valid = (age < length.unsqueeze(1)).to(torch::kFloat64);  // [b, m]
      // The Gram matrix in float32 at least (bfloat16 / float16 states), then in double.
      const torch::Tensor Gg = G_hist.scalar_type() == torch::kFloat64 ? G_hist : G_hist.to(torch::kFloat32);
      torch::Tensor H = torch::bmm(Gg, Gg.transpose(1, 2)).to(torch::kFloat64);  // [b, m, m]
      const torch::Tensor vv = valid.unsqueeze(2) * valid.unsqueeze(1);
      H = H * vv;
      const torch::Tensor scale = std::get<0>(H.diagonal(0, 1, 2).max(1)).clamp_min(1e-300);
      H = H / scale.view({b, 1, 1});
      H = H + torch::diag_embed(valid * o.lambda + (1 - valid));
      torch::Tensor A = torch::zeros({b, m + 1, m + 1}, H.options());
      A.index_put_({Slice(), Slice(1, None), Slice(1, None)}, H);
      A.index_put_({Slice(), 0, Slice(1, None)}, valid);
      A.index_put_({Slice(), Slice(1, None), 0}, valid);
      torch::Tensor rhs = torch::zeros({b, m + 1, 1}, H.options());
      rhs.index_put_({Slice(), 0, 0}, 1.0);
      const torch::Tensor alpha = torch::linalg_solve(A, rhs).index({Slice(), Slice(1, None), 0}) * valid;
      const torch::Tensor mixed = torch::bmm(alpha.to(F_hist.scalar_type()).unsqueeze(1), F_hist).squeeze(1);
      // Rejected: the plain step from the last accepted point, F of the newest ring entry.
      const torch::Tensor newest_F = F_hist.index({rows, head});
      next = torch::where(accept.unsqueeze(1), mixed, newest_F).view(x.sizes());
      // A point reached from a single entry is a plain step: nothing to reject next time.
      plain_next = length <= 1;
      (void)reject;
    }

    if (stay.size(0) < b) {
      x = next.index_select(0, stay);
      index = index.index_select(0, stay);
      if (m > 0) {
        F_hist = keep_rows(F_hist, stay);
        G_hist = keep_rows(G_hist, stay);
        head = keep_rows(head, stay);
        length = keep_rows(length, stay);
        accepted_residual = keep_rows(accepted_residual, stay);
        plain_next = keep_rows(plain_next, stay);
      }
    } else {
      x = next;
    }
  }
  return r;
}

FixedPointResult solve_model(LoopedTransformerImpl& model, const torch::Tensor& input, const FixedPointOptions& options) {
  torch::InferenceMode inference;
  return solve_loop(Loop(model, input), options);
}

FixedPointResult solve_loop(const Loop& loop, const FixedPointOptions& options) {
  torch::InferenceMode inference;
  // The loop of the active examples, selected again only when the batch shrinks.
  Loop active = loop;
  const BatchMap f = [&](const torch::Tensor& x, const torch::Tensor& index) {
    if (active.size() != index.size(0)) active = loop.select(index);
    return active.step(x);
  };
  return solve_fixed_point(f, loop.x0(), options);
}

AcceleratedSplitReport evaluate_accelerated(LoopedTransformerImpl& model, const Split& split, int64_t batch,
                                            const FixedPointOptions& options,
                                            const std::function<void(int64_t, int64_t)>& progress) {
  torch::InferenceMode inference;
  AcceleratedSplitReport e;
  e.count = split.size();
  e.positions = split.inputs.size(1);
  e.plain_block_evaluations = e.count * options.max_iters;
  int64_t exact = 0, positions = 0, converged = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int64_t lo = 0; lo < e.count; lo += batch) {
    const int64_t hi = std::min(e.count, lo + batch);
    const Loop loop(model, split.inputs.slice(0, lo, hi));
    const FixedPointResult r = solve_loop(loop, options);
    const torch::Tensor prediction = predict(loop.logits(r.state), model);
    const torch::Tensor right = prediction == split.targets.slice(0, lo, hi).to(model.device());
    exact += right.all(1).sum().item<int64_t>();
    positions += right.sum().item<int64_t>();
    converged += r.converged.sum().item<int64_t>();
    e.block_evaluations += r.total_evaluations;
    e.rejected += r.rejected;
    e.max_evaluations = std::max(e.max_evaluations, r.evaluations.max().item<int64_t>());
    if (progress) progress(hi, e.count);
  }
  if (model.device().is_cuda()) torch::cuda::synchronize();
  e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (e.count > 0) {
    const double n = static_cast<double>(e.count);
    e.exact = exact / n;
    e.per_position = positions / (n * split.targets.size(1));
    e.converged = converged / n;
    e.mean_evaluations = e.block_evaluations / n;
  }
  return e;
}

}  // namespace looplab
