// opgen: row-wise softmax and log_softmax. The launcher (runtime/cuda/softmax.py) moves the softmax dim
// last and makes rows contiguous; one block per row (grid-stride over rows) makes three passes over the
// row: its maximum, the sum of exp(x - max), then the outputs. Arithmetic is in float for half precision.
#pragma once

#include "opgen_reduce.cuh"

namespace opgen {

template <bool LOG, typename in_t, typename out_t, typename index_t>
__device__ __forceinline__ void softmax_rows(const in_t* __restrict__ in, out_t* __restrict__ out,
                                             index_t rows, index_t cols) {
  typedef typename OpMath<in_t>::type A;
  for (index_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const in_t* x = in + r * cols;
    out_t* y = out + r * cols;
    A m = Limits<A>::lowest();
    for (index_t j = threadIdx.x; j < cols; j += blockDim.x) m = maximum(m, cast<A>(x[j]));
    m = block_all<AmaxOp<A>>(m);
    A s = A(0);
    for (index_t j = threadIdx.x; j < cols; j += blockDim.x) s += op_exp(cast<A>(x[j]) - m);
    s = block_all<SumOp<A>>(s);
    if (LOG) {
      const A shift = m + op_log(s);
      for (index_t j = threadIdx.x; j < cols; j += blockDim.x) y[j] = cast<out_t>(cast<A>(x[j]) - shift);
    } else {
      const A inv = A(1) / s;
      for (index_t j = threadIdx.x; j < cols; j += blockDim.x) y[j] = cast<out_t>(op_exp(cast<A>(x[j]) - m) * inv);
    }
  }
}

}  // namespace opgen
