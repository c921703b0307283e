/*
 * A traced program's per-process files read while the program runs
 * (cp_follower, cuproof/program.h): `cuproof exec` polls the
 * follower from the launcher's wait, each poll reading what the files grew
 * by (whole lines, whole rec records: the rest waits for more bytes) into
 * each file's records as the reader hands them on; after the program, the
 * judge's reading (cp_follower_stream) reads only what is left and hands
 * every record on in the order, and with the values, that the reader
 * gives a whole file (cp_proc_stream_dir).
 *
 * Memory: up to the records the analysis holds (keep_records) are held;
 * past them the analysis streams anyway, and a JSON-lines file's records
 * go on to a rec file of the follower's own ("spilled": parsed once,
 * decoded again in a fraction of the time), while a rec file is left to
 * the reader after the program (decoding it then costs what decoding a
 * spill would). A file the follower cannot serve (it was replaced or
 * shrank, it does not parse, it could not be read or spilled) is read
 * after the program by today's reader, in its place among the files, so
 * that its error, if it has one, is today's error.
 */
#define _GNU_SOURCE
#include <cuproof/clock.h>
#include <cuproof/program.h>

#include <cuproof/error.h>
#include <cuproof/internal/proc.h>
#include <cuproof/internal/rec.h>
#include <cuproof/internal/grow.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* One poll's work at most: the launcher checks on the program between
 * polls, so a poll must not keep it from seeing the program exit. */
#define POLL_BUDGET_MS 10.0
/* How often a busy run of polls lists the directory for new files. */
#define LIST_EVERY_MS 50.0
/* Bytes read from one file at a time. */
#define CHUNK ((size_t)1 << 20)

typedef enum {
    HELD,    /* its records are held in memory */
    SPILLED, /* its records go to a rec file of the follower's */
    AFTER,   /* read after the program by today's reader */
} how;

typedef struct followed {
    char *name, *path;
    how how;
    bool known_id; /* the file's device and inode, to see it replaced */
    dev_t dev;
    ino_t ino;
    uint64_t offset; /* bytes handed to the parser */
    cp_proc_parser *parser;
    bool ended;    /* the parser read the file's end */
    cp_trace own;  /* the parser's: the processes, counts, ranges until the end */
    cp_trace held; /* the records as the reader hands them on */
    cp_rec_writer *spill;
    char *spill_path;
    uint32_t spill_processes; /* processes described in the spill */
    uint64_t spilled;         /* records written to the spill */
    uint64_t during;          /* records read while the program ran */
    uint64_t seen_running;    /* records read before the program was last seen running */
} followed;

struct cp_follower {
    char *dir, *spill_root, *spill_dir;
    uint64_t keep;
    followed **files;
    size_t n, cap;
    bool spilling; /* past keep: records are no longer held */
    bool finished; /* the program ended: the files were read to their ends */
    bool busy;     /* the last poll left bytes to read */
    double listed_at;
    size_t next;  /* the file the next poll starts with */
    char **order; /* the files at the end, in name order */
    size_t norder;
    char why[512]; /* the first reason records were left to after the program */
    char *buf;
};

/* The first reason records were left to after the program ("FILE: why",
 * or the reason alone when it is no file's). */
static void say_why(cp_follower *fl, const char *file, const char *why)
{
    if (!fl->why[0])
        snprintf(fl->why, sizeof fl->why, "%s%s%s", file ? file : "", file ? ": " : "", why);
}

/* A file's records are left to the reader after the program: what was
 * read of it goes. */
static void leave(cp_follower *fl, followed *f, const char *why)
{
    if (f->how != AFTER)
        say_why(fl, f->name, why);
    f->how = AFTER;
    cp_proc_parser_free(f->parser);
    f->parser = NULL;
    cp_trace_free(&f->own);
    cp_trace_free(&f->held);
    cp_trace_init(&f->own);
    cp_trace_init(&f->held);
    cp_rec_writer_abandon(f->spill);
    f->spill = NULL;
    if (f->spill_path)
        remove(f->spill_path);
}

/* The parser's records, as the reader hands them on (their names valid
 * during the call only): held, or written to the spill. */
