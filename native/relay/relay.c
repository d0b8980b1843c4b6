/*
 * freshfs-relay: `freshfs files|glob|find|grep|why` answered by the user's daemon without
 * starting Node (40-50 ms of every command, where this program takes about one).
 *
 * It finds the daemon's socket as Node's client does (src/client/protocol.ts: the runtime
 * directory, and a digest of the environment variables that change an answer), says hello
 * with this package's build id, and sends the request `cli`: the arguments, the working
 * directory and those variables. The daemon runs the command (src/cli/relay.ts) and answers
 * with its exit status and its output, as frames of stdout and stderr in the order written;
 * or `fallback`, having printed nothing. Whenever this program cannot be sure the daemon
 * answers as Node's `freshfs` would (no daemon, another build, a tree it does not keep live
 * yet, an argument or variable that is not UTF-8, anything unexpected on the wire), it runs
 * Node's `freshfs` (dist/cli/main.js) with the same arguments instead, before printing
 * anything. The daemon checks the environment again, so a digest computed wrongly here can
 * only cost that detour.
 *
 * Written in C with libc only, rather than in Rust or Node: it must start in about a
 * millisecond and be built offline by the compiler every Linux machine has.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef RELAY_SOURCE_DIGEST
#define RELAY_SOURCE_DIGEST "unknown"
#endif
/* Read by the test that checks the committed binary was built from this source. */
const char relay_source[] = "freshfs-relay-source:" RELAY_SOURCE_DIGEST;

/* As src/client/protocol.ts: CONNECT_TIMEOUT_MS, SILENCE_MS, MAX_MESSAGE_BYTES. */
#define CONNECT_TIMEOUT_MS 2000
#define SILENCE_MS 10000
#define MAX_MESSAGE_BYTES (256u * 1024u * 1024u)
#define PROTOCOL_VERSION 1

extern char **environ;

static char **args;
static int nargs;
static char package[PATH_MAX];

/* ---- running Node's freshfs instead ---------------------------------------------------- */

/* Runs `node <package>/dist/cli/main.js ARGS...`; never returns. */
static void run_node(void) {
    char main_js[PATH_MAX + 32];
    snprintf(main_js, sizeof main_js, "%s/dist/cli/main.js", package);
    char **argv = calloc((size_t)nargs + 2, sizeof *argv);
    if (!argv) _exit(2);
    argv[0] = "node";
    argv[1] = main_js;
    for (int i = 1; i < nargs; i++) argv[i + 1] = args[i];
    execvp("node", argv);
    fprintf(stderr, "freshfs: cannot run node (%s)\n", strerror(errno));
    _exit(2);
}

/* The daemon went silent: say so once, as Node's client does, and search in Node alone. */
static void run_node_without_daemon(const char *why) {
    fprintf(stderr,
            "freshfs: searching in this process, without the daemon (%s); --no-daemon or "
            "FRESHFS_DAEMON=0 says so without this warning\n",
            why);
    setenv("FRESHFS_DAEMON", "0", 1);
    run_node();
}

/* ---- growable buffers ---------------------------------------------------------------- */

struct buf {
    char *data;
    size_t len, cap;
};

static void put(struct buf *b, const char *data, size_t len) {
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + len + 1 > cap) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) run_node();
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = 0;
}

static void puts_(struct buf *b, const char *s) { put(b, s, strlen(s)); }

/* ---- UTF-8 and JSON ------------------------------------------------------------------ */

/*
 * Decodes strict UTF-8 into UTF-16 code units (what JavaScript's strings hold); returns the
 * number of units, or -1 when `s` is not UTF-8 (Node would have replaced bytes: run Node).
 */
