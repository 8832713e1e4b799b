/* Machine-state probe (see sb_probe.h). Each chain is a loop-carried dependency, so its time is
 * iterations x instruction latency / clock: the same on an idle core every time it runs. */
#define _GNU_SOURCE
#include "sb_probe.h"
#include "sb_internal.h"
#include "sb_pin.h"
#include "sb_rng.h"
#include "sb_threads.h"
#include "sb_xfer.h"

#include <dirent.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* About 0.5 ms each at 3 GHz (3-4 cycles per step): long enough to be hit by a competing process
 * or a descheduled vCPU, short next to a repetition. */
#define SB_PROBE_INT_ITERS 400000
#define SB_PROBE_FP_ITERS 400000
/* 12 independent FP operations per iteration (3 cycles on Zen 3's four FP pipes): ~0.5 ms. */
#define SB_PROBE_TPUT_ITERS 500000
/* 16 independent integer operations per iteration (4 cycles on four integer ALUs, 3.4 on five):
 * ~0.15 ms. Its time is as stable at a tenth of that, but a shorter block sees less of a
 * repetition's host phase and an interrupt weighs more in it; at this length its slowdown followed
 * the scalar π loop's repetition by repetition. */
#define SB_PROBE_ALU_ITERS 125000

/* The chains are written in assembly on x86-64 with each loop aligned to a cache line: compiled
 * from C, the loop's place in the binary depends on what was linked before it, and where a loop
 * this small straddles a 64-byte line the same chain ran up to 1.6x slower in some binaries than in
 * others, which the analysis took for a disturbed machine. */
static double int_mul_chain(void) {
    uint64_t x = 0x9E3779B97F4A7C15ull;
    double t0 = sb_now();
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    uint64_t n = SB_PROBE_INT_ITERS;
    __asm__ volatile(".p2align 6\n1:\n\t"
                     "imul %[m], %[x]\n\t"
                     "dec %[n]\n\t"
                     "jnz 1b"
                     : [x] "+r"(x), [n] "+r"(n)
                     : [m] "r"(0x5851F42D4C957F2Dull)
                     : "cc");
#else
    for (int32_t i = 0; i < SB_PROBE_INT_ITERS; i++) {
        x *= 0x5851F42D4C957F2Dull;
        __asm__ volatile("" : "+r"(x)); /* keep the chain: no unrolling into independent products */
    }
#endif
    double t = sb_now() - t0;
    __asm__ volatile("" ::"r"(x));
    return t;
}

static double fp_lat_chain(void) {
    double y = 1.0;
    double t0 = sb_now();
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    uint64_t n = SB_PROBE_FP_ITERS;
    const double m = 1.0000000001;
    __asm__ volatile(".p2align 6\n1:\n\t"
                     "mulsd %[m], %[y]\n\t"
                     "dec %[n]\n\t"
                     "jnz 1b"
                     : [y] "+x"(y), [n] "+r"(n)
                     : [m] "x"(m)
                     : "cc");
#else
    for (int32_t i = 0; i < SB_PROBE_FP_ITERS; i++) {
        y *= 1.0000000001;
        __asm__ volatile("" : "+x"(y));
    }
#endif
    double t = sb_now() - t0;
    __asm__ volatile("" ::"x"(y));
    return t;
}

/* Six independent multiplies and six independent adds per iteration (SSE2, on every x86-64): with
 * latency 3 and two pipes for each, six chains of each kind fill the multiply and the add pipes.
 * Its time is work / pipe throughput, so it grows when another hardware thread on the same core (a
 * hypervisor's SMT sibling we cannot see) issues to the same pipes; a latency chain leaves most
 * issue slots free and barely notices. */
