// bench-rawcurl: the ceiling for any libcurl-based client.
//
// Raw libcurl multi interface, in one of three loops:
//
// - With --perform (reported as rawcurl-poll, the harness's baseline): the
//   plainest loop libcurl offers, curl_multi_perform then curl_multi_poll,
//   nothing else. libcurl polls every transfer's socket itself each turn,
//   which for a few dozen connections is as fast as libcurl goes.
// - Without (reported as rawcurl): the way an event-loop client drives it,
//   and the shape of our engine: one epoll set, curl_multi_socket_action on
//   readiness, a timer from CURLMOPT_TIMERFUNCTION. It scales to thousands
//   of connections; for a few dozen it pays an epoll_ctl per interest change.
// - With --reuse (reported as rawcurl-reuse, the second baseline): the lean
//   loop of reuse_loop.c, perform and poll with the fewest options libcurl
//   needs; the harness divides by whichever of it and rawcurl-poll is faster.
//   With --rate R it runs the open loop of open_loop.c (W9).
//
// `concurrency` easy handles are created once and reused for every request;
// body bytes are counted and discarded in the write callback. Takes the same
// flags as the Swift clients and prints the same JSON line (see
// ClientSupport/ClientResult.swift).
//
// With --collect (reported as rawcurl-collect) each response's body is
// copied into its transfer's buffer, sized from Content-Length when the
// server sends one (else grown by doubling) and reused by the next response
// on that handle: the copy any client that returns whole bodies must make,
// and no more (no allocation or page faults per response once warm), which
// the discarding ceiling never pays for. A reference, not a target.
//
// With --count-warmup W (Benchmarks --count): W requests first, then the
// `count` measured ones counted as the Swift clients count theirs
// (ClientSupport/CountWindow.swift): allocations through malloc-interposer's
// library when the harness preloads it (found with dlsym, never linked),
// context switches and CPU from getrusage. The window opens when the W-th
// request has finished; the transfers then in flight end inside it.
//
//   bench-rawcurl --workload W --url URL --count N --concurrency C
//                 [--post-bytes B] [--cacert FILE] [--stream] [--collect]
//                 [--consume-rate BYTES_PER_SEC] [--timeout SECONDS] [--perform]
//                 [--count-warmup W] [--reuse [--rate R --rate-warmup W]]
//   bench-rawcurl --version     prints libcurl's version line
#define _GNU_SOURCE
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "rawcurl.h"

#define MAX_EVENTS 1024
#define UPLOAD_BUFFER_SIZE (256L * 1024L)

double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

long long now_ms(void) { return (long long)(now_seconds() * 1000.0); }

// A number of /proc/self/status, e.g. "VmRSS:" (KiB); 0 if unknown.
static long status_field(const char *name) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    long value = 0;
    size_t length = strlen(name);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, name, length) == 0) {
            value = strtol(line + length, NULL, 10);
            break;
        }
    }
    fclose(f);
    return value;
}

static long rss_kib(void) { return status_field("VmRSS:"); }

static void raise_fd_limit(void) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &limit);
    }
}

static void usage_exit(const char *message) {
    fprintf(stderr, "bench-rawcurl: %s\n", message);
    exit(64);
}

static long parse_long(const char *text, const char *name, long minimum) {
    char *end = NULL;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || !end || *end || value < minimum) {
        fprintf(stderr, "bench-rawcurl: %s needs an integer >= %ld, got %s\n", name, minimum, text);
        exit(64);
    }
    return value;
}

static double parse_double(const char *text, const char *name) {
    char *end = NULL;
    double value = strtod(text, &end);
    if (!end || *end || value < 0) {
        fprintf(stderr, "bench-rawcurl: %s needs a number >= 0, got %s\n", name, text);
        exit(64);
    }
    return value;
}

