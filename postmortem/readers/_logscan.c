/*
 * Text-log lines in C: one pass over a chunk of whole lines that parses the lines of the hot
 * shapes and hands every other line that may matter back to logparse.py (the reference).
 *
 * Why C: a 1M-line log holds ~3M values. Read one line at a time in Python that is ~10 s; here
 * each line is looked at once, at a few hundred MB/s.
 *
 * What it knows of the grammar (logshapes.py) it is told at construction: the anchors (literals)
 * of every shape, which anchors each shape needs (in the grammar's order) and which of its
 * parsers reads it, the errors' anchors, and the grammar's codes of the fields its parsers fill.
 * A line holding no anchor and no exception line is dropped; the first shape whose anchors it all
 * holds decides: a shape with a parser here is parsed when the line has exactly the strict form
 * below, every other line is handed back as text. So a shape added to the grammar only is read,
 * through the lines handed back.
 *
 * The contract that keeps this safe: a line claimed here gives exactly what logparse gives for
 * it; any line this file is not sure about (a NaN, an overflow, an event, a shape variant, an
 * ERROR line, invalid UTF-8, a time key in JSON, ...) is handed back.
 * tests/readers/test_textlog_fast.py reads real and mutated logs both ways and requires identical
 * tables.
 *
 * Scanner(keys, anchors, shapes, error_mask, fields, n_fixed, pair_slots)
 *   keys        dict str -> int: codes of pair keys (key=value, JSON), extended here and in logparse
 *   anchors     tuple of bytes, at most 64: the literals looked for
 *   shapes      tuple of (anchor bit mask, parser name or None), in the grammar's order
 *   error_mask  the errors' anchors: lines holding one are handed back
 *   fields      dict "shape:field" -> field code, for the fields the parsers here fill
 *   n_fixed, pair_slots: a pair key coded k of slot s (0 kv, 1 JSON) is field n_fixed + pair_slots*k + s
 *   shuffle     False: find anchors with the byte tables even where the CPU has a byte shuffle (tests)
 * .scan(body, first_line) -> dict, per chunk
 *   body        bytes-like: whole lines, without the final newline
 *   first_line  line number of the first line of body
 *   returns     line_count (lines in body), claimed (lines parsed here), bad_line (first line that
 *               is not valid UTF-8, or -1), back (the handed-back lines joined by "\n"),
 *               back_lines (their numbers, int64)
 * .tables() -> dict, what all chunks gave: logparse.Records' columns
 *   lines       pos shape zone epoch step_in steps_total step (int64; INT64_MIN: none),
 *               wall rank (float64; NaN: none); one row per line with values or a step
 *   values      line (row of `lines`, uint32) field (uint32) value (float64), in line order
 *   Columns are bytearrays of native numbers.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAX_LINE_BYTES (64 << 10)
#define JSON_MAX_BYTES 4000 /* longer JSON lines go the slow way */
#define MAX_PAIRS 64        /* pairs in a kv / JSON line; lines with more go the slow way */
#define MAX_ANCHORS 64
#define MAX_SHAPES 64
#define MAX_COUNT_DIGITS 9 /* logshapes.MAX_COUNT_DIGITS */
#define MISSING INT64_MIN  /* logparse.MISSING */
enum { ZONE_NONE, ZONE_NAIVE, ZONE_GIVEN }; /* logshapes.ZONE_* */

#include "_columns.h" /* Buf: growable byte columns */

#define MAX_COLS 12
typedef struct {
    const char *name;
    int ncol;
    const char *cols[MAX_COLS];
    Buf buf[MAX_COLS];
} Table;

/* ------------------------------------------------------------------ small matchers */

typedef struct {
    const char *p, *e;
} Cur;

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* memcmp with a literal: the compiler turns it into a load and a compare. */
#define HAS(p, e, s) ((size_t)((e) - (p)) >= sizeof(s) - 1 && memcmp((p), (s), sizeof(s) - 1) == 0)
/* The literal s at the cursor: step over it (1), or stay (0). */
#define LIT(c, s) (HAS((c)->p, (c)->e, s) ? ((c)->p += sizeof(s) - 1, 1) : 0)

static void spaces(Cur *c) {
    while (c->p < c->e && *c->p == ' ') c->p++;
}

/* [0-9]+ as int64, at most `most` digits (longer ones go the slow way). */
static int digits_at_most(Cur *c, int most, int64_t *out) {
    const char *p = c->p;
    int64_t v = 0;
    while (p < c->e && is_digit(*p)) {
        if (p - c->p >= most) return 0;
        v = v * 10 + (*p++ - '0');
    }
    if (p == c->p) return 0;
    c->p = p;
    *out = v;
    return 1;
}

static int integer(Cur *c, int64_t *out) { return digits_at_most(c, 18, out); }

/* An epoch or step counter: logshapes.count. */
static int counter(Cur *c, int64_t *out) { return digits_at_most(c, MAX_COUNT_DIGITS, out); }

/* Text -> double, correctly rounded and locale-free: CPython's own dtoa. */
static int to_double(const char *s, size_t n, double *out) {
    char tmp[64];
    if (n == 0 || n >= sizeof tmp) return 0;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    char *end;
    double v = PyOS_string_to_double(tmp, &end, NULL);
    if (end != tmp + n) {
        PyErr_Clear();
        return 0;
    }
    *out = v;
    return 1;
}

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The same for a number already split into sign, digits and exponent: when the digits are at most
 * 2^53 and |exponent| <= 22, digits and 10^|exponent| are exact doubles and one multiplication or
 * division rounds correctly (Clinger's fast path); else dtoa (PyOS_string_to_double costs ~50 ns
 * a call, mostly setting the x87 control word). */
static int decimal(const char *s, size_t n, int negative, uint64_t digits, int ndigits, int64_t exp10, double *out) {
    if (ndigits <= 19 && digits <= (1ull << 53) && exp10 >= -22 && exp10 <= 22) { /* 19 digits: no overflow */
        double v = (double)digits;
        v = exp10 < 0 ? v / POW10[-exp10] : v * POW10[exp10];
        *out = negative ? -v : v;
        return 1;
    }
    return to_double(s, n, out);
}

/* A decimal number: [-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?, the exponent only when complete.
 * No nan/inf spellings: lines with those are handed back. */
