// The one native piece of the DDS layer: an N-API addon over CycloneDDS 0.10 that moves CDR bytes (no types, no CDR here).
//
// A topic is made with our own keyless ddsi_sertype whose serdata holds the serialized sample as it is
// on the wire (encapsulation header included), as cyclonedds-python's clayer/pysertype.c does (tag
// 0.10.2): TypeScript (de)serialises the bytes. Readers take samples on CycloneDDS's listener thread
// and hand them to JavaScript through a thread-safe function; matched and liveliness changes go the
// same way. Every entity is deleted by its owner (`deleteEntity`); an env cleanup hook deletes what is
// left so no CycloneDDS thread calls into a finished environment.
#include <node_api.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <dds/dds.h>
#include <dds/version.h>
#include <dds/ddsi/q_radmin.h>
#include <dds/ddsi/ddsi_serdata.h>
#include <dds/ddsi/ddsi_sertype.h>
#include <dds/ddsrt/heap.h>
#include <dds/ddsrt/md5.h>

/* ---- the sertype: a keyless type whose samples are CDR byte strings ---- */

typedef struct raw_sample {
  void *data;
  size_t size;
} raw_sample_t;

typedef struct raw_serdata {
  struct ddsi_serdata c;
  void *data;
  size_t size;
} raw_serdata_t;

static const unsigned char zero_key[20] = {0};

static raw_serdata_t *raw_new(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, size_t size) {
  raw_serdata_t *d = ddsrt_malloc(sizeof(*d));
  ddsi_serdata_init(&d->c, type, kind);
  d->size = kind == SDK_KEY ? sizeof(zero_key) : size;
  d->data = ddsrt_malloc(d->size ? d->size : 1);
  if (kind == SDK_KEY) memset(d->data, 0, d->size);
  d->c.hash = type->serdata_basehash;
  return d;
}

static bool sd_eqkey(const struct ddsi_serdata *a, const struct ddsi_serdata *b) { (void)a; (void)b; return true; }
static uint32_t sd_size(const struct ddsi_serdata *d) { return (uint32_t)((const raw_serdata_t *)d)->size; }

static struct ddsi_serdata *sd_from_ser(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, const struct nn_rdata *frag, size_t size) {
  raw_serdata_t *d = raw_new(type, kind, size);
  if (kind == SDK_KEY) return &d->c;
  uint32_t off = 0;
  unsigned char *cursor = d->data;
  while (frag) {
    if (frag->maxp1 > off) {
      const unsigned char *payload = NN_RMSG_PAYLOADOFF(frag->rmsg, NN_RDATA_PAYLOAD_OFF(frag));
      const unsigned char *src = payload + off - frag->min;
      size_t n = frag->maxp1 - off;
      memcpy(cursor, src, n);
      cursor += n;
      off = frag->maxp1;
    }
    frag = frag->nextfrag;
  }
  return &d->c;
}

static struct ddsi_serdata *sd_from_ser_iov(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, ddsrt_msg_iovlen_t niov, const ddsrt_iovec_t *iov, size_t size) {
  raw_serdata_t *d = raw_new(type, kind, size);
  if (kind == SDK_KEY) return &d->c;
  size_t off = 0;
  for (ddsrt_msg_iovlen_t i = 0; i < niov && off < size; i++) {
    size_t n = iov[i].iov_len;
    if (n + off > size) n = size - off;
    memcpy((char *)d->data + off, iov[i].iov_base, n);
    off += n;
  }
  return &d->c;
}

static struct ddsi_serdata *sd_from_keyhash(const struct ddsi_sertype *type, const struct ddsi_keyhash *kh) {
  (void)kh;
  return &raw_new(type, SDK_KEY, 0)->c;
}

static struct ddsi_serdata *sd_from_sample(const struct ddsi_sertype *type, enum ddsi_serdata_kind kind, const void *sample) {
  const raw_sample_t *s = sample;
  raw_serdata_t *d = raw_new(type, kind, s->size);
  if (kind != SDK_KEY) memcpy(d->data, s->data, s->size);
  return &d->c;
}

