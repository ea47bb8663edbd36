/* imgcheck-verifier: run inside a container image, load the image's libibverbs the way NCCL does and
 * report, as one JSON document on stdout, what really happens on this node.
 *
 * Built on the host by imgcheck (src/imgcheck/verify/build.py) and carried into the container on a
 * read-only bind mount, so it must need nothing the image may lack: it links only libc (dl* are
 * bound to their oldest symbol versions, so the image's glibc can be older than the host's), has no
 * C runtime start files (its own _start, so no __libc_start_main@GLIBC_2.34), and declares only the
 * verbs/CUDA functions it calls (vf_verbs.h, vf_cuda.h). Progress lines go to stderr so a crash can
 * be placed; everything libibverbs prints while we work is captured and reported as "warnings".
 *
 * Environment: IMGCHECK_VERIFY_GPU=0 skips the CUDA part; IMGCHECK_VERIFY_MR_BYTES sets the buffer
 * size (default 4 MiB, NCCL's DEFAULT_BUFFSIZE: what it registers per connection for the Simple protocol);
 * IMGCHECK_VERIFY_BAR1_BYTES sets the GPU memory registered in NCCL-sized chunks until the driver
 * refuses (default 1 GiB, more than the 256 MiB BAR1 of small-BAR GPUs; 0 skips it). IBV_SHOW_WARNINGS=1
 * is set unless already set, so libibverbs explains provider load failures.
 *
 * As NCCL does (net_ib/init.cc ncclIbInit), ibv_fork_init() is called before the device list, so every
 * registration below goes through libibverbs' fork protection exactly as NCCL's do. The memlock probe
 * runs last, with CAP_IPC_LOCK dropped from the effective set (it bypasses RLIMIT_MEMLOCK in ib_umem_get),
 * as the image's user the runtime started us as. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "vf_cuda.h"
#include "vf_verbs.h"

#define VF_SCHEMA_VERSION 1
#define VF_VERSION "1"

/* glibc 2.34 moved dl* into libc.so.6 under new versions; the old ones stay as compat symbols.
 * Bind to the old ones so the binary runs on bullseye's 2.31 (and RHEL 8's 2.28). */
#if defined(__x86_64__)
#define VF_GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define VF_GLIBC_BASE "GLIBC_2.17"
#endif
#ifdef VF_GLIBC_BASE
__asm__(".symver dlopen,dlopen@" VF_GLIBC_BASE);
__asm__(".symver dlsym,dlsym@" VF_GLIBC_BASE);
__asm__(".symver dlvsym,dlvsym@" VF_GLIBC_BASE);
__asm__(".symver dlerror,dlerror@" VF_GLIBC_BASE);
__asm__(".symver dlclose,dlclose@" VF_GLIBC_BASE);
__asm__(".symver dladdr,dladdr@" VF_GLIBC_BASE);
#endif

/* ---------------------------------------------------------------- JSON writer (stdout) */

static FILE *out;
static int j_depth;
static int j_comma[64];
static int j_after_key;

static void j_pre(void) {
    if (j_after_key) {
        j_after_key = 0;
        return;
    }
    if (j_comma[j_depth]) fputc(',', out);
    j_comma[j_depth] = 1;
}

static void j_escape(const char *s) {
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", out);
        else if (*p == '\t') fputs("\\t", out);
        else if (*p < 0x20 || *p >= 0x7f) fprintf(out, "\\u%04x", *p); /* bytes, not UTF-8: keep it ASCII */
        else fputc(*p, out);
    }
    fputc('"', out);
}

static void j_open(char c) {
    j_pre();
    fputc(c, out);
    j_comma[++j_depth] = 0;
}
static void j_close(char c) {
    j_depth--;
    fputc(c, out);
}
static void j_key(const char *k) {
    j_pre();
    j_escape(k);
    fputc(':', out);
    j_after_key = 1;
}
static void j_str(const char *s) {
    j_pre();
    if (s) j_escape(s);
    else fputs("null", out);
}
static void j_int(long long v) {
    j_pre();
    fprintf(out, "%lld", v);
}
static void j_bool(int v) {
    j_pre();
    fputs(v ? "true" : "false", out);
}
static void j_null(void) {
    j_pre();
    fputs("null", out);
}
static void kv_str(const char *k, const char *v) { j_key(k); j_str(v); }
static void kv_int(const char *k, long long v) { j_key(k); j_int(v); }
static void kv_bool(const char *k, int v) { j_key(k); j_bool(v); }

/* ---------------------------------------------------------------- errno names */

static const char *errno_name(int e) {
    switch (e) {
    case 0: return NULL;
    case EPERM: return "EPERM";
    case ENOENT: return "ENOENT";
    case ESRCH: return "ESRCH";
    case EINTR: return "EINTR";
    case EIO: return "EIO";
    case ENXIO: return "ENXIO";
    case E2BIG: return "E2BIG";
    case EBADF: return "EBADF";
    case EAGAIN: return "EAGAIN";
    case ENOMEM: return "ENOMEM";
    case EACCES: return "EACCES";
    case EFAULT: return "EFAULT";
    case EBUSY: return "EBUSY";
    case EEXIST: return "EEXIST";
    case EXDEV: return "EXDEV";
    case ENODEV: return "ENODEV";
    case ENOTDIR: return "ENOTDIR";
    case EISDIR: return "EISDIR";
    case EINVAL: return "EINVAL";
    case ENFILE: return "ENFILE";
    case EMFILE: return "EMFILE";
    case ENOTTY: return "ENOTTY";
    case EFBIG: return "EFBIG";
    case ENOSPC: return "ENOSPC";
    case EROFS: return "EROFS";
    case EPIPE: return "EPIPE";
    case ERANGE: return "ERANGE";
    case EDEADLK: return "EDEADLK";
    case ENAMETOOLONG: return "ENAMETOOLONG";
    case ENOSYS: return "ENOSYS";
    case ENODATA: return "ENODATA";
    case ETIME: return "ETIME";
    case EPROTO: return "EPROTO";
    case EBADMSG: return "EBADMSG";
    case EOVERFLOW: return "EOVERFLOW";
    case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
    case EOPNOTSUPP: return "EOPNOTSUPP"; /* == ENOTSUP on Linux */
    case EAFNOSUPPORT: return "EAFNOSUPPORT";
    case EADDRNOTAVAIL: return "EADDRNOTAVAIL";
    case ENETDOWN: return "ENETDOWN";
    case ENETUNREACH: return "ENETUNREACH";
    case ENOBUFS: return "ENOBUFS";
    case ENOTCONN: return "ENOTCONN";
    case ETIMEDOUT: return "ETIMEDOUT";
    case ECONNREFUSED: return "ECONNREFUSED";
    case EHOSTUNREACH: return "EHOSTUNREACH";
    case ECANCELED: return "ECANCELED";
    case EOWNERDEAD: return "EOWNERDEAD";
    case ENOTRECOVERABLE: return "ENOTRECOVERABLE";
    default: return "EUNKNOWN";
    }
}

/* {"ok": false, "errno": 22, "errno_name": "EINVAL", "message": "Invalid argument"} fields */
static void kv_errno(int e) {
    kv_int("errno", e);
    kv_str("errno_name", errno_name(e));
    kv_str("message", e ? strerror(e) : NULL);
}

