// opgen: float32 tanh for the fused CPU kernels (Note [Vector math of the CPU kernels] in
// runtime/compile/cpp_build.py). Included by the CPU kernels' prelude only, after opgen_math.cuh: CUDA
// sources (NVRTC) and the emulated device never see it. The function is inline and branch-free (both
// formulas are computed, a select picks one), so GCC vectorises a loop that calls it under `#pragma omp
// simd` with no vector library; IEEE semantics are kept (no fast-math).
//   opgen_cpu::tanh(x): at most 2 ulp from tanh(x) (see the Note for the measured maximum); +-0 -> +-0 (the
//                       sign kept), +-inf -> +-1, NaN -> NaN, |x| >= 9.01 -> +-1 exactly, subnormal x -> x.
// The constants are printed by tools/fit_cpu_math.py (`--check`, run by the tests, compares them).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

// Multiply-add: the fused instruction where the target has it (one rounding), else a product and a sum
// (-ffp-contract=off keeps them two). The bound holds for both; the tests build both.
#if defined(__FMA__) && !defined(OPGEN_CPU_MATH_NO_FMA)
#define OPGEN_CPU_FMA 1
#define OPGEN_CPU_MADD(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define OPGEN_CPU_FMA 0
#define OPGEN_CPU_MADD(a, b, c) ((a) * (b) + (c))
#endif

#define OPGEN_CPU_LOG2E 0x1.715476p+0f
#define OPGEN_CPU_LN2 0x1.62e43p-1f
#define OPGEN_CPU_LN2_HI 0x1.62ep-1f
#define OPGEN_CPU_LN2_LO 0x1.0bfbe8p-15f
#define OPGEN_CPU_EXP_Q0 0x1.fffdfcp-2f
#define OPGEN_CPU_EXP_Q1 0x1.5557bp-3f
#define OPGEN_CPU_EXP_Q2 0x1.572a26p-5f
#define OPGEN_CPU_EXP_Q3 0x1.1061ccp-7f
#define OPGEN_CPU_TANH_N0 -0x1.555554p-2f
#define OPGEN_CPU_TANH_N1 -0x1.e13fep-7f
#define OPGEN_CPU_TANH_D1 0x1.c6b78ap-2f
#define OPGEN_CPU_TANH_D2 0x1.018d34p-6f
#define OPGEN_CPU_TANH_SMALL 0x1p+0f

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

// e^x = 2^n (1 + s): n = round(x / ln2), read from the low bits of x log2(e) + 1.5*2^23 (adding the
// shifter rounds to an integer: no conversion instruction); r = x - n ln2 (one multiply-add, whose product
// is exact, or ln2 in two parts without one); s = e^r - 1 = r + r^2 q(r), q in Estrin's form. Returns s
// and sets n. For x in [0, 19] (tanh's use): n in [0, 28].
inline float expm1_reduced(float x, int32_t& n) {
  const float shifter = 0x1.8p23f;
  const float t = OPGEN_CPU_MADD(x, OPGEN_CPU_LOG2E, shifter);
  const float nf = t - shifter;
  n = static_cast<int32_t>(to_bits(t) - to_bits(shifter));
#if OPGEN_CPU_FMA
  const float r = OPGEN_CPU_MADD(nf, -OPGEN_CPU_LN2, x);
#else
  const float r = OPGEN_CPU_MADD(nf, -OPGEN_CPU_LN2_LO, OPGEN_CPU_MADD(nf, -OPGEN_CPU_LN2_HI, x));
#endif
  const float r2 = r * r;
  const float lo = OPGEN_CPU_MADD(OPGEN_CPU_EXP_Q1, r, OPGEN_CPU_EXP_Q0);
  const float hi = OPGEN_CPU_MADD(OPGEN_CPU_EXP_Q3, r, OPGEN_CPU_EXP_Q2);
  return OPGEN_CPU_MADD(r2, OPGEN_CPU_MADD(hi, r2, lo), r);
}

// 2^n for n in [-126, 127].
inline float pow2(int32_t n) { return from_bits(static_cast<uint32_t>(n + 127) << 23); }

inline float tanh(float x) {
  // Both formulas on |x|; the sign is put back last (so -0 stays -0).
  const float a = __builtin_fabsf(x);
  // |x| < TANH_SMALL: |x| + |x|^3 n(x^2)/d(x^2). The correction is at most 0.31 of the result, so its
  // rounding errors count for a fraction of an ulp.
  const float x2 = a * a;
  const float num = OPGEN_CPU_MADD(OPGEN_CPU_TANH_N1, x2, OPGEN_CPU_TANH_N0);
  const float den = OPGEN_CPU_MADD(OPGEN_CPU_MADD(OPGEN_CPU_TANH_D2, x2, OPGEN_CPU_TANH_D1), x2, 1.0f);
  const float small = OPGEN_CPU_MADD(a * x2, num / den, a);
  // Otherwise 1 - 2/(e^{2|x|} + 1), e^{2|x|} + 1 = s 2^n + (2^n + 1) in one multiply-add. The quotient is at
  // most 0.31 of the result there, so its errors (and e's) count for a fraction of an ulp. |x| is clamped at
  // 9.5 (from 9.01 the result rounds to 1) as an integer minimum of the bits (a >= 0 orders as its bits do;
  // NaN becomes 9.5 here and is kept by the other formula).
  const float ac = from_bits(std::min(to_bits(a), to_bits(9.5f)));
  int32_t n;
  const float s = expm1_reduced(ac + ac, n);
  const float scale = pow2(n);
  const float large = 1.0f - 2.0f / OPGEN_CPU_MADD(s, scale, scale + 1.0f);
  // NaN fails the comparison and takes the first formula, which keeps it NaN. Both are >= +0, so the sign
  // goes back by one OR.
  const float t = a >= OPGEN_CPU_TANH_SMALL ? large : small;
  return from_bits(to_bits(t) | (to_bits(x) & 0x80000000u));
}

}  // namespace opgen_cpu

// ---- the kernels' op_tanh ---------------------------------------------------------------------------
// The fused kernels call op_tanh(x) (opgen_math.cuh, shared with CUDA). From here on in a CPU kernel's
// source the name means the overloads below: float goes to tanh above, every other type to opgen_math.cuh's
// (float64 keeps libm/libmvec; integers and the half types go as before).
namespace opgen_cpu {

template <typename T> inline auto op_tanh(T x) { return ::op_tanh(x); }
inline float op_tanh(float x) { return opgen_cpu::tanh(x); }

}  // namespace opgen_cpu

#define op_tanh opgen_cpu::op_tanh