static void sd_to_ser(const struct ddsi_serdata *d, size_t off, size_t sz, void *buf) {
  memcpy(buf, (const char *)((const raw_serdata_t *)d)->data + off, sz);
}

static struct ddsi_serdata *sd_to_ser_ref(const struct ddsi_serdata *d, size_t off, size_t sz, ddsrt_iovec_t *ref) {
  ref->iov_base = (char *)((const raw_serdata_t *)d)->data + off;
  ref->iov_len = (ddsrt_iov_len_t)sz;
  return ddsi_serdata_ref(d);
}

static void sd_to_ser_unref(struct ddsi_serdata *d, const ddsrt_iovec_t *ref) { (void)ref; ddsi_serdata_unref(d); }

static bool sd_to_sample(const struct ddsi_serdata *d, void *sample, void **bufptr, void *buflim) {
  (void)bufptr; (void)buflim;
  const raw_serdata_t *r = (const raw_serdata_t *)d;
  raw_sample_t *s = sample;
  s->data = ddsrt_malloc(r->size ? r->size : 1);
  memcpy(s->data, r->data, r->size);
  s->size = r->size;
  return true;
}

static struct ddsi_serdata *sd_to_untyped(const struct ddsi_serdata *d) {
  raw_serdata_t *u = raw_new(d->type, SDK_KEY, 0);
  u->c.hash = d->hash;
  return &u->c;
}

static bool sd_untyped_to_sample(const struct ddsi_sertype *type, const struct ddsi_serdata *d, void *sample, void **b, void *l) {
  (void)type; (void)d; (void)b; (void)l;
  raw_sample_t *s = sample;
  s->data = NULL;
  s->size = 0;
  return true;
}

static void sd_free(struct ddsi_serdata *d) {
  ddsrt_free(((raw_serdata_t *)d)->data);
  ddsrt_free(d);
}

static size_t sd_print(const struct ddsi_sertype *t, const struct ddsi_serdata *d, char *buf, size_t size) {
  (void)t; (void)d;
  return (size_t)snprintf(buf, size, "(cdr)");
}

static void sd_get_keyhash(const struct ddsi_serdata *d, struct ddsi_keyhash *buf, bool force_md5) {
  (void)d; (void)force_md5;
  memset(buf->value, 0, sizeof(buf->value));
}

static const struct ddsi_serdata_ops raw_serdata_ops = {
  .eqkey = sd_eqkey, .get_size = sd_size, .from_ser = sd_from_ser, .from_ser_iov = sd_from_ser_iov,
  .from_keyhash = sd_from_keyhash, .from_sample = sd_from_sample, .to_ser = sd_to_ser, .to_ser_ref = sd_to_ser_ref,
  .to_ser_unref = sd_to_ser_unref, .to_sample = sd_to_sample, .to_untyped = sd_to_untyped,
  .untyped_to_sample = sd_untyped_to_sample, .free = sd_free, .print = sd_print, .get_keyhash = sd_get_keyhash,
};

