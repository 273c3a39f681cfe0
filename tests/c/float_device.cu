/* float_device.cu: every storage-float routine called from a CUDA kernel, so the suite
 * can check that cairn_float.h compiles as device code (and as host C++) with
 * nvcc -c --fmad=false and no warnings (tests/runtime/test_storage_device.py). */
#include <cstdint>
#include "cairn_float.h"

/* One output word per routine and input. */
__device__ static void all_routines(uint32_t xbits, uint64_t dbits, uint32_t *out) {
    float x;
    double d;
    memcpy(&x, &xbits, sizeof x);
    memcpy(&d, &dbits, sizeof d);
    cairn_loc loc = {0, 0, 0};
    float scale = 0.375f;
    uint32_t noise = xbits * 2654435761u;
    cairn_f8e4m3 e4;
    int k = 0;
    out[k++] = cairn_f32_to_f16(x);
    out[k++] = cairn_f32_to_bf16(x);
    out[k++] = cairn_f32_to_f8e5m2(x);
    out[k++] = (uint32_t)cairn_f32_to_f8e4m3_try(x, &e4) << 8 | e4;
    out[k++] = cairn_f64_to_f16(d);
    out[k++] = cairn_f64_to_bf16(d);
    out[k++] = cairn_f64_to_f8e5m2(d);
    out[k++] = (uint32_t)cairn_f64_to_f8e4m3_try(d, &e4) << 8 | e4;
    float w[4] = {cairn_f16_to_f32((cairn_f16)xbits), cairn_bf16_to_f32((cairn_bf16)xbits),
                  cairn_f8e4m3_to_f32((cairn_f8e4m3)xbits),
                  cairn_f8e5m2_to_f32((cairn_f8e5m2)xbits)};
    for (int i = 0; i < 4; i++) memcpy(&out[k++], &w[i], sizeof w[i]);
    if ((xbits & 0x7FFFFFFFu) > 0x7F800000u) /* quantize traps on NaN */
        x = 1.0f;
    out[k++] = cairn_quantize_f16(x, scale, loc);
    out[k++] = cairn_quantize_bf16(x, scale, loc);
    out[k++] = cairn_quantize_f8e4m3(x, scale, loc);
    out[k++] = cairn_quantize_f8e5m2(x, scale, loc);
    out[k++] = (uint8_t)cairn_quantize_i8(x, scale, loc);
    out[k++] = cairn_quantize_u8(x, scale, loc);
    out[k++] = (uint16_t)cairn_quantize_i16(x, scale, loc);
    out[k++] = cairn_quantize_u16(x, scale, loc);
    out[k++] = cairn_quantize_stochastic_f16(x, scale, noise, loc);
    out[k++] = cairn_quantize_stochastic_bf16(x, scale, noise, loc);
    out[k++] = cairn_quantize_stochastic_f8e4m3(x, scale, noise, loc);
    out[k++] = cairn_quantize_stochastic_f8e5m2(x, scale, noise, loc);
    out[k++] = (uint8_t)cairn_quantize_stochastic_i8(x, scale, noise, loc);
    out[k++] = cairn_quantize_stochastic_u8(x, scale, noise, loc);
    out[k++] = (uint16_t)cairn_quantize_stochastic_i16(x, scale, noise, loc);
    out[k++] = cairn_quantize_stochastic_u16(x, scale, noise, loc);
}
enum { ROUTINES = 28 };

__global__ void kernel(const uint32_t *xs, const uint64_t *ds, uint32_t *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) all_routines(xs[i], ds[i], out + (size_t)i * ROUTINES);
}