/* ---------------------------------------------------------------- stderr capture */

/* libibverbs prints its warnings with fprintf(stderr). fd 2 is pointed at a pipe while we work and
 * drained after every step into `captured`; progress lines go to the saved real stderr. */
static int cap_rd = -1, real_err = -1;
static char captured[65536];
static size_t captured_len;

static void capture_start(void) {
    int fds[2];
    fflush(stderr);
    real_err = dup(2);
    if (real_err < 0 || pipe(fds) != 0) return;
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    fcntl(fds[1], F_SETFL, O_NONBLOCK); /* a full pipe drops text instead of hanging us */
    dup2(fds[1], 2);
    close(fds[1]);
    cap_rd = fds[0];
}

static void capture_drain(void) {
    if (cap_rd < 0) return;
    fflush(stderr);
    for (;;) {
        char buf[4096];
        ssize_t n = read(cap_rd, buf, sizeof buf);
        if (n <= 0) break;
        size_t room = sizeof captured - 1 - captured_len;
        size_t take = (size_t)n < room ? (size_t)n : room;
        memcpy(captured + captured_len, buf, take);
        captured_len += take;
    }
    captured[captured_len] = 0;
}

static void progress(const char *fmt, ...) {
    int fd = real_err >= 0 ? real_err : 2;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    if (write(fd, "imgcheck-verifier: ", 19) < 0 || write(fd, line, (size_t)n) < 0) return;
}

/* ---------------------------------------------------------------- small helpers */

static int read_small_file(const char *path, char *buf, size_t size) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0) return -1;
    buf[n] = 0;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = 0;
    return 0;
}

static void kv_dir_entries(const char *key, const char *path) {
    j_key(key);
    DIR *d = opendir(path);
    if (!d) {
        j_null();
        return;
    }
    j_open('[');
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        j_str(e->d_name);
    }
    closedir(d);
    j_close(']');
}

/* ---------------------------------------------------------------- libibverbs */

struct verbs {
    void *handle;
    char real_path[PATH_MAX];
    char dir[PATH_MAX];
    int pabi; /* N of IBVERBS_PRIVATE_N exported by this libibverbs, -1 if none found */
    vf_ibv_get_device_list_fn get_device_list;
    vf_ibv_free_device_list_fn free_device_list;
    vf_ibv_get_device_name_fn get_device_name;
    vf_ibv_open_device_fn open_device;
    vf_ibv_close_device_fn close_device;
    vf_ibv_alloc_pd_fn alloc_pd;
    vf_ibv_dealloc_pd_fn dealloc_pd;
    vf_ibv_reg_mr_fn reg_mr;
    vf_ibv_reg_mr_iova2_fn reg_mr_iova2;
    vf_ibv_reg_dmabuf_mr_fn reg_dmabuf_mr;
    vf_ibv_dereg_mr_fn dereg_mr;
    int (*fork_init)(void);
    int (*is_fork_initialized)(void);
    void *mlx5_handle;
    vf_mlx5dv_reg_dmabuf_mr_fn mlx5dv_reg_dmabuf_mr;
    vf_mlx5dv_get_data_direct_sysfs_path_fn mlx5dv_get_data_direct_sysfs_path;
};

struct wanted_symbol {
    const char *name;
    const char *version;
    int required; /* NCCL fails to use libibverbs without it (LOAD_SYM); else optional (LOAD_SYM_VERSION) */
};

/* NCCL src/misc/ibvsymbols.cc, buildIbvSymbols(): LOAD_SYM(...) at "IBVERBS_1.1" and the optional
 * LOAD_SYM_VERSION(...) look-ups; ECE at IBVERBS_1.10 as in NCCL's ECE support. */
static const struct wanted_symbol wanted[] = {
    {"ibv_get_device_list", "IBVERBS_1.1", 1},
    {"ibv_free_device_list", "IBVERBS_1.1", 1},
    {"ibv_get_device_name", "IBVERBS_1.1", 1},
    {"ibv_open_device", "IBVERBS_1.1", 1},
    {"ibv_close_device", "IBVERBS_1.1", 1},
    {"ibv_get_async_event", "IBVERBS_1.1", 1},
    {"ibv_ack_async_event", "IBVERBS_1.1", 1},
    {"ibv_query_device", "IBVERBS_1.1", 1},
    {"ibv_query_port", "IBVERBS_1.1", 1},
    {"ibv_query_gid", "IBVERBS_1.1", 1},
    {"ibv_query_qp", "IBVERBS_1.1", 1},
    {"ibv_alloc_pd", "IBVERBS_1.1", 1},
    {"ibv_dealloc_pd", "IBVERBS_1.1", 1},
    {"ibv_reg_mr", "IBVERBS_1.1", 1},
    {"ibv_dereg_mr", "IBVERBS_1.1", 1},
    {"ibv_create_cq", "IBVERBS_1.1", 1},
    {"ibv_destroy_cq", "IBVERBS_1.1", 1},
    {"ibv_create_qp", "IBVERBS_1.1", 1},
    {"ibv_modify_qp", "IBVERBS_1.1", 1},
    {"ibv_destroy_qp", "IBVERBS_1.1", 1},
    {"ibv_fork_init", "IBVERBS_1.1", 1},
    {"ibv_event_type_str", "IBVERBS_1.1", 1},
    {"ibv_reg_mr_iova2", "IBVERBS_1.8", 0},
    {"ibv_query_ece", "IBVERBS_1.10", 0},
    {"ibv_set_ece", "IBVERBS_1.10", 0},
    {"ibv_reg_dmabuf_mr", "IBVERBS_1.12", 0},
};

static void *sym(struct verbs *v, const char *name, const char *version) {
    dlerror();
    return dlvsym(v->handle, name, version);
}