static void st_free(struct ddsi_sertype *t) { ddsi_sertype_fini(t); ddsrt_free(t); }
static void st_zero(const struct ddsi_sertype *t, void *samples, size_t n) { (void)t; memset(samples, 0, sizeof(raw_sample_t) * n); }
static void st_realloc(void **ptrs, const struct ddsi_sertype *t, void *old, size_t oldn, size_t n) {
  (void)t;
  char *p = (oldn == n) ? old : ddsrt_realloc(old, sizeof(raw_sample_t) * n);
  if (p && n > oldn) memset(p + sizeof(raw_sample_t) * oldn, 0, sizeof(raw_sample_t) * (n - oldn));
  for (size_t i = 0; i < n; i++) ptrs[i] = p + i * sizeof(raw_sample_t);
}
static void st_free_samples(const struct ddsi_sertype *t, void **ptrs, size_t n, dds_free_op_t op) {
  (void)t;
  if (n == 0) return;
  if (op & DDS_FREE_CONTENTS_BIT)
    for (size_t i = 0; i < n; i++) {
      raw_sample_t *s = ptrs[i];
      ddsrt_free(s->data);
      s->data = NULL;
    }
  if (op & DDS_FREE_ALL_BIT) ddsrt_free(ptrs[0]);
}
static bool st_equal(const struct ddsi_sertype *a, const struct ddsi_sertype *b) { return a == b || strcmp(a->type_name, b->type_name) == 0; }
static uint32_t st_hash(const struct ddsi_sertype *t) { (void)t; return 0; }
static struct ddsi_sertype *st_derive(const struct ddsi_sertype *base, dds_data_representation_id_t r, dds_type_consistency_enforcement_qospolicy_t q) {
  (void)r; (void)q;
  return (struct ddsi_sertype *)base;
}

static const struct ddsi_sertype_ops raw_sertype_ops = {
  .version = ddsi_sertype_v0, .arg = NULL, .free = st_free, .zero_samples = st_zero, .realloc_samples = st_realloc,
  .free_samples = st_free_samples, .equal = st_equal, .hash = st_hash, .type_id = NULL, .type_map = NULL, .type_info = NULL,
  .derive_sertype = st_derive, .get_serialized_size = NULL, .serialize_into = NULL,
};

/* ---- N-API helpers ---- */

#define CALL(env, call)                                              \
  do {                                                               \
    if ((call) != napi_ok) {                                         \
      napi_throw_error((env), "EDDS_NAPI", "N-API call failed: " #call); \
      return NULL;                                                   \
    }                                                                \
  } while (0)

static napi_value throw_dds(napi_env env, const char *what, dds_return_t rc) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s", what, dds_strretcode(rc));
  napi_throw_error(env, "EDDS", msg);
  return NULL;
}

static napi_value int_value(napi_env env, int64_t v) {
  napi_value out;
  napi_create_int64(env, v, &out);
  return out;
}

static int32_t arg_i32(napi_env env, napi_value v) {
  int32_t out = 0;
  napi_get_value_int32(env, v, &out);
  return out;
}

static char *arg_string(napi_env env, napi_value v) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) return NULL;
  char *s = malloc(len + 1);
  napi_get_value_string_utf8(env, v, s, len + 1, &len);
  return s;
}

static int32_t prop_i32(napi_env env, napi_value obj, const char *name, int32_t dflt) {
  bool has = false;
  napi_valuetype t;
  napi_value v;
  if (napi_has_named_property(env, obj, name, &has) != napi_ok || !has) return dflt;
  napi_get_named_property(env, obj, name, &v);
  napi_typeof(env, v, &t);
  if (t == napi_boolean) {
    bool b;
    napi_get_value_bool(env, v, &b);
    return b ? 1 : 0;
  }
  if (t != napi_number) return dflt;
  return arg_i32(env, v);
}

/* ---- events from CycloneDDS's threads to JavaScript ---- */

enum ev_kind { EV_DATA = 0, EV_MATCHED = 1, EV_LIVELINESS = 2 };

typedef struct event {
  enum ev_kind kind;
  void *data;
  size_t size;
  int32_t count;
  int32_t change;
} event_t;

typedef struct listener_ctx {
  napi_threadsafe_function tsfn;
  dds_entity_t entity;
  struct listener_ctx *next;
} listener_ctx_t;

static listener_ctx_t *contexts = NULL;

static void post(listener_ctx_t *ctx, event_t *ev) {
  if (napi_call_threadsafe_function(ctx->tsfn, ev, napi_tsfn_nonblocking) != napi_ok) {
    free(ev->data);
    free(ev);
  }
}

