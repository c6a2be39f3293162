// opgen: the device functions behind pointwise expressions. codegen/kernel_spec.py renders a call
// `f(x, ...)` as `op_f(x, ...)`, `%` as op_remainder, `//` as op_floordiv and `**` as op_pow.
// One function for EVERY entry of kernel_spec.FUNCTIONS (tests/cuda/test_kernel_sources.py checks it).
// Overloads: float and double use the CUDA math library; any other arithmetic type (the integer
// types, bool) goes through a template; floating functions of an integer compute in float, as the
// `promote: float` rule means integer inputs never reach them anyway.
#pragma once

#include "opgen_types.cuh"

#define OPGEN_F __device__ __forceinline__

// ---- floating functions of one argument: float, double, and integers through float --------------
#define OPGEN_UNARY_FLOAT(name, fexpr, dexpr)                          \
  OPGEN_F float op_##name(float x) { return fexpr; }                   \
  OPGEN_F double op_##name(double x) { return dexpr; }                 \
  template <typename T> OPGEN_F float op_##name(T v) { return op_##name(static_cast<float>(v)); }

OPGEN_UNARY_FLOAT(sqrt, sqrtf(x), sqrt(x))
OPGEN_UNARY_FLOAT(rsqrt, rsqrtf(x), rsqrt(x))
OPGEN_UNARY_FLOAT(reciprocal, 1.0f / x, 1.0 / x)
OPGEN_UNARY_FLOAT(exp, expf(x), exp(x))
OPGEN_UNARY_FLOAT(exp2, exp2f(x), exp2(x))
OPGEN_UNARY_FLOAT(expm1, expm1f(x), expm1(x))
OPGEN_UNARY_FLOAT(log, logf(x), log(x))
OPGEN_UNARY_FLOAT(log2, log2f(x), log2(x))
OPGEN_UNARY_FLOAT(log10, log10f(x), log10(x))
OPGEN_UNARY_FLOAT(log1p, log1pf(x), log1p(x))
OPGEN_UNARY_FLOAT(sin, sinf(x), sin(x))
OPGEN_UNARY_FLOAT(cos, cosf(x), cos(x))
OPGEN_UNARY_FLOAT(tan, tanf(x), tan(x))
OPGEN_UNARY_FLOAT(asin, asinf(x), asin(x))
OPGEN_UNARY_FLOAT(acos, acosf(x), acos(x))
OPGEN_UNARY_FLOAT(atan, atanf(x), atan(x))
OPGEN_UNARY_FLOAT(sinh, sinhf(x), sinh(x))
OPGEN_UNARY_FLOAT(cosh, coshf(x), cosh(x))
OPGEN_UNARY_FLOAT(tanh, tanhf(x), tanh(x))
OPGEN_UNARY_FLOAT(erf, erff(x), erf(x))
OPGEN_UNARY_FLOAT(erfc, erfcf(x), erfc(x))
OPGEN_UNARY_FLOAT(lgamma, lgammaf(x), lgamma(x))
OPGEN_UNARY_FLOAT(acosh, acoshf(x), acosh(x))
OPGEN_UNARY_FLOAT(asinh, asinhf(x), asinh(x))
OPGEN_UNARY_FLOAT(atanh, atanhf(x), atanh(x))
OPGEN_UNARY_FLOAT(sigmoid, 1.0f / (1.0f + expf(-x)), 1.0 / (1.0 + exp(-x)))
// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), stable for large |x|.
OPGEN_UNARY_FLOAT(log_sigmoid, fminf(x, 0.0f) - log1pf(expf(-fabsf(x))), fmin(x, 0.0) - log1p(exp(-fabs(x))))
// softplus(x) = log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)).
OPGEN_UNARY_FLOAT(softplus, fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x))), fmax(x, 0.0) + log1p(exp(-fabs(x))))
#undef OPGEN_UNARY_FLOAT

// ---- rounding: identity on integers -------------------------------------------------------------
#define OPGEN_ROUNDING(name, fexpr, dexpr)                 \
  OPGEN_F float op_##name(float x) { return fexpr; }       \
  OPGEN_F double op_##name(double x) { return dexpr; }     \
  template <typename T> OPGEN_F T op_##name(T x) { return x; }

OPGEN_ROUNDING(floor, floorf(x), floor(x))
OPGEN_ROUNDING(ceil, ceilf(x), ceil(x))
OPGEN_ROUNDING(round, rintf(x), rint(x))  // half to even, as torch.round and np.round
OPGEN_ROUNDING(trunc, truncf(x), trunc(x))
#undef OPGEN_ROUNDING

// ---- `~x` (kernel_spec renders it so): C++'s `~` promotes bool to int, and ~true stored as bool is
// true; bool flips, the integers keep their own width --------------------------------------------
OPGEN_F bool op_bitwise_not(bool x) { return !x; }
template <typename T> OPGEN_F T op_bitwise_not(T x) { return static_cast<T>(~x); }

