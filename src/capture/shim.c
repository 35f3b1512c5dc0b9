/*
 * afterburner's dump shim: LD_PRELOADed into an instrumented server so that
 * `afterburner profile --pid PID --dump` can have it write its counters
 * without stopping it.
 *
 * Its constructor (when AFTERBURNER_DUMP_DIR is set) finds the profiling
 * runtime of the main program: gcc's __gcov_dump/__gcov_reset or clang's
 * __llvm_profile_write_file/__llvm_profile_reset_counters, first with
 * dlsym(RTLD_DEFAULT, ...), then in the program's own symbol table (clang's
 * runtime is hidden, and an executable exports nothing by default). It
 * writes DIR/<pid>.ready ("runtime=gcc|clang|none", "signal=N", kept open
 * so that /proc/<pid>/fd names it), installs a
 * handler for the signal (AFTERBURNER_DUMP_SIGNAL, SIGUSR2 by default) that
 * only writes a byte to a pipe, and starts a thread that reads the pipe.
 * A forked child gets a pipe, a thread and a ready note of its own
 * (pthread_atfork), so each process dumps its own counters.
 * For each byte the thread dumps into DIR/<pid>/<n>/ (n = 1, 2, ...), resets
 * the counters (so each dump holds what ran since the one before), and then
 * writes DIR/<pid>.done ("<n> ok" or "<n> error: why"), renamed into place so
 * that a reader sees a whole line.
 *
 * gcc: GCOV_PREFIX is set to the dump's directory for the dump (its runtime
 * reads it at every dump), so a dump never merges into older files.
 * clang: the runtime writes where LLVM_PROFILE_FILE says; the shim moves that
 * file into the dump's directory.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef void (*void_fn)(void);
typedef int (*int_fn)(void);
typedef const char *(*name_fn)(void);

static int pipe_fds[2] = {-1, -1};
static int dump_signal;
static int ready_fd = -1;
static char dump_dir[PATH_MAX];
static void_fn gcov_dump, gcov_reset, llvm_reset;
static int_fn llvm_write;
static name_fn llvm_filename;

static void on_signal(int sig)
{
    int saved = errno;
    char byte = (char)sig;
    ssize_t ignored = write(pipe_fds[1], &byte, 1);
    (void)ignored;
    errno = saved;
}

static int main_program_bias(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(ElfW(Addr) *)data = info->dlpi_addr;
    return 1; /* the first object is the main program */
}

/* Look NAMES up in the main program's .symtab; fill OUT (addresses, 0 when
 * absent). Returns 0 when the file could not be read. */
static int from_symtab(const char *const *names, void **out, int n)
{
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(ElfW(Ehdr))) {
        close(fd);
        return 0;
    }
    size_t size = (size_t)st.st_size;
    const unsigned char *elf = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (elf == MAP_FAILED)
        return 0;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)elf;
    ElfW(Addr) bias = 0;
    dl_iterate_phdr(main_program_bias, &bias);
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shoff == 0 ||
        eh->e_shoff + (size_t)eh->e_shnum * sizeof(ElfW(Shdr)) > size) {
        munmap((void *)elf, size);
        return 0;
    }
    const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(elf + eh->e_shoff);
    for (int s = 0; s < eh->e_shnum; s++) {
        if (sh[s].sh_type != SHT_SYMTAB || sh[s].sh_link >= eh->e_shnum)
            continue;
        const ElfW(Shdr) *strs = &sh[sh[s].sh_link];
        if (sh[s].sh_offset + sh[s].sh_size > size || strs->sh_offset + strs->sh_size > size)
            continue;
        const ElfW(Sym) *sym = (const ElfW(Sym) *)(elf + sh[s].sh_offset);
        size_t count = sh[s].sh_size / sizeof(ElfW(Sym));
        const char *str = (const char *)(elf + strs->sh_offset);
        for (size_t i = 0; i < count; i++) {
            if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC || sym[i].st_value == 0 ||
                sym[i].st_name >= strs->sh_size)
                continue;
            for (int k = 0; k < n; k++)
                if (!out[k] && strcmp(str + sym[i].st_name, names[k]) == 0)
                    out[k] = (void *)(bias + sym[i].st_value);
        }
    }
    munmap((void *)elf, size);
    return 1;
}

static void find_runtime(void)
{
    static const char *const names[] = {
        "__gcov_dump", "__gcov_reset", "__llvm_profile_write_file",
        "__llvm_profile_reset_counters", "__llvm_profile_get_filename",
    };
    enum { N = sizeof(names) / sizeof(names[0]) };
    void *found[N] = {0};
    int missing = 0;
    for (int k = 0; k < N; k++) {
        found[k] = dlsym(RTLD_DEFAULT, names[k]);
        missing |= !found[k];
    }
    if (missing)
        from_symtab(names, found, N);
    if (found[0] && found[1]) {
        gcov_dump = (void_fn)found[0];
        gcov_reset = (void_fn)found[1];
    } else if (found[2] && found[3] && found[4]) {
        llvm_write = (int_fn)found[2];
        llvm_reset = (void_fn)found[3];
        llvm_filename = (name_fn)found[4];
    }
}

static const char *runtime_name(void)
{
    return gcov_dump ? "gcc" : llvm_write ? "clang" : "none";
}