static void on_data(dds_entity_t reader, void *arg) {
  listener_ctx_t *ctx = arg;
  raw_sample_t samples[16];
  void *ptrs[16];
  dds_sample_info_t infos[16];
  for (;;) {
    for (int i = 0; i < 16; i++) {
      samples[i].data = NULL;
      samples[i].size = 0;
      ptrs[i] = &samples[i];
    }
    dds_return_t n = dds_take(reader, ptrs, infos, 16, 16);
    if (n <= 0) return;
    for (int i = 0; i < n; i++) {
      if (infos[i].valid_data && samples[i].data) {
        event_t *ev = calloc(1, sizeof(*ev));
        ev->kind = EV_DATA;
        ev->size = samples[i].size;
        ev->data = malloc(ev->size ? ev->size : 1);
        memcpy(ev->data, samples[i].data, ev->size);
        post(ctx, ev);
      }
      ddsrt_free(samples[i].data);
    }
  }
}

static void on_sub_matched(dds_entity_t reader, const dds_subscription_matched_status_t st, void *arg) {
  (void)reader;
  event_t *ev = calloc(1, sizeof(*ev));
  ev->kind = EV_MATCHED;
  ev->count = (int32_t)st.current_count;
  ev->change = st.current_count_change;
  post(arg, ev);
}

static void on_pub_matched(dds_entity_t writer, const dds_publication_matched_status_t st, void *arg) {
  (void)writer;
  event_t *ev = calloc(1, sizeof(*ev));
  ev->kind = EV_MATCHED;
  ev->count = (int32_t)st.current_count;
  ev->change = st.current_count_change;
  post(arg, ev);
}

static void on_liveliness(dds_entity_t reader, const dds_liveliness_changed_status_t st, void *arg) {
  (void)reader;
  event_t *ev = calloc(1, sizeof(*ev));
  ev->kind = EV_LIVELINESS;
  ev->count = (int32_t)st.alive_count;
  ev->change = st.alive_count_change;
  post(arg, ev);
}

/* Runs on the JavaScript thread: callback(kind, bytes | count, change). */
static void call_js(napi_env env, napi_value cb, void *context, void *data) {
  (void)context;
  event_t *ev = data;
  if (env != NULL && cb != NULL) {
    napi_value argv[3], undefined;
    napi_get_undefined(env, &undefined);
    napi_create_int32(env, ev->kind, &argv[0]);
    if (ev->kind == EV_DATA) {
      void *out;
      napi_create_buffer_copy(env, ev->size, ev->data, &out, &argv[1]);
      napi_get_undefined(env, &argv[2]);
    } else {
      napi_create_int32(env, ev->count, &argv[1]);
      napi_create_int32(env, ev->change, &argv[2]);
    }
    napi_call_function(env, undefined, cb, 3, argv, NULL);
  }
  free(ev->data);
  free(ev);
}

static listener_ctx_t *make_ctx(napi_env env, napi_value cb, const char *name) {
  listener_ctx_t *ctx = calloc(1, sizeof(*ctx));
  napi_value res_name;
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &res_name);
  if (napi_create_threadsafe_function(env, cb, NULL, res_name, 0, 1, NULL, NULL, NULL, call_js, &ctx->tsfn) != napi_ok) {
    free(ctx);
    return NULL;
  }
  // The owner deletes its entities; a listener alone does not keep Node running.
  napi_unref_threadsafe_function(env, ctx->tsfn);
  ctx->next = contexts;
  contexts = ctx;
  return ctx;
}

static void release_ctx_of(dds_entity_t entity) {
  for (listener_ctx_t **p = &contexts; *p; p = &(*p)->next) {
    if ((*p)->entity == entity) {
      listener_ctx_t *ctx = *p;
      *p = ctx->next;
      napi_release_threadsafe_function(ctx->tsfn, napi_tsfn_release);
      free(ctx);
      return;
    }
  }
}

/* ---- QoS from a plain object: { reliable, depth, transientLocal, livelinessMs } ---- */