/* NCCL: dlopen("libibverbs.so", RTLD_NOW), then dlopen("libibverbs.so.1", RTLD_NOW). */
static int open_verbs(struct verbs *v) {
    static const char *names[] = {"libibverbs.so", "libibverbs.so.1"};
    const char *opened = NULL;
    j_key("libibverbs");
    j_open('{');
    j_key("tried");
    j_open('[');
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !v->handle; i++) {
        progress("dlopen %s", names[i]);
        dlerror();
        v->handle = dlopen(names[i], RTLD_NOW);
        j_open('{');
        kv_str("name", names[i]);
        kv_bool("ok", v->handle != NULL);
        kv_str("error", v->handle ? NULL : dlerror());
        j_close('}');
        if (v->handle) opened = names[i];
    }
    j_close(']');
    capture_drain();
    kv_str("opened", opened);
    if (!v->handle) {
        j_close('}');
        return -1;
    }
    v->get_device_list = (vf_ibv_get_device_list_fn)sym(v, "ibv_get_device_list", "IBVERBS_1.1");
    v->free_device_list = (vf_ibv_free_device_list_fn)sym(v, "ibv_free_device_list", "IBVERBS_1.1");
    v->get_device_name = (vf_ibv_get_device_name_fn)sym(v, "ibv_get_device_name", "IBVERBS_1.1");
    v->open_device = (vf_ibv_open_device_fn)sym(v, "ibv_open_device", "IBVERBS_1.1");
    v->close_device = (vf_ibv_close_device_fn)sym(v, "ibv_close_device", "IBVERBS_1.1");
    v->alloc_pd = (vf_ibv_alloc_pd_fn)sym(v, "ibv_alloc_pd", "IBVERBS_1.1");
    v->dealloc_pd = (vf_ibv_dealloc_pd_fn)sym(v, "ibv_dealloc_pd", "IBVERBS_1.1");
    v->reg_mr = (vf_ibv_reg_mr_fn)sym(v, "ibv_reg_mr", "IBVERBS_1.1");
    v->reg_mr_iova2 = (vf_ibv_reg_mr_iova2_fn)sym(v, "ibv_reg_mr_iova2", "IBVERBS_1.8");
    v->reg_dmabuf_mr = (vf_ibv_reg_dmabuf_mr_fn)sym(v, "ibv_reg_dmabuf_mr", "IBVERBS_1.12");
    v->dereg_mr = (vf_ibv_dereg_mr_fn)sym(v, "ibv_dereg_mr", "IBVERBS_1.1");
    v->fork_init = (int (*)(void))sym(v, "ibv_fork_init", "IBVERBS_1.1");
    /* rdma-core >= 35: IBV_FORK_DISABLED 0, IBV_FORK_ENABLED 1, IBV_FORK_UNNEEDED 2 (kernel copy-on-fork) */
    v->is_fork_initialized = (int (*)(void))sym(v, "ibv_is_fork_initialized", "IBVERBS_1.13");

    /* Which file did the loader pick? Its name carries the rdma-core version (libibverbs.so.1.A.V). */
    Dl_info info;
    void *anchor = v->get_device_list ? (void *)v->get_device_list : dlsym(v->handle, "ibv_get_device_list");
    v->real_path[0] = v->dir[0] = 0;
    if (anchor && dladdr(anchor, &info) && info.dli_fname) {
        kv_str("path", info.dli_fname);
        if (realpath(info.dli_fname, v->real_path)) {
            kv_str("real_path", v->real_path);
            snprintf(v->dir, sizeof v->dir, "%s", v->real_path);
            char *slash = strrchr(v->dir, '/');
            if (slash) *slash = 0;
        }
    }

    /* The private ABI the providers must bind to: verbs_register_driver_N@IBVERBS_PRIVATE_N. */
    v->pabi = -1;
    for (int n = 1; n < 200 && v->pabi < 0; n++) {
        char name[64], version[64];
        snprintf(name, sizeof name, "verbs_register_driver_%d", n);
        snprintf(version, sizeof version, "IBVERBS_PRIVATE_%d", n);
        if (sym(v, name, version)) v->pabi = n;
    }
    j_key("private_abi");
    if (v->pabi >= 0) j_int(v->pabi);
    else j_null();
    j_close('}');

    j_key("symbols");
    j_open('[');
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
        void *p = sym(v, wanted[i].name, wanted[i].version);
        j_open('{');
        kv_str("name", wanted[i].name);
        kv_str("version", wanted[i].version);
        kv_bool("required_by_nccl", wanted[i].required);
        kv_bool("found", p != NULL);
        j_close('}');
    }
    j_close(']');
    return 0;
}

/* Every provider named by a /etc/libibverbs.d/NAME.driver file, dlopen'ed RTLD_NOW like libibverbs does,
 * plus provider files in <libdir>/libibverbs/ built for another private ABI (a mixed install). */
static void check_providers(struct verbs *v) {
    j_key("providers");
    j_open('{');
    kv_str("config_dir", "/etc/libibverbs.d");
    char provider_dir[PATH_MAX + 16];
    snprintf(provider_dir, sizeof provider_dir, "%s/libibverbs", v->dir);
    kv_str("provider_dir", v->dir[0] ? provider_dir : NULL);
    j_key("drivers");
    j_open('[');
    DIR *d = opendir("/etc/libibverbs.d");
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t len = strlen(e->d_name);
            if (len < 8 || strcmp(e->d_name + len - 7, ".driver") != 0) continue;
            char path[PATH_MAX], text[1024], name[256] = "";
            snprintf(path, sizeof path, "/etc/libibverbs.d/%s", e->d_name);
            if (read_small_file(path, text, sizeof text) == 0) sscanf(text, "driver %255s", name);
            j_open('{');
            kv_str("driver_file", path);
            kv_str("name", name[0] ? name : NULL);
            if (name[0] && v->dir[0] && v->pabi >= 0) {
                char lib[PATH_MAX * 2];
                if (name[0] == '/') snprintf(lib, sizeof lib, "%s-rdmav%d.so", name, v->pabi);
                else snprintf(lib, sizeof lib, "%s/lib%s-rdmav%d.so", provider_dir, name, v->pabi);
                kv_str("library", lib);
                int exists = access(lib, F_OK) == 0;
                kv_bool("exists", exists);
                if (exists) {
                    progress("dlopen provider %s", lib);
                    dlerror();
                    void *h = dlopen(lib, RTLD_NOW);
                    kv_bool("loaded", h != NULL);
                    kv_str("error", h ? NULL : dlerror());
                } else {
                    kv_bool("loaded", 0);
                    kv_str("error", "no such file");
                }
            }
            j_close('}');
            capture_drain();
        }
        closedir(d);
    }
    j_close(']');
    /* Provider files for another private ABI than this libibverbs exports. */
    j_key("other_abi_files");
    j_open('[');
    d = v->dir[0] ? opendir(provider_dir) : NULL;
    if (d) {
        struct dirent *e;
        char suffix[32];
        snprintf(suffix, sizeof suffix, "-rdmav%d.so", v->pabi);
        while ((e = readdir(d)) != NULL) {
            const char *p = strstr(e->d_name, "-rdmav");
            if (!p || strcmp(e->d_name + strlen(e->d_name) - 3, ".so") != 0) continue;
            if (strcmp(p, suffix) != 0) j_str(e->d_name);
        }
        closedir(d);
    }
    j_close(']');
    j_close('}');
}

/* ---------------------------------------------------------------- registration */

struct access_case {
    const char *label;
    const char *call; /* ibv_reg_mr | ibv_reg_mr_iova2 */
    unsigned int flags;
    const char *why;
};

#define NCCL_BASE (VF_IBV_ACCESS_LOCAL_WRITE | VF_IBV_ACCESS_REMOTE_WRITE | VF_IBV_ACCESS_REMOTE_READ)

/* NCCL's net/IB data MRs: base flags; + RELAXED_ORDERING through ibv_reg_mr_iova2 when
 * NCCL_IB_PCI_RELAXED_ORDERING is 1/2 and the symbol exists; + REMOTE_ATOMIC from NCCL 2.28.7. */
static const struct access_case host_cases[] = {
    {"base", "ibv_reg_mr", NCCL_BASE, "NCCL with relaxed ordering off, and its control buffers"},
    {"base", "ibv_reg_mr_iova2", NCCL_BASE, "ibv_reg_mr_iova2 without optional flags"},
    {"base+ro", "ibv_reg_mr_iova2", NCCL_BASE | VF_IBV_ACCESS_RELAXED_ORDERING,
     "NCCL >= 2.12.7 default (NCCL_IB_PCI_RELAXED_ORDERING=2)"},
    {"base+atomic+ro", "ibv_reg_mr_iova2",
     NCCL_BASE | VF_IBV_ACCESS_REMOTE_ATOMIC | VF_IBV_ACCESS_RELAXED_ORDERING, "NCCL >= 2.28.7 data MRs"},
};

