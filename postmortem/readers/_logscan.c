/*
 * Text-log lines in C: one pass over a chunk of whole lines that parses the lines of the common
 * shapes and hands every other line that may matter back to textlog.py's polars path.
 *
 * Why C: a 1M-line log holds ~3M values in half a dozen line shapes. The polars path needs a dozen
 * vectorised passes over the text (split, anchors, timestamps, one capture regex per shape,
 * key=value and JSON splitting, casts), which caps it near 60 MB/s on one core. Here each line is
 * looked at once.
 *
 * The contract that keeps this safe: a line this file *claims* gives exactly what the polars path
 * gives for it; any line it is not sure about (a NaN, a non-ASCII byte where a Unicode class could
 * match, a shape variant, an ERROR line, a time key in JSON, ...) is handed back as text and takes
 * the polars path, which stays the reference. tests/readers/test_textlog_fast.py runs both paths
 * on real and mutated logs and requires identical tables.
 *
 * Scanner(keys)                 keys: dict str -> int, codes of key=value / JSON keys, extended here
 * .scan(body, first_line) -> dict, per chunk
 *   body        bytes-like: whole lines, without the final newline
 *   first_line  line number of the first line of body
 *   returns     line_count (lines in body), bad_line (first line that is not valid UTF-8, or -1),
 *               back (the handed-back lines joined by "\n"), back_lines (their numbers, int64)
 * .tables() -> dict, what all chunks gave
 *   claimed     one row per claimed line: pos, kind (K_*), epoch, step_in, steps_total, step (the
 *               key=value / JSON step, as textlog._with_step finds it; such lines without a step
 *               are claimed and give nothing), wall_time, overflow, loss_scale, line_rank
 *   values      one row per value, in line order: line (row of `claimed`, uint32), field (uint32), value;
 *               textlog._MF_FIELDS order within a MindFormers line, pair order in kv / JSON
 *   fields      names of the fields below N_FIXED (kv and JSON keys follow, see K_* below)
 *   Table columns are bytearrays of native int64 (the first ones), uint32 where said, or float64
 *   (NaN = no value).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAX_LINE_BYTES (64 << 10)
#define JSON_MAX_BYTES 4000 /* textlog.py: longer JSON lines go the slow way */
#define MAX_PAIRS 64          /* pairs in a kv / JSON line; lines with more go the slow way */

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

/* [0-9]+ as int64; at most 18 digits (longer ones go the slow way). */
static int integer(Cur *c, int64_t *out) {
    const char *p = c->p;
    int64_t v = 0;
    while (p < c->e && is_digit(*p)) {
        if (p - c->p >= 18) return 0;
        v = v * 10 + (*p++ - '0');
    }
    if (p == c->p) return 0;
    c->p = p;
    *out = v;
    return 1;
}

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
 * No nan/inf spellings: lines with those take the polars path. */
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

/* What polars' strict=False float cast makes of a value's text, when that is certain:
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

/* ------------------------------------------------------------------ what a line holds */

enum {
    F_LOSS_IS = 1 << 0, F_EPOCH_TIME = 1 << 1, F_FLOPS_IS = 1 << 2, F_MFU = 1 << 3, F_STEP_BRACKET = 1 << 4,
    F_SAMPLES = 1 << 5, F_STEP_EQ = 1 << 6, F_STEP_QUOTE = 1 << 7, F_ERROR = 1 << 8, F_TRACEBACK = 1 << 9,
    F_LOSS = 1 << 10, F_EPOCH_COLON = 1 << 11, F_BRACE = 1 << 12,
};
/* textlog._ANCHORS: a line holding none of them (and no exception line) holds nothing wanted. */
#define ANCHORS 0x3FF

/* 16 bytes at a time (GCC/Clang vector extensions: SSE2 on x86-64, NEON on arm64). */
typedef unsigned char v16 __attribute__((vector_size(16)));
#define SPLAT(c) ((v16){c, c, c, c, c, c, c, c, c, c, c, c, c, c, c, c})

/* Where in the 16 bytes at p a literal below may start: "{" or the first two bytes of one. A byte
 * of 0xFF per candidate in w[0] (bytes 0-7) and w[1] (bytes 8-15); most positions of a log line
 * are no candidate, so the exact check runs on a few. p[16] is read too. */
