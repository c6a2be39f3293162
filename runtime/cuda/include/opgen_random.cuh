// opgen: counter-based random numbers. Note [Philox streams]
// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) maps a 128-bit
// counter and a 64-bit key to four 32-bit words. opgen's key is the generator's seed; the counter is
// (group, group >> 32, offset, offset >> 32), where `offset` is the generator's position, advanced by
// the host after every launch (runtime/cuda/random.py), and `group` numbers the elements' groups: one
// Philox call fills a group of 4 (32-bit values) or 2 (64-bit values) consecutive elements. So element i
// of a tensor depends only on (seed, offset, i): results do not depend on the grid, and the host twin
// (runtime/cuda/random.py: philox4x32) reproduces any element.
#pragma once

#include "opgen_math.cuh"

namespace opgen {

struct Philox4 {
  unsigned int v[4];
};

__device__ __forceinline__ Philox4 philox4x32(unsigned long long group, unsigned long long offset,
                                              unsigned long long seed) {
  unsigned int c0 = static_cast<unsigned int>(group), c1 = static_cast<unsigned int>(group >> 32);
  unsigned int c2 = static_cast<unsigned int>(offset), c3 = static_cast<unsigned int>(offset >> 32);
  unsigned int k0 = static_cast<unsigned int>(seed), k1 = static_cast<unsigned int>(seed >> 32);
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const unsigned int hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
    const unsigned int hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  Philox4 r;
  r.v[0] = c0;
  r.v[1] = c1;
  r.v[2] = c2;
  r.v[3] = c3;
  return r;
}

// [0, 1) from 24 (float) or 53 (double) random bits, as PyTorch.
__device__ __forceinline__ float uniform_float(unsigned int x) {
  return static_cast<float>(x & 0xFFFFFFu) * (1.0f / 16777216.0f);
}
__device__ __forceinline__ double uniform_double(unsigned int lo, unsigned int hi) {
  const unsigned long long bits = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<double>(bits >> 11) * (1.0 / 9007199254740992.0);
}

// Box-Muller: two uniforms in [0, 1) -> two standard normals (1 - u1 is in (0, 1], so the log is finite).
__device__ __forceinline__ void box_muller(float u1, float u2, float& z0, float& z1) {
  const float r = sqrtf(-2.0f * logf(1.0f - u1));
  float s, c;
  sincospif(2.0f * u2, &s, &c);
  z0 = r * c;
  z1 = r * s;
}
__device__ __forceinline__ void box_muller(double u1, double u2, double& z0, double& z1) {
  const double r = sqrt(-2.0 * log(1.0 - u1));
  double s, c;
  sincospi(2.0 * u2, &s, &c);
  z0 = r * c;
  z1 = r * s;
}

// Random values of one group (group g covers elements g * P ... g * P + P - 1, P = values per group).
// `A` is float for 16- and 32-bit floating outputs, double for float64.
template <typename A> struct Draw;
template <> struct Draw<float> {
  static constexpr int P = 4;
  static __device__ __forceinline__ void uniform(const Philox4& r, float (&u)[4]) {
#pragma unroll
    for (int k = 0; k < 4; ++k) u[k] = uniform_float(r.v[k]);
  }
  static __device__ __forceinline__ void normal(const Philox4& r, float (&z)[4]) {
    float u[4];
    uniform(r, u);
    box_muller(u[0], u[1], z[0], z[1]);
    box_muller(u[2], u[3], z[2], z[3]);
  }
};
template <> struct Draw<double> {
  static constexpr int P = 2;
  static __device__ __forceinline__ void uniform(const Philox4& r, double (&u)[2]) {
    u[0] = uniform_double(r.v[0], r.v[1]);
    u[1] = uniform_double(r.v[2], r.v[3]);
  }
  static __device__ __forceinline__ void normal(const Philox4& r, double (&z)[2]) {
    double u[2];
    uniform(r, u);
    box_muller(u[0], u[1], z[0], z[1]);
  }
};

// Grid-stride over the groups of an n-element contiguous output.
#define OPGEN_GROUPS(g, n, P)                                                                        \
  for (unsigned long long g = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x; \
       g * (P) < (n); g += static_cast<unsigned long long>(blockDim.x) * gridDim.x)

// uniform_: low + u * (high - low), u in [0, 1); a value rounded up to `high` becomes `low`.
template <typename out_t, typename A>
__device__ __forceinline__ void uniform_kernel(unsigned long long n, out_t* out, unsigned long long seed,
                                               unsigned long long offset, A low, A high) {
  constexpr int P = Draw<A>::P;
  OPGEN_GROUPS(g, n, P) {
    A u[P];
    Draw<A>::uniform(philox4x32(g, offset, seed), u);
#pragma unroll
    for (int k = 0; k < P; ++k) {
      const unsigned long long i = g * P + k;
      if (i < n) {
        out_t v = cast<out_t>(low + u[k] * (high - low));
        if (!(cast<A>(v) < high)) v = cast<out_t>(low);
        out[i] = v;
      }
    }
  }
}

template <typename out_t, typename A>
__device__ __forceinline__ void normal_kernel(unsigned long long n, out_t* out, unsigned long long seed,
                                              unsigned long long offset, A mean, A std) {
  constexpr int P = Draw<A>::P;
  OPGEN_GROUPS(g, n, P) {
    A z[P];
    Draw<A>::normal(philox4x32(g, offset, seed), z);
#pragma unroll
    for (int k = 0; k < P; ++k) {
      const unsigned long long i = g * P + k;
      if (i < n) out[i] = cast<out_t>(mean + z[k] * std);
    }
  }
}

// randint: low + (64 random bits mod range), range = high - low >= 1; two elements per group.
template <typename out_t>
__device__ __forceinline__ void randint_kernel(unsigned long long n, out_t* out, unsigned long long seed,
                                               unsigned long long offset, long long low,
                                               unsigned long long range) {
  OPGEN_GROUPS(g, n, 2) {
    const Philox4 r = philox4x32(g, offset, seed);
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const unsigned long long i = g * 2 + k;
      const unsigned long long bits = (static_cast<unsigned long long>(r.v[2 * k + 1]) << 32) | r.v[2 * k];
      if (i < n) out[i] = cast<out_t>(low + static_cast<long long>(bits % range));
    }
  }
}

}  // namespace opgen
