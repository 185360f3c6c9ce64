// rawcurl-reuse: the lean loop, the second raw-libcurl baseline.
//
// The shape of the plain C loop the issue 57 rig measured against: easy
// handles configured once, and each finished one removed and added again as
// it is (curl_multi_remove_handle + curl_multi_add_handle, no option set
// again), with one curl_multi_perform and one curl_multi_poll per turn.
// Against rawcurl-poll (main.c's run_perform_loop) it leaves out what that
// loop adds to the plainest use of libcurl:
//
// - no multi options: no CURLMOPT_MAX_HOST_CONNECTIONS and no
//   CURLMOPT_MAXCONNECTS (with at most C handles there are at most C
//   transfers, and libcurl's default cache keeps 4 connections per handle);
// - no CURLOPT_HTTP_VERSION (libcurl's default is HTTP/1.1 for http: and
//   HTTP/2 over TLS for https:) and no CURLOPT_UPLOAD_BUFFERSIZE (64 KiB);
// - a write callback that only counts (no check for --collect, no pacer
//   call; W6's slow consumer gets a callback of its own at setup);
// - a finished transfer costs two getinfo calls (its transfer, its status),
//   not three: the HTTP version is read until known (tally_finished);
// - after a turn that finished transfers it polls (libcurl's timeout is 0
//   for the handles just added, so the poll returns at once) instead of
//   calling curl_multi_perform again at once.
//
// What it keeps, because the workloads need it or libcurl would do more
// without it: CURLOPT_NOSIGNAL (without it every curl_multi_perform sets and
// restores a SIGPIPE handler around each handle it runs), CURLOPT_PIPEWAIT
// over TLS (else 64 handles added at once open 64 connections instead of
// multiplexing HTTP/2 on one), the CA file, and for POSTs the body from
// memory (CURLOPT_POSTFIELDS) without "Expect: 100-continue", the same
// request on the wire as every other client's.
#include <string.h>

#include "rawcurl.h"

static struct state *reuse_state; // the slow consumer's callback paces the run

static size_t count_bytes(char *data, size_t size, size_t nmemb, void *userdata) {
    (void)data;
    struct transfer *t = userdata;
    t->bytes += (curl_off_t)(size * nmemb);
    return size * nmemb;
}

// W6 only: counts, then blocks while ahead of the consumer's rate.
static size_t count_and_pace(char *data, size_t size, size_t nmemb, void *userdata) {
    size_t count = count_bytes(data, size, nmemb, userdata);
    pace(reuse_state, count);
    return count;
}

void configure_reuse(struct state *st, struct transfer *t) {
    CURL *e = t->easy;
    reuse_state = st;
    curl_easy_setopt(e, CURLOPT_URL, st->opt.url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, st->opt.consume_rate > 0 ? count_and_pace : count_bytes);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(e, CURLOPT_PRIVATE, t);
    if (strncmp(st->opt.url, "https:", 6) == 0) curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
    if (st->opt.cacert) curl_easy_setopt(e, CURLOPT_CAINFO, st->opt.cacert);
    if (st->opt.post_bytes > 0) configure_post(st, e); // the default 64 KiB upload buffer
}

// Every finished transfer: tallied, removed, and added again as it is while
// requests are left.
static void drain_reuse(struct state *st) {
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(st->multi, &left))) {
        if (msg->msg != CURLMSG_DONE) continue;
        struct transfer *t = tally_finished(st, msg, 1);
        CURL *e = msg->easy_handle;
        curl_multi_remove_handle(st->multi, e);
        if (st->started < st->total) {
            t->bytes = 0;
            st->started++;
            CURLMcode rc = curl_multi_add_handle(st->multi, e);
            if (rc != CURLM_OK) {
                note_error(st, curl_multi_strerror(rc));
                st->finished++;
            }
        }
        if (st->finished == st->opt.count_warmup && st->opt.count_warmup > 0) open_window(st);
    }
}

// One perform and one poll per turn; bounded by the run's deadline.
void run_reuse_loop(struct state *st, long long deadline) {
    int running = 0;
    while (st->finished < st->total) {
        if (now_ms() > deadline) {
            note_timeout(st);
            break;
        }
        CURLMcode rc = curl_multi_perform(st->multi, &running);
        if (rc == CURLM_OK) {
            drain_reuse(st);
            // Not after the last: with nothing left to wait for it would sleep its 1 s.
            if (st->finished < st->total) rc = curl_multi_poll(st->multi, NULL, 0, 1000, NULL);
        }
        if (rc != CURLM_OK) {
            note_error(st, curl_multi_strerror(rc));
            break;
        }
    }
}
