/* File IO alone (cuproof/internal/file.h): whole files read and written, each
 * failure naming the path. Every writer and reader of reports/ goes
 * through here, so that none needs another format's file. */
#include <cuproof/internal/file.h>

#include <cuproof/error.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cp_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return cp_failf(CP_EIO, "cannot write %s: %s", path, strerror(errno));
    size_t len = strlen(text);
    bool ok = fwrite(text, 1, len, f) == len;
    ok = (fclose(f) == 0) && ok;
    if (!ok)
        return cp_failf(CP_EIO, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

char *cp_read_file(const char *path)
{
    size_t len = 0;
    return cp_read_file_len(path, &len);
}

char *cp_read_file_len(const char *path, size_t *out_len)
{
    *out_len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        cp_failf(CP_EIO, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int read_errno = 0;
    for (;;) {
        if (cap - len < 65536) {
            cap = cap ? cap * 2 : 65536;
            char *p = realloc(buf, cap + 1);
            if (!p) {
                free(buf);
                fclose(f);
                cp_failf(CP_ENOMEM, "out of memory reading %s", path);
                return NULL;
            }
            buf = p;
        }
        errno = 0;
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            read_errno = errno;
            break;
        }
    }
    bool err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        /* Say why: a directory opens, and then cannot be read. */
        cp_failf(CP_EIO, "cannot read %s: %s", path,
                 read_errno ? strerror(read_errno) : "a read error");
        return NULL;
    }
    buf[len] = '\0';
    *out_len = len;
    return buf;
}

int cp_make_dirs(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return cp_failf(CP_EINVAL, "output directory path is too long");
    for (char *p = path + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            struct stat st;
            if (stat(path, &st) != 0) {
                if (mkdir(path, 0777) != 0 && errno != EEXIST)
                    return cp_failf(CP_EIO, "cannot create output directory %s: %s", path,
                                    strerror(errno));
            } else if (!S_ISDIR(st.st_mode)) {
                return cp_failf(CP_EIO, "cannot create output directory %s: %s is not a directory",
                                dir, path);
            }
            *p = c;
            if (c == '\0')
                break;
        }
    }
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/.cuproof-write-test", dir);
    FILE *f = fopen(probe, "w");
    if (!f)
        return cp_failf(CP_EIO, "output directory %s is not writable: %s", dir, strerror(errno));
    fclose(f);
    remove(probe);
    return 0;
}
