/*
 * AES-256-GCM with a key schedule made once per key, for sealing entries at
 * rest (src/storage/seal/aead.ts; optional: without this addon node:crypto
 * does the same and the bytes are the same).
 *
 * Why by hand: node:crypto makes a new cipher object for every nonce
 * (createCipheriv: OpenSSL context, key schedule, JS wrapper), ~4 us a seal
 * warm and ~17 us right after an fdatasync on the project's machines, which
 * is most of what sealing adds to a durable append. OpenSSL lets one context
 * take a new nonce with the key kept (EVP_EncryptInit_ex with a NULL
 * cipher and key); node:crypto does not expose that, and no maintained npm
 * package offers synchronous AES-GCM with a reused key schedule (sodium-native
 * has no AES-GCM; the pure-JS ones run at a fraction of AES-NI speed). The
 * OpenSSL here is Node's own: its symbols are resolved in the node binary.
 *
 * Every argument is checked before OpenSSL sees it: a wrong type or length
 * throws a TypeError / RangeError in JS, never reads or writes out of bounds.
 */
#define NAPI_VERSION 8 /* type tags: Node 12.19+, every Node sessiond runs on */
#include <limits.h>
#include <stdlib.h>
#include <node_api.h>
#include <openssl/evp.h>

#define KEY_BYTES 32
#define NONCE_BYTES 12
#define TAG_BYTES 16

/* Marks the externals this addon made, so that no other object passes for a context. */
static const napi_type_tag CONTEXT_TAG = {0x5e5510d0ae5c0001ULL, 0x5e5510d0ae5c0002ULL};

typedef struct {
  EVP_CIPHER_CTX *ctx;
  int encrypt;
} context;

static napi_value fail(napi_env env, int range, const char *message) {
  if (range) napi_throw_range_error(env, NULL, message);
  else napi_throw_type_error(env, NULL, message);
  return NULL;
}

/* The bytes of a Buffer argument, or 0 (a TypeError thrown) when it is not one. */
static int bytes_of(napi_env env, napi_value v, unsigned char **data, size_t *length) {
  bool is_buffer = false;
  if (napi_is_buffer(env, v, &is_buffer) != napi_ok || !is_buffer) return 0;
  void *d = NULL;
  if (napi_get_buffer_info(env, v, &d, length) != napi_ok) return 0;
  *data = (unsigned char *)d;
  return 1;
}

static void finalize_context(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  context *c = (context *)data;
  EVP_CIPHER_CTX_free(c->ctx); /* clears the key schedule */
  free(c);
}

/* context(key: Buffer(32), encrypt: boolean) -> an opaque context for seal or open. */
static napi_value make_context(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 2)
    return fail(env, 0, "context(key, encrypt) takes two arguments");
  unsigned char *key;
  size_t key_length;
  if (!bytes_of(env, argv[0], &key, &key_length)) return fail(env, 0, "key must be a Buffer");
  if (key_length != KEY_BYTES) return fail(env, 1, "key must have 32 bytes");
  bool encrypt = false;
  if (napi_get_value_bool(env, argv[1], &encrypt) != napi_ok)
    return fail(env, 0, "encrypt must be a boolean");
  context *c = (context *)malloc(sizeof(context));
  if (c == NULL) return fail(env, 1, "out of memory");
  c->encrypt = encrypt ? 1 : 0;
  c->ctx = EVP_CIPHER_CTX_new();
  int ok = c->ctx != NULL &&
           (encrypt ? EVP_EncryptInit_ex(c->ctx, EVP_aes_256_gcm(), NULL, key, NULL)
                    : EVP_DecryptInit_ex(c->ctx, EVP_aes_256_gcm(), NULL, key, NULL)) == 1;
  if (!ok) {
    EVP_CIPHER_CTX_free(c->ctx);
    free(c);
    return fail(env, 1, "OpenSSL refused the AES-256-GCM key");
  }
  napi_value external;
  if (napi_create_external(env, c, finalize_context, NULL, &external) != napi_ok) {
    EVP_CIPHER_CTX_free(c->ctx);
    free(c);
    return fail(env, 1, "cannot make the context object");
  }
  napi_type_tag_object(env, external, &CONTEXT_TAG);
  return external;
}

static context *context_of(napi_env env, napi_value v, int encrypt) {
  bool tagged = false;
  if (napi_check_object_type_tag(env, v, &CONTEXT_TAG, &tagged) != napi_ok || !tagged) return NULL;
  void *data = NULL;
  if (napi_get_value_external(env, v, &data) != napi_ok) return NULL;
  context *c = (context *)data;
  return c->encrypt == encrypt ? c : NULL;
}

static napi_value int_value(napi_env env, int n) {
  napi_value r;
  napi_create_int32(env, n, &r);
  return r;
}

