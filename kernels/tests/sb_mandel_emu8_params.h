/*
 * Test only: the parameters of the shared Mandelbrot body for 8 lanes emulated by two AVX2
 * vectors (sb_mandel_emu8.h), included before each instantiation (the body undefines them).
 */
#define SBV_TARGET __attribute__((target("avx2")))
#define SBV_W 8
#define SBV_NV SB_MANDEL_AVX512_VECTORS
#define SBV_XADD SB_MANDEL_AVX512_XADD
#define SBV_T v8
#define SBV_LOAD v8_load
#define SBV_STORE v8_store
#define SBV_SET1 v8_set1
#define SBV_ADD v8_add
#define SBV_SUB v8_sub
#define SBV_MUL v8_mul
#define SBV_NOT_LE v8_not_le
#define SBV_M v8
#define SBV_M_NLE v8_cmp_nle
#define SBV_M_LE v8_cmp_le
#define SBV_M_OR v8_or
#define SBV_M_BITS v8_bits
#define SBV_M_ZERO(x, m) v8_andnot(m, x)
#define SBV_M_BLEND v8_blend
#define SBV_MIN v8_min
#define SBV_HMIN v8_hmin
#define SBV_OPAQUE(x) __asm__("" : "+v"((x).lo), "+v"((x).hi))