static void flag_names(unsigned int flags, char *buf, size_t size) {
    buf[0] = 0;
    static const struct { unsigned int bit; const char *name; } names[] = {
        {VF_IBV_ACCESS_LOCAL_WRITE, "LOCAL_WRITE"},   {VF_IBV_ACCESS_REMOTE_WRITE, "REMOTE_WRITE"},
        {VF_IBV_ACCESS_REMOTE_READ, "REMOTE_READ"},   {VF_IBV_ACCESS_REMOTE_ATOMIC, "REMOTE_ATOMIC"},
        {VF_IBV_ACCESS_RELAXED_ORDERING, "RELAXED_ORDERING"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!(flags & names[i].bit)) continue;
        if (buf[0]) strncat(buf, "|", size - strlen(buf) - 1);
        strncat(buf, names[i].name, size - strlen(buf) - 1);
    }
}

/* One registration attempt as a JSON object; the MR is deregistered at once. */
static void try_reg(struct verbs *v, struct ibv_pd *pd, const char *memory, const char *label, const char *call,
                    void *addr, size_t len, unsigned int flags, int dmabuf_fd, const char *why) {
    struct ibv_mr *mr = NULL;
    int available = 1;
    errno = 0;
    if (strcmp(call, "ibv_reg_mr") == 0) {
        if (v->reg_mr) mr = v->reg_mr(pd, addr, len, (int)flags);
        else available = 0;
    } else if (strcmp(call, "ibv_reg_mr_iova2") == 0) {
        if (v->reg_mr_iova2) mr = v->reg_mr_iova2(pd, addr, len, (uint64_t)(uintptr_t)addr, flags);
        else available = 0;
    } else if (strcmp(call, "mlx5dv_reg_dmabuf_mr") == 0) {
        if (v->mlx5dv_reg_dmabuf_mr)
            mr = v->mlx5dv_reg_dmabuf_mr(pd, 0, len, (uint64_t)(uintptr_t)addr, dmabuf_fd, (int)flags,
                                         VF_MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT);
        else available = 0;
    } else {
        if (v->reg_dmabuf_mr) mr = v->reg_dmabuf_mr(pd, 0, len, (uint64_t)(uintptr_t)addr, dmabuf_fd, (int)flags);
        else available = 0;
    }
    int err = mr ? 0 : errno;
    if (mr && v->dereg_mr) v->dereg_mr(mr);
    char names[128];
    flag_names(flags, names, sizeof names);
    j_open('{');
    kv_str("memory", memory);
    kv_str("label", label);
    kv_str("call", call);
    kv_int("length", (long long)len);
    kv_int("access", flags);
    kv_str("access_names", names);
    kv_str("why", why);
    kv_bool("symbol_available", available);
    kv_bool("ok", mr != NULL);
    kv_errno(available ? err : 0);
    j_close('}');
    capture_drain();
}

/* NCCL's DMA-BUF support probe (gdr.cc ibDmaBufSupportInitOnce): ibv_reg_dmabuf_mr with fd -1.
 * EOPNOTSUPP/EPROTONOSUPPORT: unsupported; anything else (EBADF expected): the kernel has the method. */
static void dmabuf_probe(struct verbs *v, struct ibv_pd *pd) {
    j_key("dmabuf_probe");
    j_open('{');
    kv_bool("symbol_available", v->reg_dmabuf_mr != NULL);
    if (v->reg_dmabuf_mr) {
        errno = 0;
        struct ibv_mr *mr = v->reg_dmabuf_mr(pd, 0ULL, 0ULL, 0ULL, -1, 0);
        int err = mr ? 0 : errno;
        if (mr && v->dereg_mr) v->dereg_mr(mr);
        kv_errno(err);
        kv_bool("supported", !(err == EOPNOTSUPP || err == EPROTONOSUPPORT));
    } else {
        kv_bool("supported", 0);
    }
    j_close('}');
    capture_drain();
}

/* ---------------------------------------------------------------- CUDA */

struct cuda {
    void *handle;
    vf_cuInit_fn cuInit;
    vf_cuDriverGetVersion_fn cuDriverGetVersion;
    vf_cuGetErrorName_fn cuGetErrorName;
    vf_cuDeviceGetCount_fn cuDeviceGetCount;
    vf_cuDeviceGet_fn cuDeviceGet;
    vf_cuDeviceGetAttribute_fn cuDeviceGetAttribute;
    vf_cuDevicePrimaryCtxRetain_fn cuDevicePrimaryCtxRetain;
    vf_cuDevicePrimaryCtxRelease_v2_fn cuDevicePrimaryCtxRelease_v2;
    vf_cuCtxSetCurrent_fn cuCtxSetCurrent;
    vf_cuMemAlloc_v2_fn cuMemAlloc_v2;
    vf_cuMemFree_v2_fn cuMemFree_v2;
    vf_cuMemGetAllocationGranularity_fn cuMemGetAllocationGranularity;
    vf_cuMemCreate_fn cuMemCreate;
    vf_cuMemAddressReserve_fn cuMemAddressReserve;
    vf_cuMemMap_fn cuMemMap;
    vf_cuMemSetAccess_fn cuMemSetAccess;
    vf_cuMemUnmap_fn cuMemUnmap;
    vf_cuMemAddressFree_fn cuMemAddressFree;
    vf_cuMemRelease_fn cuMemRelease;
    vf_cuMemGetHandleForAddressRange_fn cuMemGetHandleForAddressRange;
    vf_cu_device dev;
    int dev_ok;
};

struct gpu_buffer {
    const char *memory; /* "gpu:cuMemAlloc" | "gpu:cuMemCreate" */
    vf_cu_deviceptr ptr;
    size_t size;
    int dmabuf_fd;
    int dmabuf_err; /* CUresult of cuMemGetHandleForAddressRange, or -1 if not tried */
    int dmabuf_pcie_fd; /* the same export with the forced PCIe mapping (NCCL >= 2.26.2 on C2C systems) */
    int dmabuf_pcie_err;
};

static void kv_cu(struct cuda *c, const char *key, int res) {
    j_key(key);
    j_open('{');
    kv_int("code", res);
    const char *name = NULL;
    if (c->cuGetErrorName && c->cuGetErrorName(res, &name) != VF_CUDA_SUCCESS) name = NULL;
    kv_str("name", name);
    j_close('}');
}

#define CU_LOAD(c, f) ((c)->f = (vf_##f##_fn)dlsym((c)->handle, #f))

