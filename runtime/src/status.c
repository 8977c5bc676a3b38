/*===- runtime/src/status.c - kiln_status and message building -------------===*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct kiln_status_object {
  kiln_status_code_t code;
  int is_static; /* the preallocated out-of-memory status: never freed */
  char message[];
};

/* Returned when building a status itself runs out of memory. */
static struct {
  kiln_status_code_t code;
  int is_static;
  char message[16];
} kiln_oom_status = {KILN_STATUS_OUT_OF_MEMORY, 1, "out of memory"};

uint32_t kiln_api_version(void) { return KILN_API_VERSION; }

kiln_status kiln_out_of_memory_status(void) {
  return (kiln_status)(void *)&kiln_oom_status;
}

kiln_status kiln_make_status_v(kiln_status_code_t code, const char *format,
                               va_list args) {
  va_list copy;
  va_copy(copy, args);
  int len = vsnprintf(NULL, 0, format, copy);
  va_end(copy);
  if (len < 0)
    len = 0;
  kiln_status status =
      (kiln_status)malloc(sizeof(struct kiln_status_object) + (size_t)len + 1);
  if (!status)
    return kiln_out_of_memory_status();
  status->code = code;
  status->is_static = 0;
  vsnprintf(status->message, (size_t)len + 1, format, args);
  return status;
}

kiln_status kiln_make_status(kiln_status_code_t code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  kiln_status status = kiln_make_status_v(code, format, args);
  va_end(args);
  return status;
}

kiln_status_code_t kiln_status_code(kiln_status status) {
  return status ? status->code : KILN_STATUS_OK;
}

const char *kiln_status_message(kiln_status status) {
  return status ? status->message : "OK";
}

void kiln_status_free(kiln_status status) {
  if (status && !status->is_static)
    free(status);
}

const char *kiln_status_code_string(kiln_status_code_t code) {
  switch (code) {
  case KILN_STATUS_OK:
    return "OK";
  case KILN_STATUS_INVALID_ARGUMENT:
    return "INVALID_ARGUMENT";
  case KILN_STATUS_NOT_FOUND:
    return "NOT_FOUND";
  case KILN_STATUS_UNSUPPORTED:
    return "UNSUPPORTED";
  case KILN_STATUS_RUNTIME_CHECK_FAILED:
    return "RUNTIME_CHECK_FAILED";
  case KILN_STATUS_OUT_OF_MEMORY:
    return "OUT_OF_MEMORY";
  case KILN_STATUS_FAILED_PRECONDITION:
    return "FAILED_PRECONDITION";
  case KILN_STATUS_INTERNAL:
    return "INTERNAL";
  }
  return "UNKNOWN";
}

/*===----------------------------------------------------------------------===*
 * kiln_strbuf
 *===----------------------------------------------------------------------===*/

void kiln_strbuf_appendf(kiln_strbuf *buf, const char *format, ...) {
  if (buf->failed)
    return;
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int len = vsnprintf(NULL, 0, format, copy);
  va_end(copy);
  if (len < 0) {
    va_end(args);
    return;
  }
  size_t need = buf->size + (size_t)len + 1;
  if (need > buf->capacity) {
    size_t capacity = buf->capacity ? buf->capacity : 64;
    while (capacity < need)
      capacity *= 2;
    char *data = (char *)realloc(buf->data, capacity);
    if (!data) {
      buf->failed = 1;
      va_end(args);
      return;
    }
    buf->data = data;
    buf->capacity = capacity;
  }
  vsnprintf(buf->data + buf->size, (size_t)len + 1, format, args);
  buf->size += (size_t)len;
  va_end(args);
}

void kiln_strbuf_append_shape(kiln_strbuf *buf, int32_t rank,
                              const int64_t *shape) {
  kiln_strbuf_appendf(buf, "[");
  for (int32_t i = 0; i < rank; ++i)
    kiln_strbuf_appendf(buf, i ? ",%lld" : "%lld",
                        shape ? (long long)shape[i] : -1LL);
  kiln_strbuf_appendf(buf, "]");
}

kiln_status kiln_strbuf_to_status(kiln_strbuf *buf, kiln_status_code_t code) {
  kiln_status status = buf->failed || !buf->data
                           ? kiln_out_of_memory_status()
                           : kiln_make_status(code, "%s", buf->data);
  kiln_strbuf_free(buf);
  return status;
}

void kiln_strbuf_free(kiln_strbuf *buf) {
  free(buf->data);
  buf->data = NULL;
  buf->size = buf->capacity = 0;
}