static dds_qos_t *qos_of(napi_env env, napi_value obj) {
  dds_qos_t *qos = dds_create_qos();
  napi_valuetype t;
  napi_typeof(env, obj, &t);
  int reliable = 0, depth = 1, transient = 0, liveliness_ms = 0;
  if (t == napi_object) {
    reliable = prop_i32(env, obj, "reliable", 0);
    depth = prop_i32(env, obj, "depth", 1);
    transient = prop_i32(env, obj, "transientLocal", 0);
    liveliness_ms = prop_i32(env, obj, "livelinessMs", 0);
  }
  dds_qset_reliability(qos, reliable ? DDS_RELIABILITY_RELIABLE : DDS_RELIABILITY_BEST_EFFORT, DDS_MSECS(100));
  dds_qset_history(qos, DDS_HISTORY_KEEP_LAST, depth > 0 ? depth : 1);
  dds_qset_durability(qos, transient ? DDS_DURABILITY_TRANSIENT_LOCAL : DDS_DURABILITY_VOLATILE);
  if (liveliness_ms > 0) dds_qset_liveliness(qos, DDS_LIVELINESS_AUTOMATIC, DDS_MSECS(liveliness_ms));
  dds_qset_data_representation(qos, 1, (dds_data_representation_id_t[]){DDS_DATA_REPRESENTATION_XCDR1});
  return qos;
}

/* ---- exported functions ---- */

/* createDomain(domainId, configXml): a domain with this configuration (before its first participant). */
static napi_value create_domain(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  char *config = arg_string(env, argv[1]);
  dds_entity_t d = dds_create_domain((dds_domainid_t)arg_i32(env, argv[0]), config);
  free(config);
  if (d < 0) return throw_dds(env, "dds_create_domain", d);
  return int_value(env, d);
}

/* createParticipant(domainId) -> handle; domainId -1 is CycloneDDS's default (its config, or 0). */
static napi_value create_participant(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t domain = arg_i32(env, argv[0]);
  dds_entity_t p = dds_create_participant(domain < 0 ? DDS_DOMAIN_DEFAULT : (dds_domainid_t)domain, NULL, NULL);
  if (p < 0) return throw_dds(env, "dds_create_participant", p);
  return int_value(env, p);
}

/* createTopic(participant, name, typeName) -> handle. */
static napi_value create_topic(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  char *name = arg_string(env, argv[1]);
  char *type = arg_string(env, argv[2]);
  struct ddsi_sertype *st = ddsrt_malloc(sizeof(*st));
  ddsi_sertype_init(st, type, &raw_sertype_ops, &raw_serdata_ops, true);
  st->allowed_data_representation = DDS_DATA_REPRESENTATION_FLAG_XCDR1 | DDS_DATA_REPRESENTATION_FLAG_XCDR2;
  dds_entity_t t = dds_create_topic_sertype(arg_i32(env, argv[0]), name, &st, NULL, NULL, NULL);
  free(name);
  free(type);
  if (t < 0) {
    ddsi_sertype_unref(st);
    return throw_dds(env, "dds_create_topic", t);
  }
  return int_value(env, t);
}

/* createReader(participant, topic, qos, callback) -> handle; callback(kind, bytes|count, change). */
static napi_value create_reader(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  listener_ctx_t *ctx = make_ctx(env, argv[3], "cortexd-dds-reader");
  if (!ctx) return throw_dds(env, "threadsafe function", DDS_RETCODE_ERROR);
  dds_listener_t *l = dds_create_listener(ctx);
  dds_lset_data_available(l, on_data);
  dds_lset_subscription_matched(l, on_sub_matched);
  dds_lset_liveliness_changed(l, on_liveliness);
  dds_qos_t *qos = qos_of(env, argv[2]);
  dds_entity_t r = dds_create_reader(arg_i32(env, argv[0]), arg_i32(env, argv[1]), qos, l);
  dds_delete_qos(qos);
  dds_delete_listener(l);
  if (r < 0) {
    release_ctx_of(0);
    return throw_dds(env, "dds_create_reader", r);
  }
  ctx->entity = r;
  return int_value(env, r);
}

