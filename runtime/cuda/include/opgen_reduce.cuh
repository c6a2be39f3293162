// opgen: block reductions (shared memory + warp shuffles) for sum, prod, mean, amax/amin, any/all,
// var/std (Welford) and max/min with indices. The launcher (runtime/cuda/reduce.py) presents the input as
// M rows of R elements: row r, element j at in[r * row_stride + j * col_stride].
// A reducer R has acc_t, init(), step(acc, value, index), combine(a, b), finish<O>(acc, n, param) (param:
// the correction of var/std, unused elsewhere) and has_index; reducers with has_index (max/min with
// indices, argmax/argmin) also give index(acc), written to a second output of int64 indices.
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

// Value reducers write one output per row.
struct NoIndex {
  static constexpr bool has_index = false;
  template <typename X> static __device__ __forceinline__ long long index(const X&) { return 0; }
};
template <typename A> struct SumOp : NoIndex {
  typedef A acc_t;
  static __device__ __forceinline__ A init() { return A(0); }
  static __device__ __forceinline__ A step(A acc, A v, long long) { return acc + v; }
  static __device__ __forceinline__ A combine(A a, A b) { return a + b; }
  template <typename O> static __device__ __forceinline__ O finish(A a, long long, double) { return cast<O>(a); }
};
template <typename A> struct MeanOp : SumOp<A> {
  template <typename O> static __device__ __forceinline__ O finish(A a, long long n, double) {
    return cast<O>(a / static_cast<A>(n));
  }
};
template <typename A> struct ProdOp : NoIndex {
  typedef A acc_t;
  static __device__ __forceinline__ A init() { return A(1); }
  static __device__ __forceinline__ A step(A acc, A v, long long) { return acc * v; }
  static __device__ __forceinline__ A combine(A a, A b) { return a * b; }
  template <typename O> static __device__ __forceinline__ O finish(A a, long long, double) { return cast<O>(a); }
};
template <typename A> struct AmaxOp : NoIndex {
  typedef A acc_t;
  static __device__ __forceinline__ A init() { return Limits<A>::lowest(); }
  static __device__ __forceinline__ A step(A acc, A v, long long) { return maximum(acc, v); }
  static __device__ __forceinline__ A combine(A a, A b) { return maximum(a, b); }
  template <typename O> static __device__ __forceinline__ O finish(A a, long long, double) { return cast<O>(a); }
};
template <typename A> struct AminOp : NoIndex {
  typedef A acc_t;
  static __device__ __forceinline__ A init() { return Limits<A>::highest(); }
  static __device__ __forceinline__ A step(A acc, A v, long long) { return minimum(acc, v); }
  static __device__ __forceinline__ A combine(A a, A b) { return minimum(a, b); }
  template <typename O> static __device__ __forceinline__ O finish(A a, long long, double) { return cast<O>(a); }
};
template <typename A> struct AnyOp : NoIndex {
  typedef bool acc_t;
  static __device__ __forceinline__ bool init() { return false; }
  static __device__ __forceinline__ bool step(bool acc, A v, long long) { return acc || v != A(0); }
  static __device__ __forceinline__ bool combine(bool a, bool b) { return a || b; }
  template <typename O> static __device__ __forceinline__ O finish(bool a, long long, double) { return cast<O>(a); }
};
template <typename A> struct AllOp : NoIndex {
  typedef bool acc_t;
  static __device__ __forceinline__ bool init() { return true; }
  static __device__ __forceinline__ bool step(bool acc, A v, long long) { return acc && v != A(0); }
  static __device__ __forceinline__ bool combine(bool a, bool b) { return a && b; }
  template <typename O> static __device__ __forceinline__ O finish(bool a, long long, double) { return cast<O>(a); }
};

// max/min with indices (and argmax/argmin): the first extreme wins; NaN counts as the extreme (PyTorch),
// so the first NaN's index is returned. index < 0 marks the empty accumulator.
template <typename A> struct ArgAcc {
  A value;
  long long index;
};
template <typename A, bool IS_MAX> struct ArgOp {
  typedef ArgAcc<A> acc_t;
  static constexpr bool has_index = true;
  static __device__ __forceinline__ acc_t init() {
    acc_t a;
    a.value = IS_MAX ? Limits<A>::lowest() : Limits<A>::highest();
    a.index = -1;
    return a;
  }
  static __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    const bool a_nan = op_isnan(a.value), b_nan = op_isnan(b.value);
    if (a_nan || b_nan) {
      if (a_nan && b_nan) return a.index < b.index ? a : b;
      return a_nan ? a : b;
    }
    if (a.value == b.value) return a.index < b.index ? a : b;
    return (IS_MAX ? b.value < a.value : a.value < b.value) ? a : b;
  }
  static __device__ __forceinline__ acc_t step(acc_t acc, A v, long long i) {
    acc_t b;
    b.value = v;
    b.index = i;
    return combine(acc, b);
  }
  template <typename O> static __device__ __forceinline__ O finish(acc_t a, long long, double) {
    return cast<O>(a.value);
  }
  static __device__ __forceinline__ long long index(acc_t a) { return a.index < 0 ? 0 : a.index; }
};
template <typename A> struct MaxOp : ArgOp<A, true> {};
template <typename A> struct MinOp : ArgOp<A, false> {};