static double fp_tput_block(void) {
    double t0 = sb_now();
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    uint64_t n = SB_PROBE_TPUT_ITERS;
    const double m[2] = {1.0000000001, 1.0000000001};
    const double a[2] = {1e-10, 1e-10};
    /* The constants in xmm6 and xmm7 and the multiplies' registers below xmm8 keep most
     * instructions without a REX prefix: the loop fits one 64-byte line (59 bytes). */
    __asm__ volatile("movupd %[m], %%xmm6\n\t"
                     "movupd %[a], %%xmm7\n\t"
                     "movapd %%xmm6, %%xmm0\n\t"
                     "movapd %%xmm6, %%xmm1\n\t"
                     "movapd %%xmm6, %%xmm2\n\t"
                     "movapd %%xmm6, %%xmm3\n\t"
                     "movapd %%xmm6, %%xmm4\n\t"
                     "movapd %%xmm6, %%xmm5\n\t"
                     "movapd %%xmm7, %%xmm8\n\t"
                     "movapd %%xmm7, %%xmm9\n\t"
                     "movapd %%xmm7, %%xmm10\n\t"
                     "movapd %%xmm7, %%xmm11\n\t"
                     "movapd %%xmm7, %%xmm12\n\t"
                     "movapd %%xmm7, %%xmm13\n\t"
                     ".p2align 6\n1:\n\t"
                     "mulpd %%xmm6, %%xmm0\n\t"
                     "addpd %%xmm7, %%xmm8\n\t"
                     "mulpd %%xmm6, %%xmm1\n\t"
                     "addpd %%xmm7, %%xmm9\n\t"
                     "mulpd %%xmm6, %%xmm2\n\t"
                     "addpd %%xmm7, %%xmm10\n\t"
                     "mulpd %%xmm6, %%xmm3\n\t"
                     "addpd %%xmm7, %%xmm11\n\t"
                     "mulpd %%xmm6, %%xmm4\n\t"
                     "addpd %%xmm7, %%xmm12\n\t"
                     "mulpd %%xmm6, %%xmm5\n\t"
                     "addpd %%xmm7, %%xmm13\n\t"
                     "dec %[n]\n\t"
                     "jnz 1b"
                     : [n] "+r"(n)
                     : [m] "m"(m), [a] "m"(a)
                     : "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                       "xmm9", "xmm10", "xmm11", "xmm12", "xmm13");
#else
    double p[6] = {1, 1, 1, 1, 1, 1}, q[6] = {0, 0, 0, 0, 0, 0};
    for (int32_t i = 0; i < SB_PROBE_TPUT_ITERS; i++)
        for (int k = 0; k < 6; k++) {
            p[k] *= 1.0000000001;
            q[k] += 1e-10;
            __asm__ volatile("" : "+x"(p[k]), "+x"(q[k]));
        }
#endif
    return sb_now() - t0;
}

/* Eight independent chains of two single-cycle integer operations each per iteration: adds, xors
 * and rotates, the mix of π's SplitMix64 generator (sb_rng.h) without its multiplies. A chain needs
 * 2 cycles per iteration, the 16 operations 3-4 cycles on the 4-5 integer ALUs of an x86-64 core:
 * the block's time is work / ALU throughput, so it grows when another hardware thread on the same
 * core (a hypervisor's SMT sibling we cannot see) takes ALU slots, which slows the scalar π loop
 * while the latency chains, one operation per cycle, barely notice. The same idea as the SIMD
 * bounds tool's check chain (kernels/bounds/simd_bounds.c), which keeps 3 of the ALUs busy; this
 * block fills all of them. The 16 operations, dec and jnz take 57 bytes: one 64-byte line. */
#define SB_ALU_PAIR(x, y) "xor %[k], %[" x "]\n\tadd %[k], %[" y "]\n\t"
#define SB_ALU_ROTATE(x, y) "rol $13, %[" x "]\n\tadd %[k], %[" y "]\n\t"
static double int_alu_block(void) {
    uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8;
    double t0 = sb_now();
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    uint64_t n = SB_PROBE_ALU_ITERS;
    __asm__ volatile(".p2align 6\n1:\n\t" SB_ALU_PAIR("a", "b") SB_ALU_PAIR("c", "d")
                         SB_ALU_PAIR("e", "f") SB_ALU_PAIR("g", "h") SB_ALU_ROTATE("a", "b")
                             SB_ALU_ROTATE("c", "d") SB_ALU_ROTATE("e", "f")
                                 SB_ALU_ROTATE("g", "h") "dec %[n]\n\t"
                                                         "jnz 1b"
                     : [a] "+r"(a), [b] "+r"(b), [c] "+r"(c), [d] "+r"(d), [e] "+r"(e), [f] "+r"(f),
                       [g] "+r"(g), [h] "+r"(h), [n] "+r"(n)
                     : [k] "r"(SB_SPLITMIX_GAMMA)
                     : "cc");
#else
    for (int32_t i = 0; i < SB_PROBE_ALU_ITERS; i++) {
        a ^= SB_SPLITMIX_GAMMA, b += SB_SPLITMIX_GAMMA, c ^= SB_SPLITMIX_GAMMA,
            d += SB_SPLITMIX_GAMMA;
        e ^= SB_SPLITMIX_GAMMA, f += SB_SPLITMIX_GAMMA, g ^= SB_SPLITMIX_GAMMA,
            h += SB_SPLITMIX_GAMMA;
        a = a << 13 | a >> 51, c = c << 13 | c >> 51, e = e << 13 | e >> 51, g = g << 13 | g >> 51;
        b += SB_SPLITMIX_GAMMA, d += SB_SPLITMIX_GAMMA, f += SB_SPLITMIX_GAMMA,
            h += SB_SPLITMIX_GAMMA;
        /* keep eight chains: no folding of the additions into one multiply */
        __asm__ volatile(""
                         : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h));
    }
#endif
    double t = sb_now() - t0;
    __asm__ volatile("" ::"r"(a ^ b ^ c ^ d ^ e ^ f ^ g ^ h));
    return t;
}

