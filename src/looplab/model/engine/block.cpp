// The fused engine's block on the whole batch: forward and backward side by side.
//
//   r  = x, or Wx x + Wh x0 (external recall)                                  [N, d]
//   attention sublayer:  u = g(preN(r)), qkv = RoPE+QK-norm(u Wqkv^T + b)      [N, 3d]
//                        y = attend(qkv) Wout^T + b, z = postN(r + periN(y))    [N, d]
//   MLP sublayer:        u2 = g(preN(z)), m = GELU(u2 W1^T + b1) W2^T + b2       [N, 4d] -> [N, d]
//                        out = postN(z + periN(m))                              [N, d]
// with g(n) = Wx n + Wh x0 for internal recall, n otherwise. The products are whole-tensor
// products (products.h); everything between two of them is one parallel pass over the rows.
// Under bf16-mixed (Shape::bf16) each product takes its activation operand rounded to bfloat16
// (operand() below) and returns float32: the rows, norms, softmax and sums stay float32.
// Compiled with reordered additions (CMakeLists.txt), as the kernels.
#include <algorithm>
#include <cstring>

#include "looplab/model/engine/block.h"
#include "looplab/model/engine/products.h"
#include "looplab/model/looped_transformer.h"

namespace looplab::engine {

bool every_key(const torch::Tensor& keys, int64_t L) {
  if (keys.size(0) != L || keys.size(1) != L) return false;
  const int64_t* k = keys.data_ptr<int64_t>();
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < L; ++j)
      if (k[i * L + j] != j) return false;
  return true;
}

