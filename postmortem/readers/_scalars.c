/*
 * Scalar Events in C: decode the records of a summary / TensorBoard file that have the plain
 * scalar layout, one pass, into columns.
 *
 * Why C: a long run's files hold millions of scalars (a TensorBoard file one small record per
 * scalar: 1.5M records for 250k steps of 6 tags), and the Python decoder (protowire) takes
 * microseconds per field. Records of any other shape are left to the Python per-record path,
 * the reference: tests/readers/test_scalars_fast.py reads every file both ways.
 *
 * decode(buffer, spans, value_key, tags) -> dict
 *   spans      int64 triples (record_offset, data_start, data_end), as framing.spans gives them
 *   value_key  key byte of the float field: 0x1D MindSpore scalar_value = 3, 0x15 TB simple_value = 2
 *   tags       dict bytes -> int: codes of the tags met, extended here
 * returns bytearrays of native arrays: count (int32, per record: its values decoded here, 0 for a
 *   record left to Python); one row per value, in file order: step (int64), tag (int32 code),
 *   value (float64), wall (float64); and undone (int64): indices of the records left to Python.
 *
 * The layout taken: Event{wall_time=1 (fixed64), step=2 (varint of at most 9 bytes: no negative
 * steps), summary=5{value=1{tag=1 (under 128 bytes), <value_key> float}+}}, nothing else.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_columns.h" /* Buf: growable byte columns */

static double le_f64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
    double d;
    memcpy(&d, &v, 8);
    return d;
}

static double le_f32(const uint8_t *p) {
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &v, 4);
    return (double)f;
}

/* The tag's code: the same tag bytes as the previous record's value at this position are the
 * usual case (a file repeats its tags), else a dict lookup. */
typedef struct {
    PyObject *codes;
    const uint8_t *last[16];
    uint8_t last_len[16];
    int32_t last_code[16];
} Tags;

static int32_t tag_code(Tags *t, int slot, const uint8_t *p, uint8_t n) {
    if (slot < 16 && t->last[slot] && t->last_len[slot] == n && memcmp(t->last[slot], p, n) == 0)
        return t->last_code[slot];
    PyObject *key = PyBytes_FromStringAndSize((const char *)p, n);
    if (!key) return -1;
    PyObject *v = PyDict_GetItemWithError(t->codes, key);
    int32_t code;
    if (v) code = (int32_t)PyLong_AsLong(v);
    else if (PyErr_Occurred()) code = -1;
    else {
        code = (int32_t)PyDict_Size(t->codes);
        PyObject *c = PyLong_FromLong(code);
        if (!c || PyDict_SetItem(t->codes, key, c) < 0) code = -1;
        Py_XDECREF(c);
    }
    Py_DECREF(key);
    if (slot < 16 && code >= 0) {
        t->last[slot] = p;
        t->last_len[slot] = n;
        t->last_code[slot] = code;
    }
    return code;
}

/* One record: its values (rows added), 0 not this layout (nothing added), -1 error. */
static int record(const uint8_t *buf, int64_t start, int64_t end, uint8_t value_key, Tags *tags, Buf out[5]) {
    const uint8_t *p = buf + start, *e = buf + end;
    if (e - p < 12 || p[0] != 0x09 || p[9] != 0x10) return 0;
    double wall = le_f64(p + 1);
    p += 10;
    uint64_t step = 0;
    for (int shift = 0;; shift += 7) {
        if (shift == 63 || p == e) return 0; /* a 10-byte varint: a negative step, Python's case */
        step |= (uint64_t)(*p & 0x7F) << shift;
        if (!(*p++ & 0x80)) break;
    }
    if (e - p < 2 || p[0] != 0x2A) return 0;
    uint64_t n = p[1];
    p += 2;
    if (n >= 0x80) { /* a two-byte length at most */
        if (p == e || *p >= 0x80) return 0;
        n = (n & 0x7F) | (uint64_t)*p++ << 7;
    }
    if (n == 0 || (uint64_t)(e - p) != n) return 0;
    /* Check the whole record before adding anything. */
    int count = 0;
    for (const uint8_t *v = p; v < e; count++) {
        if (e - v < 4 || v[0] != 0x0A || v[1] >= 0x80 || v[1] < 7 || v[2] != 0x0A || v[3] >= 0x80) return 0;
        const uint8_t *vend = v + 2 + v[1], *q = v + 4 + v[3];
        if (vend > e || q + 5 != vend || *q != value_key) return 0;
        v = vend;
    }
    int64_t step64 = (int64_t)step;
    for (int slot = 0; p < e; slot++) {
        const uint8_t *q = p + 4 + p[3];
        int32_t code = tag_code(tags, slot, p + 4, p[3]);
        double value = le_f32(q + 1);
        if (code < 0 || put8(&out[1], &step64) || put4(&out[2], &code) || put8(&out[3], &value) || put8(&out[4], &wall))
            return -1;
        p += 2 + p[1];
    }
    return count;
}

static PyObject *decode(PyObject *self, PyObject *args) {
    Py_buffer data, spans;
    int value_key;
    PyObject *codes;
    if (!PyArg_ParseTuple(args, "y*y*iO!", &data, &spans, &value_key, &PyDict_Type, &codes)) return NULL;
    PyObject *result = NULL;
    Buf out[5] = {{0}}, undone = {0};
    Tags tags;
    memset(&tags, 0, sizeof tags);
    tags.codes = codes;
    const int64_t *sp = spans.buf;
    int64_t nrec = spans.len / (3 * (Py_ssize_t)sizeof(int64_t));
    /* A value takes 9 bytes at least: the columns never need to grow past this. */
    size_t most = (size_t)data.len / 9 + 1;
    int failed = reserve(&out[0], 4 * (size_t)nrec) || reserve(&out[1], 8 * most) || reserve(&out[2], 4 * most) ||
                 reserve(&out[3], 8 * most) || reserve(&out[4], 8 * most);
    for (int64_t i = 0; i < nrec && !failed; i++) {
        int64_t start = sp[3 * i + 1], end = sp[3 * i + 2];
        int32_t r = 0;
        if (start >= 0 && end <= data.len && start <= end) r = record(data.buf, start, end, (uint8_t)value_key, &tags, out);
        if (r < 0) failed = 1;
        else failed = put4(&out[0], &r) || (r == 0 && put8(&undone, &i));
    }
    if (!failed) {
        static const char *const names[] = {"count", "step", "tag", "value", "wall"};
        result = PyDict_New();
        for (int i = 0; result && i < 6; i++) {
            PyObject *column = buf_bytes(i < 5 ? &out[i] : &undone);
            if (!column || PyDict_SetItemString(result, i < 5 ? names[i] : "undone", column) < 0) Py_CLEAR(result);
            Py_XDECREF(column);
        }
    } else if (!PyErr_Occurred()) {
        PyErr_NoMemory();
    }
    for (int i = 0; i < 5; i++) buf_free(&out[i]);
    buf_free(&undone);
    PyBuffer_Release(&data);
    PyBuffer_Release(&spans);
    return result;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS, "Decode the plain scalar Events among framed records; see _scalars.c."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scalars", "Scalar Events in C.", -1, methods};

PyMODINIT_FUNC PyInit__scalars(void) { return PyModule_Create(&module); }