static inline void candidate_starts(const char *p, uint64_t w[2]) {
    v16 a, b;
    memcpy(&a, p, 16);
    memcpy(&b, p + 1, 16);
    v16 hit = (a == SPLAT('{')) | ((a == SPLAT('l')) & (b == SPLAT('o'))) | ((a == SPLAT('e')) & (b == SPLAT('p'))) |
              ((a == SPLAT('f')) & (b == SPLAT('l'))) | ((a == SPLAT('m')) & (b == SPLAT('f'))) |
              ((a == SPLAT('s')) & ((b == SPLAT('t')) | (b == SPLAT('a')))) | ((a == SPLAT('E')) & (b == SPLAT('R'))) |
              ((a == SPLAT('T')) & (b == SPLAT('r')));
    memcpy(w, &hit, 16);
}

/* The literal of textlog._ANCHORS and _KINDS starting at p, if any, as flags. */
static int literal_at(const char *p, const char *e) {
    switch (*p) {
    case 'l':
        return HAS(p, e, "loss is") ? F_LOSS | F_LOSS_IS : HAS(p, e, "loss") ? F_LOSS : 0;
    case 'e':
        return HAS(p, e, "epoch:") ? F_EPOCH_COLON : HAS(p, e, "epoch time:") ? F_EPOCH_TIME : 0;
    case 'f':
        return HAS(p, e, "flops is") ? F_FLOPS_IS : 0;
    case 'm':
        return HAS(p, e, "mfu:") ? F_MFU : 0;
    case 's':
        return HAS(p, e, "step:[")        ? F_STEP_BRACKET
               : HAS(p, e, "step=")       ? F_STEP_EQ
               : HAS(p, e, "step\"")      ? F_STEP_QUOTE
               : HAS(p, e, "samples/s/p") ? F_SAMPLES
                                          : 0;
    case 'E':
        return HAS(p, e, "ERROR") ? F_ERROR : 0;
    case 'T':
        return HAS(p, e, "Traceback") ? F_TRACEBACK : 0;
    case '{':
        return F_BRACE;
    }
    return 0;
}

/* The literals that occur in the line, in one pass. */
static int literals(const char *s, const char *e) {
    int f = 0;
    const char *p = s;
    for (; e - p > 16; p += 16) {
        uint64_t w[2];
        candidate_starts(p, w);
        for (int half = 0; half < 2; half++)
            for (uint64_t m = w[half]; m;) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                int i = __builtin_clzll(m) >> 3; /* the first byte in memory is the high one */
                m &= ~(0xFFull << ((7 - i) * 8));
#else
                int i = __builtin_ctzll(m) >> 3;
                m &= ~(0xFFull << (i * 8));
#endif
                f |= literal_at(p + half * 8 + i, e);
            }
    }
    for (; p < e; p++) f |= literal_at(p, e);
    return f;
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

/* textlog._EXCEPTION_RE, ^[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)(?::|$), on the raw
 * line: 1 match, 0 none, -1 a non-ASCII byte where Unicode \w might continue the name. */
