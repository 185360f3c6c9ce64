// W9, the open loop: the lean loop's handles (reuse_loop.c) sending requests
// at a fixed arrival rate, each one's latency measured from the time it was
// meant to be sent (start + i / rate), not from when it went out, so that a
// stall of the client delays every request due meanwhile and shows in the
// tail (no coordinated omission).
//
// At most `slots` requests are in flight (the handles): a request due while
// every handle is busy waits for one, and its wait counts in its latency.
// The next send time is a timerfd (absolute, CLOCK_MONOTONIC) handed to
// curl_multi_poll beside libcurl's sockets: its timeout is in whole
// milliseconds, and at 20,000 requests per second one is due every 50 us.
//
// First `rate_warmup` requests in the closed lean loop, not measured (the
// connections opened and the caches warm, as the Swift clients'
// ClientSupport/OpenLoop.swift does), then the `count` timed ones.
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "rawcurl.h"

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void arm(int timer, double at_seconds) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    spec.it_value.tv_sec = (time_t)at_seconds;
    spec.it_value.tv_nsec = (long)((at_seconds - (double)spec.it_value.tv_sec) * 1e9);
    if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) spec.it_value.tv_nsec = 1; // 0 disarms
    timerfd_settime(timer, TFD_TIMER_ABSTIME, &spec, NULL);
}

// Finished transfers: latency recorded, handle back to the idle ones.
static void drain_open(struct state *st, struct transfer **idle, long *idle_count, double start) {
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(st->multi, &left))) {
        if (msg->msg != CURLMSG_DONE) continue;
        double done = now_seconds();
        struct transfer *t = tally_finished(st, msg, 1);
        st->latencies[t->index] = done - (start + (double)t->index / st->opt.rate);
        curl_multi_remove_handle(st->multi, msg->easy_handle);
        idle[(*idle_count)++] = t;
    }
}

void run_open_loop(struct state *st, struct transfer *transfers, long slots, long long deadline) {
    st->latencies = calloc((size_t)st->opt.count, sizeof *st->latencies);
    struct transfer **idle = calloc((size_t)slots, sizeof *idle);
    int timer = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (!st->latencies || !idle || timer < 0) {
        note_error(st, "open loop: out of memory or no timerfd");
        return;
    }
    // Idle handles are out of the multi handle here, and libcurl's default
    // connection cache holds 4 per handle in it: at a few in flight it
    // would close the rest of the warm connections. Kept, as a pool does.
    curl_multi_setopt(st->multi, CURLMOPT_MAXCONNECTS, slots);
    // The warm-up, closed: every handle busy until rate_warmup are done.
    st->total = st->opt.rate_warmup;
    for (long i = 0; i < slots && st->started < st->total; i++) {
        transfers[i].bytes = 0;
        st->started++;
        curl_multi_add_handle(st->multi, transfers[i].easy);
    }
    run_reuse_loop(st, deadline);
    // Its errors stay (they fail the run); its successes and bytes go.
    st->ok = 0;
    st->bytes_received = 0;
    st->started = 0;
    st->finished = 0;
    st->total = st->opt.count;
    long idle_count = 0;
    for (long i = 0; i < slots; i++) idle[idle_count++] = &transfers[i];

    struct curl_waitfd extra = {.fd = timer, .events = CURL_WAIT_POLLIN, .revents = 0};
    double start = now_seconds();
    st->start_s = start;
    int running = 0;
    while (st->finished < st->total) {
        if (now_ms() > deadline) {
            note_timeout(st);
            break;
        }
        double now = now_seconds();
        while (st->started < st->total && idle_count > 0 && start + (double)st->started / st->opt.rate <= now) {
            struct transfer *t = idle[--idle_count];
            t->index = st->started++;
            t->bytes = 0;
            CURLMcode rc = curl_multi_add_handle(st->multi, t->easy);
            if (rc != CURLM_OK) {
                note_error(st, curl_multi_strerror(rc));
                st->finished++;
            }
        }
        CURLMcode rc = curl_multi_perform(st->multi, &running);
        if (rc != CURLM_OK) {
            note_error(st, curl_multi_strerror(rc));
            break;
        }
        drain_open(st, idle, &idle_count, start);
        if (st->finished >= st->total) break; // else the poll below would sleep its 1 s
        int due_waiting = st->started < st->total && idle_count > 0;
        double next = start + (double)st->started / st->opt.rate;
        // A request already due and a handle free for it: send before waiting.
        if (due_waiting && next <= now_seconds()) continue;
        if (due_waiting) arm(timer, next);
        rc = curl_multi_poll(st->multi, &extra, 1, 1000, NULL);
        if (rc != CURLM_OK) {
            note_error(st, curl_multi_strerror(rc));
            break;
        }
        uint64_t expirations;
        while (read(timer, &expirations, sizeof expirations) > 0) {} // non-blocking: clears it
    }
    close(timer);
    free(idle);
}

// The "latency" member of the result line (the keys of LatencySummary in
// ClientSupport/OpenLoop.swift): nearest-rank percentiles in milliseconds.
void print_latency(struct state *st) {
    long n = st->finished < st->opt.count ? st->finished : st->opt.count;
    if (!st->latencies || n <= 0) return;
    qsort(st->latencies, (size_t)n, sizeof *st->latencies, compare_doubles);
    double sum = 0;
    for (long i = 0; i < n; i++) sum += st->latencies[i];
    double percentiles[3] = {0.50, 0.99, 0.999};
    double values[3];
    for (int k = 0; k < 3; k++) {
        long rank = (long)((double)n * percentiles[k] + 0.999999); // ceil, rounding-safe
        if (rank < 1) rank = 1;
        if (rank > n) rank = n;
        values[k] = st->latencies[rank - 1] * 1e3;
    }
    printf("\"latency\":{\"max_ms\":%.4f,\"mean_ms\":%.4f,\"p50_ms\":%.4f,\"p999_ms\":%.4f,\"p99_ms\":%.4f,"
           "\"rate\":%.1f,\"samples\":%ld},",
           st->latencies[n - 1] * 1e3, sum / (double)n * 1e3, values[0], values[2], values[1], st->opt.rate, n);
}