/* Write TEXT to DIR/<pid><suffix>, through a temporary file renamed over it. */
static void write_note(const char *suffix, const char *text)
{
    char path[PATH_MAX + 64], tmp[PATH_MAX + 80];
    snprintf(path, sizeof path, "%s/%d%s", dump_dir, (int)getpid(), suffix);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "we");
    if (!f)
        return;
    fputs(text, f);
    if (fclose(f) == 0)
        rename(tmp, path);
}

/* Move FROM to INTO/<basename>, copying when they are on other filesystems. */
static int move_into(const char *from, const char *into)
{
    const char *base = strrchr(from, '/');
    base = base ? base + 1 : from;
    char to[PATH_MAX + 256];
    snprintf(to, sizeof to, "%s/%s", into, base);
    if (rename(from, to) == 0)
        return 0;
    if (errno != EXDEV)
        return -1;
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    char buf[65536];
    ssize_t got = 0;
    while (in >= 0 && out >= 0 && (got = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)got) != got)
            got = -1;
    int ok = in >= 0 && out >= 0 && got == 0;
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    return ok ? unlink(from) : -1;
}

/* One dump into DIR/<pid>/<seq>/; the note's text ("ok" or why not). */
static void dump_once(unsigned seq, char *note, size_t cap)
{
    char into[PATH_MAX + 64];
    snprintf(into, sizeof into, "%s/%d", dump_dir, (int)getpid());
    mkdir(into, 0755);
    snprintf(into + strlen(into), sizeof into - strlen(into), "/%u", seq);
    if (mkdir(into, 0755) != 0 && errno != EEXIST) {
        snprintf(note, cap, "%u error: cannot create %s: %s\n", seq, into, strerror(errno));
        return;
    }
    if (gcov_dump) {
        const char *old = getenv("GCOV_PREFIX");
        char *saved = old ? strdup(old) : NULL;
        setenv("GCOV_PREFIX", into, 1);
        gcov_dump();
        gcov_reset();
        if (saved)
            setenv("GCOV_PREFIX", saved, 1);
        else
            unsetenv("GCOV_PREFIX");
        free(saved);
    } else if (llvm_write) {
        int failed = llvm_write();
        llvm_reset();
        const char *written = llvm_filename();
        if (failed || !written || move_into(written, into) != 0) {
            snprintf(note, cap, "%u error: the clang runtime's file %s was not written or moved: %s\n",
                     seq, written ? written : "(none)", strerror(errno));
            return;
        }
    } else {
        snprintf(note, cap, "%u error: no profiling runtime in this program\n", seq);
        return;
    }
    snprintf(note, cap, "%u ok\n", seq);
}

static void *dumper(void *unused)
{
    (void)unused;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    unsigned seq = 0;
    char byte;
    for (;;) {
        ssize_t got = read(pipe_fds[0], &byte, 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return NULL;
        char note[PATH_MAX + 256];
        dump_once(++seq, note, sizeof note);
        write_note(".done", note);
    }
}

/* The pipe, the thread and the ready note of this process (the constructor's,
 * or a forked child's): 0 when all are in place. */
static int start_dumping(void)
{
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        return -1;
    pthread_t thread;
    if (pthread_create(&thread, NULL, dumper, NULL) != 0)
        return -1;
    pthread_detach(thread);
    char ready[128];
    snprintf(ready, sizeof ready, "runtime=%s\nsignal=%d\n", runtime_name(), dump_signal);
    write_note(".ready", ready);
    /* Held open for the process's life: /proc/<pid>/fd shows afterburner
     * where the shim writes even when the program has written over its
     * environment (Redis's process title does). */
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%d.ready", dump_dir, (int)getpid());
    ready_fd = open(path, O_RDONLY | O_CLOEXEC);
    return 0;
}

/* In a forked child (a pre-forking or fork-per-connection server's worker):
 * a thread does not survive fork(), and the pipe is the parent's, whose
 * thread would dump the parent on the child's signal. The child gets its own
 * pipe, thread and ready note, so that it dumps its own counters into
 * DIR/<its pid>/. Its counters start from zero, as gcc's own __gcov_fork
 * (the fork() of instrumented code) has them "so that they are not counted
 * twice": what ran before the fork is the parent's to dump, and dumps of
 * several processes add up. clang's runtime does not reset them, so the
 * shim does; gcc's reset is left to gcc, whose lock a dump the parent was
 * writing at the fork could hold. */
static void in_forked_child(void)
{
    int old_read = pipe_fds[0], old_write = pipe_fds[1];
    if (ready_fd >= 0)
        close(ready_fd);
    ready_fd = -1;
    /* Until the new pipe is there, a signal writes nowhere (EBADF). */
    pipe_fds[1] = -1;
    close(old_read);
    close(old_write);
    if (llvm_reset)
        llvm_reset();
    start_dumping();
}

__attribute__((constructor)) static void afterburner_dump_shim(void)
{
    const char *dir = getenv("AFTERBURNER_DUMP_DIR");
    if (!dir || !*dir || strlen(dir) >= sizeof dump_dir)
        return;
    strcpy(dump_dir, dir);
    const char *which = getenv("AFTERBURNER_DUMP_SIGNAL");
    dump_signal = which && *which ? atoi(which) : SIGUSR2;
    find_runtime();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(dump_signal, &sa, NULL) != 0 || start_dumping() != 0)
        return;
    pthread_atfork(NULL, NULL, in_forked_child);
}
