// Error sweep of the CPU kernels' float32 tanh (runtime/compile/cpu_math.h), built by
// tests/compile/test_cpu_math.py through runtime.compile.cpp_build.build: the same prelude, compiler and flags
// as the fused kernels, and tanh is called as a kernel calls it (`op_tanh` in an `omp simd` loop). The
// reference is libm's double tanh (its error is far below a float32 ulp).
#include <cfloat>

namespace {

constexpr long long kChunk = 4096;

// Error of y against ref in float32 ulps of ref; 1e30 for a wrong class (NaN, infinity, a finite result
// that should overflow or one that overflows wrongly).
double ulp_error(float y, double ref) {
  if (std::isnan(ref)) return std::isnan(y) ? 0.0 : 1e30;
  const float rf = static_cast<float>(ref);
  if (std::isinf(rf) || std::isinf(y)) return rf == y ? 0.0 : 1e30;
  if (std::isnan(y)) return 1e30;
  const double mag = std::fabs(ref);
  const int e = mag < FLT_MIN ? -126 : std::ilogb(mag);
  return std::fabs(static_cast<double>(y) - ref) / std::ldexp(1.0, e - 23);
}

}  // namespace

extern "C" double opgen_test_ulp_error(float y, double ref) { return ulp_error(y, ref); }

extern "C" void opgen_test_tanh(const float* __restrict in, float* __restrict out, long long n) {
  #pragma omp simd
  for (long long j = 0; j < n; ++j) out[j] = static_cast<float>(op_tanh(in[j]));
}

// The largest error (ulps) of tanh over the float32 bit patterns lo, lo + step, ... below hi; the pattern
// of the first largest one in *worst.
extern "C" double opgen_test_sweep(unsigned long long lo, unsigned long long hi, unsigned long long step,
                                   unsigned int* worst) {
  static float in[kChunk], out[kChunk];
  double most = -1.0;
  for (unsigned long long b = lo; b < hi;) {
    long long n = 0;
    for (; n < kChunk && b < hi; ++n, b += step) {
      const unsigned int bits = static_cast<unsigned int>(b);
      std::memcpy(&in[n], &bits, sizeof bits);
    }
    opgen_test_tanh(in, out, n);
    for (long long k = 0; k < n; ++k) {
      const double err = ulp_error(out[k], std::tanh(static_cast<double>(in[k])));
      if (err > most) {
        most = err;
        std::memcpy(worst, &in[k], sizeof *worst);
      }
    }
  }
  return most;
}