// ---- sign and magnitude -------------------------------------------------------------------------
OPGEN_F float op_abs(float x) { return fabsf(x); }
OPGEN_F double op_abs(double x) { return fabs(x); }
OPGEN_F bool op_abs(bool x) { return x; }
OPGEN_F unsigned char op_abs(unsigned char x) { return x; }
template <typename T> OPGEN_F T op_abs(T x) { return x < T(0) ? static_cast<T>(-x) : x; }

// -1, 0 or 1; NaN gives 0 (as PyTorch: the two comparisons are false).
OPGEN_F float op_sign(float x) { return x != x ? 0.0f : static_cast<float>((x > 0.0f) - (x < 0.0f)); }
OPGEN_F double op_sign(double x) { return x != x ? 0.0 : static_cast<double>((x > 0.0) - (x < 0.0)); }
OPGEN_F bool op_sign(bool x) { return x; }
OPGEN_F unsigned char op_sign(unsigned char x) { return x != 0; }
template <typename T> OPGEN_F T op_sign(T x) { return static_cast<T>((T(0) < x) - (x < T(0))); }

// ---- classification: integers are always finite -------------------------------------------------
// The sign bit (true for -0.0 and negative NaNs, as np.signbit).
// the bit itself (a host compiler's <cmath> has signbit only as std::signbit; CUDA and the emulator both
// have these reinterpretations)
OPGEN_F bool op_signbit(float x) { return (__float_as_uint(x) >> 31) != 0u; }
OPGEN_F bool op_signbit(double x) { return __double_as_longlong(x) < 0; }
OPGEN_F bool op_signbit(unsigned char) { return false; }
OPGEN_F bool op_signbit(bool) { return false; }
template <typename T> OPGEN_F bool op_signbit(T x) { return x < T(0); }
OPGEN_F bool op_isnan(float x) { return isnan(x); }
OPGEN_F bool op_isnan(double x) { return isnan(x); }
template <typename T> OPGEN_F bool op_isnan(T) { return false; }
OPGEN_F bool op_isinf(float x) { return isinf(x); }
OPGEN_F bool op_isinf(double x) { return isinf(x); }
template <typename T> OPGEN_F bool op_isinf(T) { return false; }
OPGEN_F bool op_isfinite(float x) { return isfinite(x); }
OPGEN_F bool op_isfinite(double x) { return isfinite(x); }
template <typename T> OPGEN_F bool op_isfinite(T) { return true; }

