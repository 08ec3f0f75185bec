/*
 * Preloaded (LD_PRELOAD) into ffmpeg and ffprobe processes that are started before
 * their work is known; see src/media/warm.rs for why and for the other side.
 *
 * It stands in front of glibc's __libc_start_main, which runs after the dynamic
 * loader has loaded and relocated every library (the slow part of starting ffmpeg)
 * and before main. First it takes LD_PRELOAD out of its environment (nothing the
 * process runs in turn inherits it), writing what is left over the block the kernel
 * copied the environment into, which /proc/PID/environ reads. On descriptor 3, a
 * Unix socket to the service, it says it is ready with one byte, then reads its run:
 * the environment ("NAME=value" entries), an empty string, and the command line,
 * each string ending in a NUL byte, until end of file. The run's environment
 * replaces the whole of the one it was started with, written over the same block;
 * the command line is written over the one it was started with (what ps shows; the
 * service starts it with a long one to make room); then main is called with them.
 *
 * The service going away before it sends arguments ends the process quietly.
 * Nothing is printed: what the process prints belongs to ffmpeg.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONTROL_FD 3

extern char **environ;

/* The block the kernel copied the environment's strings into at exec: what
 * /proc/PID/environ shows. */
static char *env_block;
static size_t env_block_size;

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void),
                        void (*)(void), void *);

/* The whole of CONTROL_FD until end of file, in a buffer that lives as long as the
 * process (main keeps pointers into its argv). */
static char *read_command_line(size_t *len) {
    size_t cap = 4096;
    char *buf = malloc(cap);
    *len = 0;
    while (buf != NULL) {
        if (*len == cap) {
            cap *= 2;
            char *bigger = realloc(buf, cap);
            if (bigger == NULL) {
                free(buf);
                return NULL;
            }
            buf = bigger;
        }
        ssize_t n = read(CONTROL_FD, buf + *len, cap - *len);
        if (n == 0)
            return buf;
        if (n < 0)
            break;
        *len += (size_t)n;
    }
    free(buf);
    return NULL;
}

/* Finds the environment's block: from its lowest string to the end of its highest. */
static void find_env_block(char **envp) {
    char *low = NULL, *high = NULL;
    for (char **e = envp; e != NULL && *e != NULL; e++) {
        char *end = *e + strlen(*e) + 1;
        if (low == NULL || *e < low)
            low = *e;
        if (high == NULL || end > high)
            high = end;
    }
    env_block = low;
    env_block_size = low == NULL ? 0 : (size_t)(high - low);
}

/* Makes the `count` entries ("NAME=value") the whole environment, with environ
 * pointing at them: written over the environment's block (the rest of it NULs) when
 * they fit, else kept on the heap with the block wiped, so that it never shows what
 * the process no longer has. The entries may lie in the block. -1 when out of memory. */
static int set_environment(char **entries, int count) {
    char **list = calloc((size_t)count + 1, sizeof(char *));
    if (list == NULL)
        return -1;
    size_t need = 0;
    for (int i = 0; i < count; i++)
        need += strlen(entries[i]) + 1;
    if (need <= env_block_size) {
        char *copy = malloc(need + 1);
        if (copy == NULL)
            return -1;
        size_t at = 0;
        for (int i = 0; i < count; i++) {
            size_t len = strlen(entries[i]) + 1;
            memcpy(copy + at, entries[i], len);
            at += len;
        }
        memcpy(env_block, copy, need);
        memset(env_block + need, 0, env_block_size - need);
        free(copy);
        at = 0;
        for (int i = 0; i < count; i++) {
            list[i] = env_block + at;
            at += strlen(list[i]) + 1;
        }
    } else {
        for (int i = 0; i < count; i++) {
            list[i] = strdup(entries[i]);
            if (list[i] == NULL)
                return -1;
        }
        if (env_block != NULL)
            memset(env_block, 0, env_block_size);
    }
    environ = list;
    return 0;
}

/* The environment without LD_PRELOAD, which has done its work. */
static int forget_preload(void) {
    int n = 0;
    while (environ != NULL && environ[n] != NULL)
        n++;
    char **kept = calloc((size_t)n + 1, sizeof(char *));
    if (kept == NULL)
        return -1;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
            kept[k++] = environ[i];
    int done = set_environment(kept, k);
    free(kept);
    return done;
}

/* The new command line shown in place of the original one (argv's strings, which are
 * contiguous), cut where it does not fit; the rest of the room is NULs. */
static void show_command_line(int argc, char **argv, int count, char **args) {
    if (argc < 1)
        return;
    char *room = argv[0];
    size_t size = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) - room);
    size_t at = 0;
    for (int i = 0; i < count && at < size; i++) {
        size_t len = strlen(args[i]);
        if (len > size - at)
            len = size - at;
        memcpy(room + at, args[i], len);
        at += len;
        if (at < size)
            room[at++] = '\0';
    }
    memset(room + at, 0, size - at);
}

int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end) {
    start_fn real = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    find_env_block(environ);
    char ready = 'R';
    if (real == NULL || forget_preload() != 0 || write(CONTROL_FD, &ready, 1) != 1)
        _exit(125);
    size_t len;
    char *line = read_command_line(&len);
    close(CONTROL_FD);
    /* Nothing (the service let the process go), or a line cut short. */
    if (line == NULL || len == 0 || line[len - 1] != '\0')
        _exit(0);
    int strings = 0;
    for (size_t i = 0; i < len; i++)
        strings += line[i] == '\0';
    char **all = calloc((size_t)strings + 1, sizeof(char *));
    if (all == NULL)
        _exit(125);
    size_t at = 0;
    for (int i = 0; i < strings; i++) {
        all[i] = line + at;
        at += strlen(line + at) + 1;
    }
    /* The environment ends at the first empty string; the command line follows. */
    int entries = 0;
    while (entries < strings && all[entries][0] != '\0')
        entries++;
    char **args = all + entries + 1;
    int count = strings - entries - 1;
    if (count < 1)
        _exit(0);
    if (set_environment(all, entries) != 0)
        _exit(125);
    show_command_line(argc, argv, count, args);
    return real(main, count, args, init, fini, rtld_fini, stack_end);
}
