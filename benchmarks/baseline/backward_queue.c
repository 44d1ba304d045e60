/*
 * backward_queue.c: sequential C baseline for the backward phase (Lindberg 2020, Algorithm 2).
 *
 * A straightforward, honest implementation of the thesis' queue-based backward phase over the
 * spreading-graph archive's flat arrays (compute/structures.py, save_archive). For every cascade t it
 *
 *   1. counts the in- and out-degree of the cascade's nodes from its edge list,
 *   2. builds the cascade's out-adjacency (CSR by src, a counting sort of its edges),
 *   3. sets I(v) = followers(v),
 *   4. queues every source (in-degree 0, out-degree > 0), then pops u, gives I(u)/outdeg(u) to each
 *      out-neighbour w and queues w once its in-degree drops to 0 (and it has out-edges).
 *
 * All of 1-4 is timed: it is the whole work of going from the archive's arrays to the influence values.
 * Reading the input files and allocating the scratch buffers (sized once for the largest cascade) are not.
 * float64 throughout; local node indices are int32.
 *
 * With --prebuilt, steps 1-2 run once for all cascades before the timer (the thesis built its CSR during
 * "data preparation", §6.2, and timed only the backward phase, §7.1.4); each timed run then copies the
 * cascade's in-degrees into scratch (the traversal consumes them) and does steps 3-4. Same code for 3-4.
 *
 * Input: a directory written by run_baseline.py (np.tofile, little-endian, no parsing needed):
 *   meta.bin          int64[4]   magic 0x42514241534c4e31 ("1NLSABQB"), T, N, M
 *   node_offsets.bin  int64[T+1]
 *   followers.bin     float64[N]
 *   publisher.bin     int64[T]   global node index of each cascade's sink
 *   edge_offsets.bin  int64[T+1]
 *   edge_src.bin      int32[M]   global node indices (edge (src, dst): dst receives src's share)
 *   edge_dst.bin      int32[M]
 *
 * Usage: backward_queue DIR [--repeat K] [--out FILE] [--prebuilt]
 *   Runs the computation K times (default 21); prints median and min wall time (CLOCK_MONOTONIC),
 *   edges/s at the median, and checksums (sum of all influences, sum of the publishers' influences).
 *   --out writes the influence array (float64[N], raw) of the last run.
 *   The last line is "RESULT {json}" for run_baseline.py.
 *
 * Build: gcc -O3 -march=native -o backward_queue backward_queue.c
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAGIC 0x42514241534c4e31LL

static void die(const char *msg, const char *arg)
{
    fprintf(stderr, "backward_queue: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
    exit(2);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        die("out of memory", NULL);
    return p;
}

/* Read exactly `count` items of `size` bytes from DIR/name into a fresh buffer. */
static void *read_array(const char *dir, const char *name, size_t size, size_t count)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        die("cannot open", path);
    void *buf = xmalloc(size * count);
    if (fread(buf, size, count, f) != count)
        die("short read from", path);
    if (fgetc(f) != EOF)
        die("trailing bytes in", path);
    fclose(f);
    return buf;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Scratch buffers, sized for the largest cascade. */
typedef struct {
    int32_t *indeg, *outdeg, *rowptr, *cursor, *adj, *queue;
} scratch_t;

/* Steps 1-2 for one cascade: degrees and CSR by src (counting sort), all in local indices. */
static inline void build_cascade(int32_t n, int32_t b32, const int32_t *src, const int32_t *dst, int64_t m,
                                 int32_t *indeg, int32_t *outdeg, int32_t *rowptr, int32_t *cursor,
                                 int32_t *adj)
{
    memset(indeg, 0, (size_t)n * sizeof *indeg);
    memset(outdeg, 0, (size_t)n * sizeof *outdeg);
    for (int64_t k = 0; k < m; k++) {
        outdeg[src[k] - b32]++;
        indeg[dst[k] - b32]++;
    }
    int32_t acc = 0;
    for (int32_t v = 0; v < n; v++) {
        rowptr[v] = acc;
        cursor[v] = acc;
        acc += outdeg[v];
    }
    rowptr[n] = acc;
    for (int64_t k = 0; k < m; k++)
        adj[cursor[src[k] - b32]++] = dst[k] - b32;
}

/* Steps 3-4 for one cascade (thesis Algorithm 2, lines 2-20). Consumes indeg. */
static inline void traverse_cascade(int32_t n, double *It, const double *ft, int32_t *indeg,
                                    const int32_t *outdeg, const int32_t *rowptr, const int32_t *adj,
                                    int32_t *queue)
{
    int32_t head = 0, tail = 0;
    for (int32_t v = 0; v < n; v++) {
        It[v] = ft[v];
        if (indeg[v] == 0 && outdeg[v] > 0)
            queue[tail++] = v;
    }
    while (head < tail) {
        const int32_t u = queue[head++];
        const double share = It[u] / (double)outdeg[u];
        for (int32_t j = rowptr[u]; j < rowptr[u + 1]; j++) {
            const int32_t w = adj[j];
            It[w] += share;
            if (--indeg[w] == 0 && outdeg[w] > 0)
                queue[tail++] = w;
        }
    }
}