static int number(Cur *c, double *out) {
    const char *p = c->p, *e = c->e;
    int negative = 0;
    if (p < e && (*p == '+' || *p == '-')) negative = *p++ == '-';
    uint64_t digits = 0; /* all mantissa digits while there are at most 19 (more: dtoa) */
    int ndigits = 0;
    int64_t exp10 = 0;
    for (; p < e && is_digit(*p); p++, ndigits++) digits = digits * 10 + (uint64_t)(*p - '0');
    int whole = ndigits > 0;
    if (p < e && *p == '.' && (whole || (p + 1 < e && is_digit(p[1]))))
        for (p++; p < e && is_digit(*p); p++, ndigits++, exp10--) digits = digits * 10 + (uint64_t)(*p - '0');
    else if (!whole) return 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        const char *q = p + 1;
        int eneg = 0;
        if (q < e && (*q == '+' || *q == '-')) eneg = *q++ == '-';
        if (q < e && is_digit(*q)) {
            int64_t x = 0;
            for (; q < e && is_digit(*q); q++)
                if (x < 100000) x = x * 10 + (*q - '0');
            exp10 += eneg ? -x : x;
            p = q;
        }
    }
    if (!decimal(c->p, (size_t)(p - c->p), negative, digits, ndigits, exp10, out)) return 0;
    c->p = p;
    return 1;
}

/* What logshapes.number makes of a value's text, when that is certain:
 * 1 = a number (*out), 0 = surely no number (no digit, no nan/inf spelling), -1 = not sure. */