static long utf16_units(const unsigned char *s, size_t len, uint16_t *out) {
    long n = 0;
    for (size_t i = 0; i < len;) {
        uint32_t c = s[i], need, min;
        if (c < 0x80) need = 0, min = 0;
        else if ((c & 0xe0) == 0xc0) need = 1, c &= 0x1f, min = 0x80;
        else if ((c & 0xf0) == 0xe0) need = 2, c &= 0x0f, min = 0x800;
        else if ((c & 0xf8) == 0xf0) need = 3, c &= 0x07, min = 0x10000;
        else return -1;
        if (need > 0 && i + need >= len) return -1;
        for (uint32_t k = 1; k <= need; k++) {
            if ((s[i + k] & 0xc0) != 0x80) return -1;
            c = (c << 6) | (s[i + k] & 0x3f);
        }
        if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return -1;
        i += need + 1;
        if (c >= 0x10000) {
            c -= 0x10000;
            if (out) out[n] = (uint16_t)(0xd800 + (c >> 10)), out[n + 1] = (uint16_t)(0xdc00 + (c & 0x3ff));
            n += 2;
        } else {
            if (out) out[n] = (uint16_t)c;
            n++;
        }
    }
    return n;
}

static int is_utf8(const char *s) { return utf16_units((const unsigned char *)s, strlen(s), NULL) >= 0; }

/* `s` as a JSON string, as JSON.stringify writes it (UTF-8 kept, controls escaped). */
static void json_string(struct buf *b, const char *s) {
    static const char hex[] = "0123456789abcdef";
    put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        char esc[7];
        if (c == '"') puts_(b, "\\\"");
        else if (c == '\\') puts_(b, "\\\\");
        else if (c == '\b') puts_(b, "\\b");
        else if (c == '\f') puts_(b, "\\f");
        else if (c == '\n') puts_(b, "\\n");
        else if (c == '\r') puts_(b, "\\r");
        else if (c == '\t') puts_(b, "\\t");
        else if (c < 0x20) {
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4], esc[5] = hex[c & 15], esc[6] = 0;
            puts_(b, esc);
        } else put(b, (const char *)p, 1);
    }
    put(b, "\"", 1);
}

/* ---- the socket's path ---------------------------------------------------------------- */

/* As answeringEnvironment in src/client/protocol.ts. */
static int answering(const char *name, size_t len) {
#define IS(lit) (len == sizeof lit - 1 && memcmp(name, lit, len) == 0)
#define STARTS(lit) (len >= sizeof lit - 1 && memcmp(name, lit, sizeof lit - 1) == 0)
    if (IS("HOME") || IS("XDG_CONFIG_HOME") || STARTS("GIT_") || STARTS("FS_")) return 1;
    if (STARTS("FRESHFS_")) return !IS("FRESHFS_DAEMON") && !IS("FRESHFS_DAEMON_IDLE_MS") && !IS("FRESHFS_SESSION");
    return 0;
#undef IS
#undef STARTS
}

static int by_name(const void *a, const void *b) {
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    size_t lx = strcspn(x, "="), ly = strcspn(y, "=");
    int c = memcmp(x, y, lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

/* The variables that change an answer, sorted by name; NULL-terminated. */
static char **answering_environment(size_t *count) {
    size_t n = 0, total = 0;
    for (char **e = environ; *e; e++) total++;
    char **vars = calloc(total + 1, sizeof *vars);
    if (!vars) run_node();
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || eq == *e || !answering(*e, (size_t)(eq - *e))) continue;
        vars[n++] = *e;
    }
    qsort(vars, n, sizeof *vars, by_name);
    for (size_t i = 0; i < n; i++) {
        /* A name twice, or not ASCII (JavaScript's sort order is not bytes' then): Node. */
        if (i > 0 && by_name(&vars[i - 1], &vars[i]) == 0) run_node();
        for (const char *p = vars[i]; *p != '='; p++) if ((unsigned char)*p >= 0x80) run_node();
        if (!is_utf8(vars[i])) run_node();
    }
    *count = n;
    return vars;
}