static int take(void *ctx, const cp_activity *a)
{
    followed *f = ctx;
    if (f->how == SPILLED) {
        int rc = 0;
        /* An activity names its process by index, which the spill's
         * reader checks against the processes it describes. */
        while (rc == 0 && f->spill_processes <= a->process &&
               f->spill_processes < f->own.nprocesses)
            rc = cp_rec_put_process(f->spill, &f->own.processes[f->spill_processes++]);
        if (rc == 0)
            rc = cp_rec_put(f->spill, a);
        f->spilled += rc == 0;
        return rc;
    }
    return cp_trace_add(&f->held, a) < 0
               ? cp_failf(CP_ENOMEM, "out of memory holding %s's records", f->path)
               : 0;
}

/* From here the file's records go to a rec file of the follower's, the
 * held ones first. */
static int spill(cp_follower *fl, followed *f)
{
    if (!fl->spill_dir) {
        size_t len = strlen(fl->spill_root) + 32;
        char *dir = malloc(len);
        if (!dir)
            return cp_failf(CP_ENOMEM, "out of memory");
        snprintf(dir, len, "%s/.cuproof-follow.XXXXXX", fl->spill_root);
        if (!mkdtemp(dir)) {
            int rc = cp_failf(CP_EIO, "cannot make %s: %s", dir, strerror(errno));
            free(dir);
            return rc;
        }
        fl->spill_dir = dir;
    }
    size_t len = strlen(fl->spill_dir) + strlen(f->name) + 8;
    if (!(f->spill_path = malloc(len)))
        return cp_failf(CP_ENOMEM, "out of memory");
    snprintf(f->spill_path, len, "%s/%s.rec", fl->spill_dir, f->name);
    int rc = cp_rec_writer_open(&f->spill, f->spill_path);
    f->how = SPILLED;
    for (size_t i = 0; rc == 0 && i < f->held.n; i++)
        rc = take(f, &f->held.items[i]);
    cp_trace_free(&f->held);
    cp_trace_init(&f->held);
    if (rc == 0 && f->ended) {
        rc = cp_rec_writer_close(f->spill, NULL);
        f->spill = NULL;
    }
    return rc;
}

/* Whether `name` is the rec form's. */
static bool is_rec(const char *name)
{
    size_t n = strlen(name);
    return n > 11 && strcmp(name + n - 11, ".proc.cprec") == 0;
}

/* Why a file past the records to hold is read after the program: a rec
 * file always, a JSON-lines file when there is nowhere to spill. */
static const char *why_after(const cp_follower *fl, const char *name, char *why, size_t size)
{
    if (is_rec(name))
        snprintf(why, size,
                 "past the %llu records held (--keep-records): a rec file is read "
                 "after the program",
                 (unsigned long long)fl->keep);
    else if (!fl->spill_root)
        snprintf(why, size,
                 "past the %llu records held (--keep-records), with no directory to "
                 "keep the rest in: read after the program",
                 (unsigned long long)fl->keep);
    else
        return NULL;
    return why;
}

/* Past the records to hold: a JSON-lines file's go to a spill, a rec
 * file's are left to the reader after the program. */
static void start_spilling(cp_follower *fl)
{
    fl->spilling = true;
    for (size_t i = 0; i < fl->n; i++) {
        followed *f = fl->files[i];
        char why[200];
        if (f->how != HELD)
            continue;
        if (why_after(fl, f->name, why, sizeof why))
            leave(fl, f, why);
        else if (spill(fl, f) < 0)
            leave(fl, f, cp_last_error());
    }
}

static void bound(cp_follower *fl)
{
    if (fl->spilling)
        return;
    uint64_t held = 0;
    for (size_t i = 0; i < fl->n; i++)
        if (fl->files[i]->how == HELD)
            held += fl->files[i]->held.n + fl->files[i]->own.n;
    if (held > fl->keep)
        start_spilling(fl);
}

static followed *find(const cp_follower *fl, const char *name)
{
    for (size_t i = 0; i < fl->n; i++)
        if (strcmp(fl->files[i]->name, name) == 0)
            return fl->files[i];
    return NULL;
}