/* Writes the "gpu" object's head; returns 1 when a device with a current context is ready. */
static int open_cuda(struct cuda *c) {
    const char *skip = getenv("IMGCHECK_VERIFY_GPU");
    if (skip && strcmp(skip, "0") == 0) {
        kv_str("status", "skipped");
        kv_str("detail", "IMGCHECK_VERIFY_GPU=0");
        return 0;
    }
    progress("dlopen libcuda.so.1");
    dlerror();
    c->handle = dlopen("libcuda.so.1", RTLD_NOW);
    if (!c->handle) {
        kv_str("status", "no-libcuda");
        kv_str("detail", dlerror());
        return 0;
    }
    CU_LOAD(c, cuInit);
    CU_LOAD(c, cuDriverGetVersion);
    CU_LOAD(c, cuGetErrorName);
    CU_LOAD(c, cuDeviceGetCount);
    CU_LOAD(c, cuDeviceGet);
    CU_LOAD(c, cuDeviceGetAttribute);
    CU_LOAD(c, cuDevicePrimaryCtxRetain);
    CU_LOAD(c, cuDevicePrimaryCtxRelease_v2);
    CU_LOAD(c, cuCtxSetCurrent);
    CU_LOAD(c, cuMemAlloc_v2);
    CU_LOAD(c, cuMemFree_v2);
    CU_LOAD(c, cuMemGetAllocationGranularity);
    CU_LOAD(c, cuMemCreate);
    CU_LOAD(c, cuMemAddressReserve);
    CU_LOAD(c, cuMemMap);
    CU_LOAD(c, cuMemSetAccess);
    CU_LOAD(c, cuMemUnmap);
    CU_LOAD(c, cuMemAddressFree);
    CU_LOAD(c, cuMemRelease);
    CU_LOAD(c, cuMemGetHandleForAddressRange);
    if (!c->cuInit || !c->cuDeviceGetCount || !c->cuDeviceGet) {
        kv_str("status", "error");
        kv_str("detail", "libcuda.so.1 lacks cuInit/cuDeviceGetCount/cuDeviceGet");
        return 0;
    }
    int version = 0;
    if (c->cuDriverGetVersion && c->cuDriverGetVersion(&version) == VF_CUDA_SUCCESS) kv_int("driver_api_version", version);
    progress("cuInit");
    int res = c->cuInit(0);
    kv_cu(c, "init", res);
    if (res != VF_CUDA_SUCCESS) {
        kv_str("status", "no-gpu");
        kv_str("detail", "cuInit failed: no usable GPU in this container");
        return 0;
    }
    int count = 0;
    res = c->cuDeviceGetCount(&count);
    kv_int("device_count", count);
    if (res != VF_CUDA_SUCCESS || count < 1 || c->cuDeviceGet(&c->dev, 0) != VF_CUDA_SUCCESS) {
        kv_str("status", "no-gpu");
        kv_str("detail", "CUDA reports no device");
        return 0;
    }
    if (c->cuDeviceGetAttribute) {
        static const struct { const char *name; int attr; } attrs[] = {
            {"dma_buf_supported", VF_CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED},
            {"gpu_direct_rdma_supported", VF_CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED},
            {"gpu_direct_rdma_with_cuda_vmm_supported", VF_CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED},
            {"virtual_memory_management_supported", VF_CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED},
        };
        j_key("attributes");
        j_open('{');
        for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
            int value = 0;
            j_key(attrs[i].name);
            if (c->cuDeviceGetAttribute(&value, attrs[i].attr, c->dev) == VF_CUDA_SUCCESS) j_int(value);
            else j_null();
        }
        j_close('}');
    }
    void *ctx = NULL;
    if (!c->cuDevicePrimaryCtxRetain || !c->cuCtxSetCurrent) {
        kv_str("status", "error");
        kv_str("detail", "libcuda.so.1 lacks cuDevicePrimaryCtxRetain/cuCtxSetCurrent");
        return 0;
    }
    res = c->cuDevicePrimaryCtxRetain(&ctx, c->dev);
    if (res == VF_CUDA_SUCCESS) res = c->cuCtxSetCurrent(ctx);
    kv_cu(c, "context", res);
    if (res != VF_CUDA_SUCCESS) {
        kv_str("status", "error");
        kv_str("detail", "could not make a CUDA context current on device 0");
        return 0;
    }
    c->dev_ok = 1;
    kv_str("status", "tested");
    kv_str("detail", "device 0");
    return 1;
}

