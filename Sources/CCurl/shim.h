// Typed wrappers around libcurl's variadic entry points, plus the few Linux
// syscalls the engine loop needs (epoll, eventfd, timerfd).
//
// Why: Swift cannot call C variadic functions such as curl_easy_setopt, and
// glibc's `struct epoll_event` is packed on x86_64, which Swift imports
// awkwardly. Each wrapper fixes one argument type so the compiler checks it.
#ifndef ASYNCURLSESSION_CCURL_SHIM_H
#define ASYNCURLSESSION_CCURL_SHIM_H

#include <curl/curl.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <time.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

// MARK: - Constants that Swift does not import (macros built from macros)

static const size_t ccurl_writefunc_pause = CURL_WRITEFUNC_PAUSE;
static const size_t ccurl_readfunc_pause = CURL_READFUNC_PAUSE;
static const size_t ccurl_readfunc_abort = CURL_READFUNC_ABORT;
static const curl_socket_t ccurl_socket_timeout = CURL_SOCKET_TIMEOUT;
static const int ccurl_pause_all = CURLPAUSE_ALL;
static const int ccurl_pause_recv = CURLPAUSE_RECV;
static const int ccurl_pause_send = CURLPAUSE_SEND;
static const int ccurl_pause_cont = CURLPAUSE_CONT;
static const int ccurl_seekfunc_ok = CURL_SEEKFUNC_OK;
static const int ccurl_seekfunc_cantseek = CURL_SEEKFUNC_CANTSEEK;
static const unsigned long ccurl_auth_basic = CURLAUTH_BASIC;
static const unsigned long ccurl_auth_digest = CURLAUTH_DIGEST;
static const unsigned long ccurl_auth_ntlm = CURLAUTH_NTLM;
static const unsigned long ccurl_auth_negotiate = CURLAUTH_NEGOTIATE;

// MARK: - Easy handle options

static inline CURLcode ccurl_easy_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode ccurl_easy_setopt_off_t(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode ccurl_easy_setopt_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode ccurl_easy_setopt_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode ccurl_easy_setopt_slist(CURL *easy, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode ccurl_easy_setopt_blob(CURL *easy, CURLoption option, const void *data, size_t length) {
    struct curl_blob blob;
    blob.data = (void *)data;
    blob.len = length;
    blob.flags = CURL_BLOB_COPY;
    return curl_easy_setopt(easy, option, &blob);
}

typedef size_t (*ccurl_data_callback)(char *buffer, size_t size, size_t count, void *userdata);
typedef int (*ccurl_seek_callback)(void *userdata, curl_off_t offset, int origin);

static inline CURLcode ccurl_easy_setopt_write_function(CURL *easy, ccurl_data_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, callback);
}
static inline CURLcode ccurl_easy_setopt_header_function(CURL *easy, ccurl_data_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, callback);
}
/// Runs for each new TLS connection with its SSL_CTX (server-trust hooks).
static inline CURLcode ccurl_easy_setopt_ssl_ctx_function(CURL *easy, curl_ssl_ctx_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_SSL_CTX_FUNCTION, callback);
}
static inline CURLcode ccurl_easy_setopt_read_function(CURL *easy, ccurl_data_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_READFUNCTION, callback);
}
static inline CURLcode ccurl_easy_setopt_seek_function(CURL *easy, ccurl_seek_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_SEEKFUNCTION, callback);
}
/// Called as the transfer moves bytes (CURLOPT_XFERINFOFUNCTION; it runs
/// only with CURLOPT_NOPROGRESS 0): the upload progress of a body libcurl
/// sends from memory (CURLOPT_POSTFIELDS), where no read callback counts it.
/// Return 0 to go on.
typedef int (*ccurl_xferinfo_callback)(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);
static inline CURLcode ccurl_easy_setopt_xferinfo_function(CURL *easy, ccurl_xferinfo_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, callback);
}
/// Asked once a chunked upload's body has ended: the trailer fields to send
/// (CURLOPT_TRAILERFUNCTION; libcurl frees the list).
typedef int (*ccurl_trailer_callback)(struct curl_slist **list, void *userdata);
static inline CURLcode ccurl_easy_setopt_trailer_function(CURL *easy, ccurl_trailer_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_TRAILERFUNCTION, callback);
}

/// Opens a connection's socket (CURLOPT_OPENSOCKETFUNCTION) and closes it
/// (CURLOPT_CLOSESOCKETFUNCTION): the engine learns which socket numbers
/// are libcurl's live connections (see ParkedSocketClaims).
typedef curl_socket_t (*ccurl_opensocket_callback)(void *clientp, curlsocktype purpose, struct curl_sockaddr *address);
typedef int (*ccurl_closesocket_callback)(void *clientp, curl_socket_t socket);

static inline CURLcode ccurl_easy_setopt_opensocket_function(CURL *easy, ccurl_opensocket_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, callback);
}
static inline CURLcode ccurl_easy_setopt_closesocket_function(CURL *easy, ccurl_closesocket_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, callback);
}

/// Called once a transfer has its connection, new or reused, before its
/// request goes out (CURLOPT_PREREQFUNCTION, 7.80): the engine counts the
/// transfers still waiting for one (pool metrics, only when a session has
/// them). Return CURL_PREREQFUNC_OK.
typedef int (*ccurl_prereq_callback)(void *clientp, char *primary_ip, char *local_ip, int primary_port, int local_port);

static inline CURLcode ccurl_easy_setopt_prereq_function(CURL *easy, ccurl_prereq_callback callback) {
    return curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, callback);
}

// MARK: - Easy handle information

