// See CTLSTrust.h for why OpenSSL is reached through dlsym.
#define _GNU_SOURCE
#include "CTLSTrust.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

// Opaque OpenSSL types: only pointers to them cross this file.
typedef struct x509_st X509;
typedef struct x509_store_ctx_st X509_STORE_CTX;
typedef struct ssl_ctx_st SSL_CTX;
typedef struct stack_st OPENSSL_STACK;
typedef struct X509_name_st X509_NAME;
typedef struct bio_st BIO;
typedef struct bio_method_st BIO_METHOD;
typedef struct asn1_string_st ASN1_STRING;
typedef struct asn1_string_st ASN1_TIME;
typedef struct evp_md_st EVP_MD;
typedef struct X509_pubkey_st X509_PUBKEY;
typedef struct engine_st ENGINE;
typedef struct ssl_st SSL;
typedef struct evp_pkey_st EVP_PKEY;

// GENERAL_NAME's layout is public and stable (x509v3.h): a type, then a
// union of pointers.
typedef struct {
    int type;
    ASN1_STRING *value;
} GENERAL_NAME;

// Values from OpenSSL 3.0's headers.
enum {
    X509_V_OK = 0,
    X509_V_ERR_UNSPECIFIED = 1,
    X509_V_ERR_APPLICATION_VERIFICATION = 50,
    X509_V_ERR_HOSTNAME_MISMATCH = 62,
    X509_V_ERR_IP_ADDRESS_MISMATCH = 64,
    GEN_DNS = 2,
    GEN_IPADD = 7,
    NID_subject_alt_name = 85,
    X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS = 0x4,
};
// XN_FLAG_RFC2253 (x509.h), spelled out.
static const unsigned long xn_flag_rfc2253 = 0x1110317UL;

static struct {
    void (*SSL_CTX_set_cert_verify_callback)(SSL_CTX *, int (*)(X509_STORE_CTX *, void *), void *);
    int (*X509_verify_cert)(X509_STORE_CTX *);
    int (*X509_STORE_CTX_get_error)(X509_STORE_CTX *);
    void (*X509_STORE_CTX_set_error)(X509_STORE_CTX *, int);
    X509 *(*X509_STORE_CTX_get0_cert)(const X509_STORE_CTX *);
    OPENSSL_STACK *(*X509_STORE_CTX_get0_untrusted)(const X509_STORE_CTX *);
    int (*OPENSSL_sk_num)(const OPENSSL_STACK *);
    void *(*OPENSSL_sk_value)(const OPENSSL_STACK *, int);
    void (*OPENSSL_sk_pop_free)(OPENSSL_STACK *, void (*)(void *));
    int (*X509_cmp)(const X509 *, const X509 *);
    int (*i2d_X509)(const X509 *, unsigned char **);
    X509 *(*d2i_X509)(X509 **, const unsigned char **, long);
    void (*X509_free)(X509 *);
    int (*X509_check_host)(X509 *, const char *, size_t, unsigned int, char **);
    int (*X509_check_ip_asc)(X509 *, const char *, unsigned int);
    const char *(*X509_verify_cert_error_string)(long);
    X509_NAME *(*X509_get_subject_name)(const X509 *);
    X509_NAME *(*X509_get_issuer_name)(const X509 *);
    int (*X509_NAME_print_ex)(BIO *, const X509_NAME *, int, unsigned long);
    const BIO_METHOD *(*BIO_s_mem)(void);
    BIO *(*BIO_new)(const BIO_METHOD *);
    int (*BIO_read)(BIO *, void *, int);
    int (*BIO_free)(BIO *);
    const ASN1_TIME *(*X509_get0_notBefore)(const X509 *);
    const ASN1_TIME *(*X509_get0_notAfter)(const X509 *);
    int (*ASN1_TIME_to_tm)(const ASN1_TIME *, struct tm *);
    const EVP_MD *(*EVP_sha256)(void);
    const EVP_MD *(*EVP_sha1)(void);
    int (*EVP_Digest)(const void *, size_t, unsigned char *, unsigned int *, const EVP_MD *, ENGINE *);
    X509_PUBKEY *(*X509_get_X509_PUBKEY)(const X509 *);
    int (*i2d_X509_PUBKEY)(const X509_PUBKEY *, unsigned char **);
    void *(*X509_get_ext_d2i)(const X509 *, int, int *, int *);
    void (*GENERAL_NAME_free)(void *);
    const unsigned char *(*ASN1_STRING_get0_data)(const ASN1_STRING *);
    int (*ASN1_STRING_length)(const ASN1_STRING *);
    void (*SSL_CTX_set_client_cert_cb)(SSL_CTX *, int (*)(SSL *, X509 **, EVP_PKEY **));
    int (*CRYPTO_get_ex_new_index)(int, long, void *, void *, void *, void *);
    int (*SSL_CTX_set_ex_data)(SSL_CTX *, int, void *);
    void *(*SSL_CTX_get_ex_data)(const SSL_CTX *, int);
    SSL_CTX *(*SSL_get_SSL_CTX)(const SSL *);
} ossl;