static void dmabuf_of(struct cuda *c, struct gpu_buffer *b) {
    b->dmabuf_fd = b->dmabuf_pcie_fd = -1;
    b->dmabuf_err = b->dmabuf_pcie_err = -1;
    if (!c->cuMemGetHandleForAddressRange) return;
    int fd = -1;
    b->dmabuf_err = c->cuMemGetHandleForAddressRange(&fd, b->ptr, b->size, VF_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (b->dmabuf_err == VF_CUDA_SUCCESS) b->dmabuf_fd = fd;
    if (b->dmabuf_err != VF_CUDA_SUCCESS) return;
    fd = -1;
    b->dmabuf_pcie_err = c->cuMemGetHandleForAddressRange(&fd, b->ptr, b->size, VF_CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD,
                                                          VF_CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE);
    if (b->dmabuf_pcie_err == VF_CUDA_SUCCESS) b->dmabuf_pcie_fd = fd;
}

/* cudaMalloc's driver-level equivalent, what NCCL uses with NCCL_CUMEM_ENABLE=0 or before 2.19. */
static int alloc_plain(struct cuda *c, struct gpu_buffer *b, size_t size) {
    b->memory = "gpu:cuMemAlloc";
    b->size = size;
    b->ptr = 0;
    j_open('{');
    kv_str("memory", b->memory);
    if (!c->cuMemAlloc_v2) {
        kv_str("error", "cuMemAlloc_v2 missing");
        j_close('}');
        return 0;
    }
    int res = c->cuMemAlloc_v2(&b->ptr, size);
    kv_cu(c, "alloc", res);
    if (res == VF_CUDA_SUCCESS) {
        dmabuf_of(c, b);
        kv_cu(c, "dmabuf_export", b->dmabuf_err);
        if (b->dmabuf_pcie_err != -1) kv_cu(c, "dmabuf_export_pcie", b->dmabuf_pcie_err);
    }
    j_close('}');
    return res == VF_CUDA_SUCCESS;
}

/* cuMem/VMM allocation as NCCL >= 2.19 does by default on CUDA >= 12 drivers (ncclCuMemAlloc). */
static int alloc_vmm(struct cuda *c, struct gpu_buffer *b, size_t size, vf_cu_generic_handle *handle) {
    b->memory = "gpu:cuMemCreate";
    b->ptr = 0;
    j_open('{');
    kv_str("memory", b->memory);
    if (!c->cuMemGetAllocationGranularity || !c->cuMemCreate || !c->cuMemAddressReserve || !c->cuMemMap ||
        !c->cuMemSetAccess) {
        kv_str("error", "cuMem* VMM entry points missing");
        j_close('}');
        return 0;
    }
    struct vf_cu_allocation_prop prop;
    memset(&prop, 0, sizeof prop);
    prop.type = VF_CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requestedHandleTypes = VF_CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    prop.location.type = VF_CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = c->dev;
    int rdma_vmm = 0;
    if (c->cuDeviceGetAttribute)
        c->cuDeviceGetAttribute(&rdma_vmm, VF_CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, c->dev);
    prop.allocFlags.gpuDirectRDMACapable = rdma_vmm ? 1 : 0;
    size_t gran = 0;
    int res = c->cuMemGetAllocationGranularity(&gran, &prop, VF_CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    if (res == VF_CUDA_SUCCESS && gran) size = ((size + gran - 1) / gran) * gran;
    b->size = size;
    if (res == VF_CUDA_SUCCESS) res = c->cuMemCreate(handle, size, &prop, 0);
    if (res == VF_CUDA_SUCCESS) res = c->cuMemAddressReserve(&b->ptr, size, gran, 0, 0);
    if (res == VF_CUDA_SUCCESS) res = c->cuMemMap(b->ptr, size, 0, *handle, 0);
    if (res == VF_CUDA_SUCCESS) {
        struct vf_cu_access_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.location.type = VF_CU_MEM_LOCATION_TYPE_DEVICE;
        desc.location.id = c->dev;
        desc.flags = VF_CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        res = c->cuMemSetAccess(b->ptr, size, &desc, 1);
    }
    kv_bool("gpu_direct_rdma_capable_flag", prop.allocFlags.gpuDirectRDMACapable);
    kv_cu(c, "alloc", res);
    if (res == VF_CUDA_SUCCESS) {
        dmabuf_of(c, b);
        kv_cu(c, "dmabuf_export", b->dmabuf_err);
        if (b->dmabuf_pcie_err != -1) kv_cu(c, "dmabuf_export_pcie", b->dmabuf_pcie_err);
    }
    j_close('}');
    return res == VF_CUDA_SUCCESS;
}

/* ---------------------------------------------------------------- libmlx5's Data Direct API */

/* NCCL >= 2.27.3 (misc/mlx5dvsymbols.cc): dlopen libmlx5.so, then libmlx5.so.1; both symbols at MLX5_1.25. */
static void open_mlx5dv(struct verbs *v) {
    static const char *names[] = {"libmlx5.so", "libmlx5.so.1"};
    const char *opened = NULL;
    j_key("mlx5dv");
    j_open('{');
    for (size_t i = 0; i < sizeof names / sizeof names[0] && !v->mlx5_handle; i++) {
        dlerror();
        v->mlx5_handle = dlopen(names[i], RTLD_NOW);
        if (v->mlx5_handle) opened = names[i];
    }
    kv_str("opened", opened);
    if (v->mlx5_handle) {
        v->mlx5dv_reg_dmabuf_mr = (vf_mlx5dv_reg_dmabuf_mr_fn)dlvsym(v->mlx5_handle, "mlx5dv_reg_dmabuf_mr", "MLX5_1.25");
        v->mlx5dv_get_data_direct_sysfs_path = (vf_mlx5dv_get_data_direct_sysfs_path_fn)dlvsym(
            v->mlx5_handle, "mlx5dv_get_data_direct_sysfs_path", "MLX5_1.25");
    }
    kv_bool("reg_dmabuf_mr", v->mlx5dv_reg_dmabuf_mr != NULL);
    kv_bool("get_data_direct_sysfs_path", v->mlx5dv_get_data_direct_sysfs_path != NULL);
    j_close('}');
    capture_drain();
}

/* Whether the device is a Data Direct one, as NCCL asks (net_ib/init.cc); 1 when it is. */
static int data_direct_of(struct verbs *v, struct ibv_context *ctx) {
    if (!v->mlx5dv_get_data_direct_sysfs_path) return 0;
    char path[4096];
    path[0] = 0;
    errno = 0;
    int rc = v->mlx5dv_get_data_direct_sysfs_path(ctx, path, sizeof path);
    j_key("data_direct");
    j_open('{');
    kv_int("rc", rc);
    kv_str("rc_name", errno_name(rc < 0 ? -rc : rc));
    kv_str("sysfs_path", rc == 0 ? path : NULL);
    j_close('}');
    capture_drain();
    return rc == 0;
}

/* ---------------------------------------------------------------- fork protection, capabilities */

/* NCCL calls ibv_fork_init() unconditionally before ibv_get_device_list (net_ib/init.cc). With rdma-core
 * < 51, or when the kernel's copy-on-fork cannot be read, every registration then runs
 * madvise(MADV_DONTFORK) first (libibverbs/memory.c ibv_dontfork_range). */
static void fork_init_as_nccl(struct verbs *v) {
    j_key("fork_init");
    j_open('{');
    kv_bool("symbol_available", v->fork_init != NULL);
    if (v->fork_init) {
        int rc = v->fork_init();
        kv_int("rc", rc);
        kv_str("rc_name", errno_name(rc));
    }
    j_key("status");
    if (v->is_fork_initialized) {
        int st = v->is_fork_initialized();
        j_str(st == 0 ? "disabled" : st == 1 ? "enabled" : st == 2 ? "unneeded" : "unknown");
    } else {
        j_null(); /* rdma-core < 35: no way to ask; fork protection is on whenever ibv_fork_init succeeded */
    }
    j_close('}');
    capture_drain();
}

#define VF_CAP_IPC_LOCK 14

struct vf_cap_header {
    unsigned int version;
    int pid;
};
struct vf_cap_data {
    unsigned int effective, permitted, inheritable;
};

/* 1/0 whether CAP_IPC_LOCK is in the effective set (/proc/self/status CapEff), -1 unknown. */
static int has_ipc_lock(void) {
    char text[4096];
    if (read_small_file("/proc/self/status", text, sizeof text) != 0) return -1;
    const char *line = strstr(text, "CapEff:");
    if (!line) return -1;
    unsigned long long eff = strtoull(line + 7, NULL, 16);
    return (int)((eff >> VF_CAP_IPC_LOCK) & 1);
}

/* Clear (on=0) or restore (on=1) CAP_IPC_LOCK in the effective set; 0 on success. */
static int set_ipc_lock(int on) {
    struct vf_cap_header hdr = {0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0};
    struct vf_cap_data data[2];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capget, &hdr, data) != 0) return -1;
    if (on) data[0].effective |= 1u << VF_CAP_IPC_LOCK;
    else data[0].effective &= ~(1u << VF_CAP_IPC_LOCK);
    return syscall(SYS_capset, &hdr, data) == 0 ? 0 : -1;
}

/* The memlock rows (RE-ENOMEM-MEMLOCK, RE-EPERM-MEMLOCK0) as a job sees them: without CAP_IPC_LOCK, one
 * host registration below the soft limit and one above it. */
static void memlock_probe(struct verbs *v, struct ibv_pd *pd, const struct rlimit *rl, int rl_ok) {
    j_key("memlock_probe");
    j_open('{');
    const size_t budget = 256u << 20; /* the container's memory limit is 1 GiB */
    const char *why = NULL;
    int held = has_ipc_lock();
    kv_int("uid", (long long)getuid());
    j_key("cap_ipc_lock");
    if (held < 0) j_null();
    else j_bool(held);
    if (!rl_ok) why = "getrlimit(RLIMIT_MEMLOCK) failed";
    else if (rl->rlim_cur == RLIM_INFINITY) why = "RLIMIT_MEMLOCK is unlimited: no registration can exceed it";
    else if (rl->rlim_cur + (4u << 20) > budget) why = "the limit is larger than the verifier may allocate (256 MiB)";
    else if (held > 0 && set_ipc_lock(0) != 0) why = "CAP_IPC_LOCK is held and could not be dropped (capset failed)";
    else if (held < 0) why = "whether CAP_IPC_LOCK is held is unknown (/proc/self/status unreadable)";
    if (why) {
        kv_str("status", "not testable");
        kv_str("detail", why);
        j_close('}');
        return;
    }
    kv_bool("dropped_cap_ipc_lock", held > 0);
    size_t limit = (size_t)rl->rlim_cur;
    size_t above = limit + (4u << 20);
    size_t below = limit >= (8u << 20) ? (4u << 20) : limit / 2;
    void *buf = NULL;
    if (posix_memalign(&buf, 4096, above) != 0) buf = NULL;
    if (!buf) {
        kv_str("status", "not testable");
        kv_str("detail", "could not allocate the probe buffer");
        j_close('}');
        if (held > 0) set_ipc_lock(1);
        return;
    }
    memset(buf, 0, above);
    kv_str("status", "tested");
    j_key("registrations");
    j_open('[');
    const unsigned int base = VF_IBV_ACCESS_LOCAL_WRITE | VF_IBV_ACCESS_REMOTE_WRITE | VF_IBV_ACCESS_REMOTE_READ;
    if (below >= 4096)
        try_reg(v, pd, "host", "memlock-below", "ibv_reg_mr", buf, below & ~(size_t)4095, base, -1,
                "below RLIMIT_MEMLOCK, without CAP_IPC_LOCK");
    try_reg(v, pd, "host", "memlock-above", "ibv_reg_mr", buf, above, base, -1,
            "above RLIMIT_MEMLOCK, without CAP_IPC_LOCK");
    j_close(']');
    j_close('}');
    free(buf);
    if (held > 0) set_ipc_lock(1);
}