static inline CURLcode ccurl_easy_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLcode ccurl_easy_getinfo_off_t(CURL *easy, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLcode ccurl_easy_getinfo_string(CURL *easy, CURLINFO info, const char **value) {
    return curl_easy_getinfo(easy, info, value);
}
/// CURLINFO_ACTIVESOCKET (a curl_socket_t, an int on Linux).
static inline CURLcode ccurl_easy_getinfo_socket(CURL *easy, curl_socket_t *value) {
    return curl_easy_getinfo(easy, CURLINFO_ACTIVESOCKET, value);
}
static inline CURLcode ccurl_easy_getinfo_pointer(CURL *easy, CURLINFO info, void **value) {
    return curl_easy_getinfo(easy, info, value);
}

// MARK: - Multi handle

typedef int (*ccurl_socket_callback)(CURL *easy, curl_socket_t socket, int what, void *userp, void *socketp);
typedef int (*ccurl_timer_callback)(CURLM *multi, long timeout_ms, void *userp);

static inline CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLMcode ccurl_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}
static inline CURLMcode ccurl_multi_setopt_socket_function(CURLM *multi, ccurl_socket_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
}
static inline CURLMcode ccurl_multi_setopt_timer_function(CURLM *multi, ccurl_timer_callback callback) {
    return curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
}

/// Reads the next finished transfer, skipping other message kinds.
/// Returns 1 and fills `easy`/`result` when one was found, 0 when the queue is empty.
/// The CURLMsg dies at curl_multi_remove_handle, so the fields are copied out here.
static inline int ccurl_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result) {
    int remaining = 0;
    CURLMsg *message;
    while ((message = curl_multi_info_read(multi, &remaining)) != NULL) {
        if (message->msg == CURLMSG_DONE) {
            *easy = message->easy_handle;
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}

// MARK: - Share handle

static inline CURLSHcode ccurl_share_setopt_long(CURLSH *share, CURLSHoption option, long value) {
    return curl_share_setopt(share, option, value);
}

// MARK: - epoll / eventfd / timerfd

static inline int ccurl_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t data) {
    struct epoll_event event;
    event.events = events;
    event.data.u64 = data;
    return epoll_ctl(epfd, op, fd, &event);
}

/// Waits for events and unpacks them into two plain arrays.
static inline int ccurl_epoll_wait(int epfd, uint64_t *datas, uint32_t *events, int capacity, int timeout_ms) {
    struct epoll_event buffer[256];
    if (capacity > 256) { capacity = 256; }
    int count = epoll_wait(epfd, buffer, capacity, timeout_ms);
    for (int i = 0; i < count; i++) {
        datas[i] = buffer[i].data.u64;
        events[i] = buffer[i].events;
    }
    return count;
}

/// Waits up to `nanoseconds` for one of `fds` to become ready: poll(2)
/// with a timeout finer than its milliseconds (an inline wait is bounded in
/// microseconds). The raw syscall, because glibc declares ppoll only under
/// _GNU_SOURCE. Returns the ready count, 0 on timeout, -1 with errno.
static inline int ccurl_poll_nanoseconds(struct pollfd *fds, unsigned int count, int64_t nanoseconds) {
    struct timespec timeout;
    if (nanoseconds < 0) { nanoseconds = 0; }
    timeout.tv_sec = (time_t)(nanoseconds / 1000000000LL);
    timeout.tv_nsec = (long)(nanoseconds % 1000000000LL);
    return (int)syscall(SYS_ppoll, fds, (unsigned long)count, &timeout, NULL, (size_t)8);
}

/// Arms a one-shot timerfd `nanoseconds` from now. Zero would disarm it, so
/// callers pass at least 1 (libcurl's "run as soon as possible").
static inline int ccurl_timerfd_arm(int fd, int64_t nanoseconds) {
    struct itimerspec spec;
    spec.it_interval.tv_sec = 0;
    spec.it_interval.tv_nsec = 0;
    spec.it_value.tv_sec = (time_t)(nanoseconds / 1000000000LL);
    spec.it_value.tv_nsec = (long)(nanoseconds % 1000000000LL);
    return timerfd_settime(fd, 0, &spec, NULL);
}

static inline int ccurl_timerfd_disarm(int fd) {
    struct itimerspec spec = {{0, 0}, {0, 0}};
    return timerfd_settime(fd, 0, &spec, NULL);
}

/// Names the calling thread (at most 15 bytes are kept), for top -H, perf and gdb.
static inline void ccurl_name_current_thread(const char *name) {
    (void)prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

/// CPUs this process may run on (its affinity mask), at least 1. Read with
/// the raw syscall: the glibc wrapper and CPU_COUNT need _GNU_SOURCE.
static inline int ccurl_available_cpus(void) {
    unsigned long mask[16] = {0};  // room for 1024 CPUs
    long size = syscall(SYS_sched_getaffinity, 0, sizeof mask, mask);
    if (size <= 0) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        return online > 0 ? (int)online : 1;
    }
    int count = 0;
    for (long i = 0; i < size / (long)sizeof(unsigned long); i++) count += __builtin_popcountl(mask[i]);
    return count > 0 ? count : 1;
}

static inline uint64_t ccurl_monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
}

/// With CURLOPT_NOSIGNAL libcurl no longer ignores SIGPIPE, and a TLS write to
/// a closed peer can raise it. Ignore it only if nobody installed a handler.
static inline void ccurl_ignore_sigpipe_if_default(void) {
    struct sigaction current;
    if (sigaction(SIGPIPE, NULL, &current) == 0 && !(current.sa_flags & SA_SIGINFO) &&
        current.sa_handler == SIG_DFL) {
        signal(SIGPIPE, SIG_IGN);
    }
}

#endif
