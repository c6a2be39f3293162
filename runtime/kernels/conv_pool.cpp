// Eager C++ kernels of convolution and max pooling (runtime/kernels/conv_pool_cpp.py loads them; Note
// [Compiled convolution and pooling kernels] there). Hand-written, not generated: these are loops over
// windows, not pointwise specs. Every entry takes its geometry as one int64 array `g`, element strides
// (not bytes), and returns nothing or an int status; all work runs on the calling thread.
//
// Geometry g of the window entries (the order of GEOMETRY in conv_pool_cpp.py):
//   0 N, 1 C, 2 H, 3 W, 4 sxn, 5 sxc, 6 sxh, 7 sxw    the input (N, C, H, W) and its strides
//   8 kh, 9 kw, 10 sh, 11 sw, 12 ph, 13 pw, 14 dh, 15 dw, 16 OH, 17 OW
//   18 son, 19 sor, 20 sol                            the columns' strides: sample, row (c, i, j), position
#include <cstdint>
#include <cstring>
#include <cmath>
#include <limits>
#include <type_traits>
#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace {

typedef int64_t i64;

inline i64 floor_div(i64 a, i64 b) {  // b > 0
    i64 q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

inline i64 ceil_div(i64 a, i64 b) { return -floor_div(-a, b); }

inline i64 clamp(i64 v, i64 lo, i64 hi) { return v < lo ? lo : (v > hi ? hi : v); }

// The output columns x in [x0, x1) of kernel column j read inside the input row: x*sw - pw + j*dw in [0, W).
inline void inside(i64 j, const i64* g, i64* x0, i64* x1) {
    const i64 W = g[3], sw = g[11], pw = g[13], dw = g[15], OW = g[17];
    *x0 = clamp(ceil_div(pw - j * dw, sw), 0, OW);
    *x1 = clamp(ceil_div(W + pw - j * dw, sw), *x0, OW);
}

// im2col: cols[n*son + ((c*kh + i)*kw + j)*sor + (y*OW + x)*sol] = x[n, c, y*sh - ph + i*dh, x*sw - pw + j*dw],
// zero where that is outside the input. A copy, so it is written once per element size. Rows are OW long:
// plain loops (a memcpy call per row cost 3x the copy at the demo's 6x6 planes), and with stride 1 and
// OW == W one run per plane.
template <typename T>
void im2col(const T* __restrict in, const i64* g, T* __restrict cols) {
    const i64 N = g[0], C = g[1], H = g[2], sxn = g[4], sxc = g[5], sxh = g[6], sxw = g[7];
    const i64 kh = g[8], kw = g[9], sh = g[10], sw = g[11], ph = g[12], pw = g[13], dh = g[14], dw = g[15];
    const i64 OH = g[16], OW = g[17], son = g[18], sor = g[19], sol = g[20];
    const bool dense = sol == 1 && sw == 1 && sxw == 1;
    const bool same = g[17] == g[3] && sxh == g[3];  // OW == W, rows contiguous
    for (i64 c = 0; c < C; ++c)
        for (i64 i = 0; i < kh; ++i)
            for (i64 j = 0; j < kw; ++j) {
                i64 x0, x1;
                inside(j, g, &x0, &x1);
                const i64 shift = j * dw - pw;
                for (i64 n = 0; n < N; ++n) {
                    const T* __restrict plane = in + n * sxn + c * sxc;
                    T* __restrict row = cols + n * son + ((c * kh + i) * kw + j) * sor;
                    if (dense && same && sh == 1) {
                        // Rows as wide as the input's, which are contiguous: the valid rows are one flat run
                        // (a row's padding columns read the neighbouring row's ends), then zeroed.
                        const i64 y0 = clamp(ph - i * dh, 0, OH), y1 = clamp(H + ph - i * dh, y0, OH);
                        for (i64 k = 0; k < y0 * OW; ++k) row[k] = T(0);
                        if (y0 < y1) {
                            const T* __restrict src = plane + (i * dh - ph) * OW + shift;
                            const i64 k0 = y0 * OW + x0;
                            std::memcpy(row + k0, src + k0, ((y1 - 1) * OW + x1 - k0) * sizeof(T));
                            for (i64 y = y0; y < y1; ++y) {
                                for (i64 x = 0; x < x0; ++x) row[y * OW + x] = T(0);
                                for (i64 x = x1; x < OW; ++x) row[y * OW + x] = T(0);
                            }
                        }
                        for (i64 k = y1 * OW; k < OH * OW; ++k) row[k] = T(0);
                        continue;
                    }
                    if (dense) {
                        for (i64 y = 0; y < OH; ++y) {
                            T* __restrict o = row + y * OW;
                            const i64 iy = y * sh - ph + i * dh;
                            if (iy < 0 || iy >= H) {
                                for (i64 x = 0; x < OW; ++x) o[x] = T(0);
                                continue;
                            }
                            const T* __restrict src = plane + iy * sxh + shift;
                            for (i64 x = 0; x < x0; ++x) o[x] = T(0);
                            for (i64 x = x0; x < x1; ++x) o[x] = src[x];
                            for (i64 x = x1; x < OW; ++x) o[x] = T(0);
                        }
                        continue;
                    }
                    for (i64 y = 0; y < OH; ++y) {
                        T* __restrict o = row + y * OW * sol;
                        const i64 iy = y * sh - ph + i * dh;
                        if (iy < 0 || iy >= H) {
                            for (i64 x = 0; x < OW; ++x) o[x * sol] = T(0);
                            continue;
                        }
                        const T* __restrict src = plane + iy * sxh;
                        for (i64 x = 0; x < x0; ++x) o[x * sol] = T(0);
                        for (i64 x = x0; x < x1; ++x) o[x * sol] = src[(x * sw + shift) * sxw];
                        for (i64 x = x1; x < OW; ++x) o[x * sol] = T(0);
                    }
                }
            }
}

// col2im, the adjoint: out (N, C, H, W), C-contiguous, set to the sum of the columns over their windows
// (the padding's entries dropped). Sums in the order of the kernel offsets (i, j).
template <typename T>
void col2im(const T* cols, const i64* g, T* out) {
    const i64 N = g[0], C = g[1], H = g[2], W = g[3];
    const i64 kh = g[8], kw = g[9], sh = g[10], sw = g[11], ph = g[12], dh = g[14], dw = g[15];
    const i64 OH = g[16], OW = g[17], son = g[18], sor = g[19], sol = g[20], pw = g[13];
    std::memset(out, 0, sizeof(T) * N * C * H * W);
    for (i64 n = 0; n < N; ++n)
        for (i64 c = 0; c < C; ++c) {
            T* plane = out + (n * C + c) * H * W;
            for (i64 i = 0; i < kh; ++i)
                for (i64 j = 0; j < kw; ++j) {
                    const T* row = cols + n * son + ((c * kh + i) * kw + j) * sor;
                    i64 x0, x1;
                    inside(j, g, &x0, &x1);
                    const i64 shift = j * dw - pw;
                    for (i64 y = 0; y < OH; ++y) {
                        const i64 iy = y * sh - ph + i * dh;
                        if (iy < 0 || iy >= H) continue;
                        const T* src = row + y * OW * sol;
                        T* dst = plane + iy * W + shift;
                        if (sol == 1 && sw == 1) {
                            for (i64 x = x0; x < x1; ++x) dst[x] += src[x];
                        } else {
                            for (i64 x = x0; x < x1; ++x) dst[x * sw] += src[x * sol];
                        }
                    }
                }
        }
}

// The batch-last forms, for short rows and a larger batch: columns (C*kh*kw, OH, OW, N), so that every
// window position is one run of N elements, read from an input whose N is innermost (sxn == 1: the caller
// passes a (C, H, W, N) copy) and, in col2im, added into a C-contiguous (C, H, W, N) output.
template <typename T>
void im2col_batch_last(const T* __restrict in, const i64* g, T* __restrict cols) {
    const i64 N = g[0], C = g[1], H = g[2], sxn = g[4], sxc = g[5], sxh = g[6], sxw = g[7];
    const i64 kh = g[8], kw = g[9], sh = g[10], sw = g[11], ph = g[12], pw = g[13], dh = g[14], dw = g[15];
    const i64 OH = g[16], OW = g[17];
    for (i64 c = 0; c < C; ++c)
        for (i64 i = 0; i < kh; ++i)
            for (i64 j = 0; j < kw; ++j) {
                i64 x0, x1;
                inside(j, g, &x0, &x1);
                T* __restrict row = cols + ((c * kh + i) * kw + j) * OH * OW * N;
                for (i64 y = 0; y < OH; ++y) {
                    T* __restrict o = row + y * OW * N;
                    const i64 iy = y * sh - ph + i * dh;
                    if (iy < 0 || iy >= H) {
                        for (i64 k = 0; k < OW * N; ++k) o[k] = T(0);
                        continue;
                    }
                    for (i64 k = 0; k < x0 * N; ++k) o[k] = T(0);
                    for (i64 x = x0; x < x1; ++x) {
                        const T* __restrict src = in + c * sxc + iy * sxh + (x * sw - pw + j * dw) * sxw;
                        T* __restrict ox = o + x * N;
                        if (sxn == 1) {
                            for (i64 n = 0; n < N; ++n) ox[n] = src[n];
                        } else {
                            for (i64 n = 0; n < N; ++n) ox[n] = src[n * sxn];
                        }
                    }
                    for (i64 k = x1 * N; k < OW * N; ++k) o[k] = T(0);
                }
            }
}

template <typename T>
void col2im_batch_last(const T* __restrict cols, const i64* g, T* __restrict out) {
    const i64 N = g[0], C = g[1], H = g[2], W = g[3];
    const i64 kh = g[8], kw = g[9], sh = g[10], sw = g[11], ph = g[12], pw = g[13], dh = g[14], dw = g[15];
    const i64 OH = g[16], OW = g[17];
    std::memset(out, 0, sizeof(T) * N * C * H * W);
    for (i64 c = 0; c < C; ++c)
        for (i64 i = 0; i < kh; ++i)
            for (i64 j = 0; j < kw; ++j) {
                i64 x0, x1;
                inside(j, g, &x0, &x1);
                const T* __restrict row = cols + ((c * kh + i) * kw + j) * OH * OW * N;
                for (i64 y = 0; y < OH; ++y) {
                    const i64 iy = y * sh - ph + i * dh;
                    if (iy < 0 || iy >= H) continue;
                    for (i64 x = x0; x < x1; ++x) {
                        const T* __restrict src = row + (y * OW + x) * N;
                        T* __restrict dst = out + ((c * H + iy) * W + x * sw - pw + j * dw) * N;
                        for (i64 n = 0; n < N; ++n) dst[n] += src[n];
                    }
                }
            }
}

// dst (cols, rows) = src (rows, cols) transposed, both C-contiguous, in square tiles that stay in cache
// (NumPy's transposing copy of an (N, C*H*W) batch reads one cache line per element: 10x slower).
template <typename T>
void transpose(const T* __restrict src, i64 rows, i64 cols, T* __restrict dst) {
    constexpr i64 B = 64 / sizeof(T) < 8 ? 8 : 64 / sizeof(T);
    for (i64 r0 = 0; r0 < rows; r0 += B) {
        const i64 r1 = r0 + B < rows ? r0 + B : rows;
        for (i64 c0 = 0; c0 < cols; c0 += B) {
            const i64 c1 = c0 + B < cols ? c0 + B : cols;
            for (i64 c = c0; c < c1; ++c)
                for (i64 r = r0; r < r1; ++r) dst[c * rows + r] = src[r * cols + c];
        }
    }
}

#if defined(__AVX__)
// 4-byte elements with AVX: 8x8 blocks transposed in registers (2x the tiled loops above on the
// batch-last copies of bench/bench_conv.py's layers); the edges that are not whole blocks elementwise.
inline void transpose8x8(const float* s, i64 ss, float* d, i64 ds) {
    const __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ss), r2 = _mm256_loadu_ps(s + 2 * ss),
                 r3 = _mm256_loadu_ps(s + 3 * ss), r4 = _mm256_loadu_ps(s + 4 * ss),
                 r5 = _mm256_loadu_ps(s + 5 * ss), r6 = _mm256_loadu_ps(s + 6 * ss),
                 r7 = _mm256_loadu_ps(s + 7 * ss);
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1),
                 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3),
                 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
                 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
                 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE),
                 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE),
                 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(d + ds, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(d + 2 * ds, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(d + 3 * ds, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(d + 4 * ds, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(d + 5 * ds, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(d + 6 * ds, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(d + 7 * ds, _mm256_permute2f128_ps(u3, u7, 0x31));
}

template <>
void transpose<uint32_t>(const uint32_t* __restrict src_bits, i64 rows, i64 cols, uint32_t* __restrict dst_bits) {
    // moved as float lanes: shuffles and unaligned loads and stores copy the bits unchanged
    const float* src = reinterpret_cast<const float*>(src_bits);
    float* dst = reinterpret_cast<float*>(dst_bits);
    constexpr i64 B = 32;
    for (i64 r0 = 0; r0 < rows; r0 += B) {
        const i64 r1 = r0 + B < rows ? r0 + B : rows;
        for (i64 c0 = 0; c0 < cols; c0 += B) {
            const i64 c1 = c0 + B < cols ? c0 + B : cols;
            i64 r = r0;
            for (; r + 8 <= r1; r += 8) {
                i64 c = c0;
                for (; c + 8 <= c1; c += 8) transpose8x8(src + r * cols + c, cols, dst + c * rows + r, rows);
                for (; c < c1; ++c)
                    for (i64 k = r; k < r + 8; ++k) dst_bits[c * rows + k] = src_bits[k * cols + c];
            }
            for (; r < r1; ++r)
                for (i64 c = c0; c < c1; ++c) dst_bits[c * rows + r] = src_bits[r * cols + c];
        }
    }
}
#endif

// Depthwise convolution (one input channel per group: weight (O, 1, kh, kw), O = C*m, output channel o
// reads input channel o / m), directly: a GEMM per group would have one row and kh*kw columns. The same
// window loops as im2col, multiplying instead of copying; sums run over (i, j) in order (float tolerance
// against a GEMM's order). out/dx/dw and w, g are C-contiguous; the input x has any strides.
template <typename T>
void depthwise_forward(const T* __restrict in, const i64* g, const T* __restrict w, i64 O, T* __restrict out) {
    const i64 N = g[0], C = g[1], H = g[2], sxn = g[4], sxc = g[5], sxh = g[6], sxw = g[7];
    const i64 kh = g[8], kw = g[9], sh = g[10], sw = g[11], ph = g[12], pw = g[13], dh = g[14], dw = g[15];
    const i64 OH = g[16], OW = g[17], m = O / C;
    const bool dense = sw == 1 && sxw == 1;
    for (i64 n = 0; n < N; ++n)
        for (i64 o = 0; o < O; ++o) {
            const T* __restrict plane = in + n * sxn + (o / m) * sxc;
            T* __restrict op = out + (n * O + o) * OH * OW;
            for (i64 k = 0; k < OH * OW; ++k) op[k] = T(0);
            for (i64 i = 0; i < kh; ++i)
                for (i64 j = 0; j < kw; ++j) {
                    const T wv = w[(o * kh + i) * kw + j];
                    i64 x0, x1;
                    inside(j, g, &x0, &x1);
                    const i64 shift = j * dw - pw;
                    for (i64 y = 0; y < OH; ++y) {
                        const i64 iy = y * sh - ph + i * dh;
                        if (iy < 0 || iy >= H) continue;
                        const T* __restrict src = plane + iy * sxh;
                        T* __restrict orow = op + y * OW;
                        if (dense) {
                            for (i64 x = x0; x < x1; ++x) orow[x] += wv * src[x + shift];
                        } else {
                            for (i64 x = x0; x < x1; ++x) orow[x] += wv * src[(x * sw + shift) * sxw];
                        }
                    }
                }
        }
}

template <typename T>
void depthwise_backward_input(const T* __restrict gr, const i64* g, const T* __restrict w, i64 O,
                              T* __restrict dx) {
    const i64 N = g[0], C = g[1], H = g[2], W = g[3];
    const i64 kh = g[8], kw = g[9], sh = g[10], sw = g[11], ph = g[12], pw = g[13], dh = g[14], dw = g[15];
    const i64 OH = g[16], OW = g[17], m = O / C;
    std::memset(dx, 0, sizeof(T) * N * C * H * W);
    for (i64 n = 0; n < N; ++n)
        for (i64 o = 0; o < O; ++o) {
            T* __restrict plane = dx + (n * C + o / m) * H * W;
            const T* __restrict gp = gr + (n * O + o) * OH * OW;
            for (i64 i = 0; i < kh; ++i)
                for (i64 j = 0; j < kw; ++j) {
                    const T wv = w[(o * kh + i) * kw + j];
                    i64 x0, x1;
                    inside(j, g, &x0, &x1);
                    const i64 shift = j * dw - pw;
                    for (i64 y = 0; y < OH; ++y) {
                        const i64 iy = y * sh - ph + i * dh;
                        if (iy < 0 || iy >= H) continue;
                        T* __restrict drow = plane + iy * W + shift;
                        const T* __restrict grow = gp + y * OW;
                        for (i64 x = x0; x < x1; ++x) drow[x * sw] += wv * grow[x];
                    }
                }
        }
}

template <typename T>
void depthwise_backward_weight(const T* __restrict gr, const i64* g, const T* __restrict in, i64 O,
                               T* __restrict dwt) {
    const i64 N = g[0], C = g[1], H = g[2], sxn = g[4], sxc = g[5], sxh = g[6], sxw = g[7];
    const i64 kh = g[8], kw = g[9], sh = g[10], sw = g[11], ph = g[12], pw = g[13], dh = g[14], dw = g[15];
    const i64 OH = g[16], OW = g[17], m = O / C;
    for (i64 o = 0; o < O; ++o)
        for (i64 i = 0; i < kh; ++i)
            for (i64 j = 0; j < kw; ++j) {
                i64 x0, x1;
                inside(j, g, &x0, &x1);
                const i64 shift = j * dw - pw;
                T acc = T(0);
                for (i64 n = 0; n < N; ++n) {
                    const T* __restrict plane = in + n * sxn + (o / m) * sxc;
                    const T* __restrict gp = gr + (n * O + o) * OH * OW;
                    for (i64 y = 0; y < OH; ++y) {
                        const i64 iy = y * sh - ph + i * dh;
                        if (iy < 0 || iy >= H) continue;
                        const T* __restrict src = plane + iy * sxh;
                        const T* __restrict grow = gp + y * OW;
                        for (i64 x = x0; x < x1; ++x) acc += grow[x] * src[(x * sw + shift) * sxw];
                    }
                }
                dwt[(o * kh + i) * kw + j] = acc;
            }
}

template <typename T>
inline bool is_nan(T v) {
    if constexpr (std::is_floating_point_v<T>) return v != v;
    return false;
}

template <typename T>
constexpr T lowest() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::lowest();
}

// a if c else b, for indices: arithmetic, never a branch.
inline i64 pick(bool c, i64 a, i64 b) { return b ^ ((a ^ b) & -static_cast<i64>(c)); }

// The max pool's rule (PyTorch's): a value replaces the running maximum when it is greater or NaN, so ties
// keep the first position and the last NaN of a window wins. Computed as a running maximum that ignores
// NaN (a max instruction), its first position (an arithmetic select), and apart, whether a NaN was seen
// and where the last one is; a branch on a comparison of random data is mispredicted about half the time
// (the demo's pools ran 5x slower with one), the rare NaN's branch almost never.
template <typename T>
struct Running {
    T best;
    i64 at;
    bool nan = false;
    i64 nan_at = 0;

    Running(T v, i64 k) : best(v), at(k) {
        if constexpr (std::is_floating_point_v<T>) {
            nan = v != v;
            nan_at = k;
        }
    }

    inline void see(T v, i64 k) {
        at = pick(v > best, k, at);
        best = best < v ? v : best;
        if constexpr (std::is_floating_point_v<T>) {
            const bool n = v != v;
            nan_at = pick(n, k, nan_at);
            nan |= n;
        }
    }

    // The window's result; `value(k)` reads the input at flat plane index k (a NaN's, when one was seen).
    template <typename Read>
    inline void finish(T* out, i64* idx, Read value) const {
        if (nan) {
            *out = value(nan_at);
            *idx = nan_at;
        } else {
            *out = best;
            *idx = at;
        }
    }
};

// max_pool2d_with_indices: out and idx (N, C, OH, OW), C-contiguous. Over the window positions inside the
// input (those in the padding never count), in row-major order, a value replaces the running maximum when it
// is greater or NaN (so a NaN wins, the last NaN of a window); ties keep the first. The running maximum starts
// at -inf (the type's lowest for integers) at the first position inside the input.
template <typename T>
void max_pool(const T* in, const i64* g, T* out, i64* idx) {
    const i64 N = g[0], C = g[1], H = g[2], W = g[3], sxn = g[4], sxc = g[5], sxh = g[6], sxw = g[7];
    const i64 kh = g[8], kw = g[9], sh = g[10], sw = g[11], ph = g[12], pw = g[13], dh = g[14], dw = g[15];
    const i64 OH = g[16], OW = g[17];
    const bool tiled2 = kh == 2 && kw == 2 && sh == 2 && sw == 2 && ph == 0 && pw == 0 && dh == 1 && dw == 1 &&
                        2 * OH <= H && 2 * OW <= W;
    for (i64 n = 0; n < N; ++n)
        for (i64 c = 0; c < C; ++c) {
            const T* plane = in + n * sxn + c * sxc;
            T* o = out + (n * C + c) * OH * OW;
            i64* r = idx + (n * C + c) * OH * OW;
            auto read = [plane, W, sxh, sxw](i64 k) { return plane[(k / W) * sxh + (k % W) * sxw]; };
            if (tiled2) {  // the common 2x2 pooling, every window inside: same rule, unrolled
                for (i64 y = 0; y < OH; ++y) {
                    const T* a = plane + 2 * y * sxh;
                    const T* b = a + sxh;
                    T* oy = o + y * OW;
                    i64* ry = r + y * OW;
                    const i64 top = 2 * y * W, bottom = top + W;
                    for (i64 x = 0; x < OW; ++x) {
                        const i64 p = 2 * x * sxw, k = top + 2 * x, kb = bottom + 2 * x;
                        Running<T> m(a[p], k);
                        m.see(a[p + sxw], k + 1);
                        m.see(b[p], kb);
                        m.see(b[p + sxw], kb + 1);
                        m.finish(oy + x, ry + x, read);
                    }
                }
                continue;
            }
            for (i64 y = 0; y < OH; ++y) {
                i64 h0 = y * sh - ph;
                const i64 h1 = h0 + (kh - 1) * dh + 1 < H ? h0 + (kh - 1) * dh + 1 : H;
                while (h0 < 0) h0 += dh;
                for (i64 x = 0; x < OW; ++x) {
                    i64 w0 = x * sw - pw;
                    const i64 w1 = w0 + (kw - 1) * dw + 1 < W ? w0 + (kw - 1) * dw + 1 : W;
                    while (w0 < 0) w0 += dw;
                    Running<T> m(lowest<T>(), h0 * W + w0);
                    for (i64 ih = h0; ih < h1; ih += dh) {
                        const T* src = plane + ih * sxh;
                        for (i64 iw = w0; iw < w1; iw += dw) m.see(src[iw * sxw], ih * W + iw);
                    }
                    m.finish(o + y * OW + x, r + y * OW + x, read);
                }
            }
        }
}

// max_pool2d_with_indices_backward: out (planes, HW) = 0, then each of a plane's L output gradients added at
// its index (gr, idx: (planes, L), C-contiguous). 1 (out untouched past the bad plane) for an index outside
// [0, HW): the caller then takes the NumPy path, which reports it.
template <typename T>
int max_pool_backward(const T* gr, const i64* idx, i64 planes, i64 L, i64 HW, T* out) {
    std::memset(out, 0, sizeof(T) * planes * HW);
    for (i64 p = 0; p < planes; ++p) {
        const T* gp = gr + p * L;
        const i64* ip = idx + p * L;
        T* op = out + p * HW;
        for (i64 l = 0; l < L; ++l) {
            const i64 k = ip[l];
            if (k < 0 || k >= HW) return 1;
            op[k] += gp[l];
        }
    }
    return 0;
}

}  // namespace

extern "C" {

#define OPGEN_IM2COL(SUFFIX, T) \
    void opgen_im2col_##SUFFIX(const void* in, const i64* g, void* cols) { \
        im2col<T>(static_cast<const T*>(in), g, static_cast<T*>(cols)); \
    }
#define OPGEN_IM2COL_LAST(SUFFIX, T) \
    void opgen_im2col_batch_last_##SUFFIX(const void* in, const i64* g, void* cols) { \
        im2col_batch_last<T>(static_cast<const T*>(in), g, static_cast<T*>(cols)); \
    }
OPGEN_IM2COL_LAST(1, uint8_t)
OPGEN_IM2COL_LAST(2, uint16_t)
OPGEN_IM2COL_LAST(4, uint32_t)
OPGEN_IM2COL_LAST(8, uint64_t)

#define OPGEN_TRANSPOSE(SUFFIX, T) \
    void opgen_transpose_##SUFFIX(const void* src, i64 rows, i64 cols, void* dst) { \
        transpose<T>(static_cast<const T*>(src), rows, cols, static_cast<T*>(dst)); \
    }
OPGEN_TRANSPOSE(1, uint8_t)
OPGEN_TRANSPOSE(2, uint16_t)
OPGEN_TRANSPOSE(4, uint32_t)
OPGEN_TRANSPOSE(8, uint64_t)

OPGEN_IM2COL(1, uint8_t)
OPGEN_IM2COL(2, uint16_t)
OPGEN_IM2COL(4, uint32_t)
OPGEN_IM2COL(8, uint64_t)

#define OPGEN_COL2IM(SUFFIX, T) \
    void opgen_col2im_##SUFFIX(const void* cols, const i64* g, void* out) { \
        col2im<T>(static_cast<const T*>(cols), g, static_cast<T*>(out)); \
    }
