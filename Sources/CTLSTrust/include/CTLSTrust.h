// Server-trust hooks on the OpenSSL that libcurl already loaded.
//
// Why dlsym and no OpenSSL headers: the package depends on libcurl only.
// libcurl (OpenSSL flavour) has libssl in the process; its
// CURLOPT_SSL_CTX_FUNCTION hands us each new connection's SSL_CTX, and the
// few OpenSSL calls below are looked up at run time. With a libcurl built on
// another TLS library they are absent, and `ctls_trust_available` says so.
#ifndef ASYNCURLSESSION_CTLSTRUST_H
#define ASYNCURLSESSION_CTLSTRUST_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/// Whether the OpenSSL functions the trust hooks need were found.
int ctls_trust_available(void);

/// The verify callback's view of one handshake, handed to the decider.
typedef struct ctls_verification ctls_verification;

/// Decides a handshake: returns 1 to accept the chain, 0 to refuse it.
/// Runs on the thread driving libcurl, inside the handshake: it must not block.
typedef int (*ctls_trust_decider)(void *context, ctls_verification *verification);

/// Installs a certificate-verification callback on `ssl_ctx` (an SSL_CTX *
/// from CURLOPT_SSL_CTX_FUNCTION). The callback verifies the chain as
/// OpenSSL would, then asks `decider` with `context`. Every connection uses
/// the same decider (the last one installed). Returns 0 when the hooks are
/// unavailable.
int ctls_install_trust_callback(void *ssl_ctx, ctls_trust_decider decider, void *context);

/// OpenSSL's verification result for the chain (X509_V_OK = 0), and after
/// `ctls_verification_check_host` for the host too.
int ctls_verification_error(const ctls_verification *verification);
/// Checks `host` (a DNS name or an IP address) against the leaf; returns 1
/// when it matches. A mismatch on a chain that verified becomes the
/// verification's error (X509_V_ERR_HOSTNAME_MISMATCH or _IP_ADDRESS_MISMATCH).
int ctls_verification_check_host(ctls_verification *verification, const char *host);
/// Certificates the server sent, leaf first.
int ctls_verification_count(const ctls_verification *verification);
/// DER of certificate `index`, written to `buffer` when it holds
/// `capacity` bytes; returns the DER's length (0 on failure).
size_t ctls_verification_der(const ctls_verification *verification, int index, uint8_t *buffer, size_t capacity);

/// Decides a server's request for a client certificate when the connection
/// has none: returns 1 to go on without one, 0 to stop the handshake.
typedef int (*ctls_client_certificate_decider)(void *context);

/// Installs a client-certificate callback on `ssl_ctx` (OpenSSL calls it only
/// when the server asks and no certificate was set) that asks `decider` with
/// `context`. Every connection uses the same decider. Returns 0 when the
/// hooks are unavailable.
int ctls_install_client_certificate_callback(void *ssl_ctx, ctls_client_certificate_decider decider, void *context);

/// OpenSSL's text for a verification error code.
const char *ctls_verify_error_string(long code);

/// What a certificate says, parsed from DER.
typedef struct ctls_certificate_summary {
    char subject[512];
    char issuer[512];
    /// Seconds since 1970, UTC.
    int64_t not_before;
    int64_t not_after;
    uint8_t sha256[32];
    /// SHA-256 of the SubjectPublicKeyInfo DER (libcurl's and HPKP's pin).
    uint8_t public_key_sha256[32];
    /// "DNS:name" and "IP:address" entries, comma separated.
    char alternative_names[1024];
} ctls_certificate_summary;

/// Fills `summary` from a certificate's DER; returns 0 when it does not parse.
int ctls_certificate_summarize(const uint8_t *der, size_t length, ctls_certificate_summary *summary);

/// SHA-256 of `length` bytes into `digest`; returns 0 when unavailable.
int ctls_sha256(const uint8_t *data, size_t length, uint8_t digest[32]);

/// SHA-1 (the WebSocket handshake's Sec-WebSocket-Accept, RFC 6455 §4.2.2);
/// returns 0 when unavailable.
int ctls_sha1(const uint8_t *data, size_t length, uint8_t digest[20]);

#endif