/* A file seen for the first time. Returns it, or NULL when out of memory. */
static followed *add(cp_follower *fl, const char *name)
{
    followed **p = cp_grow(fl->files, &fl->cap, fl->n, sizeof *p, 16);
    if (!p)
        return NULL;
    fl->files = p;
    followed *f = calloc(1, sizeof *f);
    size_t len = strlen(fl->dir) + strlen(name) + 2;
    if (!f || !(f->name = strdup(name)) || !(f->path = malloc(len))) {
        if (f)
            free(f->name);
        free(f);
        return NULL;
    }
    snprintf(f->path, len, "%s/%s", fl->dir, name);
    cp_trace_init(&f->own);
    cp_trace_init(&f->held);
    fl->files[fl->n++] = f;
    char why[200];
    if (fl->spilling && why_after(fl, name, why, sizeof why))
        leave(fl, f, why);
    else if (cp_proc_parser_new(&f->parser, f->path, &f->own, take, f) < 0)
        leave(fl, f, cp_last_error());
    else if (fl->spilling && spill(fl, f) < 0)
        leave(fl, f, cp_last_error());
    return f;
}

/* Reads up to `max` more bytes of `f` into its parser; *more says whether
 * the file holds more already. A file replaced or cut shorter than what
 * was read, or one that does not parse, is left to after the program; so
 * is one that cannot be opened at the end (`last`), whose error is then
 * today's reader's to give (while the program runs it may be a moment's). */
static void read_some(cp_follower *fl, followed *f, size_t max, bool last, bool *more)
{
    *more = false;
    if (f->how == AFTER || f->ended)
        return;
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (last)
            leave(fl, f, strerror(errno));
        return;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        leave(fl, f, strerror(errno));
    } else if (f->known_id && (st.st_dev != f->dev || st.st_ino != f->ino)) {
        leave(fl, f, "replaced while the program ran");
    } else if ((uint64_t)st.st_size < f->offset) {
        leave(fl, f, "shorter than what was read of it while the program ran");
    } else if ((uint64_t)st.st_size > f->offset) {
        f->known_id = true;
        f->dev = st.st_dev;
        f->ino = st.st_ino;
        uint64_t left = (uint64_t)st.st_size - f->offset;
        size_t want = left < max ? (size_t)left : max;
        want = want < CHUNK ? want : CHUNK;
        ssize_t got = pread(fd, fl->buf, want, (off_t)f->offset);
        if (got < 0) {
            leave(fl, f, strerror(errno));
        } else if (cp_proc_parser_push(f->parser, fl->buf, (size_t)got) < 0) {
            leave(fl, f, cp_last_error());
        } else {
            f->offset += (uint64_t)got;
            *more = f->offset < (uint64_t)st.st_size;
        }
    } else {
        f->known_id = true;
        f->dev = st.st_dev;
        f->ino = st.st_ino;
    }
    close(fd);
}

/* Files that appeared since the last listing join the followed. */
static void list_new(cp_follower *fl)
{
    char **names = NULL;
    size_t n = 0;
    if (cp_proc_list_dir(fl->dir, &names, &n) < 0)
        return; /* not there yet, or not listable now: the end's listing decides */
    for (size_t i = 0; i < n; i++)
        if (!find(fl, names[i]) && !add(fl, names[i]))
            say_why(fl, NULL, "out of memory following the files: read after the program");
    cp_proc_names_free(names, n);
}

/* The records a file's reading has handed on so far. */
static uint64_t records_read(const followed *f)
{
    return f->how == AFTER ? 0 : f->held.n + f->own.n + f->spilled;
}

