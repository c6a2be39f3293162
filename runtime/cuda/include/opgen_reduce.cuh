// opgen: block reductions (shared memory + warp shuffles) for sum, prod, mean, amax/amin, any/all,
// var/std (Welford) and max/min with indices. The launcher (runtime/cuda/reduce.py) presents the input as
// M rows of R elements: row r, element j at in[r * row_stride + j * col_stride].
// Note [Two-pass reductions]: when M is small and R is large (a full reduction), `partial` kernels let
// many blocks reduce chunks of one row into accumulators, and `finish` kernels combine them. Accumulators
// are float for half precision, int64 for sums and products of integers, as in PyTorch.
#pragma once

#include "opgen_math.cuh"

namespace opgen {

// Identities of max and min: -inf/+inf for floating types, the type's limits for integers.
template <typename T> struct Limits;
template <> struct Limits<float> {
  static __device__ __forceinline__ float lowest() { return -__int_as_float(0x7f800000); }
  static __device__ __forceinline__ float highest() { return __int_as_float(0x7f800000); }
};
template <> struct Limits<double> {
  static __device__ __forceinline__ double lowest() { return -__longlong_as_double(0x7ff0000000000000ll); }
  static __device__ __forceinline__ double highest() { return __longlong_as_double(0x7ff0000000000000ll); }
};
#define OPGEN_INT_LIMITS(T, lo, hi)                                   \
  template <> struct Limits<T> {                                      \
    static __device__ __forceinline__ T lowest() { return lo; }       \
    static __device__ __forceinline__ T highest() { return hi; }      \
  };
OPGEN_INT_LIMITS(bool, false, true)
OPGEN_INT_LIMITS(unsigned char, 0, 255)
OPGEN_INT_LIMITS(signed char, -128, 127)
OPGEN_INT_LIMITS(short, -32768, 32767)
OPGEN_INT_LIMITS(int, -2147483647 - 1, 2147483647)
OPGEN_INT_LIMITS(long long, -9223372036854775807ll - 1, 9223372036854775807ll)
#undef OPGEN_INT_LIMITS

// Each reducer: acc_t, init(), step(acc, value, index), combine(a, b), and finish -> out_t.
template <typename A> struct SumOp {
  typedef A acc_t;
  static __device__ __forceinline__ A init() { return A(0); }
  static __device__ __forceinline__ A step(A acc, A v, long long) { return acc + v; }
  static __device__ __forceinline__ A combine(A a, A b) { return a + b; }
  template <typename O> static __device__ __forceinline__ O finish(A a, long long) { return cast<O>(a); }
};
template <typename A> struct MeanOp : SumOp<A> {
  template <typename O> static __device__ __forceinline__ O finish(A a, long long n) {
    return cast<O>(a / static_cast<A>(n));
  }
};
template <typename A> struct ProdOp {
  typedef A acc_t;
  static __device__ __forceinline__ A init() { return A(1); }
  static __device__ __forceinline__ A step(A acc, A v, long long) { return acc * v; }
  static __device__ __forceinline__ A combine(A a, A b) { return a * b; }
  template <typename O> static __device__ __forceinline__ O finish(A a, long long) { return cast<O>(a); }
};
template <typename A> struct AmaxOp {
  typedef A acc_t;
  static __device__ __forceinline__ A init() { return Limits<A>::lowest(); }
  static __device__ __forceinline__ A step(A acc, A v, long long) { return maximum(acc, v); }
  static __device__ __forceinline__ A combine(A a, A b) { return maximum(a, b); }
  template <typename O> static __device__ __forceinline__ O finish(A a, long long) { return cast<O>(a); }
};
template <typename A> struct AminOp {
  typedef A acc_t;
  static __device__ __forceinline__ A init() { return Limits<A>::highest(); }
  static __device__ __forceinline__ A step(A acc, A v, long long) { return minimum(acc, v); }
  static __device__ __forceinline__ A combine(A a, A b) { return minimum(a, b); }
  template <typename O> static __device__ __forceinline__ O finish(A a, long long) { return cast<O>(a); }
};
template <typename A> struct AnyOp {
  typedef bool acc_t;
  static __device__ __forceinline__ bool init() { return false; }
  static __device__ __forceinline__ bool step(bool acc, A v, long long) { return acc || v != A(0); }
  static __device__ __forceinline__ bool combine(bool a, bool b) { return a || b; }
  template <typename O> static __device__ __forceinline__ O finish(bool a, long long) { return cast<O>(a); }
};
template <typename A> struct AllOp {
  typedef bool acc_t;
  static __device__ __forceinline__ bool init() { return true; }
  static __device__ __forceinline__ bool step(bool acc, A v, long long) { return acc && v != A(0); }
  static __device__ __forceinline__ bool combine(bool a, bool b) { return a && b; }
  template <typename O> static __device__ __forceinline__ O finish(bool a, long long) { return cast<O>(a); }
};

// ---- warp and block combination ------------------------------------------------------------------
template <typename T> __device__ __forceinline__ T shuffle_down(T v, int delta) {
  // Any trivially copyable accumulator, moved as 32-bit words.
  constexpr int words = (sizeof(T) + 3) / 4;
  union { T value; unsigned int w[words]; } u;
  u.value = v;
#pragma unroll
  for (int i = 0; i < words; ++i) u.w[i] = __shfl_down_sync(0xffffffffu, u.w[i], delta);
  return u.value;
}

template <typename R> __device__ __forceinline__ typename R::acc_t block_combine(typename R::acc_t acc) {
  typedef typename R::acc_t A;
  __shared__ A warp_results[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) acc = R::combine(acc, shuffle_down(acc, d));
  if (lane == 0) warp_results[warp] = acc;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  acc = threadIdx.x < warps ? warp_results[lane] : R::init();
  if (warp == 0) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) acc = R::combine(acc, shuffle_down(acc, d));
  }
  __syncthreads();  // warp_results may be reused by the next row
  return acc;
}

