/*
 * Growable byte columns for the C readers (_logscan.c, _scalars.c): bytes put one cell at a time
 * into a bytearray, which Python then gets without a copy (numpy and polars wrap it).
 */
#ifndef POSTMORTEM_COLUMNS_H
#define POSTMORTEM_COLUMNS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

typedef struct {
    PyObject *array; /* bytearray of cap bytes, the first len used */
    char *data;
    size_t len, cap;
} Buf;

static inline int grow(Buf *b, size_t n) {
    size_t cap = b->cap ? b->cap * 2 : 1 << 16;
    while (cap < b->len + n) cap *= 2;
    if (!b->array && !(b->array = PyByteArray_FromStringAndSize(NULL, 0))) return -1;
    if (PyByteArray_Resize(b->array, (Py_ssize_t)cap) < 0) return -1;
    b->data = PyByteArray_AS_STRING(b->array);
    b->cap = cap;
    return 0;
}

/* Room for n more bytes now, so that a column whose size is known (or bounded) is never copied to
 * grow: untouched room costs address space only, and buf_bytes gives it back. */
static inline int reserve(Buf *b, size_t n) {
    if (b->len + n <= b->cap) return 0;
    if (!b->array && !(b->array = PyByteArray_FromStringAndSize(NULL, 0))) return -1;
    if (PyByteArray_Resize(b->array, (Py_ssize_t)(b->len + n)) < 0) return -1;
    b->data = PyByteArray_AS_STRING(b->array);
    b->cap = b->len + n;
    return 0;
}

/* The bytearray holding exactly what was put (a new reference). */
static inline PyObject *buf_bytes(Buf *b) {
    if (!b->array) return PyByteArray_FromStringAndSize(NULL, 0);
    if (PyByteArray_Resize(b->array, (Py_ssize_t)b->len) < 0) return NULL;
    b->data = PyByteArray_AS_STRING(b->array);
    b->cap = b->len;
    Py_INCREF(b->array);
    return b->array;
}

static inline int put(Buf *b, const void *p, size_t n) {
    if (b->len + n > b->cap && grow(b, n)) return -1;
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

/* A 4-byte cell. */
static inline int put4(Buf *b, const void *p) {
    if (b->len + 4 > b->cap && grow(b, 4)) return -1;
    memcpy(b->data + b->len, p, 4);
    b->len += 4;
    return 0;
}

/* An 8-byte cell: a constant-size copy, which the compiler inlines. */
static inline int put8(Buf *b, const void *p) {
    if (b->len + 8 > b->cap && grow(b, 8)) return -1;
    memcpy(b->data + b->len, p, 8);
    b->len += 8;
    return 0;
}

/* Drop the bytearray (a column not handed to Python, or after it was). */
static inline void buf_free(Buf *b) {
    Py_CLEAR(b->array);
    b->data = NULL;
    b->len = b->cap = 0;
}

#endif