/* The 12 hex digits Node's client names the socket by: FNV-1a lanes over UTF-16 units. */
static void environment_digest(char **vars, size_t n, char out[13]) {
    struct buf text = {0};
    put(&text, "[", 1);
    for (size_t i = 0; i < n; i++) {
        const char *eq = strchr(vars[i], '=');
        char *name = strndup(vars[i], (size_t)(eq - vars[i]));
        if (!name) run_node();
        puts_(&text, i ? ",[" : "[");
        json_string(&text, name);
        put(&text, ",", 1);
        json_string(&text, eq + 1);
        put(&text, "]", 1);
        free(name);
    }
    put(&text, "]", 1);
    uint16_t *units = malloc((text.len + 1) * sizeof *units);
    if (!units) run_node();
    long count = utf16_units((const unsigned char *)text.data, text.len, units);
    if (count < 0) run_node();
    uint32_t a = 0x811c9dc5u, b = 0x01000193u;
    for (long i = 0; i < count; i++) {
        a = (a ^ units[i]) * 0x01000193u;
        b = (b ^ units[i]) * 0x5bd1e995u;
    }
    char full[17];
    snprintf(full, sizeof full, "%08x%08x", a, b);
    memcpy(out, full, 12);
    out[12] = 0;
    free(units);
    free(text.data);
}

/* Whether `p` ends with `tail`. */
static int ends_with(const char *p, const char *tail) {
    size_t n = strlen(p), m = strlen(tail);
    return n >= m && !strcmp(p + n - m, tail);
}

/* An absolute path Node's path.join leaves as it is (else: Node, which normalizes it). */
static int plain_absolute(const char *p) {
    if (p[0] != '/' || !strcmp(p, "/")) return 0;
    if (strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../")) return 0;
    return !ends_with(p, "/") && !ends_with(p, "/.") && !ends_with(p, "/..");
}

/* As runtimeDirPath in src/io/runtime-dir.ts. */
static void runtime_dir(char *out, size_t size) {
    const char *own = getenv("FRESHFS_RUNTIME_DIR");
    if (own && own[0] == '/') {
        snprintf(out, size, "%s", own);
        return;
    }
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (xdg && xdg[0] == '/') {
        if (!plain_absolute(xdg)) run_node();
        snprintf(out, size, "%s/freshfs", xdg);
        return;
    }
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = getenv("TMP");
    if (!tmp || !*tmp) tmp = getenv("TEMP");
    if (!tmp || !*tmp) tmp = "/tmp";
    char trimmed[PATH_MAX];
    snprintf(trimmed, sizeof trimmed, "%s", tmp);
    size_t len = strlen(trimmed);
    if (len > 1 && trimmed[len - 1] == '/') trimmed[len - 1] = 0;
    if (!plain_absolute(trimmed)) run_node();
    snprintf(out, size, "%s/freshfs-%u", trimmed, (unsigned)getuid());
}

/* As ensurePrivateDir: a directory of this user's that no one else may enter. */
static int private_dir(const char *dir) {
    struct stat st;
    if (lstat(dir, &st) != 0) return 0;
    return S_ISDIR(st.st_mode) && st.st_uid == getuid() && (st.st_mode & 077) == 0;
}

/* ---- this package --------------------------------------------------------------------- */

/* <package>/prebuilds/linux-x64/freshfs-relay: the package is three levels up. */
static void find_package(void) {
    ssize_t n = readlink("/proc/self/exe", package, sizeof package - 1);
    if (n <= 0) {
        fprintf(stderr, "freshfs: cannot find its own package (/proc/self/exe)\n");
        _exit(2);
    }
    package[n] = 0;
    for (int up = 0; up < 3; up++) {
        char *slash = strrchr(package, '/');
        if (!slash || slash == package) {
            fprintf(stderr, "freshfs: the relay is not inside its package (%s)\n", package);
            _exit(2);
        }
        *slash = 0;
    }
}

/* dist/build.json's `build`: what `npm run build` stamps; a daemon of another one is not used. */
static char *build_id(void) {
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/dist/build.json", package);
    FILE *f = fopen(path, "r");
    if (!f) run_node();
    char text[512];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    const char *key = strstr(text, "\"build\":\"");
    if (!key) run_node();
    key += 9;
    const char *end = strchr(key, '"');
    if (!end || memchr(key, '\\', (size_t)(end - key))) run_node();
    return strndup(key, (size_t)(end - key));
}

/* ---- the wire -------------------------------------------------------------------------- */

static int connect_to(const char *path) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path) run_node();
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) run_node();
    /* A hung daemon's full backlog blocks connect(2) on a Unix socket for as long as the send
       timeout allows: CONNECT_TIMEOUT_MS, as Node's client waits. */
    struct timeval bound = {.tv_sec = CONNECT_TIMEOUT_MS / 1000, .tv_usec = (CONNECT_TIMEOUT_MS % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        /* No daemon (or a stale socket): Node's freshfs answers itself and starts one. */
        run_node();
    }
    return fd;
}