// ---- binary functions: both arguments go to their common C++ type first --------------------------
namespace opgen {
template <typename A, typename B> struct Common { typedef decltype(A() + B()) type; };

OPGEN_F float maximum(float a, float b) { return (a != a || b != b) ? a + b : fmaxf(a, b); }
OPGEN_F double maximum(double a, double b) { return (a != a || b != b) ? a + b : fmax(a, b); }
template <typename T> OPGEN_F T maximum(T a, T b) { return a < b ? b : a; }
OPGEN_F float minimum(float a, float b) { return (a != a || b != b) ? a + b : fminf(a, b); }
OPGEN_F double minimum(double a, double b) { return (a != a || b != b) ? a + b : fmin(a, b); }
template <typename T> OPGEN_F T minimum(T a, T b) { return b < a ? b : a; }

OPGEN_F float fmod_(float a, float b) { return fmodf(a, b); }
OPGEN_F double fmod_(double a, double b) { return fmod(a, b); }
template <typename T> OPGEN_F T fmod_(T a, T b) { return b == T(0) ? T(0) : static_cast<T>(a % b); }

// Python's remainder: the result has the sign of the divisor.
OPGEN_F float remainder(float a, float b) {
  float r = fmodf(a, b);
  return (r != 0.0f && ((r < 0.0f) != (b < 0.0f))) ? r + b : r;
}
OPGEN_F double remainder(double a, double b) {
  double r = fmod(a, b);
  return (r != 0.0 && ((r < 0.0) != (b < 0.0))) ? r + b : r;
}
template <typename T> OPGEN_F T remainder(T a, T b) {
  if (b == T(0)) return T(0);
  T r = static_cast<T>(a % b);
  return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? static_cast<T>(r + b) : r;
}

// Python's floor division (NumPy's algorithm for floats, so signs of zero and rounding match).
template <typename F> OPGEN_F F floordiv_float(F a, F b) {
  if (b == F(0)) return a / b;
  F mod = fmod(a, b);
  F div = (a - mod) / b;
  if (mod != F(0) && ((b < F(0)) != (mod < F(0)))) div -= F(1);
  if (div == F(0)) return copysign(F(0), a / b);
  F fl = floor(div);
  return (div - fl > F(0.5)) ? fl + F(1) : fl;
}
OPGEN_F float floordiv(float a, float b) { return floordiv_float<float>(a, b); }
OPGEN_F double floordiv(double a, double b) { return floordiv_float<double>(a, b); }
template <typename T> OPGEN_F T floordiv(T a, T b) {
  if (b == T(0)) return T(0);
  T q = static_cast<T>(a / b);
  return ((a % b) != T(0) && ((a < T(0)) != (b < T(0)))) ? static_cast<T>(q - 1) : q;
}

OPGEN_F float pow_(float a, float b) { return powf(a, b); }
OPGEN_F double pow_(double a, double b) { return pow(a, b); }
// Integer power by squaring; a negative exponent gives 0 except for bases 1 and -1 (PyTorch).
template <typename T> OPGEN_F T pow_(T a, T b) {
  if (b < T(0)) {
    if (a == T(1)) return T(1);
    if (a == T(-1)) return (b % 2 == 0) ? T(1) : T(-1);
    return T(0);
  }
  T result = T(1);
  while (b) {
    if (b & 1) result = static_cast<T>(result * a);
    b = static_cast<T>(b >> 1);
    a = static_cast<T>(a * a);
  }
  return result;
}
OPGEN_F bool pow_(bool a, bool b) { return a || !b; }

OPGEN_F float atan2_(float a, float b) { return atan2f(a, b); }
OPGEN_F double atan2_(double a, double b) { return atan2(a, b); }
template <typename T> OPGEN_F float atan2_(T a, T b) {
  return atan2f(static_cast<float>(a), static_cast<float>(b));
}
OPGEN_F float copysign_(float a, float b) { return copysignf(a, b); }
OPGEN_F double copysign_(double a, double b) { return copysign(a, b); }
template <typename T> OPGEN_F float copysign_(T a, T b) {
  return copysignf(static_cast<float>(a), static_cast<float>(b));
}
OPGEN_F float nextafter_(float a, float b) { return nextafterf(a, b); }
OPGEN_F double nextafter_(double a, double b) { return nextafter(a, b); }
template <typename T> OPGEN_F float nextafter_(T a, T b) {
  return nextafterf(static_cast<float>(a), static_cast<float>(b));
}

// gcd and lcm of integers (non-negative, as std::gcd / std::lcm); lcm is 0 when either is 0.
template <typename T> OPGEN_F T gcd_(T a, T b) {
  a = a < T(0) ? static_cast<T>(-a) : a;
  b = b < T(0) ? static_cast<T>(-b) : b;
  while (b != T(0)) {
    T t = static_cast<T>(a % b);
    a = b;
    b = t;
  }
  return a;
}
template <typename T> OPGEN_F T lcm_(T a, T b) {
  T g = gcd_(a, b);
  if (g == T(0)) return T(0);
  T r = static_cast<T>((a / g) * b);
  return r < T(0) ? static_cast<T>(-r) : r;
}

// PyTorch's shifts: the count is read as signed; a count out of [0, width) gives 0 (<<) or shifts every
// bit out (>>, arithmetic for signed types: the sign remains).
template <typename T> OPGEN_F long long shift_count(T b) {
  if (sizeof(T) == 1) return static_cast<long long>(static_cast<signed char>(b));
  if (sizeof(T) == 2) return static_cast<long long>(static_cast<short>(b));
  if (sizeof(T) == 4) return static_cast<long long>(static_cast<int>(b));
  return static_cast<long long>(b);
}
template <typename T> OPGEN_F T shl_(T a, T b) {
  const long long count = shift_count(b);
  if (count < 0 || count >= static_cast<long long>(sizeof(T) * 8)) return T(0);
  return static_cast<T>(static_cast<unsigned long long>(a) << count);
}
template <typename T> OPGEN_F T shr_(T a, T b) {
  const bool is_signed = T(-1) < T(0);
  const long long width = static_cast<long long>(sizeof(T) * 8) - (is_signed ? 1 : 0);
  const long long count = shift_count(b);
  if (count < 0 || count >= width) return (is_signed && a < T(0)) ? static_cast<T>(-1) : T(0);
  return static_cast<T>(a >> count);
}
}  // namespace opgen

#define OPGEN_BINARY(name, impl)                                                         \
  template <typename A, typename B> OPGEN_F auto op_##name(A a, B b) {                   \
    typedef typename opgen::Common<A, B>::type C;                                        \
    return opgen::impl(static_cast<C>(a), static_cast<C>(b));                            \
  }

OPGEN_BINARY(maximum, maximum)
OPGEN_BINARY(minimum, minimum)
OPGEN_BINARY(fmod, fmod_)
OPGEN_BINARY(remainder, remainder)
OPGEN_BINARY(floordiv, floordiv)
OPGEN_BINARY(pow, pow_)
OPGEN_BINARY(atan2, atan2_)
OPGEN_BINARY(copysign, copysign_)
OPGEN_BINARY(nextafter, nextafter_)
OPGEN_BINARY(gcd, gcd_)
OPGEN_BINARY(lcm, lcm_)
OPGEN_BINARY(shl, shl_)
OPGEN_BINARY(shr, shr_)
#undef OPGEN_BINARY

// where(c, a, b): `c` is tested for non-zero; a and b meet in their common type.
template <typename T, typename A, typename B> OPGEN_F auto op_where(T c, A a, B b) {
  typedef typename opgen::Common<A, B>::type C;
  return c != T(0) ? static_cast<C>(a) : static_cast<C>(b);
}