#define OPGEN_COL2IM_LAST(SUFFIX, T) \
    void opgen_col2im_batch_last_##SUFFIX(const void* cols, const i64* g, void* out) { \
        col2im_batch_last<T>(static_cast<const T*>(cols), g, static_cast<T*>(out)); \
    }
OPGEN_COL2IM_LAST(float32, float)
OPGEN_COL2IM_LAST(float64, double)

OPGEN_COL2IM(float32, float)
OPGEN_COL2IM(float64, double)

#define OPGEN_DEPTHWISE(SUFFIX, T) \
    void opgen_depthwise_forward_##SUFFIX(const void* in, const i64* g, const void* w, i64 O, void* out) { \
        depthwise_forward<T>(static_cast<const T*>(in), g, static_cast<const T*>(w), O, static_cast<T*>(out)); \
    } \
    void opgen_depthwise_backward_input_##SUFFIX(const void* gr, const i64* g, const void* w, i64 O, void* dx) { \
        depthwise_backward_input<T>(static_cast<const T*>(gr), g, static_cast<const T*>(w), O, static_cast<T*>(dx)); \
    } \
    void opgen_depthwise_backward_weight_##SUFFIX(const void* gr, const i64* g, const void* in, i64 O, void* dw) { \
        depthwise_backward_weight<T>(static_cast<const T*>(gr), g, static_cast<const T*>(in), O, \
                                     static_cast<T*>(dw)); \
    }