static int exception_line(const unsigned char *s, const unsigned char *e) {
    if (s == e || !(is_word(*s) && !is_digit((char)*s))) return 0;
    const unsigned char *r = s + 1;
    while (r < e && (is_word(*r) || *r == '.')) r++;
    if (r < e && *r >= 0x80) return -1;
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

/* textlog._TS_RE at the line start and the strptime after it. 1 = decided (*wall, NaN when the
 * line has no valid timestamp); 0 = a non-ASCII byte where a Unicode \s or \d could change it. */
static int timestamp(const char *s, const char *e, const char *first_non_ascii, double *wall) {
    const char *p = s;
    *wall = NAN;
    while (p < e && (*p == ' ' || (*p >= '\t' && *p <= '\r'))) p++;
    if (p < e && *p == '[') p++;
    /* YYYY-MM-DD[ T]HH:MM:SS: where the shape breaks is where the regex fails */
    static const char shape[] = "dddd-dd-dd?dd:dd:dd";
    int64_t f[6] = {0};
    for (int i = 0; shape[i]; i++) {
        char want = shape[i];
        int ok = p + i < e && (want == 'd' ? is_digit(p[i]) : want == '?' ? (p[i] == ' ' || p[i] == 'T') : p[i] == want);
        if (!ok) return !(p + i < e && (unsigned char)p[i] >= 0x80);
    }
    fixed_digits(p, 4, &f[0]);
    fixed_digits(p + 5, 2, &f[1]);
    fixed_digits(p + 8, 2, &f[2]);
    fixed_digits(p + 11, 2, &f[3]);
    fixed_digits(p + 14, 2, &f[4]);
    fixed_digits(p + 17, 2, &f[5]);
    p += 19;
    /* The optional fraction and zone look at most 16 bytes further. */
    if (first_non_ascii < p + 16) return 0;
    double frac = 0.0;
    if (p + 1 < e && (*p == '.' || *p == ',') && is_digit(p[1])) {
        uint64_t digits = 0;
        int n = 0;
        for (p++; n < 9 && p < e && is_digit(*p); p++, n++) digits = digits * 10 + (uint64_t)(*p - '0');
        frac = (double)digits / POW10[n]; /* exact operands, one rounding: as float("0.<digits>") */
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
    if (f[5] == 60) return 0; /* a leap second: let strptime say */
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && leap) || f[3] > 23 || f[4] > 59 || f[5] > 59)
        return 1; /* strptime refuses it: no wall time */
    int64_t secs = days_from_civil(y, mo, d) * 86400 + f[3] * 3600 + f[4] * 60 + f[5];
    *wall = (double)secs + frac;
    if (zoned) *wall -= (double)offset;
    return 1;
}

/* ------------------------------------------------------------------ the line shapes */

/* What a claimed line is, and the fields of its values (textlog.py maps them to tags). A kv key
 * coded k is field N_FIXED + 2k, a JSON key N_FIXED + 2k + 1. */
enum { K_MF, K_LM, K_FS, K_PG, K_KV, K_JSON, K_TM };
enum {
    MF_LOSS, MF_LM_LOSS, MF_LB_LOSS, MF_MTP_LOSS, MF_STEP_TIME, MF_LR, MF_OVERFLOW, MF_LOSS_SCALE, MF_GLOBAL_NORM,
    MF_TFLOPS_NPU, LM_LOSS, FS_STEP_TIME, FS_MFU, FS_HFU, PG_SAMPLES, TM_EPOCH_TIME, TM_STEP_TIME, TM_DATA_TIME, N_FIXED
};
static const char *const FIXED_FIELDS[N_FIXED] = {
    /* "<shape>:<column>" as textlog.py's specs name them */
    "mf:loss", "mf:lm_loss", "mf:load_balancing_loss", "mf:mtp_loss", "mf:step_time", "mf:lr", "mf:overflow",
    "mf:loss_scale", "mf:global_norm", "mf:tflops_npu",
    "lm:loss", "fs:step_time", "fs:mfu", "fs:hfu", "pg:samples", "tm:epoch_time", "tm:step_time", "tm:data_time",
};

typedef struct {
    int64_t pos, kind, epoch, step_in, steps_total, step;
    double wall, overflow, loss_scale, rank;
} Line;