static int value_of(const char *p, const char *e, double *out) {
    Cur c = {p, e};
    if (number(&c, out) && c.p == e) return 1;
    for (const char *q = p; q < e; q++) {
        char ch = *q | 0x20; /* lower case for letters */
        if (is_digit(*q) || (unsigned char)*q >= 0x80) return -1;
        if ((ch == 'n' || ch == 'i') && e - q >= 3) {
            char a = q[1] | 0x20, b = q[2] | 0x20;
            if ((ch == 'n' && a == 'a' && b == 'n') || (ch == 'i' && a == 'n' && b == 'f')) return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ UTF-8 */

/* 1 when [p, e) is valid UTF-8 (no overlongs, surrogates or code points past U+10FFFF). */
static int valid_utf8(const unsigned char *p, const unsigned char *e) {
    while (p < e) {
        unsigned char c = *p;
        if (c < 0x80) {
            p++;
            continue;
        }
        int n;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) n = 1;
        else if (c == 0xE0) n = 2, lo = 0xA0;
        else if (c == 0xED) n = 2, hi = 0x9F;
        else if (c >= 0xE1 && c <= 0xEF) n = 2;
        else if (c == 0xF0) n = 3, lo = 0x90;
        else if (c >= 0xF1 && c <= 0xF3) n = 3;
        else if (c == 0xF4) n = 3, hi = 0x8F;
        else return 0;
        if (e - p <= n || p[1] < lo || p[1] > hi) return 0;
        for (int k = 2; k <= n; k++)
            if ((p[k] & 0xC0) != 0x80) return 0;
        p += n + 1;
    }
    return 1;
}

/* ------------------------------------------------------------------ the grammar's anchors */

/* Anchors are found by their first two bytes, 16 bytes at a time, in the way of Hyperscan's
 * "Teddy": each anchor is in one of 8 buckets; four 16-entry tables give, for a byte's low and
 * high nibble, the buckets whose anchors may start (or continue) with it, and one shuffle per
 * table looks up 16 bytes at once. A byte whose buckets survive both bytes' lookups is a
 * candidate start, checked exactly. The cost does not grow with the number of anchors. Without
 * a byte shuffle (x86 without SSSE3, other CPUs) two 256-entry tables do the same a byte at a time. */
#if defined(__x86_64__) || defined(__i386__)
#include <tmmintrin.h>
#define TEDDY_X86 1
#elif defined(__aarch64__)
#include <arm_neon.h>
#define TEDDY_NEON 1
#endif

typedef struct {
    int n;                         /* anchors */
    const char *text[MAX_ANCHORS]; /* the literals (owned by the anchors tuple) */
    size_t len[MAX_ANCHORS];
    uint64_t by_byte[256];         /* anchors starting with a byte */
    uint64_t by_second[256];       /* anchors whose second byte is a byte (1-byte anchors: all bytes) */
    uint64_t head[MAX_ANCHORS], head_mask[MAX_ANCHORS]; /* their first (up to) 8 bytes, as a word */
    uint64_t in_bucket[8];         /* anchors of each bucket */
    uint8_t lo1[16], hi1[16], lo2[16], hi2[16]; /* buckets by nibble of the first / second byte */
    uint8_t first[256], second[256];            /* the same by byte (the scalar path) */
    uint8_t single;                /* buckets of 1-byte anchors (any second byte) */
    int shuffle;                   /* the CPU has the byte shuffle */
    int nshapes;
    uint64_t shape_mask[MAX_SHAPES];
    int parser[MAX_SHAPES];        /* P_* or -1 */
    uint64_t error_mask;
} Grammar;

/* Anchors with buckets `buckets` that start at q (< e). */
static inline uint64_t anchors_at(const Grammar *gr, const char *q, const char *e, unsigned buckets, uint64_t found) {
    uint64_t cand = gr->by_byte[(unsigned char)*q] & ~found;
    if (q + 1 < e) cand &= gr->by_second[(unsigned char)q[1]];
    if (!cand) return found;
    uint64_t in = 0;
    for (unsigned b = buckets; b; b &= b - 1) in |= gr->in_bucket[__builtin_ctz(b)];
    size_t left = (size_t)(e - q);
    uint64_t word = 0;
    memcpy(&word, q, left < 8 ? left : 8);
    for (cand &= in; cand; cand &= cand - 1) {
        int k = __builtin_ctzll(cand);
        size_t n = gr->len[k];
        if (left >= n && (word & gr->head_mask[k]) == gr->head[k] && (n <= 8 || memcmp(q + 8, gr->text[k] + 8, n - 8) == 0))
            found |= 1ull << k;
    }
    return found;
}

/* The scalar path over [p, e). */
static uint64_t anchors_scalar(const Grammar *gr, const char *p, const char *e, uint64_t found) {
    for (; p < e; p++) {
        unsigned b = gr->first[(unsigned char)*p] & (p + 1 < e ? gr->second[(unsigned char)p[1]] : gr->single);
        if (b) found = anchors_at(gr, p, e, b, found);
    }
    return found;
}

/* Each candidate of a 16-byte block at p: its buckets are the nonzero bytes of `hit`. */
static inline uint64_t anchors_block(const Grammar *gr, const char *p, const char *e, const uint8_t hit[16], uint64_t found) {
    uint64_t w[2];
    memcpy(w, hit, 16);
    for (int half = 0; half < 2; half++)
        for (uint64_t m = w[half]; m;) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            int i = __builtin_clzll(m) >> 3; /* the first byte in memory is the high one */
#else
            int i = __builtin_ctzll(m) >> 3;
#endif
            int at = half * 8 + i;
            found = anchors_at(gr, p + at, e, hit[at], found);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            m &= ~(0xFFull << ((7 - i) * 8));
#else
            m &= ~(0xFFull << (i * 8));
#endif
        }
    return found;
}

#ifdef TEDDY_X86
__attribute__((target("ssse3"))) static uint64_t anchors_shuffle(const Grammar *gr, const char *s, const char *e) {
    const __m128i low = _mm_set1_epi8(0x0F);
    const __m128i lo1 = _mm_loadu_si128((const __m128i *)gr->lo1), hi1 = _mm_loadu_si128((const __m128i *)gr->hi1);
    const __m128i lo2 = _mm_loadu_si128((const __m128i *)gr->lo2), hi2 = _mm_loadu_si128((const __m128i *)gr->hi2);
    uint64_t found = 0;
    const char *p = s;
    for (; e - p > 16; p += 16) { /* p[16] is read: the second byte of the last position */
        __m128i a = _mm_loadu_si128((const __m128i *)p), b = _mm_loadu_si128((const __m128i *)(p + 1));
        __m128i m1 = _mm_and_si128(_mm_shuffle_epi8(lo1, _mm_and_si128(a, low)),
                                   _mm_shuffle_epi8(hi1, _mm_and_si128(_mm_srli_epi16(a, 4), low)));
        __m128i m2 = _mm_and_si128(_mm_shuffle_epi8(lo2, _mm_and_si128(b, low)),
                                   _mm_shuffle_epi8(hi2, _mm_and_si128(_mm_srli_epi16(b, 4), low)));
        __m128i hit = _mm_and_si128(m1, m2);
        if (_mm_movemask_epi8(_mm_cmpeq_epi8(hit, _mm_setzero_si128())) == 0xFFFF) continue;
        uint8_t h[16];
        _mm_storeu_si128((__m128i *)h, hit);
        found = anchors_block(gr, p, e, h, found);
    }
    return anchors_scalar(gr, p, e, found);
}
#elif defined(TEDDY_NEON)
static uint64_t anchors_shuffle(const Grammar *gr, const char *s, const char *e) {
    const uint8x16_t low = vdupq_n_u8(0x0F);
    const uint8x16_t lo1 = vld1q_u8(gr->lo1), hi1 = vld1q_u8(gr->hi1), lo2 = vld1q_u8(gr->lo2), hi2 = vld1q_u8(gr->hi2);
    uint64_t found = 0;
    const char *p = s;
    for (; e - p > 16; p += 16) {
        uint8x16_t a = vld1q_u8((const uint8_t *)p), b = vld1q_u8((const uint8_t *)p + 1);
        uint8x16_t m1 = vandq_u8(vqtbl1q_u8(lo1, vandq_u8(a, low)), vqtbl1q_u8(hi1, vshrq_n_u8(a, 4)));
        uint8x16_t m2 = vandq_u8(vqtbl1q_u8(lo2, vandq_u8(b, low)), vqtbl1q_u8(hi2, vshrq_n_u8(b, 4)));
        uint8x16_t hit = vandq_u8(m1, m2);
        if (vmaxvq_u8(hit) == 0) continue;
        uint8_t h[16];
        vst1q_u8(h, hit);
        found = anchors_block(gr, p, e, h, found);
    }
    return anchors_scalar(gr, p, e, found);
}
#endif

/* The anchors that occur in [s, e), as bits. */
static uint64_t anchors_in(const Grammar *gr, const char *s, const char *e) {
#if defined(TEDDY_X86) || defined(TEDDY_NEON)
    if (gr->shuffle) return anchors_shuffle(gr, s, e);
#endif
    return anchors_scalar(gr, s, e, 0);
}

/* The first byte >= 0x80 in [s, e), or e: eight bytes at a time. */
static const char *first_non_ascii(const char *s, const char *e) {
    const char *p = s;
    for (; e - p >= 8; p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        if (w & 0x8080808080808080ull) break;
    }
    for (; p < e; p++)
        if ((unsigned char)*p >= 0x80) return p;
    return e;
}

static int is_alpha(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static int is_word(unsigned char c) { return is_digit((char)c) || is_alpha(c) || c == '_'; }

/* logshapes.EXCEPTION_RE, [A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)(?::|$), at the line start. */
static int exception_line(const unsigned char *s, const unsigned char *e) {
    if (s == e || !(is_word(*s) && !is_digit((char)*s))) return 0;
    const unsigned char *r = s + 1;
    while (r < e && (is_word(*r) || *r == '.')) r++;
    if (!(r == e || *r == ':')) return 0;
    static const char *const suffixes[] = {"Error", "Exception", "Interrupt", "Exit"};
    for (int i = 0; i < 4; i++) {
        size_t n = strlen(suffixes[i]);
        if ((size_t)(r - s) > n && memcmp(r - n, suffixes[i], n) == 0) return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ timestamps */

static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int fixed_digits(const char *p, int n, int64_t *out) {
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        if (!is_digit(p[i])) return 0;
        v = v * 10 + (p[i] - '0');
    }
    *out = v;
    return 1;
}

/* logshapes.stamp: the timestamp at the line start, as unix seconds (NaN: none) and its zone. */
static void timestamp(const char *s, const char *e, double *wall, int *zone) {
    const char *p = s;
    *wall = NAN;
    *zone = ZONE_NONE;
    while (p < e && (*p == ' ' || (*p >= '\t' && *p <= '\r'))) p++;
    if (p < e && *p == '[') p++;
    static const char shape[] = "dddd-dd-dd?dd:dd:dd";
    for (int i = 0; shape[i]; i++) {
        char want = shape[i];
        if (!(p + i < e && (want == 'd' ? is_digit(p[i]) : want == '?' ? (p[i] == ' ' || p[i] == 'T') : p[i] == want)))
            return;
    }
    int64_t f[6] = {0};
    fixed_digits(p, 4, &f[0]);
    fixed_digits(p + 5, 2, &f[1]);
    fixed_digits(p + 8, 2, &f[2]);
    fixed_digits(p + 11, 2, &f[3]);
    fixed_digits(p + 14, 2, &f[4]);
    fixed_digits(p + 17, 2, &f[5]);
    p += 19;
    double frac = 0.0;
    if (p + 1 < e && (*p == '.' || *p == ',') && is_digit(p[1])) {
        uint64_t digits = 0;
        int n = 0;
        for (p++; n < 9 && p < e && is_digit(*p); p++, n++) digits = digits * 10 + (uint64_t)(*p - '0');
        frac = (double)digits / POW10[n]; /* exact operands, one rounding: as int / 10**n */
    }
    int64_t offset = 0;
    int zoned = 0;
    if (p < e && *p == 'Z') zoned = 1;
    else if (p + 5 <= e && (*p == '+' || *p == '-')) {
        int64_t hh, mm;
        const char *q = p + 1;
        if (fixed_digits(q, 2, &hh)) {
            q += 2;
            if (q < e && *q == ':') q++;
            if (q + 2 <= e && fixed_digits(q, 2, &mm)) {
                zoned = 1;
                offset = (*p == '-' ? -1 : 1) * (hh * 3600 + mm * 60);
            }
        }
    }
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int64_t y = f[0], mo = f[1], d = f[2];
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && leap) || f[3] > 23 || f[4] > 59 || f[5] > 59)
        return; /* no such time: no wall time */
    int64_t secs = days_from_civil(y, mo, d) * 86400 + f[3] * 3600 + f[4] * 60 + f[5];
    *wall = (double)secs + frac;
    if (zoned) *wall -= (double)offset;
    *zone = zoned ? ZONE_GIVEN : ZONE_NAIVE;
}

/* ------------------------------------------------------------------ the hot shapes */

enum { P_MINDFORMERS, P_PROGRESS, P_LOSSMONITOR, P_TIMEMONITOR, P_FLOPS, P_JSON, P_KV, N_PARSERS };
static const char *const PARSERS[N_PARSERS] = {"mindformers", "progress", "lossmonitor", "timemonitor", "flops", "json", "kv"};

/* The fields the parsers fill, as logshapes names them ("shape:field"); their codes come from the grammar. */
enum {
    MF_LOSS, MF_LM_LOSS, MF_LB_LOSS, MF_MTP_LOSS, MF_STEP_TIME, MF_LR, MF_OVERFLOW, MF_LOSS_SCALE, MF_GLOBAL_NORM,
    MF_TFLOPS_NPU, LM_LOSS, FS_STEP_TIME, FS_MFU, FS_HFU, PG_SAMPLES, TM_EPOCH_TIME, TM_STEP_TIME, TM_DATA_TIME, N_FIELDS
};
static const char *const FIELD_NAMES[N_FIELDS] = {
    "mindformers:loss", "mindformers:lm_loss", "mindformers:load_balancing_loss", "mindformers:mtp_loss",
    "mindformers:step_time", "mindformers:lr", "mindformers:overflow", "mindformers:loss_scale",
    "mindformers:global_norm", "mindformers:tflops_npu", "lossmonitor:loss", "flops-step:step_time",
    "flops-step:mfu", "flops-step:hfu", "mindformers-progress:samples", "timemonitor:epoch_time",
    "timemonitor:step_time", "timemonitor:data_time",
};

typedef struct {
    int64_t pos, shape, zone, epoch, step_in, steps_total, step;
    double wall, rank;
} Line;

typedef struct {
    Table lines;  /* one row per claimed line with values or a step (Line) */
    Table values; /* one row per value: (row of its line in `lines`, field, value), in line order */
    int64_t nlines;
    PyObject *keys;
    int64_t code[N_FIELDS]; /* the grammar's code of each field */
    int order[N_FIELDS];    /* the fields by code */
    int64_t n_fixed, pair_slots;
    struct {
        const char *p;
        size_t n;
        int64_t code;
    } cache[2 * MAX_PAIRS]; /* the key at each pair position of the last kv / JSON line: lines repeat their keys */
} Out;

static int64_t key_code(Out *o, int slot, const char *p, size_t n) {
    if (o->cache[slot].p && o->cache[slot].n == n && memcmp(o->cache[slot].p, p, n) == 0)
        return o->cache[slot].code;
    PyObject *k = PyUnicode_DecodeUTF8(p, (Py_ssize_t)n, "strict");
    if (!k) return -1;
    PyObject *v = PyDict_GetItemWithError(o->keys, k);
    int64_t code;
    if (v) code = PyLong_AsLongLong(v);
    else if (PyErr_Occurred()) code = -1;
    else {
        code = PyDict_Size(o->keys);
        PyObject *c = PyLong_FromLongLong(code);
        if (!c || PyDict_SetItem(o->keys, k, c) < 0) code = -1;
        Py_XDECREF(c);
    }
    Py_DECREF(k);
    if (code >= 0) {
        o->cache[slot].p = p;
        o->cache[slot].n = n;
        o->cache[slot].code = code;
    }
    return code;
}

/* Return values of the shape parsers: claimed (rows added), not this form (hand back), error. */
enum { CLAIMED = 1, BACK = 0, FAILED = -1, DROPPED = 2 };

static Line new_line(int64_t pos, int64_t shape, double wall, int zone) {
    Line l = {pos, shape, zone, MISSING, MISSING, MISSING, MISSING, wall, NAN};
    return l;
}

static int add_line(Out *o, const Line *l) {
    Buf *b = o->lines.buf; /* columns as in scanner_init */
    if (put8(&b[0], &l->pos) || put8(&b[1], &l->shape) || put8(&b[2], &l->zone) || put8(&b[3], &l->epoch) ||
        put8(&b[4], &l->step_in) || put8(&b[5], &l->steps_total) || put8(&b[6], &l->step) || put8(&b[7], &l->wall) ||
        put8(&b[8], &l->rank))
        return -1;
    o->nlines++;
    return 0;
}

/* A value of the line added last. */
static int add_value(Out *o, int64_t code, double value) {
    Buf *b = o->values.buf;
    uint32_t line = (uint32_t)(o->nlines - 1), f = (uint32_t)code;
    return put4(&b[0], &line) || put4(&b[1], &f) || put8(&b[2], &value) ? -1 : 0;
}

/* The values of fields [first, last] of the line added last that are not NaN, in the grammar's
 * order (its codes): logparse adds a line's values in the order the shape declares its fields. */
static int add_values(Out *o, int first, int last, const double *v) {
    for (int i = 0; i < N_FIELDS; i++) {
        int f = o->order[i];
        if (f >= first && f <= last && !isnan(v[f]) && add_value(o, o->code[f], v[f])) return -1;
    }
    return 0;
}

/* The MindFormers r0.7 - r1.8 monitor line, logger prefix optional. r1.7 names the logger before
 * the source path and may print lm_loss, load_balancing_loss and mtp_loss after the loss. Lines
 * that overflowed are handed back (they give an event). */
static int parse_mf(Out *o, Cur c, Line l) {
    Cur pre = c;
    /* YYYY-MM-DD HH:MM:SS,mmm - [path:line] - LEVEL - , or ... - mindformers[path:line] - ... */
    static const char shape[] = "dddd-dd-dd dd:dd:dd,ddd - ";
    int ok = 1;
    for (int i = 0; ok && shape[i]; i++)
        ok = pre.p + i < pre.e && (shape[i] == 'd' ? is_digit(pre.p[i]) : pre.p[i] == shape[i]);
    if (ok) {
        pre.p += sizeof shape - 1;
        /* the logger's name: letters only, so that no "Epoch:[" can be in it */
        while (pre.p < pre.e && is_alpha(*pre.p)) pre.p++;
        ok = LIT(&pre, "[");
    }
    if (ok) {
        /* the source path: no ":" in it, so no "Epoch:[" either */
        while (pre.p < pre.e && (is_alpha(*pre.p) || is_digit(*pre.p) || *pre.p == '/' || *pre.p == '.' || *pre.p == '-' || *pre.p == '_'))
            pre.p++;
        int64_t ln;
        ok = LIT(&pre, ":") && integer(&pre, &ln) && LIT(&pre, "] - ");
        const char *lv = pre.p;
        while (ok && pre.p < pre.e && *pre.p >= 'A' && *pre.p <= 'Z') pre.p++;
        ok = ok && pre.p > lv && LIT(&pre, " - ");
        if (ok) c = pre;
    }
    int64_t epochs;
    double v[N_FIELDS];
    for (int i = 0; i < N_FIELDS; i++) v[i] = NAN;
    if (!LIT(&c, "{ Epoch:[")) return BACK;
    spaces(&c);
    if (!counter(&c, &l.epoch) || !LIT(&c, "/")) return BACK;
    spaces(&c);
    if (!integer(&c, &epochs) || !LIT(&c, "], step:[")) return BACK;
    spaces(&c);
    if (!counter(&c, &l.step_in) || !LIT(&c, "/")) return BACK;
    spaces(&c);
    if (!counter(&c, &l.steps_total) || !LIT(&c, "], loss: ") || !number(&c, &v[MF_LOSS])) return BACK;
    if (LIT(&c, ", lm_loss: ") && !number(&c, &v[MF_LM_LOSS])) return BACK;
    if (LIT(&c, ", load_balancing_loss: ") && !number(&c, &v[MF_LB_LOSS])) return BACK;
    if (LIT(&c, ", mtp_loss: ") && !number(&c, &v[MF_MTP_LOSS])) return BACK;
    if (!LIT(&c, ", per_step_time: ") || !number(&c, &v[MF_STEP_TIME]) || !LIT(&c, "ms, ")) return BACK;
    if (LIT(&c, "lr: ") && !(number(&c, &v[MF_LR]) && LIT(&c, ", "))) return BACK;
    if (!LIT(&c, "overflow cond: False")) return BACK; /* True: an overflow event, for logparse */
    v[MF_OVERFLOW] = 0.0;
    if (!LIT(&c, ", loss_scale: ") || !number(&c, &v[MF_LOSS_SCALE])) return BACK;
    if (LIT(&c, ", global_norm: [")) {
        if (!number(&c, &v[MF_GLOBAL_NORM]) || !LIT(&c, "]")) return BACK;
        if (LIT(&c, ", train_throughput_per_npu: ") && !(number(&c, &v[MF_TFLOPS_NPU]) && LIT(&c, "T"))) return BACK;
    }
    if (c.p != c.e) return BACK;
    if (add_line(o, &l) || add_values(o, MF_LOSS, MF_TFLOPS_NPU, v)) return FAILED;
    return CLAIMED;
}

/* "epoch: 1 step: 2, loss is 8.61" */
static int parse_lm(Out *o, Cur c, Line l) {
    double loss;
    if (!(LIT(&c, "epoch: ") && counter(&c, &l.epoch) && LIT(&c, " step: ") && counter(&c, &l.step_in) &&
          LIT(&c, ", loss is ") && number(&c, &loss) && c.p == c.e))
        return BACK;
    return add_line(o, &l) || add_value(o, o->code[LM_LOSS], loss) ? FAILED : CLAIMED;
}

/* TimeMonitor: "[Train ]epoch time: 431.937 ms, per step time: 53.992 ms[ (data time: 1.2 ms)]" */
static int parse_tm(Out *o, Cur c, Line l) {
    double v[N_FIELDS];
    for (int i = 0; i < N_FIELDS; i++) v[i] = NAN;
    LIT(&c, "Train ");
    if (!(LIT(&c, "epoch time: ") && number(&c, &v[TM_EPOCH_TIME]) && LIT(&c, " ms, per step time: ") &&
          number(&c, &v[TM_STEP_TIME]) && LIT(&c, " ms")))
        return BACK;
    if (LIT(&c, " (data time: ") && !(number(&c, &v[TM_DATA_TIME]) && LIT(&c, " ms)"))) return BACK;
    if (c.p != c.e) return BACK;
    return add_line(o, &l) || add_values(o, TM_EPOCH_TIME, TM_DATA_TIME, v) ? FAILED : CLAIMED;
}

/* FlopsUtilizationCollector: "Train per step time: 135.572 ms, mfu:0.47% hfu:0.47%" (comma optional) */
static int parse_fs(Out *o, Cur c, Line l) {
    double v[N_FIELDS];
    for (int i = 0; i < N_FIELDS; i++) v[i] = NAN;
    if (!(LIT(&c, "Train per step time: ") && number(&c, &v[FS_STEP_TIME]) && LIT(&c, " ms"))) return BACK;
    LIT(&c, ",");
    if (!(LIT(&c, " mfu:") && number(&c, &v[FS_MFU]) && LIT(&c, "% hfu:") && number(&c, &v[FS_HFU]) && LIT(&c, "%") &&
          c.p == c.e))
        return BACK;
    return add_line(o, &l) || add_values(o, FS_STEP_TIME, FS_HFU, v) ? FAILED : CLAIMED;
}

static const char *find(const char *p, const char *e, const char *s, size_t n) {
    for (; (size_t)(e - p) >= n; p++) {
        p = memchr(p, s[0], (size_t)(e - p) - n + 1);
        if (!p) return NULL;
        if (memcmp(p, s, n) == 0) return p;
    }
    return NULL;
}

/* The progress line's "<number> samples/s/p": the number just before the first "samples/s/p".
 * Claimed when it is plain digits with at most one dot, after a character no number can hold
 * (so the regex's leftmost match starts where this one does). */
static int parse_pg(Out *o, Cur c, Line l) {
    const char *q = find(c.p, c.e, "samples/s/p", 11);
    if (!q) return BACK;
    const char *w = q;
    while (w > c.p && (w[-1] == ' ' || (w[-1] >= '\t' && w[-1] <= '\r'))) w--;
    const char *s = w;
    int dots = 0;
    for (; s > c.p && (is_digit(s[-1]) || s[-1] == '.'); s--) dots += s[-1] == '.';
    if (s == w || *s == '.' || dots > 1) return BACK;
    if (s > c.p && (s[-1] == '+' || s[-1] == '-' || (s[-1] | 0x20) == 'e')) return BACK;
    Cur num = {s, w};
    double samples;
    if (!number(&num, &samples) || num.p != w) return BACK;
    return add_line(o, &l) || add_value(o, o->code[PG_SAMPLES], samples) ? FAILED : CLAIMED;
}

/* The number-valued pairs of one line, before its step is known. */
typedef struct {
    int n;
    const char *key[MAX_PAIRS];
    size_t len[MAX_PAIRS];
    double value[MAX_PAIRS];
} Pairs;

/* The keys logparse._roles reads: what a pair's key is to it. */
enum { KEY_VALUE, KEY_STEP, KEY_GLOBAL_STEP, KEY_RANK, KEY_EPOCH_STEP };

static int key_role(const char *k, size_t n) {
    switch (n) {
    case 4:
        return memcmp(k, "step", 4) == 0 ? KEY_STEP : memcmp(k, "rank", 4) == 0 ? KEY_RANK : KEY_VALUE;
    case 10:
        return memcmp(k, "epoch_step", 10) == 0 ? KEY_EPOCH_STEP : KEY_VALUE;
    case 11:
        return memcmp(k, "global_step", 11) == 0 ? KEY_GLOBAL_STEP : KEY_VALUE;
    }
    return KEY_VALUE;
}

/* logparse._roles for one line: its step is the first finite "step" value below 2^62, else the
 * first such "global_step"; its rank the first "rank" value when whole and below 2^31. Rows for
 * the other pairs; none when the line has no step. `slot`: 0 kv, 1 JSON. */
static int emit_pairs(Out *o, int slot, const Pairs *l, Line line) {
    int step_at = -1, global_at = -1, rank_at = -1;
    int role[MAX_PAIRS];
    for (int i = 0; i < l->n; i++) {
        double v = l->value[i];
        int usable = isfinite(v) && fabs(v) < 0x1p62;
        role[i] = key_role(l->key[i], l->len[i]);
        if (step_at < 0 && usable && role[i] == KEY_STEP) step_at = i;
        else if (global_at < 0 && usable && role[i] == KEY_GLOBAL_STEP) global_at = i;
        else if (rank_at < 0 && role[i] == KEY_RANK) rank_at = i;
    }
    if (step_at < 0) step_at = global_at;
    if (step_at < 0) return CLAIMED;
    line.step = (int64_t)l->value[step_at]; /* truncates, as int() does */
    if (rank_at >= 0) {
        double v = l->value[rank_at];
        if (v == nearbyint(v) && fabs(v) < 0x1p31) line.rank = v;
    }
    if (add_line(o, &line)) return FAILED;
    for (int i = 0; i < l->n; i++) {
        if (role[i] != KEY_VALUE) continue;
        int64_t code = key_code(o, slot * MAX_PAIRS + i, l->key[i], l->len[i]);
        if (code < 0 || add_value(o, o->n_fixed + o->pair_slots * code + slot, l->value[i])) return FAILED;
    }
    return CLAIMED;
}

/* key=value lines made of space-separated tokens, each without "=" or exactly one key=value
 * (logshapes.KV_RE finds the same pairs in them); values have their quotes stripped and must
 * be certain numbers or certainly no numbers. */
static int is_key_char(char c) { return is_word((unsigned char)c) || c == '.' || c == '-' || c == '/'; }

static int parse_kv(Out *o, Cur c, Line line) {
    Pairs l;
    l.n = 0;
    for (const char *p = c.p;; p++) { /* one token per turn, p at its first byte */
        const char *t = p;
        while (p < c.e && is_key_char(*p)) p++;
        if (p < c.e && *p == '=') {
            if (p == t || !(is_alpha(*t) || *t == '_')) return BACK; /* "=" but no key: no key=value token */
            const char *eq = p++;
            for (; p < c.e && *p != ' '; p++) /* the value: [^\s,;]+; non-ASCII values go to logparse */
                if (*p == ',' || *p == ';' || (*p >= '\t' && *p <= '\r') || (unsigned char)*p >= 0x80) return BACK;
            if (p == eq + 1) return BACK;
            const char *vs = eq + 1, *ve = p;
            while (vs < ve && (*vs == '"' || *vs == '\'')) vs++;
            while (ve > vs && (ve[-1] == '"' || ve[-1] == '\'')) ve--;
            double value;
            int is = value_of(vs, ve, &value);
            if (is < 0) return BACK;
            if (is) { /* a pair without a number gives no value */
                if (l.n == MAX_PAIRS) return BACK;
                l.key[l.n] = t, l.len[l.n] = (size_t)(eq - t), l.value[l.n++] = value;
            }
        } else {
            while (p < c.e && *p != ' ')
                if (*p++ == '=') return BACK; /* a token with "=" that is no key=value */
        }
        if (p == c.e) break;
    }
    return emit_pairs(o, 0, &l, line);
}

static void json_ws(Cur *c) {
    while (c->p < c->e && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n')) c->p++;
}

/* "..." without escapes or control characters; [s, e) is the text inside. */
static int json_string(Cur *c, const char **s, const char **e) {
    if (!LIT(c, "\"")) return 0;
    *s = c->p;
    while (c->p < c->e && *c->p != '"') {
        if (*c->p == '\\' || (unsigned char)*c->p < 0x20) return 0;
        c->p++;
    }
    *e = c->p;
    return LIT(c, "\"");
}

/* JSON's number grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)? */
static int json_number(Cur *c, double *out) {
    const char *p = c->p, *e = c->e;
    if (p < e && *p == '-') p++;
    if (p < e && *p == '0') p++;
    else if (p < e && *p >= '1' && *p <= '9') while (p < e && is_digit(*p)) p++;
    else return 0;
    if (p < e && *p == '.') {
        if (!(p + 1 < e && is_digit(p[1]))) return 0;
        for (p++; p < e && is_digit(*p); p++);
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (!(p < e && is_digit(*p))) return 0;
        while (p < e && is_digit(*p)) p++;
    }
    Cur span = {c->p, p};
    if (p - c->p == 2 && memcmp(c->p, "-0", 2) == 0) *out = 0.0; /* json.loads: the int -0 is 0 */
    else if (!number(&span, out) || span.p != p) return 0;
    c->p = p;
    return 1;
}

static const char *const JSON_TIME_KEYS[] = {"time", "timestamp", "ts", "wall_time", "datetime"};

/* One flat JSON object from the first "{" to the last "}" with unique keys (what json.loads
 * reads the same), and no time key when the line has no timestamp (logparse reads it then). */
static int parse_json(Out *o, Cur c, Line line) {
    if (c.e - c.p >= JSON_MAX_BYTES) return BACK;
    const char *open = memchr(c.p, '{', (size_t)(c.e - c.p)), *close = c.e;
    while (close > c.p && close[-1] != '}') close--;
    if (!open || close <= open) return BACK;
    Cur b = {open + 1, close - 1};
    const char *ks[MAX_PAIRS], *ke[MAX_PAIRS];
    int n = 0;
    Pairs l;
    l.n = 0;
    json_ws(&b);
    while (b.p < b.e) {
        if (n == MAX_PAIRS) return BACK;
        if (n && !(LIT(&b, ",") && (json_ws(&b), 1))) return BACK;
        if (!json_string(&b, &ks[n], &ke[n])) return BACK;
        json_ws(&b);
        if (!LIT(&b, ":")) return BACK;
        json_ws(&b);
        size_t len = (size_t)(ke[n] - ks[n]);
        for (int i = 0; i < n; i++)
            if ((size_t)(ke[i] - ks[i]) == len && memcmp(ks[i], ks[n], len) == 0) return BACK;
        if (isnan(line.wall))
            for (int i = 0; i < 5; i++)
                if (len == strlen(JSON_TIME_KEYS[i]) && memcmp(ks[n], JSON_TIME_KEYS[i], len) == 0) return BACK;
        double value;
        int is = 1;
        const char *vs, *ve;
        if (LIT(&b, "true") || LIT(&b, "false") || LIT(&b, "null")) is = 0;
        else if (b.p < b.e && *b.p == '"') {
            if (!json_string(&b, &vs, &ve)) return BACK;
            is = value_of(vs, ve, &value);
            if (is < 0) return BACK;
        } else if (!json_number(&b, &value)) return BACK;
        json_ws(&b);
        if (is) l.key[l.n] = ks[n], l.len[l.n] = len, l.value[l.n++] = value;
        n++;
    }
    return emit_pairs(o, 1, &l, line);
}

/* ------------------------------------------------------------------ tables */

static void table_init(Table *t, const char *name, const char *const *cols) {
    memset(t, 0, sizeof *t);
    t->name = name;
    while (cols[t->ncol]) {
        t->cols[t->ncol] = cols[t->ncol];
        t->ncol++;
    }
}

static void table_free(Table *t) {
    for (int i = 0; i < t->ncol; i++) buf_free(&t->buf[i]);
}

static PyObject *table_dict(Table *t) {
    PyObject *d = PyDict_New();
    for (int i = 0; d && i < t->ncol; i++) {
        PyObject *b = buf_bytes(&t->buf[i]);
        if (!b || PyDict_SetItemString(d, t->cols[i], b) < 0) {
            Py_XDECREF(b);
            Py_CLEAR(d);
            break;
        }
        Py_DECREF(b);
    }
    return d;
}

/* ------------------------------------------------------------------ the Scanner type */

typedef struct {
    PyObject_HEAD Out out; /* claimed lines and values, across all chunks of a file */
    Grammar gr;
    PyObject *anchors;     /* keeps the anchors' bytes alive (gr.text points into them) */
} Scanner;

static int grammar_init(Grammar *gr, PyObject *anchors, PyObject *shapes, unsigned long long error_mask, int shuffle) {
    memset(gr, 0, sizeof *gr);
    gr->n = (int)PyTuple_Size(anchors);
    gr->nshapes = (int)PyTuple_Size(shapes);
    if (gr->n > MAX_ANCHORS || gr->nshapes > MAX_SHAPES) {
        PyErr_SetString(PyExc_ValueError, "too many anchors or shapes for the C scanner");
        return -1;
    }
    /* Anchors with the same first byte share a bucket (fewer false candidates); first bytes are
     * dealt to the 8 buckets in turn. */
    int bucket_of_byte[256];
    int next_bucket = 0;
    for (int i = 0; i < 256; i++) bucket_of_byte[i] = -1;
    for (int k = 0; k < gr->n; k++) {
        PyObject *a = PyTuple_GET_ITEM(anchors, k);
        char *text;
        Py_ssize_t len;
        if (PyBytes_AsStringAndSize(a, &text, &len) < 0) return -1;
        if (len < 1) {
            PyErr_SetString(PyExc_ValueError, "empty anchor");
            return -1;
        }
        unsigned char c0 = (unsigned char)text[0];
        if (bucket_of_byte[c0] < 0) bucket_of_byte[c0] = next_bucket++ % 8;
        int bucket = bucket_of_byte[c0];
        uint8_t bit = (uint8_t)(1u << bucket);
        gr->text[k] = text;
        gr->len[k] = (size_t)len;
        gr->by_byte[c0] |= 1ull << k;
        gr->in_bucket[bucket] |= 1ull << k;
        size_t h = len < 8 ? (size_t)len : 8;
        memcpy(&gr->head[k], text, h);
        memset(&gr->head_mask[k], 0xFF, h);
        gr->lo1[c0 & 15] |= bit;
        gr->hi1[c0 >> 4] |= bit;
        gr->first[c0] |= bit;
        if (len == 1) { /* any second byte */
            gr->single |= bit;
            for (int i = 0; i < 16; i++) gr->lo2[i] |= bit, gr->hi2[i] |= bit;
            for (int i = 0; i < 256; i++) gr->second[i] |= bit, gr->by_second[i] |= 1ull << k;
        } else {
            unsigned char c1 = (unsigned char)text[1];
            gr->lo2[c1 & 15] |= bit;
            gr->hi2[c1 >> 4] |= bit;
            gr->second[c1] |= bit;
            gr->by_second[c1] |= 1ull << k;
        }
    }
#ifdef TEDDY_X86
    __builtin_cpu_init();
    gr->shuffle = shuffle && __builtin_cpu_supports("ssse3");
#elif defined(TEDDY_NEON)
    gr->shuffle = shuffle;
#else
    (void)shuffle;
#endif
    for (int i = 0; i < gr->nshapes; i++) {
        PyObject *item = PyTuple_GET_ITEM(shapes, i), *mask, *parser;
        if (!PyArg_ParseTuple(item, "OO", &mask, &parser)) return -1;
        gr->shape_mask[i] = PyLong_AsUnsignedLongLong(mask);
        if (PyErr_Occurred()) return -1;
        gr->parser[i] = -1;
        if (parser != Py_None) {
            const char *name = PyUnicode_AsUTF8(parser);
            if (!name) return -1;
            for (int p = 0; p < N_PARSERS; p++)
                if (strcmp(name, PARSERS[p]) == 0) gr->parser[i] = p;
            if (gr->parser[i] < 0) {
                PyErr_Format(PyExc_ValueError, "the C scanner has no parser %s", name);
                return -1;
            }
        }
    }
    gr->error_mask = error_mask;
    return 0;
}

static int scanner_init(Scanner *self, PyObject *args, PyObject *kwds) {
    PyObject *keys, *anchors, *shapes, *fields;
    unsigned long long error_mask;
    long long n_fixed, pair_slots;
    int shuffle = 1;
    static char *kwlist[] = {"keys", "anchors", "shapes", "error_mask", "fields", "n_fixed", "pair_slots", "shuffle", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!O!KO!LL|p", kwlist, &PyDict_Type, &keys, &PyTuple_Type, &anchors,
                                     &PyTuple_Type, &shapes, &error_mask, &PyDict_Type, &fields, &n_fixed, &pair_slots,
                                     &shuffle))
        return -1;
    /* Integer columns first, names as logparse.Records has them (add_line and add_value write them). */
    static const char *const lines[] = {"pos", "shape", "zone", "epoch", "step_in", "steps_total", "step", "wall", "rank", NULL};
    static const char *const values[] = {"line", "field", "value", NULL};
    table_free(&self->out.lines);
    table_free(&self->out.values);
    Py_CLEAR(self->out.keys);
    Py_CLEAR(self->anchors);
    memset(&self->out, 0, sizeof self->out);
    table_init(&self->out.lines, "lines", lines);
    table_init(&self->out.values, "values", values);
    if (grammar_init(&self->gr, anchors, shapes, error_mask, shuffle) < 0) return -1;
    for (int f = 0; f < N_FIELDS; f++) {
        PyObject *code = PyDict_GetItemString(fields, FIELD_NAMES[f]);
        if (!code) {
            PyErr_Format(PyExc_ValueError, "the grammar has no field %s", FIELD_NAMES[f]);
            return -1;
        }
        self->out.code[f] = PyLong_AsLongLong(code);
        if (PyErr_Occurred()) return -1;
    }
    for (int i = 0; i < N_FIELDS; i++) { /* insertion sort: a dozen fields */
        int f = i, j = i;
        for (; j > 0 && self->out.code[self->out.order[j - 1]] > self->out.code[f]; j--) self->out.order[j] = self->out.order[j - 1];
        self->out.order[j] = f;
    }
    self->out.n_fixed = n_fixed;
    self->out.pair_slots = pair_slots;
    Py_INCREF(keys);
    self->out.keys = keys;
    Py_INCREF(anchors);
    self->anchors = anchors;
    return 0;
}

static void scanner_dealloc(Scanner *self) {
    table_free(&self->out.lines);
    table_free(&self->out.values);
    Py_CLEAR(self->out.keys);
    Py_CLEAR(self->anchors);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* One line [s, e) (its "\r"s stripped): claimed, handed back, or dropped (neither). */
static int scan_line(Scanner *self, const char *s, const char *e, int64_t pos) {
    const Grammar *gr = &self->gr;
    uint64_t found = anchors_in(gr, s, e);
    int exc = exception_line((const unsigned char *)s, (const unsigned char *)e);
    if (!found && !exc) return DROPPED; /* not a candidate */
    if ((found & gr->error_mask) || exc) return BACK; /* errors: logparse */
    int shape = -1;
    for (int i = 0; i < gr->nshapes && shape < 0; i++)
        if ((found & gr->shape_mask[i]) == gr->shape_mask[i]) shape = i;
    if (shape < 0) return DROPPED; /* no shape has all its anchors here: nothing to read */
    if (gr->parser[shape] < 0) return BACK;
    Line l;
    int zone;
    double wall;
    timestamp(s, e, &wall, &zone);
    l = new_line(pos, shape, wall, zone);
    Cur c = {s, e};
    switch (gr->parser[shape]) {
    case P_MINDFORMERS: return parse_mf(&self->out, c, l);
    case P_PROGRESS: return parse_pg(&self->out, c, l);
    case P_LOSSMONITOR: return parse_lm(&self->out, c, l);
    case P_TIMEMONITOR: return parse_tm(&self->out, c, l);
    case P_FLOPS: return parse_fs(&self->out, c, l);
    case P_JSON: return parse_json(&self->out, c, l);
    case P_KV: return parse_kv(&self->out, c, l);
    }
    return BACK;
}

/* scan(body, first_line): the lines of one chunk; see the top of this file. */
static PyObject *scanner_scan(Scanner *self, PyObject *args) {
    Py_buffer view;
    long long first_line;
    if (!self->out.keys) {
        PyErr_SetString(PyExc_RuntimeError, "Scanner not initialised");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*L", &view, &first_line)) return NULL;
    const char *buf = view.buf, *end = buf + view.len;
    Out *o = &self->out;
    memset(o->cache, 0, sizeof o->cache); /* cached keys point into the previous chunk */
    Buf back = {0}, back_lines = {0};
    long long lines = 0, claimed = 0, bad_line = -1;
    int failed = 0;

    for (const char *s = buf; !failed;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end;
        int64_t pos = first_line + lines++;
        int claim = BACK;
        const char *non_ascii = first_non_ascii(s, e);
        if (e - s > MAX_LINE_BYTES) goto hand_back; /* logparse notes and skips it */
        if (non_ascii < e && !valid_utf8((const unsigned char *)non_ascii, (const unsigned char *)e)) {
            if (bad_line < 0) bad_line = pos;
            goto hand_back; /* logparse decodes it with replacement characters */
        }
        const char *te = e;
        while (te > s && te[-1] == '\r') te--;
        claim = scan_line(self, s, te, pos);
        if (claim == FAILED) failed = 1;
        if (claim == CLAIMED) claimed++;
        if (claim != BACK) goto next;
    hand_back:
        if ((back.len && put(&back, "\n", 1)) || put(&back, s, (size_t)(e - s)) || put(&back_lines, &pos, 8)) failed = 1;
    next:
        if (!nl) break;
        s = nl + 1;
    }
    memset(o->cache, 0, sizeof o->cache);

    PyObject *result = NULL;
    if (!failed)
        result = Py_BuildValue("{s:L,s:L,s:L,s:N,s:N}", "line_count", lines, "claimed", claimed, "bad_line", bad_line,
                               "back", buf_bytes(&back), "back_lines", buf_bytes(&back_lines));
    else if (!PyErr_Occurred())
        PyErr_NoMemory();
    buf_free(&back);
    buf_free(&back_lines);
    PyBuffer_Release(&view);
    return result;
}

/* tables(): {"lines": {column: bytes}, "values": {column: bytes}} */
static PyObject *scanner_tables(Scanner *self, PyObject *unused) {
    PyObject *result = PyDict_New();
    Table *tables[] = {&self->out.lines, &self->out.values};
    for (int i = 0; result && i < 2; i++) {
        PyObject *d = table_dict(tables[i]);
        if (!d || PyDict_SetItemString(result, tables[i]->name, d) < 0) Py_CLEAR(result);
        Py_XDECREF(d);
    }
    return result;
}

static PyMethodDef scanner_methods[] = {
    {"scan", (PyCFunction)scanner_scan, METH_VARARGS,
     "scan(body, first_line): parse the hot line shapes of a chunk of whole lines; hand back the others."},
    {"tables", (PyCFunction)scanner_tables, METH_NOARGS, "tables(): what the chunks scanned so far gave."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "postmortem.readers._logscan.Scanner",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Scanner(keys, anchors, shapes, error_mask, fields, n_fixed, pair_slots): the text-log lines of one "
              "file, chunk by chunk (see _logscan.c).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)scanner_init,
    .tp_dealloc = (destructor)scanner_dealloc,
    .tp_methods = scanner_methods,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_logscan", NULL, -1, NULL};

PyMODINIT_FUNC PyInit__logscan(void) {
    if (PyType_Ready(&ScannerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&ScannerType);
    if (PyModule_AddObject(m, "Scanner", (PyObject *)&ScannerType) < 0) {
        Py_DECREF(&ScannerType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