/// Our own SSL_CTX ex-data slot (libcurl's slots are its own): the
/// client-certificate callback has no argument, so its context rides here.
static int context_slot = -1;

static int resolved_ok = 0;
static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

static void resolve(void) {
#define FIND(name) \
    do { \
        *(void **)(&ossl.name) = dlsym(RTLD_DEFAULT, #name); \
        if (ossl.name == NULL) return; \
    } while (0)
    FIND(SSL_CTX_set_cert_verify_callback);
    FIND(X509_verify_cert);
    FIND(X509_STORE_CTX_get_error);
    FIND(X509_STORE_CTX_set_error);
    FIND(X509_STORE_CTX_get0_cert);
    FIND(X509_STORE_CTX_get0_untrusted);
    FIND(OPENSSL_sk_num);
    FIND(OPENSSL_sk_value);
    FIND(OPENSSL_sk_pop_free);
    FIND(X509_cmp);
    FIND(i2d_X509);
    FIND(d2i_X509);
    FIND(X509_free);
    FIND(X509_check_host);
    FIND(X509_check_ip_asc);
    FIND(X509_verify_cert_error_string);
    FIND(X509_get_subject_name);
    FIND(X509_get_issuer_name);
    FIND(X509_NAME_print_ex);
    FIND(BIO_s_mem);
    FIND(BIO_new);
    FIND(BIO_read);
    FIND(BIO_free);
    FIND(X509_get0_notBefore);
    FIND(X509_get0_notAfter);
    FIND(ASN1_TIME_to_tm);
    FIND(EVP_sha256);
    FIND(EVP_sha1);
    FIND(EVP_Digest);
    FIND(X509_get_X509_PUBKEY);
    FIND(i2d_X509_PUBKEY);
    FIND(X509_get_ext_d2i);
    FIND(GENERAL_NAME_free);
    FIND(ASN1_STRING_get0_data);
    FIND(ASN1_STRING_length);
    FIND(SSL_CTX_set_client_cert_cb);
    FIND(CRYPTO_get_ex_new_index);
    FIND(SSL_CTX_set_ex_data);
    FIND(SSL_CTX_get_ex_data);
    FIND(SSL_get_SSL_CTX);
#undef FIND
    // CRYPTO_EX_INDEX_SSL_CTX is 1 (crypto.h).
    context_slot = ossl.CRYPTO_get_ex_new_index(1, 0, NULL, NULL, NULL, NULL);
    if (context_slot < 0) return;
    resolved_ok = 1;
}

int ctls_trust_available(void) {
    pthread_once(&resolve_once, resolve);
    return resolved_ok;
}

struct ctls_verification {
    X509_STORE_CTX *store;
    X509 *leaf;
    OPENSSL_STACK *sent;
    int error;
};

static _Atomic(ctls_trust_decider) current_decider = NULL;

static int verify_callback(X509_STORE_CTX *store, void *context) {
    ctls_verification verification = {
        .store = store,
        .leaf = ossl.X509_STORE_CTX_get0_cert(store),
        .sent = ossl.X509_STORE_CTX_get0_untrusted(store),
        .error = X509_V_OK,
    };
    if (ossl.X509_verify_cert(store) != 1) {
        verification.error = ossl.X509_STORE_CTX_get_error(store);
        if (verification.error == X509_V_OK) verification.error = X509_V_ERR_UNSPECIFIED;
    }
    ctls_trust_decider decider = atomic_load(&current_decider);
    if (decider != NULL && decider(context, &verification)) {
        // libcurl reads SSL_get_verify_result after the handshake: it must
        // say OK for an accepted chain (LIBCURL-NOTES §12).
        ossl.X509_STORE_CTX_set_error(store, X509_V_OK);
        return 1;
    }
    ossl.X509_STORE_CTX_set_error(
        store, verification.error != X509_V_OK ? verification.error : X509_V_ERR_APPLICATION_VERIFICATION);
    return 0;
}

int ctls_install_trust_callback(void *ssl_ctx, ctls_trust_decider decider, void *context) {
    if (!ctls_trust_available() || ssl_ctx == NULL) return 0;
    atomic_store(&current_decider, decider);
    ossl.SSL_CTX_set_cert_verify_callback((SSL_CTX *)ssl_ctx, verify_callback, context);
    return 1;
}

static _Atomic(ctls_client_certificate_decider) current_client_decider = NULL;

static int client_certificate_callback(SSL *ssl, X509 **certificate, EVP_PKEY **key) {
    (void)certificate;
    (void)key;
    void *context = ossl.SSL_CTX_get_ex_data(ossl.SSL_get_SSL_CTX(ssl), context_slot);
    ctls_client_certificate_decider decider = atomic_load(&current_client_decider);
    if (context == NULL || decider == NULL) return 0;
    // 0: no certificate, the handshake goes on; -1 suspends it, which
    // libcurl 7.88.1 ends with error 35 (tested): the stop we want.
    return decider(context) ? 0 : -1;
}

int ctls_install_client_certificate_callback(void *ssl_ctx, ctls_client_certificate_decider decider, void *context) {
    if (!ctls_trust_available() || ssl_ctx == NULL) return 0;
    atomic_store(&current_client_decider, decider);
    if (ossl.SSL_CTX_set_ex_data((SSL_CTX *)ssl_ctx, context_slot, context) != 1) return 0;
    ossl.SSL_CTX_set_client_cert_cb((SSL_CTX *)ssl_ctx, client_certificate_callback);
    return 1;
}

int ctls_verification_error(const ctls_verification *verification) { return verification->error; }

int ctls_verification_check_host(ctls_verification *verification, const char *host) {
    if (verification->leaf == NULL || host == NULL) return 0;
    int matches;
    int is_ip = 0;
    // An IPv6 literal has a colon; an IPv4 one only digits and dots.
    if (strchr(host, ':') != NULL) {
        is_ip = 1;
    } else {
        is_ip = 1;
        for (const char *c = host; *c; c++) {
            if (!((*c >= '0' && *c <= '9') || *c == '.')) { is_ip = 0; break; }
        }
    }
    if (is_ip) {
        matches = ossl.X509_check_ip_asc(verification->leaf, host, 0) == 1;
    } else {
        matches = ossl.X509_check_host(
            verification->leaf, host, strlen(host), X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS, NULL) == 1;
    }
    if (!matches && verification->error == X509_V_OK) {
        verification->error = is_ip ? X509_V_ERR_IP_ADDRESS_MISMATCH : X509_V_ERR_HOSTNAME_MISMATCH;
    }
    return matches;
}

/// The certificates as the server sent them, leaf first (the leaf is
/// usually the first of the sent ones too, and appears once).
static X509 *certificate_at(const ctls_verification *verification, int index) {
    if (index == 0) return verification->leaf;
    int seen = 0;
    int count = verification->sent ? ossl.OPENSSL_sk_num(verification->sent) : 0;
    for (int i = 0; i < count; i++) {
        X509 *candidate = ossl.OPENSSL_sk_value(verification->sent, i);
        if (candidate == NULL || ossl.X509_cmp(candidate, verification->leaf) == 0) continue;
        seen++;
        if (seen == index) return candidate;
    }
    return NULL;
}

int ctls_verification_count(const ctls_verification *verification) {
    if (verification->leaf == NULL) return 0;
    int count = 1;
    while (certificate_at(verification, count) != NULL) count++;
    return count;
}

size_t ctls_verification_der(const ctls_verification *verification, int index, uint8_t *buffer, size_t capacity) {
    X509 *certificate = certificate_at(verification, index);
    if (certificate == NULL) return 0;
    int length = ossl.i2d_X509(certificate, NULL);
    if (length <= 0) return 0;
    if (buffer != NULL && (size_t)length <= capacity) {
        unsigned char *cursor = buffer;
        if (ossl.i2d_X509(certificate, &cursor) != length) return 0;
    }
    return (size_t)length;
}

const char *ctls_verify_error_string(long code) {
    if (!ctls_trust_available()) return "certificate verification failed";
    return ossl.X509_verify_cert_error_string(code);
}

static void print_name(const X509_NAME *name, char *out, size_t capacity) {
    out[0] = 0;
    BIO *bio = ossl.BIO_new(ossl.BIO_s_mem());
    if (bio == NULL) return;
    if (ossl.X509_NAME_print_ex(bio, name, 0, xn_flag_rfc2253) >= 0) {
        int read = ossl.BIO_read(bio, out, (int)capacity - 1);
        out[read > 0 ? read : 0] = 0;
    }
    ossl.BIO_free(bio);
}

static int64_t seconds_of(const ASN1_TIME *time) {
    struct tm parts;
    memset(&parts, 0, sizeof parts);
    if (time == NULL || ossl.ASN1_TIME_to_tm(time, &parts) != 1) return 0;
    return (int64_t)timegm(&parts);
}

static void append(char *out, size_t capacity, const char *text, size_t length) {
    size_t used = strlen(out);
    if (used + length + 3 >= capacity) return;
    if (used > 0) { memcpy(out + used, ", ", 2); used += 2; }
    memcpy(out + used, text, length);
    out[used + length] = 0;
}

static void list_alternative_names(const X509 *certificate, char *out, size_t capacity) {
    out[0] = 0;
    OPENSSL_STACK *names = ossl.X509_get_ext_d2i(certificate, NID_subject_alt_name, NULL, NULL);
    if (names == NULL) return;
    int count = ossl.OPENSSL_sk_num(names);
    for (int i = 0; i < count; i++) {
        const GENERAL_NAME *name = ossl.OPENSSL_sk_value(names, i);
        if (name == NULL || name->value == NULL) continue;
        const unsigned char *bytes = ossl.ASN1_STRING_get0_data(name->value);
        int length = ossl.ASN1_STRING_length(name->value);
        char entry[300];
        if (name->type == GEN_DNS && length > 0 && length < 250) {
            memcpy(entry, "DNS:", 4);
            memcpy(entry + 4, bytes, (size_t)length);
            append(out, capacity, entry, (size_t)length + 4);
        } else if (name->type == GEN_IPADD && (length == 4 || length == 16)) {
            int written;
            if (length == 4) {
                written = snprintf(entry, sizeof entry, "IP:%u.%u.%u.%u", bytes[0], bytes[1], bytes[2], bytes[3]);
            } else {
                written = snprintf(entry, sizeof entry, "IP:");
                for (int part = 0; part < 8; part++) {
                    written += snprintf(entry + written, sizeof entry - (size_t)written, part ? ":%x" : "%x",
                                        (bytes[2 * part] << 8) | bytes[2 * part + 1]);
                }
            }
            if (written > 0) append(out, capacity, entry, (size_t)written);
        }
    }
    ossl.OPENSSL_sk_pop_free(names, ossl.GENERAL_NAME_free);
}

int ctls_sha256(const uint8_t *data, size_t length, uint8_t digest[32]) {
    if (!ctls_trust_available()) return 0;
    unsigned int size = 32;
    return ossl.EVP_Digest(data, length, digest, &size, ossl.EVP_sha256(), NULL) == 1 && size == 32;
}

int ctls_sha1(const uint8_t *data, size_t length, uint8_t digest[20]) {
    if (!ctls_trust_available()) return 0;
    unsigned int size = 20;
    return ossl.EVP_Digest(data, length, digest, &size, ossl.EVP_sha1(), NULL) == 1 && size == 20;
}

int ctls_certificate_summarize(const uint8_t *der, size_t length, ctls_certificate_summary *summary) {
    if (!ctls_trust_available() || der == NULL || length == 0) return 0;
    memset(summary, 0, sizeof *summary);
    const unsigned char *cursor = der;
    X509 *certificate = ossl.d2i_X509(NULL, &cursor, (long)length);
    if (certificate == NULL) return 0;
    print_name(ossl.X509_get_subject_name(certificate), summary->subject, sizeof summary->subject);
    print_name(ossl.X509_get_issuer_name(certificate), summary->issuer, sizeof summary->issuer);
    summary->not_before = seconds_of(ossl.X509_get0_notBefore(certificate));
    summary->not_after = seconds_of(ossl.X509_get0_notAfter(certificate));
    int ok = ctls_sha256(der, length, summary->sha256);
    X509_PUBKEY *key = ossl.X509_get_X509_PUBKEY(certificate);
    int key_length = key ? ossl.i2d_X509_PUBKEY(key, NULL) : 0;
    if (ok && key_length > 0 && key_length < 16384) {
        unsigned char key_der[16384];
        unsigned char *key_cursor = key_der;
        ok = ossl.i2d_X509_PUBKEY(key, &key_cursor) == key_length
            && ctls_sha256(key_der, (size_t)key_length, summary->public_key_sha256);
    } else {
        ok = 0;
    }
    list_alternative_names(certificate, summary->alternative_names, sizeof summary->alternative_names);
    ossl.X509_free(certificate);
    return ok;
}