static void parse_options(int argc, char **argv, struct options *opt) {
    memset(opt, 0, sizeof *opt);
    opt->workload = "";
    opt->count = 1;
    opt->concurrency = 1;
    opt->timeout_s = 300;
    for (int i = 1; i < argc; i++) {
        const char *name = argv[i];
        if (strcmp(name, "--stream") == 0) continue; // streams unless --collect
        if (strcmp(name, "--collect") == 0) {
            opt->collect = 1;
            continue;
        }
        if (strcmp(name, "--perform") == 0) {
            opt->perform = 1;
            continue;
        }
        if (strcmp(name, "--reuse") == 0) {
            opt->reuse = 1;
            continue;
        }
        if (i + 1 >= argc) usage_exit("every option but --stream, --collect, --perform and --reuse needs a value");
        const char *value = argv[++i];
        if (strcmp(name, "--workload") == 0) opt->workload = value;
        else if (strcmp(name, "--url") == 0) opt->url = value;
        else if (strcmp(name, "--cacert") == 0) opt->cacert = value;
        else if (strcmp(name, "--count") == 0) opt->count = parse_long(value, name, 1);
        else if (strcmp(name, "--concurrency") == 0) opt->concurrency = parse_long(value, name, 1);
        else if (strcmp(name, "--post-bytes") == 0) opt->post_bytes = parse_long(value, name, 0);
        else if (strcmp(name, "--consume-rate") == 0) opt->consume_rate = parse_double(value, name);
        else if (strcmp(name, "--timeout") == 0) opt->timeout_s = parse_double(value, name);
        else if (strcmp(name, "--count-warmup") == 0) opt->count_warmup = parse_long(value, name, 0);
        else if (strcmp(name, "--rate") == 0) opt->rate = parse_double(value, name);
        else if (strcmp(name, "--rate-warmup") == 0) opt->rate_warmup = parse_long(value, name, 0);
        else usage_exit("unknown option");
    }
    if (!opt->url) usage_exit("--url URL is required");
}

// Slow consumer (W6): block in the write callback while ahead of the rate.
// Blocking here is what a slow synchronous consumer does; libcurl then stops
// reading the socket and TCP flow control slows the server.
void pace(struct state *st, size_t count) {
    st->consumed += (long long)count;
    if (st->opt.consume_rate <= 0) return;
    double due = st->start_s + (double)st->consumed / st->opt.consume_rate;
    double wait = due - now_seconds();
    if (wait > 0.001) {
        struct timespec ts;
        ts.tv_sec = (time_t)wait;
        ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
        nanosleep(&ts, NULL);
    }
}

static struct state *global_state; // the write callback's pacer needs it

// --collect: appends to the transfer's body buffer; 0 (libcurl then fails
// the transfer) when memory runs out.
static size_t collect(struct transfer *t, const char *data, size_t count) {
    size_t needed = (size_t)t->bytes + count;
    if (needed > t->capacity) {
        curl_off_t announced = -1;
        curl_easy_getinfo(t->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced);
        size_t capacity = t->capacity ? t->capacity * 2 : 16384;
        if (t->bytes == 0 && announced > 0 && (size_t)announced >= needed) capacity = (size_t)announced;
        if (capacity < needed) capacity = needed;
        char *grown = realloc(t->body, capacity);
        if (!grown) return 0;
        t->body = grown;
        t->capacity = capacity;
    }
    memcpy(t->body + t->bytes, data, count);
    return count;
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *userdata) {
    struct transfer *t = userdata;
    size_t count = size * nmemb;
    if (global_state->opt.collect && collect(t, data, count) != count) return 0;
    t->bytes += (curl_off_t)count;
    pace(global_state, count);
    return count;
}

static int socket_cb(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp) {
    (void)easy;
    struct state *st = userp;
    if (what == CURL_POLL_REMOVE) {
        epoll_ctl(st->epfd, EPOLL_CTL_DEL, s, NULL); // may already be closed
        curl_multi_assign(st->multi, s, NULL);
        return 0;
    }
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.data.fd = s;
    if (what & CURL_POLL_IN) ev.events |= EPOLLIN;
    if (what & CURL_POLL_OUT) ev.events |= EPOLLOUT;
    if (socketp) {
        epoll_ctl(st->epfd, EPOLL_CTL_MOD, s, &ev);
    } else {
        epoll_ctl(st->epfd, EPOLL_CTL_ADD, s, &ev);
        curl_multi_assign(st->multi, s, st); // any non-NULL marks "registered"
    }
    return 0;
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userp) {
    (void)multi;
    struct state *st = userp;
    st->timer_deadline_ms = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    return 0;
}

void note_error(struct state *st, const char *message) {
    st->errors++;
    if (!st->first_error[0]) snprintf(st->first_error, sizeof st->first_error, "%s", message);
}

// A POST's body from memory, the same on the wire from every loop: its
// size, the bytes, and "Expect:" off (no 100-continue round trip).
void configure_post(struct state *st, CURL *e) {
    static struct curl_slist *headers;
    if (!headers) headers = curl_slist_append(NULL, "Expect:");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)st->opt.post_bytes);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, st->post_body);
}