bool cp_follower_poll(void *follower)
{
    cp_follower *fl = follower;
    if (!fl || fl->finished)
        return false;
    /* The launcher polls only after it saw the program (or a traced
     * descendant) still running: what the earlier polls read was read
     * while it ran. What this poll reads may have been written by its
     * last act and read as it exited, so it counts only once a later
     * poll's call confirms the program ran past it; the last poll's
     * records count as read after the program, an undercount of a poll
     * at most, never a claim the timing could not back. */
    for (size_t i = 0; i < fl->n; i++)
        fl->files[i]->seen_running = records_read(fl->files[i]);
    double t0 = cp_now_ms();
    /* A poll that continues a busy one reads on; the others look for new
     * files first (a poll with nothing to read costs little). */
    if (!fl->busy || t0 - fl->listed_at >= LIST_EVERY_MS) {
        list_new(fl);
        fl->listed_at = t0;
    }
    fl->busy = false;
    for (size_t k = 0; k < fl->n; k++) {
        size_t i = (fl->next + k) % fl->n;
        bool more = false;
        read_some(fl, fl->files[i], CHUNK, false, &more);
        fl->busy = fl->busy || more;
        bound(fl);
        if (cp_now_ms() - t0 >= POLL_BUDGET_MS) {
            fl->next = (i + 1) % fl->n;
            fl->busy = true;
            break;
        }
    }
    return fl->busy;
}

/* The program ended: what each file holds now is all it will hold for
 * the judge (today's reader reads the files at that moment too). Every
 * file the directory lists is read to its end; one that no longer is
 * listed is not read at all. */
static int finish(cp_follower *fl)
{
    fl->finished = true;
    for (size_t i = 0; i < fl->n; i++) {
        followed *f = fl->files[i];
        f->during = f->how == AFTER ? 0 : f->seen_running;
    }
    int rc = cp_proc_list_dir(fl->dir, &fl->order, &fl->norder);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < fl->norder; i++) {
        followed *f = find(fl, fl->order[i]);
        if (!f && !(f = add(fl, fl->order[i])))
            return cp_failf(CP_ENOMEM, "out of memory reading %s", fl->dir);
        bool more = true;
        while (more && f->how != AFTER) {
            read_some(fl, f, SIZE_MAX, true, &more);
            bound(fl);
        }
        if (f->how == AFTER)
            continue;
        if (cp_proc_parser_end(f->parser) < 0) {
            leave(fl, f, cp_last_error());
            continue;
        }
        f->ended = true;
        bound(fl);
        if (f->how == SPILLED && f->spill) {
            int closed = cp_rec_writer_close(f->spill, NULL);
            f->spill = NULL;
            if (closed < 0)
                leave(fl, f, cp_last_error());
        }
    }
    return 0;
}

/* A process as its file's first record describes it: what the end
 * (ended, counts, cost) says is put on after its records, as the reader
 * puts it. */
static cp_process as_begun(const cp_process *p)
{
    cp_process q = *p;
    q.ended = false;
    q.why[0] = '\0';
    q.last_ns = 0;
    q.dropped = q.zero_timestamps = 0;
    memset(&q.cost, 0, sizeof q.cost);
    return q;
}

/* A file's records as the judge gets them: their process indices moved
 * past the processes the files before it gave. */
typedef struct placed {
    cp_proc_emit emit;
    void *ctx;
    uint32_t base;
} placed;

static int place(void *ctx, const cp_activity *a)
{
    const placed *p = ctx;
    cp_activity b = *a;
    b.process += p->base;
    return p->emit(p->ctx, &b);
}

/* One followed file's records into `emit`, its processes into `t`, as
 * cp_proc_stream hands a file on. How each process ended and the file's
 * counts go on after the records through the rec reader's one rule
 * (cp_rec_apply_meta), as a process end and an end record would. */