/*
 * seal(ctx, nonce: Buffer(12), ad: Buffer, plaintext: Buffer, out: Buffer)
 * writes ciphertext then tag into out (at least plaintext + 16 bytes) and
 * returns how many bytes it wrote.
 */
static napi_value seal(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value a[5];
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc != 5)
    return fail(env, 0, "seal(ctx, nonce, ad, plaintext, out) takes five arguments");
  context *c = context_of(env, a[0], 1);
  if (c == NULL) return fail(env, 0, "ctx must be a sealing context");
  unsigned char *nonce, *ad, *pt, *out;
  size_t nonce_length, ad_length, pt_length, out_length;
  if (!bytes_of(env, a[1], &nonce, &nonce_length) || !bytes_of(env, a[2], &ad, &ad_length) ||
      !bytes_of(env, a[3], &pt, &pt_length) || !bytes_of(env, a[4], &out, &out_length))
    return fail(env, 0, "nonce, ad, plaintext and out must be Buffers");
  if (nonce_length != NONCE_BYTES) return fail(env, 1, "nonce must have 12 bytes");
  if (ad_length > INT_MAX || pt_length > INT_MAX - TAG_BYTES)
    return fail(env, 1, "ad or plaintext too large");
  if (out_length < pt_length + TAG_BYTES)
    return fail(env, 1, "out must hold the plaintext's length plus 16 bytes");
  int n = 0, len = 0;
  int ok = EVP_EncryptInit_ex(c->ctx, NULL, NULL, NULL, nonce) == 1 &&
           (ad_length == 0 || EVP_EncryptUpdate(c->ctx, NULL, &len, ad, (int)ad_length) == 1) &&
           (pt_length == 0 || EVP_EncryptUpdate(c->ctx, out, &len, pt, (int)pt_length) == 1);
  if (ok) {
    n = pt_length == 0 ? 0 : len;
    ok = EVP_EncryptFinal_ex(c->ctx, out + n, &len) == 1;
    n += len;
  }
  ok = ok && (size_t)n == pt_length &&
       EVP_CIPHER_CTX_ctrl(c->ctx, EVP_CTRL_GCM_GET_TAG, TAG_BYTES, out + n) == 1;
  if (!ok) return fail(env, 1, "OpenSSL failed to seal");
  return int_value(env, n + TAG_BYTES);
}

/*
 * open(ctx, nonce: Buffer(12), ad: Buffer, body: Buffer, tag: Buffer(16),
 * out: Buffer) writes the plaintext into out (at least body's length) and
 * returns its length, or -1 when the bytes do not open (another key, place
 * or altered bytes): then out holds nothing the caller may use.
 */
static napi_value open_sealed(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value a[6];
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc != 6)
    return fail(env, 0, "open(ctx, nonce, ad, body, tag, out) takes six arguments");
  context *c = context_of(env, a[0], 0);
  if (c == NULL) return fail(env, 0, "ctx must be an opening context");
  unsigned char *nonce, *ad, *body, *tag, *out;
  size_t nonce_length, ad_length, body_length, tag_length, out_length;
  if (!bytes_of(env, a[1], &nonce, &nonce_length) || !bytes_of(env, a[2], &ad, &ad_length) ||
      !bytes_of(env, a[3], &body, &body_length) || !bytes_of(env, a[4], &tag, &tag_length) ||
      !bytes_of(env, a[5], &out, &out_length))
    return fail(env, 0, "nonce, ad, body, tag and out must be Buffers");
  if (nonce_length != NONCE_BYTES) return fail(env, 1, "nonce must have 12 bytes");
  if (tag_length != TAG_BYTES) return fail(env, 1, "tag must have 16 bytes");
  if (ad_length > INT_MAX || body_length > INT_MAX) return fail(env, 1, "ad or body too large");
  if (out_length < body_length) return fail(env, 1, "out must hold the body's length");
  int n = 0, len = 0;
  int ok = EVP_DecryptInit_ex(c->ctx, NULL, NULL, NULL, nonce) == 1 &&
           (ad_length == 0 || EVP_DecryptUpdate(c->ctx, NULL, &len, ad, (int)ad_length) == 1) &&
           (body_length == 0 || EVP_DecryptUpdate(c->ctx, out, &len, body, (int)body_length) == 1);
  if (ok) {
    n = body_length == 0 ? 0 : len;
    ok = EVP_CIPHER_CTX_ctrl(c->ctx, EVP_CTRL_GCM_SET_TAG, TAG_BYTES, tag) == 1 &&
         EVP_DecryptFinal_ex(c->ctx, out + n, &len) == 1;
    n += len;
  }
  return int_value(env, ok && (size_t)n == body_length ? n : -1);
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor d[] = {
      {"context", NULL, make_context, NULL, NULL, NULL, napi_default, NULL},
      {"seal", NULL, seal, NULL, NULL, NULL, napi_default, NULL},
      {"open", NULL, open_sealed, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof(d) / sizeof(d[0]), d);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