static void add_cpu(sb_probe_sample *s, int32_t cpu) {
    if (cpu < 0 || s->n >= SB_PROBE_MAX_CPUS)
        return;
    for (int32_t k = 0; k < s->n; k++)
        if (s->cpu[k] == cpu)
            return;
    s->cpu[s->n++] = cpu;
}

/* The harness's own pin list, else LIKWID_HWTHREADS ("0,2,3"), set by likwid-pin and by the
 * runner's equivalent environment. */
static void cpus_from_env(sb_probe_sample *s) {
    int32_t n = 0;
    const int32_t *pinned = sb_pin_list(&n);
    for (int32_t k = 0; k < n; k++)
        add_cpu(s, pinned[k]);
    if (n)
        return;
    const char *list = getenv("LIKWID_HWTHREADS");
    while (list && *list) {
        char *end;
        long cpu = strtol(list, &end, 10);
        if (end == list)
            break;
        add_cpu(s, (int32_t)cpu);
        list = *end == ',' ? end + 1 : end;
    }
}

void sb_probe_chains(sb_probe_sample *s, int32_t k) {
    s->int_mul_s[k] = int_mul_chain();
    s->fp_lat_s[k] = fp_lat_chain();
    s->fp_tput_s[k] = fp_tput_block();
    s->int_alu_s[k] = int_alu_block();
}

void sb_probe_unmeasured(sb_probe_sample *s, int32_t k) {
    s->int_mul_s[k] = s->fp_lat_s[k] = s->fp_tput_s[k] = s->int_alu_s[k] = -1.0;
}

int sb_probe_xfer_pair(const sb_probe_sample *out, int32_t k) {
    return k > 0 && k < out->n && out->cpu[k] != out->cpu[0];
}

static void no_transfers(sb_probe_sample *s) {
    for (int32_t k = 0; k < SB_PROBE_MAX_CPUS; k++)
        s->xfer_s[k] = -1.0;
}

typedef struct {
    sb_probe_sample *out;
    sb_xfer_line *lines;
    int32_t pairs;
} pool_transfers;

static void transfer_job(void *arg, int32_t worker) {
    pool_transfers *p = arg;
    if (worker == 0) {
        for (int32_t k = 1; k < p->pairs; k++)
            if (sb_probe_xfer_pair(p->out, k))
                p->out->xfer_s[k] = sb_xfer_ping(&p->lines[k]);
    } else if (worker < p->pairs && sb_probe_xfer_pair(p->out, worker)) {
        sb_xfer_pong(&p->lines[worker]);
    }
}

/* The pthreads pool's transfers: worker k sits on pin-list entry k (sb_threads.h), the probe's
 * entry k when the list's first entries are distinct; one job of the pool times worker 0 with each.
 */
static void pool_transfers_measure(sb_ctx *ctx, sb_probe_sample *out) {
    int32_t n = 0;
    const int32_t *pinned = sb_pin_list(&n);
    const int32_t threads = sb_pool_threads();
    if (!pinned || threads < 2)
        return;
    const int32_t pairs = threads < out->n ? threads : out->n;
    for (int32_t k = 0; k < pairs; k++)
        if (out->cpu[k] != pinned[k % n])
            return;
    pool_transfers job = {out, sb_xfer_lines(pairs), pairs};
    sb_run_workers(ctx, threads, transfer_job, &job);
}

/* Without an OpenMP team the calling thread probes (sb_probe_omp.c overrides this). */
__attribute__((weak)) int sb_probe_team(const sb_ctx *ctx, sb_probe_sample *out) {
    (void)ctx;
    (void)out;
    return 0;
}

void sb_probe_measure(sb_ctx *ctx, sb_probe_sample *out) {
    memset(out, 0, sizeof *out);
    no_transfers(out);
    if (sb_probe_team(ctx, out))
        return;
    cpus_from_env(out);
    if (out->n == 0) {
        const int32_t *pl = ctx->placement ? ctx->placement : ctx->local_placement;
        int32_t npl = ctx->placement ? ctx->nplacement : ctx->cli.p.threads;
        for (int32_t k = 0; k < 2 * npl; k++)
            add_cpu(out, pl[k]);
    }
    if (out->n == 0)
        add_cpu(out, sb_current_cpu());
    sb_probe_on_cpus(out);
    pool_transfers_measure(ctx, out);
}

void sb_probe_on_cpus(sb_probe_sample *out) {
    cpu_set_t saved;
    int have_saved = sched_getaffinity(0, sizeof saved, &saved) == 0;
    for (int32_t k = 0; k < out->n; k++) {
        if (!have_saved || sb_pin_to_cpu(out->cpu[k]) != 0) {
            sb_probe_unmeasured(out, k);
            continue;
        }
        sb_probe_chains(out, k);
    }
    if (have_saved)
        sched_setaffinity(0, sizeof saved, &saved);
}