typedef struct {
    Table lines;  /* one row per claimed line (Line) */
    Table values; /* one row per value: (row of its line in `lines`, field, value), in line order */
    int64_t nlines;
    PyObject *keys;
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

/* Return values of the shape parsers: claimed (rows added), not this shape (hand back), error. */
enum { CLAIMED = 1, BACK = 0, FAILED = -1 };

static int add_line(Out *o, const Line *l) {
    Buf *b = o->lines.buf; /* columns as in scanner_init */
    if (put8(&b[0], &l->pos) || put8(&b[1], &l->kind) || put8(&b[2], &l->epoch) || put8(&b[3], &l->step_in) ||
        put8(&b[4], &l->steps_total) || put8(&b[5], &l->step) || put8(&b[6], &l->wall) || put8(&b[7], &l->overflow) ||
        put8(&b[8], &l->loss_scale) || put8(&b[9], &l->rank))
        return -1;
    o->nlines++;
    return 0;
}

/* A value of the line added last; NaN means the line has no such value. */
static int add_value(Out *o, int64_t field, double value) {
    if (isnan(value)) return 0;
    Buf *b = o->values.buf;
    uint32_t line = (uint32_t)(o->nlines - 1), f = (uint32_t)field;
    return put4(&b[0], &line) || put4(&b[1], &f) || put8(&b[2], &value) ? -1 : 0;
}

/* The MindFormers r0.7 - r1.8 monitor line (textlog._MF_FAST_RE is r0.7 - r1.6), logger prefix
 * optional. r1.7 names the logger before the source path and may print lm_loss,
 * load_balancing_loss and mtp_loss after the loss. */
static int parse_mf(Out *o, Cur c, int64_t pos, double wall) {
    Cur pre = c;
    /* YYYY-MM-DD HH:MM:SS,mmm - [path:line] - LEVEL - , or ... - mindformers[path:line] - ... */
    static const char shape[] = "dddd-dd-dd dd:dd:dd,ddd - ";
    int ok = 1;
    for (int i = 0; ok && shape[i]; i++)
        ok = pre.p + i < pre.e && (shape[i] == 'd' ? is_digit(pre.p[i]) : pre.p[i] == shape[i]);
    if (ok) {
        pre.p += sizeof shape - 1;
        /* the logger's name: letters only, so that no field's pattern can match in it */
        while (pre.p < pre.e && is_alpha(*pre.p)) pre.p++;
        ok = LIT(&pre, "[");
    }
    if (ok) {
        /* the source path: no "_" and no space, so no field's pattern can match in it either */
        while (pre.p < pre.e && (is_alpha(*pre.p) || is_digit(*pre.p) || *pre.p == '/' || *pre.p == '.' || *pre.p == '-'))
            pre.p++;
        int64_t ln;
        ok = LIT(&pre, ":") && integer(&pre, &ln) && LIT(&pre, "] - ");
        const char *lv = pre.p;
        while (ok && pre.p < pre.e && *pre.p >= 'A' && *pre.p <= 'Z') pre.p++;
        ok = ok && pre.p > lv && LIT(&pre, " - ");
        if (ok) c = pre;
    }
    Line l = {pos, K_MF, 0, 0, 0, 0, wall, NAN, NAN, NAN};
    int64_t epochs;
    double v[N_FIXED]; /* by field */
    for (int i = 0; i < N_FIXED; i++) v[i] = NAN;
    if (!LIT(&c, "{ Epoch:[")) return BACK;
    spaces(&c);
    if (!integer(&c, &l.epoch) || !LIT(&c, "/")) return BACK;
    spaces(&c);
    if (!integer(&c, &epochs) || !LIT(&c, "], step:[")) return BACK;
    spaces(&c);
    if (!integer(&c, &l.step_in) || !LIT(&c, "/")) return BACK;
    spaces(&c);
    if (!integer(&c, &l.steps_total) || !LIT(&c, "], loss: ") || !number(&c, &v[MF_LOSS])) return BACK;
    if (LIT(&c, ", lm_loss: ") && !number(&c, &v[MF_LM_LOSS])) return BACK;
    if (LIT(&c, ", load_balancing_loss: ") && !number(&c, &v[MF_LB_LOSS])) return BACK;
    if (LIT(&c, ", mtp_loss: ") && !number(&c, &v[MF_MTP_LOSS])) return BACK;
    if (!LIT(&c, ", per_step_time: ") || !number(&c, &v[MF_STEP_TIME]) || !LIT(&c, "ms, ")) return BACK;
    if (LIT(&c, "lr: ") && !(number(&c, &v[MF_LR]) && LIT(&c, ", "))) return BACK;
    if (!LIT(&c, "overflow cond: ")) return BACK;
    if (LIT(&c, "True")) v[MF_OVERFLOW] = 1.0;
    else if (LIT(&c, "False")) v[MF_OVERFLOW] = 0.0;
    else return BACK;
    if (!LIT(&c, ", loss_scale: ") || !number(&c, &v[MF_LOSS_SCALE])) return BACK;
    if (LIT(&c, ", global_norm: [")) {
        if (!number(&c, &v[MF_GLOBAL_NORM]) || !LIT(&c, "]")) return BACK;
        if (LIT(&c, ", train_throughput_per_npu: ") && !(number(&c, &v[MF_TFLOPS_NPU]) && LIT(&c, "T"))) return BACK;
    }
    if (c.p != c.e) return BACK;
    l.overflow = v[MF_OVERFLOW];
    l.loss_scale = v[MF_LOSS_SCALE];
    if (add_line(o, &l)) return FAILED;
    for (int f = MF_LOSS; f <= MF_TFLOPS_NPU; f++) /* in textlog._MF_FIELDS order */
        if (add_value(o, f, v[f])) return FAILED;
    return CLAIMED;
}

/* textlog._LM_FAST_RE: "epoch: 1 step: 2, loss is 8.61" */
static int parse_lm(Out *o, Cur c, int64_t pos, double wall) {
    Line l = {pos, K_LM, 0, 0, 0, 0, wall, NAN, NAN, NAN};
    double loss;
    if (!(LIT(&c, "epoch: ") && integer(&c, &l.epoch) && LIT(&c, " step: ") && integer(&c, &l.step_in) &&
          LIT(&c, ", loss is ") && number(&c, &loss) && c.p == c.e))
        return BACK;
    return add_line(o, &l) || add_value(o, LM_LOSS, loss) ? FAILED : CLAIMED;
}

/* TimeMonitor: "[Train ]epoch time: 431.937 ms, per step time: 53.992 ms[ (data time: 1.2 ms)]" */
static int parse_tm(Out *o, Cur c, int64_t pos, double wall) {
    Line l = {pos, K_TM, 0, 0, 0, 0, wall, NAN, NAN, NAN};
    double epoch_time, step_time, data_time = NAN;
    LIT(&c, "Train ");
    if (!(LIT(&c, "epoch time: ") && number(&c, &epoch_time) && LIT(&c, " ms, per step time: ") &&
          number(&c, &step_time) && LIT(&c, " ms")))
        return BACK;
    if (LIT(&c, " (data time: ") && !(number(&c, &data_time) && LIT(&c, " ms)"))) return BACK;
    if (c.p != c.e) return BACK;
    if (add_line(o, &l) || add_value(o, TM_EPOCH_TIME, epoch_time) || add_value(o, TM_STEP_TIME, step_time) ||
        add_value(o, TM_DATA_TIME, data_time))
        return FAILED;
    return CLAIMED;
}

/* textlog._FS_FAST_RE: "Train per step time: 135.572 ms, mfu:0.47% hfu:0.47%" (comma optional) */
static int parse_fs(Out *o, Cur c, int64_t pos, double wall) {
    Line l = {pos, K_FS, 0, 0, 0, 0, wall, NAN, NAN, NAN};
    double step_time, mfu, hfu;
    if (!(LIT(&c, "Train per step time: ") && number(&c, &step_time) && LIT(&c, " ms"))) return BACK;
    LIT(&c, ",");
    if (!(LIT(&c, " mfu:") && number(&c, &mfu) && LIT(&c, "% hfu:") && number(&c, &hfu) && LIT(&c, "%") && c.p == c.e))
        return BACK;
    if (add_line(o, &l) || add_value(o, FS_STEP_TIME, step_time) || add_value(o, FS_MFU, mfu) || add_value(o, FS_HFU, hfu))
        return FAILED;
    return CLAIMED;
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
static int parse_pg(Out *o, Cur c, int64_t pos, double wall) {
    const char *q = find(c.p, c.e, "samples/s/p", 11);
    if (!q) return BACK;
    const char *w = q;
    while (w > c.p && (w[-1] == ' ' || (w[-1] >= '\t' && w[-1] <= '\r'))) w--;
    const char *s = w;
    int dots = 0;
    for (; s > c.p && (is_digit(s[-1]) || s[-1] == '.'); s--) dots += s[-1] == '.';
    if (s == w || *s == '.' || dots > 1) return BACK;
    if (s > c.p && (s[-1] == '+' || s[-1] == '-' || (s[-1] | 0x20) == 'e' || (unsigned char)s[-1] >= 0x80)) return BACK;
    Cur num = {s, w};
    Line l = {pos, K_PG, 0, 0, 0, 0, wall, NAN, NAN, NAN};
    double samples;
    if (!number(&num, &samples) || num.p != w) return BACK;
    return add_line(o, &l) || add_value(o, PG_SAMPLES, samples) ? FAILED : CLAIMED;
}

/* The number-valued pairs of one line, before its step is known. */
typedef struct {
    int n;
    const char *key[MAX_PAIRS];
    size_t len[MAX_PAIRS];
    double value[MAX_PAIRS];
} Pairs;

/* The keys textlog._with_step reads: what a pair's key is to it. */
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

/* textlog._with_step for one line: its step is the first finite "step" value below 2^62, else
 * the first such "global_step"; its rank the first "rank" value when whole and below 2^31. Rows
 * for the other pairs; none when the line has no step. */
static int emit_pairs(Out *o, int kind, const Pairs *l, int64_t pos, double wall) {
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
    int64_t step = (int64_t)l->value[step_at]; /* truncates, as polars' cast does */
    double rank = NAN;
    if (rank_at >= 0) {
        double v = l->value[rank_at];
        if (v == nearbyint(v) && fabs(v) < 0x1p31) rank = v;
    }
    Line line = {pos, kind, 0, 0, 0, step, wall, NAN, NAN, rank};
    if (add_line(o, &line)) return FAILED;
    for (int i = 0; i < l->n; i++) {
        if (role[i] != KEY_VALUE) continue;
        int json = kind == K_JSON;
        int64_t code = key_code(o, json * MAX_PAIRS + i, l->key[i], l->len[i]);
        if (code < 0 || add_value(o, N_FIXED + 2 * code + json, l->value[i])) return FAILED;
    }
    return CLAIMED;
}

/* textlog._KV_SIMPLE_RE lines: space-separated tokens, each without "=" or exactly one
 * key=value with an ASCII key; values have their quotes stripped and must be certain numbers
 * or certainly no numbers. */
static int is_key_char(char c) { return is_word((unsigned char)c) || c == '.' || c == '-' || c == '/'; }

static int parse_kv(Out *o, Cur c, int64_t pos, double wall) {
    Pairs l;
    l.n = 0;
    for (const char *p = c.p;; p++) { /* one token per turn, p at its first byte */
        const char *t = p;
        while (p < c.e && is_key_char(*p)) p++;
        if (p < c.e && *p == '=') {
            if (p == t || !(is_alpha(*t) || *t == '_')) return BACK; /* "=" but no key: not _KV_TOKEN */
            const char *eq = p++;
            for (; p < c.e && *p != ' '; p++) /* the value: [^\s,;]+, and ASCII (Unicode \s could hide) */
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
    return emit_pairs(o, K_KV, &l, pos, wall);
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

/* textlog._JSON_FLAT_RE lines: one flat object from the first "{" to the last "}" with unique keys,
 * and no time key when the line has no timestamp (json.loads reads it then). */
static int parse_json(Out *o, Cur c, int64_t pos, double wall) {
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
        if (isnan(wall))
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
    return emit_pairs(o, K_JSON, &l, pos, wall);
}

/* ------------------------------------------------------------------ one chunk */

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
} Scanner;

static int scanner_init(Scanner *self, PyObject *args, PyObject *kwds) {
    PyObject *keys;
    static char *kwlist[] = {"keys", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!", kwlist, &PyDict_Type, &keys)) return -1;
    /* Integer columns first, names as textlog.py reads them (add_line and add_value write them). */
    static const char *const claimed[] = {"pos", "kind", "epoch", "step_in", "steps_total", "step",
                                          "wall_time", "overflow", "loss_scale", "line_rank", NULL};
    static const char *const values[] = {"line", "field", "value", NULL};
    table_free(&self->out.lines);
    table_free(&self->out.values);
    Py_CLEAR(self->out.keys);
    memset(&self->out, 0, sizeof self->out);
    table_init(&self->out.lines, "claimed", claimed);
    table_init(&self->out.values, "values", values);
    Py_INCREF(keys);
    self->out.keys = keys;
    return 0;
}

static void scanner_dealloc(Scanner *self) {
    table_free(&self->out.lines);
    table_free(&self->out.values);
    Py_CLEAR(self->out.keys);
    Py_TYPE(self)->tp_free((PyObject *)self);
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
    long long lines = 0, bad_line = -1;
    int failed = 0;

    for (const char *s = buf; !failed;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *e = nl ? nl : end;
        int64_t pos = first_line + lines++;
        int claim = BACK;
        const char *non_ascii = first_non_ascii(s, e);
        if (e - s > MAX_LINE_BYTES) goto hand_back; /* textlog.py notes and skips it */
        if (non_ascii < e && !valid_utf8((const unsigned char *)non_ascii, (const unsigned char *)e)) {
            if (bad_line < 0) bad_line = pos;
            goto hand_back; /* textlog.py decodes it with replacement characters */
        }
        int flags = literals(s, e);
        int exc = exception_line((const unsigned char *)s, (const unsigned char *)e);
        if (!(flags & ANCHORS) && !exc) goto next; /* not a candidate line */
        if ((flags & (F_ERROR | F_TRACEBACK)) || exc) goto hand_back; /* events: textlog._events */
        const char *te = e;
        while (te > s && te[-1] == '\r') te--;
        double wall;
        if (!timestamp(s, te, non_ascii, &wall)) goto hand_back;
        Cur c = {s, te};
        /* textlog._KINDS, in order */
        if ((flags & F_STEP_BRACKET) && (flags & F_LOSS)) claim = parse_mf(o, c, pos, wall);
        else if ((flags & F_LOSS_IS) && (flags & F_EPOCH_COLON)) claim = parse_lm(o, c, pos, wall);
        else if (flags & F_EPOCH_TIME) claim = parse_tm(o, c, pos, wall);
        else if (flags & F_FLOPS_IS) claim = BACK; /* the totals: once, as settings */
        else if (flags & F_MFU) claim = parse_fs(o, c, pos, wall);
        else if (flags & F_SAMPLES) claim = parse_pg(o, c, pos, wall);
        else if ((flags & F_STEP_QUOTE) && (flags & F_BRACE)) claim = parse_json(o, c, pos, wall);
        else if (flags & F_STEP_EQ) claim = parse_kv(o, c, pos, wall);
        if (claim == FAILED) failed = 1;
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
        result = Py_BuildValue("{s:L,s:L,s:N,s:N}", "line_count", lines, "bad_line", bad_line, "back",
                               buf_bytes(&back), "back_lines", buf_bytes(&back_lines));
    else if (!PyErr_Occurred())
        PyErr_NoMemory();
    buf_free(&back);
    buf_free(&back_lines);
    PyBuffer_Release(&view);
    return result;
}

/* tables(): {"claimed": {column: bytes}, "values": {column: bytes}, "fields": names} */
static PyObject *scanner_tables(Scanner *self, PyObject *unused) {
    PyObject *result = PyDict_New();
    Table *tables[] = {&self->out.lines, &self->out.values};
    for (int i = 0; result && i < 2; i++) {
        PyObject *d = table_dict(tables[i]);
        if (!d || PyDict_SetItemString(result, tables[i]->name, d) < 0) Py_CLEAR(result);
        Py_XDECREF(d);
    }
    PyObject *fields = PyTuple_New(N_FIXED);
    for (int i = 0; fields && i < N_FIXED; i++) {
        PyObject *name = PyUnicode_FromString(FIXED_FIELDS[i]);
        if (!name) Py_CLEAR(fields);
        else PyTuple_SET_ITEM(fields, i, name);
    }
    if (result && (!fields || PyDict_SetItemString(result, "fields", fields) < 0)) Py_CLEAR(result);
    Py_XDECREF(fields);
    return result;
}

static PyMethodDef scanner_methods[] = {
    {"scan", (PyCFunction)scanner_scan, METH_VARARGS,
     "scan(body, first_line): parse the common line shapes of a chunk of whole lines; hand back the others."},
    {"tables", (PyCFunction)scanner_tables, METH_NOARGS, "tables(): what the chunks scanned so far gave."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "postmortem.readers._logscan.Scanner",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Scanner(keys): the text-log lines of one file, chunk by chunk (see _logscan.c).",
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
