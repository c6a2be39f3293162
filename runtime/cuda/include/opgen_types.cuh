// opgen: storage types, casts and index helpers shared by every generated CUDA kernel.
// Hand-written (runtime/cuda/include); compiled by NVRTC with no other headers, so that
// CI can compile every kernel without the CUDA toolkit (see Note [NVRTC without a device]
// in runtime/cuda/nvrtc_check.py).
#pragma once

// Shared memory of opgen's kernels is declared with these: plain `__shared__` on a GPU; under emulation
// (runtime/cuda/emulator/opgen_emulate.h) arrays that are poisoned per block, bounds-checked and
// race-checked (Note [Schedules that expose races]).
#ifndef OPGEN_SHARED_ARRAY
#define OPGEN_SHARED_ARRAY(T, name, n) __shared__ T name[n]
#define OPGEN_SHARED_VAR(T, name) __shared__ T name
#endif

namespace opgen {

// ---- half and bfloat16 as raw 16-bit storage; arithmetic happens in float ----------------------
struct alignas(2) half { unsigned short x; };
struct alignas(2) bfloat16 { unsigned short x; };

__device__ __forceinline__ float half_to_float(half h) {
#ifdef OPGEN_HOST_EMULATION  // the host engine (runtime/cuda/emulator): the same conversion in software
  return opgen_emu::half_bits_to_float(h.x);
#else
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.x));
  return f;
#endif
}
__device__ __forceinline__ half float_to_half(float f) {
  half h;
#ifdef OPGEN_HOST_EMULATION
  h.x = opgen_emu::float_to_half_bits(f);
#else
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.x) : "f"(f));
#endif
  return h;
}
__device__ __forceinline__ float bfloat16_to_float(bfloat16 b) {
  return __uint_as_float(static_cast<unsigned int>(b.x) << 16);
}
__device__ __forceinline__ bfloat16 float_to_bfloat16(float f) {
  // Round to nearest even; NaN stays a (quiet) NaN.
  unsigned int u = __float_as_uint(f);
  bfloat16 b;
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    b.x = 0x7fc0;
    return b;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  b.x = static_cast<unsigned short>(u >> 16);
  return b;
}

// ---- the type arithmetic happens in (PyTorch's opmath_type) -------------------------------------
template <typename T> struct OpMath { typedef T type; };
template <> struct OpMath<half> { typedef float type; };
template <> struct OpMath<bfloat16> { typedef float type; };

// ---- cast<To>(from): every conversion between storage and compute types -------------------------
// Widen 16-bit floats to float first; bool is `!= 0`, as C++ and PyTorch do.
__device__ __forceinline__ float widen(half v) { return half_to_float(v); }
__device__ __forceinline__ float widen(bfloat16 v) { return bfloat16_to_float(v); }
template <typename T> __device__ __forceinline__ T widen(T v) { return v; }

template <typename To> struct Cast {
  template <typename From> static __device__ __forceinline__ To go(From v) {
    return static_cast<To>(widen(v));
  }
};
template <> struct Cast<bool> {
  template <typename From> static __device__ __forceinline__ bool go(From v) {
    return widen(v) != 0;
  }
};
template <> struct Cast<half> {
  template <typename From> static __device__ __forceinline__ half go(From v) {
    return float_to_half(static_cast<float>(widen(v)));
  }
  static __device__ __forceinline__ half go(half v) { return v; }
};
template <> struct Cast<bfloat16> {
  template <typename From> static __device__ __forceinline__ bfloat16 go(From v) {
    return float_to_bfloat16(static_cast<float>(widen(v)));
  }
  static __device__ __forceinline__ bfloat16 go(bfloat16 v) { return v; }
};
template <typename To, typename From> __device__ __forceinline__ To cast(From v) {
  return Cast<To>::go(v);
}

// ---- vectorised access: V elements of T moved as one aligned load/store -------------------------
template <int V, typename T> struct alignas(sizeof(T) * V) Pack { T v[V]; };

// Pack j of `base` (elements j*V .. j*V+V-1), loaded or stored as one access. A GPU faults on a misaligned
// vector access; the emulator checks the alignment and that the pack lies inside an array argument.
template <int V, typename T, typename I> __device__ __forceinline__ Pack<V, T> load_pack(const T* base, I j) {
  const Pack<V, T>* p = reinterpret_cast<const Pack<V, T>*>(base) + j;
#ifdef OPGEN_HOST_EMULATION
  opgen_emu::check_vector_access(p, sizeof(Pack<V, T>), alignof(Pack<V, T>), "load");
#endif
  return *p;
}
template <int V, typename T, typename I>
__device__ __forceinline__ void store_pack(T* base, I j, const Pack<V, T>& value) {
  Pack<V, T>* p = reinterpret_cast<Pack<V, T>*>(base) + j;
#ifdef OPGEN_HOST_EMULATION
  opgen_emu::check_vector_access(p, sizeof(Pack<V, T>), alignof(Pack<V, T>), "store");
#endif
  *p = value;
}

// ---- Note [Fast division] ----------------------------------------------------------------------
// Sizes of the iteration space are passed as IntDivider constants (THC's IntDivider): for a
// divisor d, shift = ceil(log2 d) and magic = floor(2^B (2^shift - d) / d) + 1 where B is the
// index width. Then n / d == (mulhi(n, magic) + n) >> shift for every n < 2^(B-1), which is why
// 32-bit kernels are used only when every index and offset fits in 31 bits. The host computes
// the constants in runtime/cuda/launch.py (int_divider) and tests them against `//`.
__device__ __forceinline__ unsigned int mulhi(unsigned int a, unsigned int b) { return __umulhi(a, b); }
__device__ __forceinline__ unsigned long long mulhi(unsigned long long a, unsigned long long b) {
  return __umul64hi(a, b);
}

#ifndef OPGEN_MAX_DIMS
#define OPGEN_MAX_DIMS 16
#endif

// ---- Note [Strided operands] -------------------------------------------------------------------
// The iteration space has `ndim` dims (after the launcher merged and dropped what it could),
// stored innermost first. Operand k's element offset for linear index i is the sum over dims of
// (coordinate along dim) * stride[dim][k]. The struct is passed by value; it is an array of
// index_t only, so the host packs it as a flat array (runtime/cuda/launch.py: pack_strided).
template <typename index_t, int NARGS> struct Strided {
  index_t ndim;
  index_t size[OPGEN_MAX_DIMS];
  index_t magic[OPGEN_MAX_DIMS];
  index_t shift[OPGEN_MAX_DIMS];
  index_t stride[OPGEN_MAX_DIMS][NARGS];

  __device__ __forceinline__ void offsets(index_t linear, index_t (&off)[NARGS]) const {
#pragma unroll
    for (int k = 0; k < NARGS; ++k) off[k] = 0;
#pragma unroll
    for (int d = 0; d < OPGEN_MAX_DIMS; ++d) {
      if (d == ndim) break;
      const index_t q = (mulhi(linear, magic[d]) + linear) >> shift[d];
      const index_t coord = linear - q * size[d];
      linear = q;
#pragma unroll
      for (int k = 0; k < NARGS; ++k) off[k] += coord * stride[d][k];
    }
  }
};

}  // namespace opgen

// Grid-stride loop over [0, n): every launch size works, grids are sized from the SM count.
#define OPGEN_GRID_STRIDE(index_t, i, n)                                                  \
  for (index_t i = static_cast<index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<index_t>(blockDim.x) * gridDim.x)