/* Default mode: the backward phase of every cascade from the archive's arrays (steps 1-4); writes I[0..N). */
static void backward_all(int64_t T, const int64_t *node_offsets, const double *followers,
                         const int64_t *edge_offsets, const int32_t *edge_src,
                         const int32_t *edge_dst, double *I, const scratch_t *s)
{
    for (int64_t t = 0; t < T; t++) {
        const int64_t base = node_offsets[t];
        const int32_t n = (int32_t)(node_offsets[t + 1] - base);
        const int64_t e0 = edge_offsets[t];
        build_cascade(n, (int32_t)base, edge_src + e0, edge_dst + e0, edge_offsets[t + 1] - e0, s->indeg,
                      s->outdeg, s->rowptr, s->cursor, s->adj);
        traverse_cascade(n, I + base, followers + base, s->indeg, s->outdeg, s->rowptr, s->adj, s->queue);
    }
}

/* --prebuilt mode: every cascade's degrees and CSR built once, untimed (as the thesis prepared its CSR
 * before timing); rowptr of cascade t lives at rowptr_all[node_offsets[t] + t ...], n+1 entries. */
typedef struct {
    int32_t *indeg, *outdeg, *rowptr, *adj;
} prebuilt_t;

static void prebuild_all(int64_t T, const int64_t *node_offsets, const int64_t *edge_offsets,
                         const int32_t *edge_src, const int32_t *edge_dst, const scratch_t *s,
                         prebuilt_t *p)
{
    for (int64_t t = 0; t < T; t++) {
        const int64_t base = node_offsets[t], e0 = edge_offsets[t];
        const int32_t n = (int32_t)(node_offsets[t + 1] - base);
        build_cascade(n, (int32_t)base, edge_src + e0, edge_dst + e0, edge_offsets[t + 1] - e0,
                      p->indeg + base, p->outdeg + base, p->rowptr + base + t, s->cursor, p->adj + e0);
    }
}

static void backward_prebuilt(int64_t T, const int64_t *node_offsets, const double *followers,
                              const int64_t *edge_offsets, const prebuilt_t *p, double *I, const scratch_t *s)
{
    for (int64_t t = 0; t < T; t++) {
        const int64_t base = node_offsets[t];
        const int32_t n = (int32_t)(node_offsets[t + 1] - base);
        memcpy(s->indeg, p->indeg + base, (size_t)n * sizeof(int32_t));  /* traversal consumes it */
        traverse_cascade(n, I + base, followers + base, s->indeg, p->outdeg + base, p->rowptr + base + t,
                         p->adj + edge_offsets[t], s->queue);
    }
}

