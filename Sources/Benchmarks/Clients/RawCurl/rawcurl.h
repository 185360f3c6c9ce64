// What the loops of bench-rawcurl share: its options, a transfer (one easy
// handle, reused for every request it carries) and the run's state, and the
// few helpers main.c lends the loops in reuse_loop.c and open_loop.c.
#ifndef BENCH_RAWCURL_H
#define BENCH_RAWCURL_H

#include <curl/curl.h>
#include <stdint.h>
#include <sys/resource.h>

struct options {
    const char *workload;
    const char *url;
    const char *cacert;
    long count;
    long concurrency;
    long post_bytes;
    double consume_rate;
    double timeout_s;
    int collect;
    int perform; // curl_multi_perform + curl_multi_poll instead of socket_action + epoll
    int reuse; // the lean loop of reuse_loop.c (rawcurl-reuse)
    double rate; // > 0: open loop (open_loop.c), requests per second
    long rate_warmup; // open loop: requests before the timed schedule, not measured
    long count_warmup; // requests before the counted ones (0: nothing counted)
};

// malloc-interposer's C API (its interposer.h), when its library is preloaded.
typedef void (*interposer_toggle)(void);
typedef void (*interposer_stats)(int64_t *, int64_t *, int64_t *, int64_t *, int64_t *, int64_t *);

// The counting window of --count-warmup.
struct count_window {
    int open;
    interposer_toggle disable; // NULL: allocations not counted
    interposer_stats stats;
    struct rusage usage;
};

struct transfer {
    CURL *easy;
    curl_off_t bytes;
    // --collect: the body so far (bytes long) in a buffer of capacity bytes,
    // kept for the handle's next response.
    char *body;
    size_t capacity;
    long index; // open loop: the request this handle carries (its intended send time)
};

struct state {
    struct options opt;
    CURLM *multi;
    int epfd;
    long long timer_deadline_ms; // -1: no timer
    long started;
    long finished;
    long ok;
    long errors;
    long long bytes_received;
    long long bytes_sent;
    long long consumed; // for the pacer
    double start_s;
    long http_version;
    char first_error[256];
    char *post_body;
    long total; // warm-up + measured requests
    struct count_window window;
    // Open loop: each measured request's latency from its intended send
    // time (seconds, by request index), summarised by print_latency.
    double *latencies;
};


double now_seconds(void);
long long now_ms(void);
void note_error(struct state *st, const char *message);
void note_timeout(struct state *st);
void open_window(struct state *st);
void pace(struct state *st, size_t count);
void configure_post(struct state *st, CURL *e);
struct transfer *tally_finished(struct state *st, CURLMsg *msg, int version_once);

// reuse_loop.c: the lean loop (rawcurl-reuse).
void configure_reuse(struct state *st, struct transfer *t);
void run_reuse_loop(struct state *st, long long deadline);

// open_loop.c: the lean loop's handles at a fixed arrival rate (W9).
void run_open_loop(struct state *st, struct transfer *transfers, long slots, long long deadline);
void print_latency(struct state *st);

#endif
