/*
 * Preloaded (LD_PRELOAD) into ffmpeg and ffprobe processes that are started before
 * their work is known; see src/media/warm.rs for why and for the other side.
 *
 * It stands in front of glibc's __libc_start_main, which runs after the dynamic
 * loader has loaded and relocated every library (the slow part of starting ffmpeg)
 * and before main. On descriptor 3, a Unix socket to the service, it says it is
 * ready with one byte, then reads the real command line: arguments, each ending in
 * a NUL byte, until end of file. Then it takes itself out of LD_PRELOAD (where the
 * service put it first), so that a program the process runs in turn (a wrapper
 * script's exec) starts as usual, writes them over the command line it was started
 * with (what ps shows; the service starts it with a long one to make room), and
 * calls main with them.
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

/* LD_PRELOAD as it was before the service put this library first. */
static void forget_preload(void) {
    const char *preload = getenv("LD_PRELOAD");
    if (preload == NULL)
        return;
    const char *rest = strchr(preload, ':');
    if (rest != NULL && rest[1] != '\0')
        setenv("LD_PRELOAD", rest + 1, 1);
    else
        unsetenv("LD_PRELOAD");
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
    char ready = 'R';
    if (real == NULL || write(CONTROL_FD, &ready, 1) != 1)
        _exit(125);
    size_t len;
    char *line = read_command_line(&len);
    close(CONTROL_FD);
    /* No arguments (the service let the process go), or a line cut short. */
    if (line == NULL || len == 0 || line[len - 1] != '\0')
        _exit(0);
    int count = 0;
    for (size_t i = 0; i < len; i++)
        count += line[i] == '\0';
    char **args = calloc((size_t)count + 1, sizeof(char *));
    if (args == NULL)
        _exit(125);
    forget_preload();
    size_t at = 0;
    for (int i = 0; i < count; i++) {
        args[i] = line + at;
        at += strlen(line + at) + 1;
    }
    show_command_line(argc, argv, count, args);
    return real(main, count, args, init, fini, rtld_fini, stack_end);
}