/* GPU memory registered in NCCL-sized chunks, each MR kept, until the driver refuses or the buffer is
 * covered: nvidia-peermem declines a buffer once BAR1 is exhausted (EFAULT: RE-EFAULT-DECLINED). */
static void bar1_sweep(struct verbs *v, struct ibv_pd *pd, struct cuda *c, vf_cu_deviceptr ptr, size_t total,
                       size_t chunk) {
    j_key("bar1_sweep");
    j_open('{');
    kv_str("memory", "gpu:cuMemAlloc");
    kv_int("chunk_bytes", (long long)chunk);
    kv_int("target_bytes", (long long)total);
    size_t n = total / chunk, done = 0;
    struct ibv_mr **mrs = calloc(n ? n : 1, sizeof *mrs);
    int err = 0;
    const unsigned int flags = VF_IBV_ACCESS_LOCAL_WRITE | VF_IBV_ACCESS_REMOTE_WRITE | VF_IBV_ACCESS_REMOTE_READ |
                               (v->reg_mr_iova2 ? VF_IBV_ACCESS_RELAXED_ORDERING : 0);
    const char *call = v->reg_mr_iova2 ? "ibv_reg_mr_iova2" : "ibv_reg_mr";
    (void)c;
    for (; mrs && done < n; done++) {
        void *addr = (void *)(uintptr_t)(ptr + done * chunk);
        errno = 0;
        struct ibv_mr *mr = v->reg_mr_iova2 ? v->reg_mr_iova2(pd, addr, chunk, (uint64_t)(uintptr_t)addr, flags)
                                            : (v->reg_mr ? v->reg_mr(pd, addr, chunk, (int)flags) : NULL);
        if (!mr) {
            err = errno;
            break;
        }
        mrs[done] = mr;
    }
    kv_int("registered", (long long)done);
    kv_int("registered_bytes", (long long)(done * chunk));
    j_key("failure");
    if (done < n && mrs) {
        j_open('{');
        kv_str("memory", "gpu:cuMemAlloc");
        kv_str("label", "bar1-sweep");
        kv_str("call", call);
        kv_int("length", (long long)chunk);
        kv_int("access", flags);
        kv_str("access_names", "");
        kv_str("why", "the next NCCL-sized chunk of a large GPU buffer, the earlier ones still registered");
        kv_bool("symbol_available", 1);
        kv_bool("ok", 0);
        kv_errno(err);
        j_close('}');
    } else {
        j_null();
    }
    for (size_t i = 0; mrs && i < done; i++)
        if (v->dereg_mr) v->dereg_mr(mrs[i]);
    free(mrs);
    j_close('}');
    capture_drain();
}

/* ---------------------------------------------------------------- main */