// var/std: Welford's running mean and sum of squared deviations, merged with Chan's formula. `param` is
// the correction: the divisor is max(0, n - correction), as torch.var.
template <typename A> struct WelfordAcc {
  A mean;
  A m2;
  long long n;
};
template <typename A, bool STD> struct WelfordOp : NoIndex {
  typedef WelfordAcc<A> acc_t;
  static __device__ __forceinline__ acc_t init() {
    acc_t a;
    a.mean = A(0);
    a.m2 = A(0);
    a.n = 0;
    return a;
  }
  static __device__ __forceinline__ acc_t step(acc_t acc, A v, long long) {
    acc.n += 1;
    const A delta = v - acc.mean;
    acc.mean += delta / static_cast<A>(acc.n);
    acc.m2 += delta * (v - acc.mean);
    return acc;
  }
  static __device__ __forceinline__ acc_t combine(acc_t a, acc_t b) {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    acc_t r;
    r.n = a.n + b.n;
    const A delta = b.mean - a.mean;
    const A b_share = static_cast<A>(b.n) / static_cast<A>(r.n);
    r.mean = a.mean + delta * b_share;
    r.m2 = a.m2 + b.m2 + delta * delta * static_cast<A>(a.n) * b_share;
    return r;
  }
  template <typename O> static __device__ __forceinline__ O finish(acc_t a, long long, double correction) {
    const A divisor = static_cast<A>(a.n) - static_cast<A>(correction);
    const A var = a.m2 / (divisor > A(0) ? divisor : A(0));
    return cast<O>(STD ? op_sqrt(var) : var);
  }
};
template <typename A> struct VarOp : WelfordOp<A, false> {};
template <typename A> struct StdOp : WelfordOp<A, true> {};

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

// The block's combined accumulator, valid in thread 0. blockDim.x must be a multiple of 32.
template <typename R> __device__ __forceinline__ typename R::acc_t block_combine(typename R::acc_t acc) {
  typedef typename R::acc_t A;
  OPGEN_SHARED_ARRAY(A, warp_results, 32);
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

// The block's combined accumulator, valid in every thread.
template <typename R> __device__ __forceinline__ typename R::acc_t block_all(typename R::acc_t acc) {
  OPGEN_SHARED_VAR(typename R::acc_t, result);
  acc = block_combine<R>(acc);
  if (threadIdx.x == 0) result = acc;
  __syncthreads();
  acc = result;
  __syncthreads();
  return acc;
}

template <typename R, typename out_t>
__device__ __forceinline__ void store(typename R::acc_t acc, out_t* out, long long* indices, long long r,
                                      long long n, double param) {
  out[r] = R::template finish<out_t>(acc, n, param);
  if constexpr (R::has_index) indices[r] = R::index(acc);
}

// One block per row (grid-stride over rows). `indices` is written by reducers with has_index only.
template <typename R, typename in_t, typename out_t, typename index_t>
__device__ __forceinline__ void reduce_rows(const in_t* in, out_t* out, long long* indices, index_t rows,
                                            index_t cols, index_t row_stride, index_t col_stride,
                                            double param) {
  typedef typename R::acc_t A;
  for (index_t r = blockIdx.x; r < rows; r += gridDim.x) {
    A acc = R::init();
    for (index_t j = threadIdx.x; j < cols; j += blockDim.x) {
      acc = R::step(acc, cast<typename OpMath<in_t>::type>(in[r * row_stride + j * col_stride]),
                    static_cast<long long>(j));
    }
    acc = block_combine<R>(acc);
    if (threadIdx.x == 0) store<R>(acc, out, indices, r, cols, param);
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
__device__ __forceinline__ void reduce_finish(const typename R::acc_t* partial, out_t* out, long long* indices,
                                              int parts, long long n, double param) {
  typedef typename R::acc_t A;
  A acc = R::init();
  for (int i = threadIdx.x; i < parts; i += blockDim.x) acc = R::combine(acc, partial[i]);
  acc = block_combine<R>(acc);
  if (threadIdx.x == 0) store<R>(acc, out, indices, 0, n, param);
}

}  // namespace opgen