static void configure(struct state *st, struct transfer *t) {
    CURL *e = t->easy;
    int https = strncmp(st->opt.url, "https:", 6) == 0;
    curl_easy_setopt(e, CURLOPT_URL, st->opt.url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(e, CURLOPT_PRIVATE, t);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, https ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
    if (https) curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L); // multiplex on one h2 connection
    if (st->opt.cacert) curl_easy_setopt(e, CURLOPT_CAINFO, st->opt.cacert);
    if (st->opt.post_bytes > 0) {
        configure_post(st, e);
        curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, UPLOAD_BUFFER_SIZE);
    }
}

static void start_next(struct state *st, struct transfer *t) {
    t->bytes = 0;
    st->started++;
    CURLMcode rc = curl_multi_add_handle(st->multi, t->easy);
    if (rc != CURLM_OK) {
        note_error(st, curl_multi_strerror(rc));
        st->finished++;
    }
}

static double cpu_seconds(const struct rusage *usage) {
    return (double)usage->ru_utime.tv_sec + (double)usage->ru_utime.tv_usec / 1e6
         + (double)usage->ru_stime.tv_sec + (double)usage->ru_stime.tv_usec / 1e6;
}

// The warm-up is over: what follows is counted. The warm-up's successes and
// bytes are forgotten (its errors are kept, so that they fail the run).
void open_window(struct state *st) {
    void *program = dlopen(NULL, RTLD_NOW);
    interposer_toggle reset = program ? (interposer_toggle)dlsym(program, "malloc_interposer_reset") : NULL;
    interposer_toggle enable = program ? (interposer_toggle)dlsym(program, "malloc_interposer_enable") : NULL;
    st->window.disable = program ? (interposer_toggle)dlsym(program, "malloc_interposer_disable") : NULL;
    st->window.stats = program ? (interposer_stats)dlsym(program, "malloc_interposer_get_stats") : NULL;
    if (!reset || !enable || !st->window.stats) st->window.disable = NULL;
    st->ok = 0;
    st->bytes_received = 0;
    st->bytes_sent = 0;
    st->window.open = 1;
    st->start_s = now_seconds();
    getrusage(RUSAGE_SELF, &st->window.usage);
    if (st->window.disable) {
        reset();
        enable();
    }
}

// Closes the window and prints its counts as the "counts" member of the
// result line (the keys of CountedWork in ClientSupport/CountWindow.swift).
static void print_window(struct state *st) {
    int64_t count = 0, bytes = 0, small = 0, large = 0, frees = 0, freed = 0;
    if (st->window.disable) {
        st->window.disable();
        st->window.stats(&count, &bytes, &small, &large, &frees, &freed);
    }
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    printf("\"counts\":{");
    if (st->window.disable) {
        printf("\"allocated_bytes\":%lld,\"allocations\":%lld,\"frees\":%lld,", (long long)bytes,
               (long long)(small + large), (long long)frees);
    }
    printf("\"cpu_s\":%.6f,\"involuntary_switches\":%ld,\"requests\":%ld,\"threads\":%ld,"
           "\"voluntary_switches\":%ld},",
           cpu_seconds(&usage) - cpu_seconds(&st->window.usage), usage.ru_nivcsw - st->window.usage.ru_nivcsw,
           st->opt.count, status_field("Threads:"), usage.ru_nvcsw - st->window.usage.ru_nvcsw);
}

// One finished transfer tallied (every loop's): its outcome against the
// expected status, its body bytes, the HTTP version (every time, or with
// `version_once` only until known: the lean loops' one getinfo fewer).
struct transfer *tally_finished(struct state *st, CURLMsg *msg, int version_once) {
    long expected_status = st->opt.post_bytes > 0 ? 204 : 200;
    CURL *e = msg->easy_handle;
    struct transfer *t = NULL;
    curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&t);
    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    if (!version_once || !st->http_version) curl_easy_getinfo(e, CURLINFO_HTTP_VERSION, &st->http_version);
    if (msg->data.result != CURLE_OK) {
        note_error(st, curl_easy_strerror(msg->data.result));
    } else if (status != expected_status) {
        char text[64];
        snprintf(text, sizeof text, "unexpected HTTP status %ld", status);
        note_error(st, text);
    } else {
        st->ok++;
        if (st->opt.post_bytes > 0) st->bytes_sent += st->opt.post_bytes;
    }
    st->bytes_received += (long long)t->bytes;
    st->finished++;
    return t;
}

