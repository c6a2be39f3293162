// opgen: float32 tanh for the fused CPU kernels (Note [Vector math of the CPU kernels] in
// runtime/compile/cpp_build.py). Included by the CPU kernels' prelude only, after opgen_math.cuh: CUDA
// sources (NVRTC) and the emulated device never see it. The function is inline and branch-free (both
// cases are computed, a select picks one), so GCC vectorises a loop that calls it under `#pragma omp simd`
// with no vector library; IEEE semantics are kept (no fast-math).
//   opgen_cpu::tanh(x): at most 2 ulp from tanh(x) (1.2 measured: tests/compile/test_cpu_math.py);
//                       +-0 -> +-0 (sign kept), +-inf -> +-1, NaN -> NaN, |x| >= 9.01 -> +-1 exactly,
//                       subnormal x -> x.
// The constants below are printed by tools/fit_cpu_math.py (`--check` compares them with this file).
#pragma once

#include <cstdint>
#include <cstring>

// Multiply-add: the fused instruction where the target has it (one rounding), else a product and a sum
// (-ffp-contract=off keeps them two); the error bounds hold for both (the test builds both).
#if defined(__FMA__) && !defined(OPGEN_CPU_MATH_NO_FMA)
#define OPGEN_CPU_MADD(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define OPGEN_CPU_MADD(a, b, c) ((a) * (b) + (c))
#endif

#define OPGEN_CPU_LOG2E 0x1.715476p+0f
#define OPGEN_CPU_LN2_HI 0x1.62ep-1f
#define OPGEN_CPU_LN2_LO 0x1.0bfbe8p-15f
#define OPGEN_CPU_EXP_Q0 0x1.fffffcp-2f
#define OPGEN_CPU_EXP_Q1 0x1.555492p-3f
#define OPGEN_CPU_EXP_Q2 0x1.5558bp-5f
#define OPGEN_CPU_EXP_Q3 0x1.123986p-7f
#define OPGEN_CPU_EXP_Q4 0x1.6a4d5ep-10f
#define OPGEN_CPU_TANH_P0 -0x1.555554p-2f
#define OPGEN_CPU_TANH_P1 0x1.11107ap-3f
#define OPGEN_CPU_TANH_P2 -0x1.b9f18ap-5f
#define OPGEN_CPU_TANH_P3 0x1.63a57ep-6f
#define OPGEN_CPU_TANH_P4 -0x1.0c602p-7f
#define OPGEN_CPU_TANH_P5 0x1.1a2e3ep-9f
// Below this |x| tanh is its odd polynomial; from it, 1 - 2/(e^{2|x|} + 1) (tools/fit_cpu_math.py TANH_SMALL).
#define OPGEN_CPU_TANH_SMALL 0.625f

namespace opgen_cpu {

inline float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// e^x = 2^n * e^r, n = round(x / ln2), r = x - n ln2 in [-ln2/2, ln2/2] (ln2 in two parts, the first
// product exact), e^r = 1 + r + r^2 q(r). n is read from the low bits of x*log2e + 1.5*2^23 (adding the
// shifter rounds to an integer; no conversion instruction needed). Returns e^r - 1 and n. q is evaluated
// in Estrin's form: the loops these functions sit in are bound by the latency of their longest chain.
inline float expm1_reduced(float x, int32_t& n) {
  const float shifter = 0x1.8p23f;
  const float t = OPGEN_CPU_MADD(x, OPGEN_CPU_LOG2E, shifter);
  const float nf = t - shifter;
  n = static_cast<int32_t>(to_bits(t) - to_bits(shifter));
  float r = OPGEN_CPU_MADD(nf, -OPGEN_CPU_LN2_HI, x);
  r = OPGEN_CPU_MADD(nf, -OPGEN_CPU_LN2_LO, r);
  const float r2 = r * r;
  const float lo = OPGEN_CPU_MADD(OPGEN_CPU_EXP_Q1, r, OPGEN_CPU_EXP_Q0);
  const float hi = OPGEN_CPU_MADD(OPGEN_CPU_EXP_Q4, r2, OPGEN_CPU_MADD(OPGEN_CPU_EXP_Q3, r, OPGEN_CPU_EXP_Q2));
  return OPGEN_CPU_MADD(r2, OPGEN_CPU_MADD(hi, r2, lo), r);
}

// 2^n for n in [-126, 127].
inline float pow2(int32_t n) { return from_bits(static_cast<uint32_t>(n + 127) << 23); }

inline float tanh(float x) {
  // Both formulas on |x|, the sign put back at the end (so -0 stays -0).
  const float a = __builtin_fabsf(x);
  // |x| < TANH_SMALL: |x| + |x|^3 p(x^2) (its rounding errors are far below the result's ulp: |x^3 p| is
  // below 9% of |x|).
  const float x2 = a * a;
  const float x4 = x2 * x2;
  const float p01 = OPGEN_CPU_MADD(OPGEN_CPU_TANH_P1, x2, OPGEN_CPU_TANH_P0);
  const float p23 = OPGEN_CPU_MADD(OPGEN_CPU_TANH_P3, x2, OPGEN_CPU_TANH_P2);
  const float p45 = OPGEN_CPU_MADD(OPGEN_CPU_TANH_P5, x2, OPGEN_CPU_TANH_P4);
  const float p = OPGEN_CPU_MADD(OPGEN_CPU_MADD(p45, x4, p23), x4, p01);
  const float small = OPGEN_CPU_MADD(a * x2, p, a);
  // Otherwise 1 - 2/(e^{2|x|} + 1): the quotient is below 0.45 of the result there, so its errors count
  // for less than half an ulp each. |x| is clamped at 9.5 (from 9.01 the result rounds to 1).
  const float ac = a < 9.5f ? a : 9.5f;
  int32_t n;
  const float s = expm1_reduced(ac + ac, n);  // e^{2|x|} = (1 + s) 2^n, n in [0, 28]: one normal scale
  const float scale = pow2(n);
  const float large = 1.0f - 2.0f / OPGEN_CPU_MADD(s, scale, scale + 1.0f);
  // NaN fails the comparison and takes the first formula, which keeps it NaN.
  return __builtin_copysignf(a >= OPGEN_CPU_TANH_SMALL ? large : small, x);
}

}  // namespace opgen_cpu

// ---- the kernels' op_tanh on float ---------------------------------------------------------------------
// The fused kernels call op_tanh(x) (opgen_math.cuh, shared with CUDA). From here on in a CPU kernel's
// source the name is the overloads below: float goes to tanh above, every other type to opgen_math.cuh's
// (float64 keeps libm/libmvec, integers and halves go as before). exp is not routed: libmvec's expf was as
// fast as the inline one (Note [Vector math of the CPU kernels]).
namespace opgen_cpu {

template <typename T> inline auto op_tanh(T x) { return ::op_tanh(x); }
inline float op_tanh(float x) { return opgen_cpu::tanh(x); }

}  // namespace opgen_cpu

#define op_tanh opgen_cpu::op_tanh