static int run(void) {
    out = stdout;
    setenv("IBV_SHOW_WARNINGS", "1", 0);
    capture_start();
    progress("start");

    size_t mr_bytes = 4u << 20; /* NCCL DEFAULT_BUFFSIZE (init.cc) */
    const char *env_bytes = getenv("IMGCHECK_VERIFY_MR_BYTES");
    if (env_bytes && atol(env_bytes) > 0) mr_bytes = (size_t)atol(env_bytes);

    j_open('{');
    kv_int("schema_version", VF_SCHEMA_VERSION);
    kv_str("verifier_version", VF_VERSION);
    struct utsname un;
    if (uname(&un) == 0) {
        kv_str("machine", un.machine);
        kv_str("kernel", un.release);
    }
    kv_str("glibc", gnu_get_libc_version());
    kv_int("uid", (long long)getuid());
    {
        int held = has_ipc_lock();
        j_key("cap_ipc_lock");
        if (held < 0) j_null();
        else j_bool(held);
    }
    struct rlimit rl;
    int rl_ok = getrlimit(RLIMIT_MEMLOCK, &rl) == 0;
    j_key("memlock");
    j_open('{');
    if (rl_ok) {
        /* -1 means unlimited */
        kv_int("soft", rl.rlim_cur == RLIM_INFINITY ? -1 : (long long)rl.rlim_cur);
        kv_int("hard", rl.rlim_max == RLIM_INFINITY ? -1 : (long long)rl.rlim_max);
    }
    j_close('}');

    /* What the kernel shows this container: no entries here means no RDMA device on this node (or
     * none visible to the container); /dev/infiniband is what the runtime passed in. */
    j_key("sysfs");
    j_open('{');
    char abi[64];
    kv_str("uverbs_abi_version", read_small_file("/sys/class/infiniband_verbs/abi_version", abi, sizeof abi) == 0 ? abi : NULL);
    kv_dir_entries("class_infiniband", "/sys/class/infiniband");
    kv_dir_entries("class_infiniband_verbs", "/sys/class/infiniband_verbs");
    kv_dir_entries("dev_infiniband", "/dev/infiniband");
    j_close('}');

    struct verbs v;
    memset(&v, 0, sizeof v);
    int have_verbs = open_verbs(&v) == 0;
    if (have_verbs) fork_init_as_nccl(&v);
    if (have_verbs) open_mlx5dv(&v);

    struct ibv_device **list = NULL;
    int ndev = 0;
    j_key("devices");
    j_open('{');
    if (have_verbs && v.get_device_list) {
        progress("ibv_get_device_list");
        errno = 0;
        list = v.get_device_list(&ndev);
        int err = list ? 0 : errno;
        capture_drain();
        kv_bool("list_ok", list != NULL);
        kv_errno(err);
        kv_int("count", list ? ndev : 0);
    } else {
        kv_bool("list_ok", 0);
        kv_errno(0);
        kv_int("count", 0);
    }
    j_close('}');

    if (have_verbs) check_providers(&v);

    /* GPU first (its buffers are registered on every device below). */
    struct cuda c;
    memset(&c, 0, sizeof c);
    struct gpu_buffer bufs[2];
    int nbufs = 0;
    vf_cu_generic_handle vmm_handle = 0;
    j_key("gpu");
    j_open('{');
    if (open_cuda(&c)) {
        j_key("buffers");
        j_open('[');
        if (alloc_plain(&c, &bufs[nbufs], mr_bytes)) nbufs++;
        if (alloc_vmm(&c, &bufs[nbufs], mr_bytes, &vmm_handle)) nbufs++;
        j_close(']');
    }
    j_close('}');
    capture_drain();

    size_t bar1_bytes = 1u << 30;
    const char *env_bar1 = getenv("IMGCHECK_VERIFY_BAR1_BYTES");
    if (env_bar1) bar1_bytes = (size_t)strtoull(env_bar1, NULL, 10);
    vf_cu_deviceptr bar1_ptr = 0;
    if (c.dev_ok && bar1_bytes >= mr_bytes && c.cuMemAlloc_v2 && c.cuMemAlloc_v2(&bar1_ptr, bar1_bytes) != VF_CUDA_SUCCESS)
        bar1_ptr = 0;

    void *host = NULL;
    if (posix_memalign(&host, 4096, mr_bytes) != 0) host = NULL;
    if (host) memset(host, 0, mr_bytes); /* fault the pages in, as a used buffer would be */

    j_key("device_results");
    j_open('[');
    for (int i = 0; list && i < ndev; i++) {
        const char *name = v.get_device_name ? v.get_device_name(list[i]) : NULL;
        progress("device %s", name ? name : "?");
        j_open('{');
        kv_str("name", name);
        errno = 0;
        struct ibv_context *ctx = v.open_device ? v.open_device(list[i]) : NULL;
        j_key("open");
        j_open('{');
        kv_bool("ok", ctx != NULL);
        kv_errno(ctx ? 0 : errno);
        j_close('}');
        capture_drain();
        struct ibv_pd *pd = NULL;
        if (ctx && v.alloc_pd) {
            errno = 0;
            pd = v.alloc_pd(ctx);
            j_key("alloc_pd");
            j_open('{');
            kv_bool("ok", pd != NULL);
            kv_errno(pd ? 0 : errno);
            j_close('}');
            capture_drain();
        }
        int data_direct = ctx ? data_direct_of(&v, ctx) : 0;
        j_key("registrations");
        j_open('[');
        if (pd && host) {
            for (size_t k = 0; k < sizeof host_cases / sizeof host_cases[0]; k++)
                try_reg(&v, pd, "host", host_cases[k].label, host_cases[k].call, host, mr_bytes, host_cases[k].flags, -1,
                        host_cases[k].why);
        }
        for (int b = 0; pd && b < nbufs; b++) {
            void *addr = (void *)(uintptr_t)bufs[b].ptr;
            /* Without DMA-BUF the GPU VA goes through the peer-memory client (nvidia-peermem). */
            try_reg(&v, pd, bufs[b].memory, "base", "ibv_reg_mr", addr, bufs[b].size, NCCL_BASE, -1,
                    "GPUDirect via peer memory, relaxed ordering off");
            try_reg(&v, pd, bufs[b].memory, "base+ro", "ibv_reg_mr_iova2", addr, bufs[b].size,
                    NCCL_BASE | VF_IBV_ACCESS_RELAXED_ORDERING, -1, "GPUDirect via peer memory, NCCL default");
            try_reg(&v, pd, bufs[b].memory, "base+atomic+ro", "ibv_reg_mr_iova2", addr, bufs[b].size,
                    NCCL_BASE | VF_IBV_ACCESS_REMOTE_ATOMIC | VF_IBV_ACCESS_RELAXED_ORDERING, -1,
                    "GPUDirect via peer memory, NCCL >= 2.28.7");
            if (bufs[b].dmabuf_fd >= 0)
                try_reg(&v, pd, bufs[b].memory, "base+ro", "ibv_reg_dmabuf_mr", addr, bufs[b].size,
                        NCCL_BASE | VF_IBV_ACCESS_RELAXED_ORDERING, bufs[b].dmabuf_fd, "GPUDirect via DMA-BUF");
            if (bufs[b].dmabuf_fd >= 0 && data_direct)
                try_reg(&v, pd, bufs[b].memory, "base+ro+data-direct", "mlx5dv_reg_dmabuf_mr", addr, bufs[b].size,
                        NCCL_BASE | VF_IBV_ACCESS_RELAXED_ORDERING, bufs[b].dmabuf_fd,
                        "GPUDirect via DMA-BUF on a Data Direct device (NCCL >= 2.27.3)");
            if (bufs[b].dmabuf_pcie_fd >= 0)
                try_reg(&v, pd, bufs[b].memory, "base+ro+pcie", "ibv_reg_dmabuf_mr", addr, bufs[b].size,
                        NCCL_BASE | VF_IBV_ACCESS_RELAXED_ORDERING, bufs[b].dmabuf_pcie_fd,
                        "GPUDirect via DMA-BUF with the forced PCIe mapping (NCCL >= 2.26.2 on C2C GPUs)");
        }
        j_close(']');
        if (pd && bar1_ptr) bar1_sweep(&v, pd, &c, bar1_ptr, bar1_bytes, mr_bytes);
        if (pd) dmabuf_probe(&v, pd);
        if (pd && i == 0) memlock_probe(&v, pd, &rl, rl_ok);
        if (pd && v.dealloc_pd) v.dealloc_pd(pd);
        if (ctx && v.close_device) v.close_device(ctx);
        j_close('}');
        capture_drain();
    }
    j_close(']');
    if (list && v.free_device_list) v.free_device_list(list);

    for (int b = 0; b < nbufs; b++) {
        if (bufs[b].dmabuf_fd >= 0) close(bufs[b].dmabuf_fd);
        if (bufs[b].dmabuf_pcie_fd >= 0) close(bufs[b].dmabuf_pcie_fd);
        if (strcmp(bufs[b].memory, "gpu:cuMemAlloc") == 0 && c.cuMemFree_v2) c.cuMemFree_v2(bufs[b].ptr);
        if (strcmp(bufs[b].memory, "gpu:cuMemCreate") == 0) {
            if (c.cuMemUnmap) c.cuMemUnmap(bufs[b].ptr, bufs[b].size);
            if (c.cuMemAddressFree) c.cuMemAddressFree(bufs[b].ptr, bufs[b].size);
            if (c.cuMemRelease) c.cuMemRelease(vmm_handle);
        }
    }
    if (bar1_ptr && c.cuMemFree_v2) c.cuMemFree_v2(bar1_ptr);
    if (c.dev_ok && c.cuDevicePrimaryCtxRelease_v2) c.cuDevicePrimaryCtxRelease_v2(c.dev);
    free(host);

    capture_drain();
    j_key("warnings");
    j_open('[');
    for (char *line = strtok(captured, "\n"); line; line = strtok(NULL, "\n"))
        if (*line) j_str(line);
    j_close(']');
    j_close('}');
    fputc('\n', out);
    fflush(out);
    progress("done");
    return 0;
}

/* No crt1.o: ld.so has already initialised libc (stdio, environ, TLS) before jumping here, and the
 * verifier needs neither argv nor constructors. This avoids __libc_start_main@GLIBC_2.34. */
#if defined(__x86_64__) || defined(__i386__)
__attribute__((force_align_arg_pointer))
#endif
__attribute__((noreturn, used)) void _start(void) {
    exit(run());
}