static void send_all(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) run_node();
        data += n;
        len -= (size_t)n;
    }
}

struct reader {
    int fd;
    struct buf in;
    size_t start;
};

/* The next line (its newline replaced by NUL), waiting at most `timeout_ms` for each read. */
static char *next_line(struct reader *r, int timeout_ms, const char *silent) {
    for (;;) {
        char *nl = r->in.len > r->start ? memchr(r->in.data + r->start, '\n', r->in.len - r->start) : NULL;
        if (nl) {
            char *line = r->in.data + r->start;
            *nl = 0;
            r->start = (size_t)(nl - r->in.data) + 1;
            return line;
        }
        if (r->start > 0) {
            memmove(r->in.data, r->in.data + r->start, r->in.len - r->start);
            r->in.len -= r->start;
            r->start = 0;
        }
        if (r->in.len > MAX_MESSAGE_BYTES) run_node();
        struct pollfd p = {.fd = r->fd, .events = POLLIN};
        int ready = poll(&p, 1, timeout_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) {
            if (silent) run_node_without_daemon(silent);
            run_node();
        }
        char chunk[65536];
        ssize_t n = read(r->fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        /* Closed mid-call (the daemon died): Node's freshfs does the call. */
        if (n <= 0) run_node();
        put(&r->in, chunk, (size_t)n);
    }
}

static int base64_value(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Decodes base64 in place; returns its length, or -1 when it is not base64. */
static long base64_decode(char *text, size_t len) {
    unsigned char *out = (unsigned char *)text;
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '=') break;
        int v = base64_value((unsigned char)text[i]);
        if (v < 0) return -1;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (unsigned char)(acc >> bits);
        }
    }
    return (long)n;
}

static void write_out(int fd, const char *data, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR) continue;
        /* `freshfs grep x | head -1`: the reader has all it wants; stop quietly, as rg does. */
        if (n < 0 && errno == EPIPE) _exit(0);
        if (n <= 0) _exit(2);
        data += n;
        len -= (size_t)n;
    }
}

/*
 * The answer `{"id":1,"result":{"exit":N,"frames":"..."}}`: the frames written out, in order,
 * then exit N. Anything else (`fallback`, an error, a shape not known here): Node.
 */
static void finish(char *line) {
    static const char head[] = "{\"id\":1,\"result\":{\"exit\":";
    if (strncmp(line, head, sizeof head - 1) != 0) run_node();
    char *p = line + sizeof head - 1, *end;
    long status = strtol(p, &end, 10);
    if (end == p || status < 0 || status > 125) run_node();
    static const char frames_key[] = ",\"frames\":\"";
    if (strncmp(end, frames_key, sizeof frames_key - 1) != 0) run_node();
    char *b64 = end + sizeof frames_key - 1;
    char *close = strchr(b64, '"');
    if (!close || strcmp(close, "\"}}") != 0) run_node();
    long len = base64_decode(b64, (size_t)(close - b64));
    if (len < 0) run_node();
    /* Checked whole before a byte is written: a frame cut short would print half an answer. */
    for (long at = 0; at < len;) {
        if (len - at < 5) run_node();
        uint32_t size = (uint32_t)(unsigned char)b64[at + 1] | (uint32_t)(unsigned char)b64[at + 2] << 8 |
                        (uint32_t)(unsigned char)b64[at + 3] << 16 | (uint32_t)(unsigned char)b64[at + 4] << 24;
        if ((b64[at] != 1 && b64[at] != 2) || size > (uint32_t)(len - at - 5)) run_node();
        at += 5 + (long)size;
    }
    signal(SIGPIPE, SIG_IGN);
    for (long at = 0; at < len;) {
        uint32_t size = (uint32_t)(unsigned char)b64[at + 1] | (uint32_t)(unsigned char)b64[at + 2] << 8 |
                        (uint32_t)(unsigned char)b64[at + 3] << 16 | (uint32_t)(unsigned char)b64[at + 4] << 24;
        write_out(b64[at] == 1 ? STDOUT_FILENO : STDERR_FILENO, b64 + at + 5, size);
        at += 5 + (long)size;
    }
    exit((int)status);
}