namespace {

uint16_t* bf16_data(const torch::Tensor& t) { return reinterpret_cast<uint16_t*>(t.data_ptr<at::BFloat16>()); }

// The attention of every sequence: by (sequence, head) for full attention, by rows otherwise.
template <typename T>
void attend(const AttentionRows<T>& a, int64_t B, bool full) {
  if (full)
    at::parallel_for(0, B * a.heads, 1, [&](int64_t begin, int64_t end) { full_attention(a, begin, end); });
  else
    at::parallel_for(0, B * a.L, 64, [&](int64_t begin, int64_t end) { attention_rows(a, begin, end); });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Forward

template <typename T>
torch::Tensor forward_rows(const Slots& w, const Shape& sh, const Positions& p, Saved* save) {
  const int64_t L = sh.L, d = sh.d, N = sh.B * sh.L, H = sh.heads, hd = d / H;
  const Norms<T> norms = norms_of<T>(w);
  const torch::Tensor x = w[kX].contiguous().view({N, d});
  const torch::Tensor wh = w[kWh].defined() ? w[kWh].contiguous().view({N, d}) : torch::Tensor();
  const T* WH = data<T>(wh);
  // With saving, the output is a tensor of its own (autograd's output may not be a view).
  const torch::Tensor result = save ? torch::empty({sh.B, L, d}, x.options()) : torch::Tensor();
  SublayerSaved attention, mlp;
  // A product's activation operand: a itself, or its bfloat16 copy under bf16-mixed.
  auto operand = [&](const torch::Tensor& a) { return sh.bf16 ? a.to(torch::kBFloat16) : a; };

  // The sublayer's input from its residual r: n = preN(r), u = Wx n + Wh x0 (internal) or n.
  auto sublayer_input = [&](const torch::Tensor& r, SublayerSaved& sv) {
    torch::Tensor n = r;
    if (norms.pre) {
      n = torch::empty_like(r);
      const T* R = data<T>(r);
      T* Nn = n.data_ptr<T>();
      each_row(N, [&](int64_t i) { rms_row(R + i * d, norms.pre, Nn + i * d, d); });
    }
    sv.residual = r, sv.normed = n;
    if (!sh.internal) return sv.input = operand(n);
    sv.normed = operand(n);
    const torch::Tensor u = linear(sv.normed, w[kWxW], w[kWxB]);
    T* U = u.data_ptr<T>();
    each_row(N, [&](int64_t i) { add_row(U + i * d, WH + i * d, d); });
    return sv.input = operand(u);
  };
  // The sublayer's result postN(r + periN(y)): in place in y without saving; with saving into
  // `out`, keeping y (peri-norm) and r + periN(y) (post-norm) in sv.
  auto sublayer_output = [&](const torch::Tensor& y, torch::Tensor out, SublayerSaved& sv) {
    if (!save) out = y;
    if (save && norms.peri) sv.output = y;
    if (save && norms.post) sv.sum = torch::empty_like(y);
    const T *R = data<T>(sv.residual), *Y = data<T>(y);
    T* O = out.data_ptr<T>();
    T* S = sv.sum.defined() ? sv.sum.data_ptr<T>() : nullptr;
    each_row(N, [&](int64_t i) {
      sublayer_output_row(R + i * d, Y + i * d, O + i * d, S ? S + i * d : nullptr, norms, d);
    });
    return out;
  };

  // --- Attention sublayer ---------------------------------------------------------------------
  torch::Tensor r = x, x_operand = x;
  if (sh.external) {
    x_operand = operand(x);
    r = linear(x_operand, w[kWxW], w[kWxB]);
    T* Rw = r.data_ptr<T>();
    each_row(N, [&](int64_t i) { add_row(Rw + i * d, WH + i * d, d); });
  }
  const torch::Tensor u = sublayer_input(r, attention);
  const torch::Tensor qkv_projected = linear(u, w[kQkvW], w[kQkvB]);  // [N, 3d]
  const torch::Tensor qkv = save ? torch::empty_like(qkv_projected) : qkv_projected;
  const torch::Tensor cos = p.cos.contiguous(), sin = p.sin.contiguous(), keys = p.keys.contiguous();
  const RopeRows<T> rope{data<T>(qkv_projected), qkv.data_ptr<T>(), data<T>(cos), data<T>(sin),
                         data<T>(w[kQNorm]),     data<T>(w[kKNorm]), L,            d,  H};
  at::parallel_for(0, N, 64, [&](int64_t begin, int64_t end) { rope_rows(rope, begin, end); });
  const int64_t W = keys.size(1);
  const torch::Tensor mixed = torch::empty({N, d}, x.options());
  const torch::Tensor probs = save ? torch::empty({N, H, W}, x.options()) : torch::Tensor();  // [N, H, W]
  const AttentionRows<T> a{data<T>(qkv), keys.data_ptr<int64_t>(), mixed.data_ptr<T>(), save ? probs.data_ptr<T>() : nullptr,
                           L, d, H, W, attention_scale<T>(hd)};
  attend(a, sh.B, every_key(keys, L));
  const torch::Tensor mixed_operand = operand(mixed);
  const torch::Tensor y = linear(mixed_operand, w[kOutW], w[kOutB]);
  const torch::Tensor z = sublayer_output(y, save ? torch::empty_like(y) : torch::Tensor(), attention);

  // --- MLP sublayer ---------------------------------------------------------------------------
  // (Tiling it so that the 4x wider hidden layer stays in cache measured slower here: the
  // products lose more at 128-row tiles than the passes gain.)
  const torch::Tensor u2 = sublayer_input(z, mlp);
  torch::Tensor hidden_pre = linear(u2, w[kFc1W], w[kFc1B]);  // [N, 4d]
  torch::Tensor hidden;  // GELU(hidden_pre), under bf16-mixed rounded in the same pass
  if (sh.bf16) {
    const int64_t m = hidden_pre.size(1);
    hidden = torch::empty({N, m}, hidden_pre.options().dtype(torch::kBFloat16));
    const float* Hp = hidden_pre.data_ptr<float>();
    uint16_t* Hd = bf16_data(hidden);
    at::parallel_for(0, N, 64, [&](int64_t begin, int64_t end) {
      gelu_bf16_rows(Hp + begin * m, end - begin, m, Hd + begin * m);
    });
  } else {
    hidden = save ? at::gelu(hidden_pre) : at::gelu_(hidden_pre);
  }
  const torch::Tensor m = linear(hidden, w[kFc2W], w[kFc2B]);
  const torch::Tensor out = sublayer_output(m, save ? result.view({N, d}) : torch::Tensor(), mlp);
  if (!save) return out.view({sh.B, L, d});
  *save = Saved{x_operand, attention, mlp, qkv_projected, qkv, probs, mixed_operand, hidden_pre, hidden};
  return result;
}

// ---------------------------------------------------------------------------------------------
// Backward: the same steps in reverse

template <typename T>
Slots backward_rows(const Slots& w, const Shape& sh, const Positions& p, const Saved& sv, const torch::Tensor& dout_in,
                    bool need_dx) {
  const int64_t L = sh.L, d = sh.d, N = sh.B * sh.L, H = sh.heads, hd = d / H;
  const Norms<T> norms = norms_of<T>(w);
  Slots grad;
  auto add = [&](Slot slot, const torch::Tensor& g) {
    if (grad[slot].defined())
      grad[slot].add_(g);
    else
      grad[slot] = g;
  };
  const auto options = dout_in.options();
  // A weight's gradient summed over chunks of rows [chunks, width], in chunk order.
  auto partial = [&](const T* weight, int64_t width) {
    return weight ? torch::zeros({chunks(N), width}, options) : torch::Tensor();
  };
  auto row_of = [&](const torch::Tensor& part, int64_t chunk, int64_t width) -> T* {
    return part.defined() ? part.data_ptr<T>() + chunk * width : nullptr;
  };
  // The linear layer y = x W^T + b, given g (its output's gradient dy as the products' operand)
  // and db (the sum of dy's rows): dW += g^T x, db; returns dx = g W.
  auto linear_products = [&](const torch::Tensor& g, const torch::Tensor& db, const torch::Tensor& x, Slot weight,
                             Slot bias, bool dx) {
    add(weight, weight_gradient(g, x));
    add(bias, db);
    return dx ? input_gradient(g, w[weight]) : torch::Tensor();
  };
  // Under bf16-mixed, a float32 gradient [N, m] made into the products' operand by `rows` (f(src
  // rows, count, m, out, column sums)) in one pass by chunks: {its bfloat16 rounding, the sums of
  // its float32 columns}. src is the tensor the rows kernel reads.
  auto rounded = [&](const torch::Tensor& src, const auto& rows) {
    const int64_t m = src.size(1);
    const torch::Tensor out = torch::empty({N, m}, src.options().dtype(torch::kBFloat16));
    const torch::Tensor sums = torch::zeros({chunks(N), m}, src.options().dtype(torch::kFloat32));
    uint16_t* O = bf16_data(out);
    float* S = sums.data_ptr<float>();
    each_chunk(N, [&](int64_t begin, int64_t end, int64_t chunk) { rows(begin, end, m, O + begin * m, S + chunk * m); });
    return std::make_pair(out, sums.sum(0));
  };
  // The linear layer's backward from dy [N, m]. Under bf16-mixed x is the forward's bfloat16
  // operand, and dy is rounded to bfloat16 for both products (as autocast's backward runs them);
  // db sums the float32 dy.
  auto linear_backward = [&](const torch::Tensor& dy, const torch::Tensor& x, Slot weight, Slot bias, bool dx) {
    if (x.scalar_type() != torch::kBFloat16) return linear_products(dy, dy.sum(0), x, weight, bias, dx);
    const torch::Tensor src = dy.contiguous();
    const float* D = src.data_ptr<float>();
    const auto [g, db] = rounded(src, [&](int64_t begin, int64_t end, int64_t m, uint16_t* out, float* sums) {
      bf16_rows_and_column_sums(D + begin * m, end - begin, m, out, sums);
    });
    return linear_products(g, db, x, weight, bias, dx);
  };
  // The result postN(sum), sum = r + periN(y), from its gradient dout [N, d]: returns
  // {d sum (the residual's gradient, more added later), dy}. dout may be overwritten only when
  // `own` says it is this function's buffer.
  auto output_backward = [&](const torch::Tensor& dout, bool own, const SublayerSaved& s) {
    torch::Tensor ds;
    if (norms.post)
      ds = torch::empty_like(dout);
    else
      ds = own ? dout : dout.clone();
    const torch::Tensor dy = norms.peri ? torch::empty_like(dout) : ds;
    if (!norms.post && !norms.peri) return std::make_pair(ds, dy);
    const torch::Tensor dpost = partial(norms.post, d), dperi = partial(norms.peri, d);
    const T *DO = data<T>(dout), *S = data<T>(s.sum), *Y = data<T>(s.output);
    T *DS = ds.data_ptr<T>(), *DY = dy.data_ptr<T>();
    each_chunk(N, [&](int64_t begin, int64_t end, int64_t chunk) {
      for (int64_t i = begin; i < end; ++i) {
        if (norms.post)
          rms_row_backward(S + i * d, norms.post, DO + i * d, DS + i * d, false, row_of(dpost, chunk, d), d);
        if (norms.peri)
          rms_row_backward(Y + i * d, norms.peri, DS + i * d, DY + i * d, false, row_of(dperi, chunk, d), d);
      }
    });
    if (norms.post) add(kPostW, dpost.sum(0));
    if (norms.peri) add(kPeriW, dperi.sum(0));
    return std::make_pair(ds, dy);
  };
  // The input u = g(n, x0) or n, n = preN(r) or r, from its gradient du: adds r's to dr.
  auto input_backward = [&](const torch::Tensor& du, const SublayerSaved& s, const torch::Tensor& dr) {
    torch::Tensor dn = du;
    if (sh.internal) {
      add(kWh, du);
      dn = linear_backward(du, s.normed, kWxW, kWxB, true);
    }
    if (!norms.pre) {
      dr.add_(dn);
      return;
    }
    const torch::Tensor dpre = partial(norms.pre, d);
    const T *R = data<T>(s.residual), *DN = data<T>(dn);
    T* DR = dr.data_ptr<T>();
    each_chunk(N, [&](int64_t begin, int64_t end, int64_t chunk) {
      for (int64_t i = begin; i < end; ++i)
        rms_row_backward(R + i * d, norms.pre, DN + i * d, DR + i * d, true, row_of(dpre, chunk, d), d);
    });
    add(kPreW, dpre.sum(0));
  };

  // --- MLP sublayer ---------------------------------------------------------------------------
  const torch::Tensor dout = dout_in.contiguous().view({N, d});
  auto [dz, dm] = output_backward(dout, false, sv.mlp);
  const torch::Tensor dhidden = linear_backward(dm, sv.hidden, kFc2W, kFc2B, true);  // [N, 4d]
  torch::Tensor du2;                                                                  // [N, d]
  if (sv.hidden.scalar_type() == torch::kBFloat16) {
    // GELU's backward and the rounding of its result in one pass: the float32 gradient of
    // hidden_pre is never stored.
    const float *Dh = dhidden.data_ptr<float>(), *Hp = sv.hidden_pre.data_ptr<float>();
    const auto [g, db] = rounded(dhidden, [&](int64_t begin, int64_t end, int64_t m, uint16_t* out, float* sums) {
      gelu_backward_bf16_rows(Dh + begin * m, Hp + begin * m, end - begin, m, out, sums);
    });
    du2 = linear_products(g, db, sv.mlp.input, kFc1W, kFc1B, true);
  } else {
    du2 = linear_backward(at::gelu_backward(dhidden, sv.hidden_pre), sv.mlp.input, kFc1W, kFc1B, true);
  }
  input_backward(du2, sv.mlp, dz);

  // --- Attention sublayer ---------------------------------------------------------------------
  auto [dr, dy] = output_backward(dz, true, sv.attention);
  const torch::Tensor dmixed = linear_backward(dy, sv.mixed, kOutW, kOutB, true);  // [N, d]
  const torch::Tensor dqkv = torch::zeros({N, 3 * d}, options);                  // [N, 3d]
  const torch::Tensor keys = p.keys.contiguous(), cos = p.cos.contiguous(), sin = p.sin.contiguous();
  const AttentionRowsBackward<T> a{data<T>(sv.qkv), keys.data_ptr<int64_t>(), data<T>(sv.probs), data<T>(dmixed),
                                   dqkv.data_ptr<T>(), L, d, H, keys.size(1), attention_scale<T>(hd)};
  if (every_key(keys, L))
    at::parallel_for(0, sh.B * H, 1, [&](int64_t begin, int64_t end) { full_attention_backward(a, begin, end); });
  else
    at::parallel_for(0, sh.B, 1, [&](int64_t begin, int64_t end) { attention_rows_backward(a, begin, end); });
  const torch::Tensor dqn = partial(data<T>(w[kQNorm]), hd), dkn = partial(data<T>(w[kKNorm]), hd);  // [chunks, hd]
  const RopeRowsBackward<T> rope{data<T>(sv.qkv_projected), dqkv.data_ptr<T>(), data<T>(cos), data<T>(sin),
                                 data<T>(w[kQNorm]),         data<T>(w[kKNorm]), L, d, H};
  each_chunk(N, [&](int64_t begin, int64_t end, int64_t chunk) {
    rope_rows_backward(rope, begin, end, row_of(dqn, chunk, hd), row_of(dkn, chunk, hd));
  });
  add(kQNorm, dqn.sum(0));
  add(kKNorm, dkn.sum(0));
  input_backward(linear_backward(dqkv, sv.attention.input, kQkvW, kQkvB, true), sv.attention, dr);

  // --- The external recall r = Wx x + Wh x0 ---------------------------------------------------
  torch::Tensor dx = dr;
  if (sh.external) {
    add(kWh, dr);
    dx = linear_backward(dr, sv.x, kWxW, kWxB, need_dx);
  }
  if (dx.defined()) grad[kX] = dx.view({sh.B, L, d});
  if (grad[kWh].defined()) grad[kWh] = grad[kWh].view({sh.B, L, d});
  return grad;
}

template torch::Tensor forward_rows<float>(const Slots&, const Shape&, const Positions&, Saved*);
template torch::Tensor forward_rows<double>(const Slots&, const Shape&, const Positions&, Saved*);
template Slots backward_rows<float>(const Slots&, const Shape&, const Positions&, const Saved&, const torch::Tensor&,
                                    bool);
template Slots backward_rows<double>(const Slots&, const Shape&, const Positions&, const Saved&, const torch::Tensor&,
                                     bool);

}  // namespace looplab::engine
