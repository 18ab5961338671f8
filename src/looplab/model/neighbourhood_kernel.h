// Neighbourhood attention of long 1-D or N-D sequences without the [B, heads, L, W, head_dim]
// gather of keys and values that the plain LibTorch formula materialises (issue 17: at width 64
// and 512 tokens the gathers and the small batched products around them cost more than the
// block's dense layers). One pass per query: W dot products, the softmax, the weighted sum of W
// value rows. Forward only, float32 on the CPU, no gradient: the model uses it for iterations
// without gradient and keeps the plain formula otherwise (tests/model/attention_test.cpp checks
// one against the other). LOOPLAB_ENGINE=plain turns it off.
#pragma once

#include <torch/torch.h>

namespace looplab {

// Whether the kernel serves this call: float32 CPU tensors, no gradient recorded, not turned off.
bool neighbourhood_kernel_applies(const torch::Tensor& q);

// q, k, v: [B, heads, L, head_dim]; window: [L, W] int64 key indices of each query (CPU);
// returns softmax(q k_window^T * scale) v_window, [B, heads, L, head_dim].
torch::Tensor neighbourhood_attention_kernel(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                             const torch::Tensor& window, double scale);

}  // namespace looplab