/* createWriter(participant, topic, qos, callback) -> handle; callback(1, matchedCount, change). */
static napi_value create_writer(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  listener_ctx_t *ctx = make_ctx(env, argv[3], "cortexd-dds-writer");
  if (!ctx) return throw_dds(env, "threadsafe function", DDS_RETCODE_ERROR);
  dds_listener_t *l = dds_create_listener(ctx);
  dds_lset_publication_matched(l, on_pub_matched);
  dds_qos_t *qos = qos_of(env, argv[2]);
  dds_entity_t w = dds_create_writer(arg_i32(env, argv[0]), arg_i32(env, argv[1]), qos, l);
  dds_delete_qos(qos);
  dds_delete_listener(l);
  if (w < 0) {
    release_ctx_of(0);
    return throw_dds(env, "dds_create_writer", w);
  }
  ctx->entity = w;
  return int_value(env, w);
}

/* write(writer, bytes): the bytes are one serialized sample, encapsulation header first. */
static napi_value write_sample(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  raw_sample_t s;
  CALL(env, napi_get_buffer_info(env, argv[1], &s.data, &s.size));
  if (s.size < 4) {
    napi_throw_range_error(env, "EDDS", "a serialized sample starts with a 4-byte encapsulation header");
    return NULL;
  }
  dds_return_t rc = dds_write(arg_i32(env, argv[0]), &s);
  if (rc < 0) return throw_dds(env, "dds_write", rc);
  return NULL;
}

/* deleteEntity(handle): deletes it and its children; its listeners' callbacks end. */
static napi_value delete_entity(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  dds_entity_t e = arg_i32(env, argv[0]);
  dds_return_t rc = dds_delete(e);
  // The entity and its children are gone (listeners done): their callbacks may be released.
  for (listener_ctx_t *c = contexts, *next; c; c = next) {
    next = c->next;
    if (c->entity == e || dds_get_parent(c->entity) < 0) release_ctx_of(c->entity);
  }
  if (rc < 0 && rc != DDS_RETCODE_BAD_PARAMETER && rc != DDS_RETCODE_ALREADY_DELETED) return throw_dds(env, "dds_delete", rc);
  return NULL;
}

/* matched(entity) -> current matched count of a reader or writer. */
static napi_value matched(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CALL(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  dds_entity_t e = arg_i32(env, argv[0]);
  dds_subscription_matched_status_t sub;
  if (dds_get_subscription_matched_status(e, &sub) == DDS_RETCODE_OK) return int_value(env, sub.current_count);
  dds_publication_matched_status_t pub;
  dds_return_t rc = dds_get_publication_matched_status(e, &pub);
  if (rc < 0) return throw_dds(env, "matched status", rc);
  return int_value(env, pub.current_count);
}

static void cleanup(void *arg) {
  (void)arg;
  dds_delete(DDS_CYCLONEDDS_HANDLE);
  while (contexts) release_ctx_of(contexts->entity);
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
    {"createDomain", NULL, create_domain, NULL, NULL, NULL, napi_enumerable, NULL},
    {"createParticipant", NULL, create_participant, NULL, NULL, NULL, napi_enumerable, NULL},
    {"createTopic", NULL, create_topic, NULL, NULL, NULL, napi_enumerable, NULL},
    {"createReader", NULL, create_reader, NULL, NULL, NULL, napi_enumerable, NULL},
    {"createWriter", NULL, create_writer, NULL, NULL, NULL, napi_enumerable, NULL},
    {"write", NULL, write_sample, NULL, NULL, NULL, napi_enumerable, NULL},
    {"deleteEntity", NULL, delete_entity, NULL, NULL, NULL, napi_enumerable, NULL},
    {"matched", NULL, matched, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  napi_value version;
  napi_create_string_utf8(env, DDS_VERSION, NAPI_AUTO_LENGTH, &version);
  napi_set_named_property(env, exports, "cyclonedds", version);
  napi_add_env_cleanup_hook(env, cleanup, NULL);
  return exports;
}