static void drain_done(struct state *st) {
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(st->multi, &left))) {
        if (msg->msg != CURLMSG_DONE) continue;
        struct transfer *t = tally_finished(st, msg, 0);
        curl_multi_remove_handle(st->multi, msg->easy_handle);
        if (st->started < st->total) start_next(st, t);
        if (st->finished == st->opt.count_warmup && st->opt.count_warmup > 0) open_window(st);
    }
}

static void print_json_string(const char *text) {
    putchar('"');
    for (const char *p = text; *p; p++) {
        if (*p == '"' || *p == '\\') putchar('\\');
        if ((unsigned char)*p >= 0x20) putchar(*p);
    }
    putchar('"');
}

// `unsupported`: the reason this run cannot do the workload (nothing ran;
// the counts are 0), or NULL.
static void print_result(struct state *st, double elapsed, long rss_before, const char *unsupported) {
    const char *version = st->http_version == CURL_HTTP_VERSION_2_0 ? "2"
                        : st->http_version == CURL_HTTP_VERSION_1_1 ? "1.1"
                        : st->http_version == CURL_HTTP_VERSION_1_0 ? "1.0" : NULL;
    const char *api = st->opt.reuse ? "curl_multi_perform+curl_multi_poll, handles re-added as configured"
                    : st->opt.perform ? "curl_multi_perform+curl_multi_poll" : "curl_multi_socket_action+epoll";
    const char *client = st->opt.reuse ? "rawcurl-reuse" : st->opt.collect ? "rawcurl-collect"
                       : st->opt.perform ? "rawcurl-poll" : "rawcurl";
    printf("{\"api\":\"%s%s%s\",\"bytes_received\":%lld,\"bytes_sent\":%lld,"
           "\"client\":\"%s\",",
           api, st->opt.collect ? ", bodies collected" : "", st->opt.rate > 0 ? ", open loop" : "",
           st->bytes_received, st->bytes_sent, client);
    if (st->window.open) print_window(st);
    print_latency(st);
    printf("\"elapsed_s\":%.6f,\"errors\":%ld,", elapsed, st->errors);
    if (st->first_error[0]) {
        printf("\"first_error\":");
        print_json_string(st->first_error);
        putchar(',');
    }
    if (version) printf("\"http_version\":\"%s\",", version);
    printf("\"ok\":%ld,\"requests\":%ld,\"rss_before_kib\":%ld,", st->ok, unsupported ? 0 : st->opt.count,
           rss_before);
    if (unsupported) {
        printf("\"unsupported\":");
        print_json_string(unsupported);
        putchar(',');
    }
    printf("\"workload\":");
    print_json_string(st->opt.workload);
    printf("}\n");
    fflush(stdout);
}

void note_timeout(struct state *st) {
    char text[96];
    snprintf(text, sizeof text, "client timed out after %.0f s", st->opt.timeout_s);
    long unfinished = st->total - st->finished;
    for (long i = 0; i < unfinished; i++) note_error(st, text);
}