static int replay(const followed *f, cp_trace *t, cp_proc_emit emit, void *ctx)
{
    placed to = {emit, ctx, (uint32_t)t->nprocesses};
    for (size_t i = 0; i < f->own.nprocesses; i++) {
        cp_process p = as_begun(&f->own.processes[i]);
        if (cp_trace_add_process(t, &p) < 0)
            return cp_failf(CP_ENOMEM, "out of memory reading %s", f->path);
    }
    int rc = 0;
    for (size_t i = 0; rc == 0 && f->how == HELD && i < f->held.n; i++)
        rc = place(&to, &f->held.items[i]);
    if (rc == 0 && f->how == SPILLED)
        rc = cp_rec_stream(f->spill_path, NULL, place, &to, NULL, NULL, 0);
    cp_rec_item *it = rc == 0 ? calloc(1, sizeof *it) : NULL;
    if (rc == 0 && !it)
        rc = cp_failf(CP_ENOMEM, "out of memory reading %s", f->path);
    for (size_t i = 0; rc == 0 && i < f->own.nprocesses; i++) {
        it->process = f->own.processes[i];
        it->process_index = (uint32_t)i;
        it->type = CP_REC_PROCESS_END;
        cp_rec_apply_meta(t, it, to.base);
        it->type = CP_REC_PROCESS_COST;
        cp_rec_apply_meta(t, it, to.base);
    }
    /* The names the file gave its streams, which the parser kept in the
     * file's own trace (its processes from 0) as the reader puts them in
     * t: under the processes' indices in t. */
    for (size_t i = 0; rc == 0 && i < f->own.nstream_names; i++) {
        it->type = CP_REC_STREAM_NAME;
        it->stream_name = f->own.stream_names[i];
        it->process_index = it->stream_name.process;
        rc = cp_rec_apply_meta(t, it, to.base);
    }
    if (rc == 0) {
        it->type = CP_REC_END;
        it->end = (cp_rec_end){.dropped_records = f->own.dropped_records,
                               .renamed_kernels = f->own.renamed_kernels,
                               .has_legacy_stream = f->own.has_legacy_stream,
                               .legacy_device = f->own.legacy_device,
                               .legacy_context = f->own.legacy_context,
                               .legacy_stream = f->own.legacy_stream};
        cp_rec_apply_meta(t, it, to.base);
    }
    free(it);
    return rc;
}

int cp_follower_stream(cp_follower *fl, cp_trace *t, size_t *nfiles, cp_proc_emit emit, void *ctx,
                       uint64_t *during, char *why, size_t why_size)
{
    *nfiles = 0;
    *during = 0;
    if (why_size)
        why[0] = '\0';
    int rc = fl->finished ? 0 : finish(fl);
    if (rc < 0)
        return rc;
    /* Said even when a file read after the program fails: it says why
     * that file was read then. */
    if (why_size)
        snprintf(why, why_size, "%s", fl->why);
    size_t n0 = t->n, np0 = t->nprocesses, nsn0 = t->nstream_names;
    uint64_t dropped0 = t->dropped_records;
    for (size_t i = 0; rc == 0 && i < fl->norder; i++) {
        const followed *f = find(fl, fl->order[i]);
        if (f->how == AFTER) {
            rc = cp_proc_stream(f->path, t, emit, ctx);
        } else {
            rc = replay(f, t, emit, ctx);
            *during += f->during;
        }
    }
    if (rc < 0) {
        t->n = n0;
        t->nprocesses = np0;
        t->nstream_names = nsn0;
        t->dropped_records = dropped0;
        *during = 0;
        return rc;
    }
    *nfiles = fl->norder;
    return 0;
}

int cp_follower_new(cp_follower **out, const char *proc_dir, uint64_t keep_records,
                    const char *spill_dir)
{
    *out = NULL;
    cp_follower *fl = calloc(1, sizeof *fl);
    if (!fl || !(fl->dir = strdup(proc_dir)) || !(fl->buf = malloc(CHUNK)) ||
        (spill_dir && !(fl->spill_root = strdup(spill_dir)))) {
        cp_follower_free(fl);
        return cp_failf(CP_ENOMEM, "out of memory following %s", proc_dir);
    }
    fl->keep = keep_records ? keep_records : CP_PROGRAM_KEEP_RECORDS;
    *out = fl;
    return 0;
}

void cp_follower_free(cp_follower *fl)
{
    if (!fl)
        return;
    for (size_t i = 0; i < fl->n; i++) {
        followed *f = fl->files[i];
        cp_proc_parser_free(f->parser);
        cp_trace_free(&f->own);
        cp_trace_free(&f->held);
        cp_rec_writer_abandon(f->spill);
        if (f->spill_path)
            remove(f->spill_path);
        free(f->spill_path);
        free(f->name);
        free(f->path);
        free(f);
    }
    if (fl->spill_dir)
        rmdir(fl->spill_dir);
    cp_proc_names_free(fl->order, fl->norder);
    free(fl->files);
    free(fl->spill_dir);
    free(fl->spill_root);
    free(fl->dir);
    free(fl->buf);
    free(fl);
}