// One block per row (grid-stride over rows).
template <typename R, typename in_t, typename out_t, typename index_t>
__device__ __forceinline__ void reduce_rows(const in_t* in, out_t* out, index_t rows, index_t cols,
                                            index_t row_stride, index_t col_stride) {
  typedef typename R::acc_t A;
  for (index_t r = blockIdx.x; r < rows; r += gridDim.x) {
    A acc = R::init();
    for (index_t j = threadIdx.x; j < cols; j += blockDim.x) {
      acc = R::step(acc, cast<typename OpMath<in_t>::type>(in[r * row_stride + j * col_stride]),
                    static_cast<long long>(j));
    }
    acc = block_combine<R>(acc);
    if (threadIdx.x == 0) out[r] = R::template finish<out_t>(acc, static_cast<long long>(cols));
  }
}

// Note [Two-pass reductions], first pass: block b reduces elements b, b + gridDim.x * blockDim.x ... of
// one contiguous row into partial[b].
template <typename R, typename in_t, typename index_t>
__device__ __forceinline__ void reduce_partial(const in_t* in, typename R::acc_t* partial, index_t n) {
  typedef typename R::acc_t A;
  A acc = R::init();
  OPGEN_GRID_STRIDE(index_t, i, n) {
    acc = R::step(acc, cast<typename OpMath<in_t>::type>(in[i]), static_cast<long long>(i));
  }
  acc = block_combine<R>(acc);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

// Second pass: one block combines `parts` accumulators and finishes over the row length `n`.
template <typename R, typename out_t>
__device__ __forceinline__ void reduce_finish(const typename R::acc_t* partial, out_t* out, int parts,
                                              long long n) {
  typedef typename R::acc_t A;
  A acc = R::init();
  for (int i = threadIdx.x; i < parts; i += blockDim.x) acc = R::combine(acc, partial[i]);
  acc = block_combine<R>(acc);
  if (threadIdx.x == 0) out[0] = R::template finish<out_t>(acc, n);
}

}  // namespace opgen