// The event-loop shape: epoll readiness and libcurl's timer drive
// curl_multi_socket_action for one socket (or the timer) at a time.
static void run_socket_loop(struct state *st, long long deadline) {
    struct epoll_event events[MAX_EVENTS];
    int running = 0;
    while (st->finished < st->total) {
        long long now = now_ms();
        if (now > deadline) {
            note_timeout(st);
            break;
        }
        int wait_ms = 1000;
        if (st->timer_deadline_ms >= 0) {
            long long d = st->timer_deadline_ms - now;
            wait_ms = d < 0 ? 0 : (d < 1000 ? (int)d : 1000);
        }
        int n = epoll_wait(st->epfd, events, MAX_EVENTS, wait_ms);
        if (n < 0 && errno != EINTR) {
            note_error(st, strerror(errno));
            break;
        }
        for (int i = 0; i < n; i++) {
            int flags = 0;
            if (events[i].events & EPOLLIN) flags |= CURL_CSELECT_IN;
            if (events[i].events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
            if (events[i].events & (EPOLLERR | EPOLLHUP)) flags |= CURL_CSELECT_ERR;
            curl_multi_socket_action(st->multi, events[i].data.fd, flags, &running);
        }
        if (st->timer_deadline_ms >= 0 && now_ms() >= st->timer_deadline_ms) {
            st->timer_deadline_ms = -1;
            curl_multi_socket_action(st->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        }
        drain_done(st);
    }
}

// The plain shape: libcurl drives every transfer in one call and waits on
// all their sockets (and its own timeout) in the next; a finished transfer's
// handle starts the next request before the wait.
static void run_perform_loop(struct state *st, long long deadline) {
    int running = 0;
    while (st->finished < st->total) {
        if (now_ms() > deadline) {
            note_timeout(st);
            break;
        }
        CURLMcode rc = curl_multi_perform(st->multi, &running);
        if (rc != CURLM_OK) {
            note_error(st, curl_multi_strerror(rc));
            break;
        }
        long before = st->finished;
        drain_done(st);
        // A finished transfer started the next one: perform again before
        // waiting, so its request goes out now.
        if (st->finished != before) continue;
        rc = curl_multi_poll(st->multi, NULL, 0, 1000, NULL);
        if (rc != CURLM_OK) {
            note_error(st, curl_multi_strerror(rc));
            break;
        }
    }
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("%s\n", curl_version());
        return 0;
    }
    struct state st;
    memset(&st, 0, sizeof st);
    parse_options(argc, argv, &st.opt);
    global_state = &st;
    if (st.opt.collect && st.opt.consume_rate > 0) {
        // A slow consumer reads a stream; a collected body has none (as data(for:)).
        print_result(&st, 0, 0, "a collected body cannot be read by a slow consumer");
        return 0;
    }
    if (st.opt.rate > 0 && !st.opt.reuse) {
        print_result(&st, 0, 0, "the open loop (W9) is the lean loop's: see rawcurl-reuse");
        return 0;
    }
    if (st.opt.reuse && (st.opt.collect || st.opt.perform)) usage_exit("--reuse is a loop of its own: no --collect or --perform");
    raise_fd_limit();
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) usage_exit("curl_global_init failed");

    st.total = (st.opt.rate > 0 ? st.opt.rate_warmup : st.opt.count_warmup) + st.opt.count;
    long slots = st.opt.concurrency < st.total ? st.opt.concurrency : st.total;
    if (st.opt.post_bytes > 0) {
        st.post_body = calloc(1, (size_t)st.opt.post_bytes);
        if (!st.post_body) usage_exit("out of memory for the POST body");
    }
    st.multi = curl_multi_init();
    st.epfd = epoll_create1(EPOLL_CLOEXEC);
    st.timer_deadline_ms = -1;
    if (!st.multi || st.epfd < 0) usage_exit("curl_multi_init or epoll_create1 failed");
    if (!st.opt.perform && !st.opt.reuse) {
        curl_multi_setopt(st.multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
        curl_multi_setopt(st.multi, CURLMOPT_SOCKETDATA, &st);
        curl_multi_setopt(st.multi, CURLMOPT_TIMERFUNCTION, timer_cb);
        curl_multi_setopt(st.multi, CURLMOPT_TIMERDATA, &st);
    }
    if (!st.opt.reuse) { // the lean loop sets no multi option (reuse_loop.c)
        curl_multi_setopt(st.multi, CURLMOPT_MAX_HOST_CONNECTIONS, st.opt.concurrency);
        curl_multi_setopt(st.multi, CURLMOPT_MAXCONNECTS, st.opt.concurrency);
    }

    // Baseline for W7's per-transfer memory: after global and multi setup,
    // before any per-request object (easy handle) exists.
    long rss_before = rss_kib();
    struct transfer *transfers = calloc((size_t)slots, sizeof *transfers);
    if (!transfers) usage_exit("out of memory for the transfers");
    for (long i = 0; i < slots; i++) {
        transfers[i].easy = curl_easy_init();
        if (!transfers[i].easy) usage_exit("curl_easy_init failed");
        if (st.opt.reuse) configure_reuse(&st, &transfers[i]);
        else configure(&st, &transfers[i]);
    }

    st.start_s = now_seconds();
    long long deadline = now_ms() + (long long)(st.opt.timeout_s * 1000.0);
    if (st.opt.rate > 0) {
        run_open_loop(&st, transfers, slots, deadline); // starts its own requests
    } else {
        for (long i = 0; i < slots; i++) start_next(&st, &transfers[i]);
        if (st.opt.reuse) run_reuse_loop(&st, deadline);
        else if (st.opt.perform) run_perform_loop(&st, deadline);
        else run_socket_loop(&st, deadline);
    }
    double elapsed = now_seconds() - st.start_s;
    print_result(&st, elapsed, rss_before, NULL); // flushes stdout
    // Ends at once, as every Swift client does (ClientResult.printAndExit):
    // teardown is not part of the workload, and peak RSS is read at the end.
    _exit((st.errors == 0 && st.ok == st.opt.count) ? 0 : 1);
}