OPGEN_DEPTHWISE(float32, float)
OPGEN_DEPTHWISE(float64, double)

#define OPGEN_MAX_POOL(SUFFIX, T) \
    void opgen_max_pool_##SUFFIX(const void* in, const i64* g, void* out, i64* idx) { \
        max_pool<T>(static_cast<const T*>(in), g, static_cast<T*>(out), idx); \
    }
OPGEN_MAX_POOL(float32, float)
OPGEN_MAX_POOL(float64, double)
OPGEN_MAX_POOL(int8, int8_t)
OPGEN_MAX_POOL(uint8, uint8_t)
OPGEN_MAX_POOL(int16, int16_t)
OPGEN_MAX_POOL(int32, int32_t)
OPGEN_MAX_POOL(int64, int64_t)

#define OPGEN_MAX_POOL_BACKWARD(SUFFIX, T) \
    int opgen_max_pool_backward_##SUFFIX(const void* gr, const i64* idx, i64 planes, i64 L, i64 HW, void* out) { \
        return max_pool_backward<T>(static_cast<const T*>(gr), idx, planes, L, HW, static_cast<T*>(out)); \
    }
OPGEN_MAX_POOL_BACKWARD(float32, float)
OPGEN_MAX_POOL_BACKWARD(float64, double)

}  // extern "C"