/* ---- the command ---------------------------------------------------------------------- */

static int relayed(const char *command) {
    static const char *const commands[] = {"files", "glob", "find", "grep", "why"};
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
        if (!strcmp(command, commands[i])) return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    args = argv;
    nargs = argc;
    find_package();
    const char *wanted = getenv("FRESHFS_DAEMON");
    if (argc < 2 || !relayed(argv[1])) run_node();
    if (wanted && (!strcmp(wanted, "0") || !strcmp(wanted, "off") || !strcmp(wanted, "false"))) run_node();
    for (int i = 1; i < argc; i++) {
        if (!is_utf8(argv[i]) || !strcmp(argv[i], "--no-daemon")) run_node();
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd) || !is_utf8(cwd)) run_node();

    size_t nvars;
    char **vars = answering_environment(&nvars);
    char digest[13], dir[PATH_MAX], socket_path[PATH_MAX + 64];
    environment_digest(vars, nvars, digest);
    runtime_dir(dir, sizeof dir);
    if (!private_dir(dir)) run_node();
    snprintf(socket_path, sizeof socket_path, "%s/daemon-%s.sock", dir, digest);

    struct buf out = {0};
    char *build = build_id();
    puts_(&out, "{\"id\":0,\"method\":\"hello\",\"params\":{\"protocol\":");
    char number[16];
    snprintf(number, sizeof number, "%d", PROTOCOL_VERSION);
    puts_(&out, number);
    puts_(&out, ",\"build\":");
    json_string(&out, build);
    puts_(&out, "}}\n{\"id\":1,\"method\":\"cli\",\"params\":{\"argv\":[");
    for (int i = 1; i < argc; i++) {
        if (i > 1) put(&out, ",", 1);
        json_string(&out, argv[i]);
    }
    puts_(&out, "],\"cwd\":");
    json_string(&out, cwd);
    puts_(&out, ",\"env\":{");
    for (size_t i = 0; i < nvars; i++) {
        const char *eq = strchr(vars[i], '=');
        char *name = strndup(vars[i], (size_t)(eq - vars[i]));
        if (!name) run_node();
        if (i > 0) put(&out, ",", 1);
        json_string(&out, name);
        put(&out, ":", 1);
        json_string(&out, eq + 1);
        free(name);
    }
    puts_(&out, "}}}\n");

    int fd = connect_to(socket_path);
    send_all(fd, out.data, out.len);
    struct reader r = {.fd = fd};
    /* The hello's answer: another build's daemon says VERSION_MISMATCH (Node replaces it). */
    char *line = next_line(&r, CONNECT_TIMEOUT_MS, NULL);
    if (strncmp(line, "{\"id\":0,\"result\":", 17) != 0) run_node();
    for (;;) {
        char silent[64];
        snprintf(silent, sizeof silent, "the daemon said nothing for %d ms", SILENCE_MS);
        line = next_line(&r, SILENCE_MS, silent);
        /* Heartbeats and progress of the request: it runs. */
        if (!strncmp(line, "{\"id\":1,\"alive\":", 16) || !strncmp(line, "{\"id\":1,\"progress\":", 19)) continue;
        finish(line);
    }
}