int main(int argc, char **argv)
{
    const char *dir = NULL, *out = NULL;
    int repeat = 21, prebuilt = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--prebuilt"))
            prebuilt = 1;
        else if (argv[i][0] != '-' && !dir)
            dir = argv[i];
        else {
            fprintf(stderr, "usage: %s DIR [--repeat K] [--out FILE] [--prebuilt]\n", argv[0]);
            return 2;
        }
    }
    if (!dir || repeat < 1) {
        fprintf(stderr, "usage: %s DIR [--repeat K] [--out FILE] [--prebuilt]\n", argv[0]);
        return 2;
    }

    int64_t *meta = read_array(dir, "meta.bin", sizeof(int64_t), 4);
    if (meta[0] != MAGIC)
        die("bad magic in meta.bin of", dir);
    const int64_t T = meta[1], N = meta[2], M = meta[3];
    if (T < 0 || N < 0 || M < 0 || N >= INT32_MAX)
        die("bad sizes in meta.bin (N must be < 2^31) of", dir);

    int64_t *node_offsets = read_array(dir, "node_offsets.bin", sizeof(int64_t), (size_t)T + 1);
    double *followers = read_array(dir, "followers.bin", sizeof(double), (size_t)N);
    int64_t *publisher = read_array(dir, "publisher.bin", sizeof(int64_t), (size_t)T);
    int64_t *edge_offsets = read_array(dir, "edge_offsets.bin", sizeof(int64_t), (size_t)T + 1);
    int32_t *edge_src = read_array(dir, "edge_src.bin", sizeof(int32_t), (size_t)M);
    int32_t *edge_dst = read_array(dir, "edge_dst.bin", sizeof(int32_t), (size_t)M);
    if (node_offsets[T] != N || edge_offsets[T] != M)
        die("offsets disagree with meta.bin in", dir);

    /* Largest cascade (nodes and edges): scratch sized once, outside the timed region. */
    int64_t max_n = 0, max_m = 0;
    for (int64_t t = 0; t < T; t++) {
        int64_t n = node_offsets[t + 1] - node_offsets[t], m = edge_offsets[t + 1] - edge_offsets[t];
        if (n > max_n) max_n = n;
        if (m > max_m) max_m = m;
    }
    if (max_m >= INT32_MAX)
        die("a cascade has >= 2^31 edges", NULL);
    scratch_t s;
    s.indeg = xmalloc((size_t)max_n * sizeof(int32_t));
    s.outdeg = xmalloc((size_t)max_n * sizeof(int32_t));
    s.rowptr = xmalloc(((size_t)max_n + 1) * sizeof(int32_t));
    s.cursor = xmalloc((size_t)max_n * sizeof(int32_t));
    s.adj = xmalloc((size_t)max_m * sizeof(int32_t));
    s.queue = xmalloc((size_t)max_n * sizeof(int32_t));
    double *I = xmalloc((size_t)N * sizeof(double));
    memset(I, 0, (size_t)N * sizeof(double));  /* touch the pages once */

    prebuilt_t p = {NULL, NULL, NULL, NULL};
    if (prebuilt) {
        p.indeg = xmalloc((size_t)N * sizeof(int32_t));
        p.outdeg = xmalloc((size_t)N * sizeof(int32_t));
        p.rowptr = xmalloc(((size_t)N + (size_t)T) * sizeof(int32_t));
        p.adj = xmalloc((size_t)M * sizeof(int32_t));
        prebuild_all(T, node_offsets, edge_offsets, edge_src, edge_dst, &s, &p);
    }

    double *times = xmalloc((size_t)repeat * sizeof(double));
    for (int r = 0; r < repeat; r++) {
        double t0 = now_s();
        if (prebuilt)
            backward_prebuilt(T, node_offsets, followers, edge_offsets, &p, I, &s);
        else
            backward_all(T, node_offsets, followers, edge_offsets, edge_src, edge_dst, I, &s);
        times[r] = now_s() - t0;
    }

    double sum_all = 0.0, sum_pub = 0.0;
    for (int64_t v = 0; v < N; v++)
        sum_all += I[v];
    for (int64_t t = 0; t < T; t++)
        sum_pub += I[publisher[t]];

    qsort(times, (size_t)repeat, sizeof(double), cmp_double);
    const double med = (repeat % 2) ? times[repeat / 2]
                                    : 0.5 * (times[repeat / 2 - 1] + times[repeat / 2]);
    const double mn = times[0];
    const double eps = med > 0 ? (double)M / med : 0.0;

    if (out) {
        FILE *f = fopen(out, "wb");
        if (!f || fwrite(I, sizeof(double), (size_t)N, f) != (size_t)N || fclose(f))
            die("cannot write", out);
    }

    printf("cascades %lld  nodes %lld  edges %lld  (largest cascade: %lld nodes, %lld edges)\n",
           (long long)T, (long long)N, (long long)M, (long long)max_n, (long long)max_m);
    printf("mode %s\n", prebuilt ? "prebuilt (CSR + degrees built before timing; steps 3-4 timed)"
                                   : "full (degrees + CSR + traversal timed)");
    printf("repeat %d  median %.6f s  min %.6f s  edges/s %.4g (median)  %.4g (min)\n", repeat, med, mn,
           eps, mn > 0 ? (double)M / mn : 0.0);
    printf("checksum sum(I) %.17g  sum(I[publisher]) %.17g\n", sum_all, sum_pub);
    printf("RESULT {\"n_cascades\": %lld, \"n_nodes\": %lld, \"n_edges\": %lld, \"max_cascade_nodes\": %lld, "
           "\"max_cascade_edges\": %lld, \"mode\": \"%s\", \"repeat\": %d, \"median_s\": %.9g, \"min_s\": %.9g, "
           "\"edges_per_s\": %.6g, \"edges_per_s_min_time\": %.6g, \"sum_influence\": %.17g, "
           "\"sum_publisher_influence\": %.17g}\n",
           (long long)T, (long long)N, (long long)M, (long long)max_n, (long long)max_m, prebuilt ? "prebuilt" : "full", repeat, med, mn,
           eps, mn > 0 ? (double)M / mn : 0.0, sum_all, sum_pub);

    free(p.indeg); free(p.outdeg); free(p.rowptr); free(p.adj);
    free(times); free(I);
    free(s.indeg); free(s.outdeg); free(s.rowptr); free(s.cursor); free(s.adj); free(s.queue);
    free(node_offsets); free(followers); free(publisher); free(edge_offsets); free(edge_src); free(edge_dst);
    free(meta);
    return 0;
}