static void put_times(FILE *f, const char *key, const double *t, int32_t n) {
    fprintf(f, "\"%s\":[", key);
    for (int32_t k = 0; k < n; k++)
        if (t[k] < 0)
            fprintf(f, "%snull", k ? "," : "");
        else
            fprintf(f, "%s%.9g", k ? "," : "", t[k]);
    fputc(']', f);
}

static void put_sample(FILE *f, const char *key, const sb_probe_sample *s) {
    fprintf(f, ",\"%s\":{\"cpus\":[", key);
    for (int32_t k = 0; k < s->n; k++)
        fprintf(f, "%s%d", k ? "," : "", (int)s->cpu[k]);
    fputs("],", f);
    put_times(f, "int_mul_s", s->int_mul_s, s->n);
    fputc(',', f);
    put_times(f, "fp_lat_s", s->fp_lat_s, s->n);
    fputc(',', f);
    put_times(f, "fp_tput_s", s->fp_tput_s, s->n);
    fputc(',', f);
    put_times(f, "int_alu_s", s->int_alu_s, s->n);
    fputc(',', f);
    put_times(f, "xfer_s", s->xfer_s, s->n);
    fputc('}', f);
}

double sb_probe_runq_wait(void) {
    DIR *dir = opendir("/proc/self/task");
    if (!dir)
        return -1.0;
    double total = 0.0;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        unsigned long long run_ns, wait_ns;
        if (fscanf(f, "%llu %llu", &run_ns, &wait_ns) == 2) {
            total += 1e-9 * (double)wait_ns;
            found = 1;
        }
        fclose(f);
    }
    closedir(dir);
    return found ? total : -1.0;
}

/* The fastest or slowest (sign -1 or +1) measured time among n entries of two samples' chains, -1
 * when none of them was measured. */
static double extreme(const double *a, int32_t na, const double *b, int32_t nb, int sign) {
    double best = -1.0;
    for (int32_t k = 0; k < na + nb; k++) {
        double t = k < na ? a[k] : b[k - na];
        if (t >= 0 && (best < 0 || sign * (t - best) > 0))
            best = t;
    }
    return best;
}

static void put_number_or_null(FILE *f, const char *key, double t, const char *sep) {
    if (t < 0)
        fprintf(f, "\"%s\":null%s", key, sep);
    else
        fprintf(f, "\"%s\":%.9g%s", key, t, sep);
}

/* ,"<key>":{"int_mul":..,"fp_lat":..,"fp_tput":..,"int_alu":..,"xfer":..}: each chain's extreme
 * over both samples. Written so that the analysis of a big campaign reads two numbers per chain
 * instead of two arrays of one time per CPU (which stay in the record for a person to look at). */
static void put_extremes(FILE *f, const char *key, const sb_probe_sample *b,
                         const sb_probe_sample *a, int sign) {
    fprintf(f, ",\"%s\":{", key);
    put_number_or_null(f, "int_mul", extreme(b->int_mul_s, b->n, a->int_mul_s, a->n, sign), ",");
    put_number_or_null(f, "fp_lat", extreme(b->fp_lat_s, b->n, a->fp_lat_s, a->n, sign), ",");
    put_number_or_null(f, "fp_tput", extreme(b->fp_tput_s, b->n, a->fp_tput_s, a->n, sign), ",");
    put_number_or_null(f, "int_alu", extreme(b->int_alu_s, b->n, a->int_alu_s, a->n, sign), ",");
    put_number_or_null(f, "xfer", extreme(b->xfer_s, b->n, a->xfer_s, a->n, sign), "}");
}

void sb_probe_put(FILE *f, const sb_probe_sample *before, const sb_probe_sample *after,
                  double runq_wait_s) {
    fprintf(f,
            ",\"probe\":{\"int_mul_iters\":%d,\"fp_lat_iters\":%d,\"fp_tput_iters\":%d,"
            "\"int_alu_iters\":%d,\"xfer_round_trips\":%d",
            SB_PROBE_INT_ITERS, SB_PROBE_FP_ITERS, SB_PROBE_TPUT_ITERS, SB_PROBE_ALU_ITERS,
            SB_XFER_SAMPLES * SB_XFER_BATCH);
    put_sample(f, "before", before);
    put_sample(f, "after", after);
    if (runq_wait_s >= 0)
        fprintf(f, ",\"runq_wait_s\":%.9g", runq_wait_s);
    else
        fputs(",\"runq_wait_s\":null", f);
    put_extremes(f, "min_s", before, after, -1);
    put_extremes(f, "max_s", before, after, +1);
    fputc('}', f);
}
