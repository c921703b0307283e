/* report.html: a self-contained page (no fetches) that leads with its key
 * findings (reports/headline.h), then the cases by interest: tables, and a
 * timeline per traced variant drawn by the page's own script, with long
 * check tables and tall timelines folded. */
#include <cuproof/internal/tracefile.h>
#include <cuproof/internal/perfetto.h>
#include <cuproof/internal/report.h>
#include <cuproof/error.h>
#include <cuproof/internal/file.h>

#include "html_buf.h"

#include "headline.h"
#include "kernels.h"
#include <cuproof/summary.h>

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- timelines ---- */

/* Records embedded as themselves at most; a larger trace is embedded as
 * its summary (cuproof/summary.h) and its records are left to the
 * Perfetto file. */
#define TL_MAX_ITEMS 50000

/* report.html opens a variant's timeline at most this many stream lanes
 * tall (about 150 px) and folds a taller one: a case of 64 streams would
 * otherwise put a screen of lanes between its numbers and the next case
 * (the replay of the ci recording: 27,800 px with 8, 28,800 with 16). */
#define TL_OPEN_LANES 8

/*
 * The summary of a trace too large to embed record by record: per lane
 * and per column, the busiest kind, how busy (0..255) and the records
 * that touched it. The page draws each column in its busiest kind's
 * colour, as dark as the column is busy: what the records would show
 * zoomed out, at a size that does not grow with the records.
 * "summary":{"bins":B,"bin_us":W,"cells":[[lane,bin,kind,busy 0..255,records],...]}
 */
static void timeline_summary(html_buf *b, const cp_summary *s, const size_t *row)
{
    html_fmt(b, "\"summary\":{\"bins\":%u,\"bin_us\":%.3f,\"cells\":[", s->nbins,
             s->width_ns / 1e3);
    bool first_cell = true;
    for (size_t cell = 0; cell < (size_t)s->nlanes * s->nbins; cell++) {
        cp_summary_kind kind;
        double level;
        uint32_t count = cp_summary_cell(s, cell, &kind, &level);
        if (!count)
            continue;
        html_fmt(b, "%s[%zu,%zu,%d,%d,%u]", first_cell ? "" : ",", row[cell / s->nbins],
                 cell % s->nbins, (int)kind, (int)lround(level * 255), count);
        first_cell = false;
    }
    html_raw(b, "]},");
}

/* A lane's rank, or -1: a traced program's process without one (its
 * launcher), or a case's trace. */
static int32_t lane_rank(const cp_trace *t, const cp_lane *l)
{
    return l->process < t->nprocesses ? cp_process_rank(&t->processes[l->process]) : -1;
}

typedef struct lane_key {
    int64_t rank; /* INT64_MAX without one: after the ranks */
    size_t lane;
} lane_key;

static int lane_key_cmp(const void *x, const void *y)
{
    const lane_key *a = x, *b = y;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return (a->lane > b->lane) - (a->lane < b->lane);
}

/* The row each lane is drawn on (row[m->nlanes]: the NVTX phases, last):
 * a distributed program's lanes stacked by rank, rank 0's first in the
 * analysis' order, then those of processes without a rank; any other
 * trace's in the analysis' order. *order lists the lanes by row. Returns
 * 0, or -1 when out of memory. */
static int lane_rows(const cp_trace *t, const cp_metrics *m, size_t **row, lane_key **order)
{
    size_t nl = m->nlanes;
    *row = malloc((nl + 1) * sizeof **row);
    *order = malloc((nl ? nl : 1) * sizeof **order);
    if (!*row || !*order) {
        free(*row);
        free(*order);
        return -1;
    }
    for (size_t k = 0; k < nl; k++) {
        int32_t rank = lane_rank(t, &m->lanes[k]);
        (*order)[k] = (lane_key){rank >= 0 ? rank : INT64_MAX, k};
    }
    qsort(*order, nl, sizeof **order, lane_key_cmp);
    for (size_t k = 0; k < nl; k++)
        (*row)[(*order)[k].lane] = k;
    (*row)[nl] = nl;
    return 0;
}

/* A lane's label: "rank 1 GPU 1 ctx 1 stream 7" for a rank's (its pid is
 * in the ranks' table), the pid for a program's other processes; the
 * legacy default stream is "default stream" and a named stream
 * "NAME (stream 7)" (cuproof/units.h). Written as a JSON string that the
 * page's script reads, escaped: a program's stream name may hold quotes
 * or "</script>". */
static void lane_label(html_buf *b, const cp_trace *t, const cp_lane *l, bool first)
{
    int32_t rank = lane_rank(t, l);
    char stream[CP_STREAM_LABEL_MAX], label[CP_STREAM_LABEL_MAX + 96];
    cp_stream_label(t, l->process, l->device, l->context, l->stream, stream, sizeof stream);
    if (rank >= 0)
        snprintf(label, sizeof label, "rank %d GPU %u ctx %u %s", (int)rank, l->device,
                 l->context, stream);
    else if (t->nprocesses > 1 && l->process < t->nprocesses)
        snprintf(label, sizeof label, "GPU %u pid %u ctx %u %s", l->device,
                 t->processes[l->process].pid, l->context, stream);
    else
        snprintf(label, sizeof label, "GPU %u ctx %u %s", l->device, l->context, stream);
    if (!first)
        html_raw(b, ",");
    html_json_string(b, label);
}

/*
 * One variant's timeline: a div the page's script draws, and its data as
 * JSON: lanes (one per device, context and stream, stacked by rank for a
 * distributed program (lane_rows), then the NVTX phases),
 * then either the items [lane, start us, duration us, kind, name index,
 * bytes] relative to the first record and the names, or, past
 * TL_MAX_ITEMS records, a summary (timeline_summary) and no items: the
 * page stays small and quick however long the trace, and says that the
 * records are in the Perfetto file. Runtime API calls are left out. A
 * variant whose records were streamed, not kept (`summary` non-NULL),
 * brings its summary along.
 */
static void timeline_html(html_buf *b, const char *id, const cp_trace *t, const cp_metrics *m,
                          const cp_summary *summary)
{
    /* The analysis' lanes, already sorted by (device, process, context,
     * stream), drawn in lane_rows' order; a traced program's lanes name
     * their rank or process. */
    const cp_lane *lanes = m->lanes;
    size_t nl = m->nlanes;
    cp_summary_span sp = CP_SUMMARY_SPAN_INIT;
    for (size_t i = 0; !summary && i < t->n; i++)
        if (cp_summary_lane(m, &t->items[i]) >= 0)
            cp_summary_span_add(&sp, &t->items[i]);
    uint64_t origin = summary ? summary->origin : sp.records ? sp.origin : 0;
    uint64_t end = summary ? summary->end : sp.records ? sp.end : 0;
    uint64_t total = summary ? summary->records : sp.records;
    size_t *row = NULL;
    lane_key *order = NULL;
    if (lane_rows(t, m, &row, &order) < 0) {
        b->oom = true;
        return;
    }
    html_fmt(b, "<div class=\"timeline\" id=\"%s\"></div><script type=\"application/json\" "
           "class=\"timeline-data\" data-for=\"%s\">{\"lanes\":[", id, id);
    for (size_t k = 0; k < nl; k++)
        lane_label(b, t, &lanes[order[k].lane], k == 0);
    free(order);
    html_fmt(b, "%s\"NVTX phases\"],", nl ? "," : "");
    if (summary || total > TL_MAX_ITEMS) {
        cp_summary own = {0};
        if (!summary) {
            if (cp_summary_init(&own, m, &sp, CP_SUMMARY_BINS) < 0) {
                b->oom = true;
                free(row);
                return;
            }
            for (size_t i = 0; i < t->n; i++)
                cp_summary_add(&own, m, &t->items[i]);
        }
        const cp_summary *s = summary ? summary : &own;
        timeline_summary(b, s, row);
        html_fmt(b, "\"span_us\":%.3f,\"items\":[],\"names\":[],\"total\":%llu}</script>",
                 (double)(end - origin) / 1e3, (unsigned long long)total);
        html_fmt(b, "<p>%llu records: too many to embed, so the timeline is their summary, "
                    "a column per 1/%u of the span in its busiest kind's colour, as dark as it "
                    "was busy. Every record is in the Perfetto file.</p>",
                 (unsigned long long)total, s->nbins);
        cp_summary_free(&own);
        free(row);
        return;
    }
    html_raw(b, "\"items\":[");
    size_t shown = 0, nnames = 0, names_cap = 0;
    const char **names = NULL;
    size_t *lens = NULL;
    for (size_t i = 0; i < t->n; i++) {
        const cp_activity *a = &t->items[i];
        long lane = cp_summary_lane(m, a);
        if (lane < 0)
            continue;
        /* Names by their index in "names": a trace repeats a few names
         * many times, and the page embeds every record it draws. The
         * label is a prefix of the interned name (cuproof/units.h), so
         * that the pointer still finds it. */
        size_t len;
        const char *name = cp_activity_label(a, &len);
        size_t at = 0;
        while (at < nnames && (names[at] != name || lens[at] != len) &&
               (lens[at] != len || strncmp(names[at], name, len) != 0))
            at++;
        if (at == nnames) {
            if (nnames == names_cap) {
                size_t cap = names_cap ? 2 * names_cap : 64;
                const char **p = realloc(names, cap * sizeof *p);
                size_t *q = p ? realloc(lens, cap * sizeof *q) : NULL;
                if (p)
                    names = p;
                if (!q) {
                    b->oom = true;
                    break;
                }
                lens = q;
                names_cap = cap;
            }
            lens[nnames] = len;
            names[nnames++] = name;
        }
        uint64_t length = a->end > a->start ? a->end - a->start : 0;
        html_fmt(b, "%s[%zu,%.3f,%.3f,%d,%zu,%llu]", shown ? "," : "", row[lane],
                 (double)(a->start - origin) / 1e3, (double)length / 1e3, (int)cp_summary_kind_of(a), at,
                 (unsigned long long)a->bytes);
        shown++;
    }
    html_raw(b, "],\"names\":[");
    for (size_t k = 0; k < nnames; k++) {
        html_raw(b, k ? "," : "");
        html_json_string_n(b, names[k], lens[k]);
    }
    free(names);
    free(lens);
    free(row);
    html_fmt(b, "],\"total\":%llu}</script>", (unsigned long long)total);
}

/* The page's one script: draws every .timeline from its JSON on a canvas
 * (lanes, copies by direction and kernels in their own colours, the time
 * with a copy and a kernel both running shaded, an axis in ms), zooms with
 * the wheel, pans by dragging, and names what is under the pointer. It
 * draws by level of detail: each lane's records are sorted once, only
 * those in view are visited (a binary search finds the first), a record
 * two pixels wide or more is drawn as itself, and narrower ones are added
 * up per pixel column and drawn as one column in the colour of the kind
 * that filled it most, as dark as it is full. A summarised timeline
 * (records past the page's cap) draws its columns the same way. When done
 * it counts the coloured pixels it drew (data-ink: lanes, labels and
 * background are grey), marks each timeline drawn with its lane and item
 * counts, stamps <body> with the time by which every timeline had first
 * been drawn (data-first-paint-ms, from the start of navigation: what a
 * reader waits for), with the page's height once drawn (data-page-height)
 * and where the key findings end (data-key-findings-bottom, px from the
 * top), so that a test can hold the page to a size and its findings to
 * the first screen, and counts script errors on <body>. A timeline in a
 * folded <details> has no width of its own: it takes its section's. */
static const char timeline_script[] =
    "<script>\n"
    "(function(){\n"
    "var errors=0;window.addEventListener('error',function(){errors++;"
    "document.body.setAttribute('data-script-errors',String(errors));});\n"
    "document.body.setAttribute('data-script-errors','0');\n"
    "var COLORS=['#2a6fdb','#2e9d57','#d9822b','#8e5bd0','#9aa0a6','#c9b458'];\n"
    "var KINDS=['kernel','copy HtoD','copy DtoH','copy','memset','NVTX phase'];\n"
    "var LANE=16,AXIS=22,LABEL=170,painted=0;\n"
    "function overlaps(items){var ev=[];items.forEach(function(it){"
    "if(it[3]===0)ev.push([it[1],1,0],[it[1]+it[2],-1,0]);"
    "else if(it[3]>=1&&it[3]<=3)ev.push([it[1],0,1],[it[1]+it[2],0,-1]);});"
    "ev.sort(function(a,b){return a[0]-b[0]||(a[1]+a[2])-(b[1]+b[2]);});"
    "var k=0,c=0,open=null,out=[];ev.forEach(function(e){var was=k>0&&c>0;k+=e[1];c+=e[2];"
    "var is=k>0&&c>0;if(!was&&is)open=e[0];if(was&&!is){out.push([open,e[0]]);}});return out;}\n"
    "function first(a,t){var lo=0,hi=a.length;while(lo<hi){var m=(lo+hi)>>1;"
    "if(a[m][1]<t)lo=m+1;else hi=m;}return lo;}\n"
    "function columns(g,cols,w,y){for(var x=0;x<w;x++){var c=cols[x];if(!c)continue;"
    "var best=0,sum=0;for(var k=0;k<6;k++){sum+=c[k];if(c[k]>c[best])best=k;}"
    "g.globalAlpha=Math.min(1,0.25+0.75*Math.min(1,sum));g.fillStyle=COLORS[best];"
    "g.fillRect(x,y+2,1,LANE-4);}g.globalAlpha=1;}\n"
    "function draw(div,d){var cv=div.querySelector('canvas');var w=cv.width,h=cv.height;"
    "var g=cv.getContext('2d');g.clearRect(0,0,w,h);g.font='11px sans-serif';"
    "var span=(d.t1-d.t0)||1,px=(w-LABEL)/span;function X(t){return LABEL+(t-d.t0)*px;}"
    "g.fillStyle='rgba(220,50,50,0.13)';d.ov.forEach(function(o){var a=Math.max(X(o[0]),LABEL),"
    "b=Math.min(X(o[1]),w);if(b>a)g.fillRect(a,AXIS,Math.max(b-a,1),h-AXIS);});"
    "d.lanes.forEach(function(name,i){g.fillStyle=i%2?'#fafafa':'#f0f0f0';"
    "g.fillRect(LABEL,AXIS+i*LANE,w-LABEL,LANE);g.fillStyle='#333';"
    "g.fillText(name,2,AXIS+i*LANE+12);});"
    "if(d.summary){var bw=d.summary.bin_us;d.summary.cells.forEach(function(c){"
    "var a=X(c[1]*bw),b=X((c[1]+1)*bw);if(b<LABEL||a>w)return;a=Math.max(a,LABEL);b=Math.min(b,w);"
    "g.globalAlpha=0.2+0.8*c[3]/255;g.fillStyle=COLORS[c[2]];"
    "g.fillRect(a,AXIS+c[0]*LANE+2,Math.max(b-a,1),LANE-4);});g.globalAlpha=1;}"
    "else d.byLane.forEach(function(list,lane){if(!list.length)return;var y=AXIS+lane*LANE,"
    "cols=null,i=first(list,d.t0-d.maxDur[lane]);for(;i<list.length&&list[i][1]<=d.t1;i++){"
    "var it=list[i],a=X(it[1]),b=X(it[1]+it[2]);if(b<LABEL)continue;a=Math.max(a,LABEL);"
    "if(b-a>=2){g.fillStyle=COLORS[it[3]];g.fillRect(a,y+2,b-a,LANE-4);continue;}"
    "cols=cols||[];var x=Math.min(Math.floor(a),w-1);var c=cols[x]||(cols[x]=[0,0,0,0,0,0]);"
    "c[it[3]]+=Math.max(b-a,0.05);}if(cols)columns(g,cols,w,y);});"
    "g.fillStyle='#333';for(var i=0;i<=8;i++){var t=d.t0+span*i/8,x=LABEL+(w-LABEL)*i/8;"
    "g.fillRect(x,AXIS-6,1,6);g.fillText((t/1000).toFixed(3)+' ms',Math.min(x,w-60),10);}}\n"
    "function hitAt(d,lane,t,per){if(d.summary){var bin=Math.floor(t/d.summary.bin_us);"
    "if(!d.cell){d.cell={};d.summary.cells.forEach(function(c){d.cell[c[0]+','+c[1]]=c;});}"
    "return d.cell[lane+','+bin]||null;}var list=d.byLane[lane];if(!list)return null;"
    "var hit=null,i=first(list,t-per-d.maxDur[lane]);for(;i<list.length&&list[i][1]<=t+per;i++)"
    "if(t>=list[i][1]-per&&t<=list[i][1]+list[i][2]+per)hit=list[i];return hit;}\n"
    "function describe(d,hit){if(d.summary){var bw=d.summary.bin_us;return hit[4]+' records, '+"
    "Math.round(hit[3]/2.55)+'% busy, mostly '+KINDS[hit[2]]+' on '+d.lanes[hit[0]]+"
    "'\\nfrom '+(hit[1]*bw/1000).toFixed(4)+' ms for '+(bw/1000).toFixed(4)+"
    "' ms (a summary: every record is in the Perfetto file)';}"
    "var s=KINDS[hit[3]]+' '+d.names[hit[4]]+' on '+d.lanes[hit[0]]"
    "+'\\nstart '+(hit[1]/1000).toFixed(4)+' ms, '+(hit[2]/1000).toFixed(4)+' ms';"
    "if(hit[5]>0&&hit[3]!==0){s+='\\n'+hit[5]+' bytes'+(hit[2]>0?', '+(hit[5]/hit[2]/1000)"
    ".toFixed(2)+' GB/s':'');}return s;}\n"
    "function setup(div,d){var cv=document.createElement('canvas');"
    "cv.width=Math.max(div.clientWidth||(div.closest('section')||document.body).clientWidth-40,"
    "600);cv.height=AXIS+d.lanes.length*LANE+4;"
    "var tip=document.createElement('div');tip.className='tip';div.appendChild(cv);"
    "div.appendChild(tip);var end=d.span_us||0;d.byLane=d.lanes.map(function(){return[];});"
    "d.maxDur=d.lanes.map(function(){return 0;});d.items.forEach(function(it){"
    "end=Math.max(end,it[1]+it[2]);d.byLane[it[0]].push(it);"
    "d.maxDur[it[0]]=Math.max(d.maxDur[it[0]],it[2]);});"
    "d.byLane.forEach(function(l){l.sort(function(a,b){return a[1]-b[1];});});"
    "d.full=[0,end||1];d.t0=0;d.t1=end||1;d.ov=d.summary?[]:overlaps(d.items);draw(div,d);"
    "painted=Math.max(painted,performance.now());"
    "cv.addEventListener('wheel',function(e){e.preventDefault();var r=cv.getBoundingClientRect();"
    "var f=e.deltaY<0?0.8:1.25,at=d.t0+(e.clientX-r.left-LABEL)/(cv.width-LABEL)*(d.t1-d.t0);"
    "d.t0=Math.max(d.full[0],at-(at-d.t0)*f);d.t1=Math.min(d.full[1],at+(d.t1-at)*f);draw(div,d);});"
    "var drag=null;cv.addEventListener('mousedown',function(e){drag=[e.clientX,d.t0,d.t1];});"
    "window.addEventListener('mouseup',function(){drag=null;});"
    "cv.addEventListener('mousemove',function(e){var r=cv.getBoundingClientRect(),"
    "x=e.clientX-r.left,y=e.clientY-r.top,per=(d.t1-d.t0)/(cv.width-LABEL);"
    "if(drag){var dt=(drag[0]-e.clientX)*per;d.t0=drag[1]+dt;d.t1=drag[2]+dt;draw(div,d);return;}"
    "var hit=hitAt(d,Math.floor((y-AXIS)/LANE),d.t0+(x-LABEL)*per,per);"
    "if(!hit){tip.style.display='none';return;}tip.textContent=describe(d,hit);"
    "tip.style.display='block';tip.style.left=(x+12)+'px';tip.style.top=(y+12)+'px';});"
    "div.className+=' drawn';div.setAttribute('data-lanes',String(d.lanes.length));"
    "div.setAttribute('data-items',String(d.summary?d.total:d.items.length));"
    "if(d.summary)div.setAttribute('data-summary',String(d.summary.cells.length));"
    "var px=cv.getContext('2d').getImageData(0,0,cv.width,cv.height).data,ink=0;"
    "for(var q=0;q<px.length;q+=4){if(Math.max(px[q],px[q+1],px[q+2])-"
    "Math.min(px[q],px[q+1],px[q+2])>30)ink++;}div.setAttribute('data-ink',String(ink));}\n"
    "document.querySelectorAll('script.timeline-data').forEach(function(s){"
    "var div=document.getElementById(s.getAttribute('data-for'));"
    "try{setup(div,JSON.parse(s.textContent));}catch(e){errors++;"
    "document.body.setAttribute('data-script-errors',String(errors));throw e;}});\n"
    "document.body.setAttribute('data-first-paint-ms',String(Math.round(painted)));\n"
    "var kf=document.getElementById('key-findings');if(kf)document.body.setAttribute("
    "'data-key-findings-bottom',String(Math.round(kf.getBoundingClientRect().bottom+"
    "window.scrollY)));\n"
    "document.body.setAttribute('data-page-height',"
    "String(document.documentElement.scrollHeight));\n"
    "})();\n"
    "</script>\n";

static const char timeline_style[] =
    ".timeline{position:relative;margin:.5em 0}.timeline canvas{border:1px solid #ccc;"
    "cursor:crosshair}.tip{display:none;position:absolute;white-space:pre;background:#fff;"
    "border:1px solid #888;padding:.3em;font-size:12px;pointer-events:none}"
    ".legend span{display:inline-block;margin-right:1em}";

static const char legend_html[] =
    "<p class=\"legend\"><span style=\"color:#2a6fdb\">&#9632; kernel</span>"
    "<span style=\"color:#2e9d57\">&#9632; copy HtoD</span>"
    "<span style=\"color:#d9822b\">&#9632; copy DtoH</span>"
    "<span style=\"color:#8e5bd0\">&#9632; other copy</span>"
    "<span style=\"color:#9aa0a6\">&#9632; memset</span>"
    "<span style=\"color:#c9b458\">&#9632; NVTX phase</span>"
    "<span style=\"color:#d23\">shaded: a copy and a kernel both running</span>"
    " (wheel to zoom, drag to pan)</p>";

/* A metric's column header: its label, with its meaning as the tooltip. */
static void metric_th(html_buf *b, const char *name)
{
    const cp_metric_def *d = cp_metric_find(name);
    html_raw(b, "<th title=\"");
    html_text(b, d ? d->meaning : "");
    html_raw(b, "\">");
    html_text(b, d ? d->label : name);
    html_raw(b, "</th>");
}

static void time_cell(html_buf *b, double ms)
{
    char t[32];
    html_cell(b, cp_fmt_ms(ms, t, sizeof t));
}

/* The variants' medians as bars with their fastest and slowest run as a
 * whisker, on a log scale when they span more than twenty times. */
static void times_chart(html_buf *b, const cp_case_result *c)
{
    double lo = INFINITY, hi = 0;
    size_t rows = 0;
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_timing *t = &c->variants[i].timing;
        if (!c->variants[i].ran || !(t->median_ms > 0))
            continue;
        rows++;
        lo = fmin(lo, t->min_ms > 0 ? t->min_ms : t->median_ms);
        hi = fmax(hi, fmax(t->max_ms, t->median_ms));
    }
    if (rows < 2)
        return;
    bool log_scale = hi / lo > 20;
    const double left = 210, width = 420, row = 20;
    double base = log_scale ? log10(lo) - 0.1 : 0, top = log_scale ? log10(hi) + 0.05 : hi * 1.05;
    html_fmt(b, "<h3>Times</h3><svg class=\"times\" width=\"%.0f\" height=\"%.0f\" "
                "role=\"img\"><title>Median time of each variant%s, with its fastest and "
                "slowest run</title>",
             left + width + 90, row * (double)rows + 24, log_scale ? " (logarithmic scale)" : "");
    size_t r = 0;
    char text[32];
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_variant_result *v = &c->variants[i];
        const cp_timing *t = &v->timing;
        if (!v->ran || !(t->median_ms > 0))
            continue;
#define X(ms) (left + width * ((log_scale ? log10(fmax(ms, lo)) : (ms)) - base) / (top - base))
        double y = row * (double)r++ + 4;
        html_fmt(b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"12\">",
                 left - 6, y + 12);
        html_text(b, v->name);
        html_fmt(b, "</text><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"14\" "
                    "fill=\"#2a6fdb\" opacity=\".7\"><title>",
                 left, y, fmax(1, X(t->median_ms) - left));
        html_text(b, cp_fmt_ms(t->median_ms, text, sizeof text));
        html_fmt(b, " median over %d runs</title></rect>", t->runs);
        if (t->max_ms > t->min_ms)
            html_fmt(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#222\"/>",
                     X(t->min_ms), X(t->max_ms), y + 7, y + 7);
        html_fmt(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">", X(fmax(t->max_ms,
                 t->median_ms)) + 6, y + 12);
        html_text(b, cp_fmt_ms(t->median_ms, text, sizeof text));
        html_raw(b, "</text>");
#undef X
    }
    html_fmt(b, "<text x=\"%.0f\" y=\"%.1f\" font-size=\"11\" fill=\"#666\">%s</text></svg>",
             left, row * (double)rows + 18,
             log_scale ? "median (bar) and fastest to slowest run (line), logarithmic scale"
                       : "median (bar) and fastest to slowest run (line)");
}

static const char *check_rank_class(cp_check_status st)
{
    return st == CP_CHECK_FAILED ? "failed" : st == CP_CHECK_SKIPPED ? "skipped" : "passed";
}

/* Checks, the failed first, then the skipped, then the passed. */
static void checks_html(html_buf *b, const cp_case_result *c)
{
    static const cp_check_status order[] = {CP_CHECK_FAILED, CP_CHECK_SKIPPED, CP_CHECK_PASSED};
    /* A traced program's checks are its expectations (and whether the
     * program ran and its trace can be trusted): named so. */
    bool program = strcmp(c->source, "cuproof exec") == 0;
    /* Folded: a long table of passed checks would push the next case a
     * screen or more down, and its summary line says what it holds. A
     * table with a failed check stays open: that check is the news. */
    size_t failed = 0, skipped = 0;
    for (size_t i = 0; i < c->nchecks; i++) {
        failed += c->checks[i].status == CP_CHECK_FAILED;
        skipped += c->checks[i].status == CP_CHECK_SKIPPED;
    }
    html_fmt(b, "<details class=\"checks\" data-checks-failed=\"%zu\"%s><summary><h3>%s</h3> "
                "%zu %s, <span class=\"%s\">%zu failed</span>",
             failed, failed ? " open" : "", program ? "Expectations" : "Checks", c->nchecks,
             program ? (c->nchecks == 1 ? "expectation" : "expectations")
                     : (c->nchecks == 1 ? "check" : "checks"),
             failed ? "failed" : "passed", failed);
    if (skipped)
        html_fmt(b, ", <span class=\"skipped\">%zu skipped</span>", skipped);
    html_fmt(b, "</summary><table><tr><th>%s</th><th>Verdict</th><th>Expected</th>"
                "<th>Measured</th></tr>",
             program ? "Expectation" : "Check");
    for (size_t o = 0; o < 3; o++)
        for (size_t i = 0; i < c->nchecks; i++) {
            const cp_check_result *k = &c->checks[i];
            if (k->status != order[o])
                continue;
            html_raw(b, "<tr><td>");
            html_human(b, k->name);
            if (k->essential)
                html_raw(b, " <small title=\"the case's claim rests on it\">(essential)</small>");
            html_fmt(b, "</td><td class=\"%s\">%s", check_rank_class(k->status),
                     cp_check_status_name(k->status));
            if (k->origin != CP_ORIGIN_LIVE)
                html_raw(b, k->origin == CP_ORIGIN_RECOMPUTED
                                ? " <small>(recomputed from the recorded trace)</small>"
                                : " <small>(as recorded)</small>");
            html_raw(b, "</td><td>");
            char expected[sizeof k->expected];
            html_human(b, cp_fmt_measured(k->expected, expected, sizeof expected));
            html_raw(b, "</td><td>");
            char measured[sizeof k->measured];
            html_human(b, k->status == CP_CHECK_SKIPPED
                              ? k->skip_reason
                              : cp_fmt_measured(k->measured, measured, sizeof measured));
            html_raw(b, "</td></tr>");
        }
    html_raw(b, "</table></details>");
}

/* A claim's explanation: its first sentence, the rest folded under
 * "more" (they run to 1500 characters: the table's cells were walls of
 * text). A sentence ends at ". " before a capital, not in "0.94 s". */
static void reason_html(html_buf *b, const char *reason)
{
    const char *end = NULL;
    for (const char *p = reason; *p && !end; p++)
        if (p[0] == '.' && p[1] == ' ' && p[2] >= 'A' && p[2] <= 'Z')
            end = p + 1;
    if (!end) {
        html_human(b, reason);
        return;
    }
    char first[sizeof ((cp_claim_result *)0)->reason];
    snprintf(first, sizeof first, "%.*s", (int)(end - reason), reason);
    html_human(b, first);
    html_raw(b, " <details class=\"more\"><summary>more</summary>");
    html_human(b, end + 1);
    html_raw(b, "</details>");
}

static void claims_html(html_buf *b, const cp_case_result *c)
{
    html_raw(b, "<h3>The source's claims</h3><table><tr><th>Claim</th><th>Claimed</th>"
                "<th>Measured</th><th>Verdict</th><th>Why</th></tr>");
    for (size_t i = 0; i < c->nclaims; i++) {
        const cp_claim_result *k = &c->claims[i];
        html_raw(b, "<tr><td>");
        html_text(b, k->text);
        html_raw(b, "<br><small>");
        html_text(b, k->source);
        html_raw(b, "</small></td>");
        html_cell(b, k->claimed);
        html_cell(b, k->measured);
        /* The class is the verdict's name, hyphenated ("fell-short"). */
        char cls[24];
        snprintf(cls, sizeof cls, "%s", cp_verdict_name(k->verdict));
        for (char *p = cls; *p; p++)
            *p = *p == ' ' ? '-' : *p;
        html_fmt(b, "<td class=\"%s\">%s", cls, cp_verdict_name(k->verdict));
        if (k->has_window) {
            char rule[256];
            cp_claim_rule(&k->window, rule, sizeof rule);
            html_raw(b, "<br><small>");
            html_text(b, rule);
            html_raw(b, "</small>");
        }
        html_raw(b, "</td><td>");
        reason_html(b, k->reason);
        html_raw(b, "</td></tr>");
    }
    html_raw(b, "</table>");
}

/* A timed variant's median wall time, and beside it, the figure it is
 * judged on when that is the GPU's time (behind the gate or not); the
 * title says which and why. */
static void median_cell(html_buf *b, const cp_variant_result *v)
{
    char t[32];
    bool gpu = v->figure == CP_WORK_GPU && v->ngpu_samples;
    html_raw(b, "<td title=\"");
    html_text(b, gpu && v->gated ? "judged on the GPU's time behind the gate (from the gate's "
                                   "end); wall time first"
                 : gpu          ? "judged on the GPU's time (CUDA events); wall time first"
                 : v->figure_why[0] ? v->figure_why
                                    : "judged on wall time");
    html_raw(b, "\">");
    html_text(b, cp_fmt_ms(v->timing.median_ms, t, sizeof t));
    if (gpu) {
        html_raw(b, "<br><small>GPU ");
        html_text(b, cp_fmt_ms(v->gpu_timing.median_ms, t, sizeof t));
        html_raw(b, "</small>");
    }
    html_raw(b, "</td>");
}

static void variants_html(html_buf *b, const cp_case_result *c)
{
    html_raw(b, "<h3>Variants</h3><table><tr><th>Variant</th><th title=\"wall time, and under "
                "it the GPU's time (CUDA events around each timed run), the figure compare and ab "
                "judge, where the case is judged on it\">Median</th>"
                "<th>Fastest to slowest</th><th>Runs</th>");
    static const char *const cols[] = {"span_ns", "copy_kernel_overlap_ratio",
                                       "peak_concurrent_kernels", "mean_concurrent_kernels",
                                       "idle_ns", "efficiency"};
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++)
        metric_th(b, cols[k]);
    html_raw(b, "<th>Bound by</th><th>Stream lanes</th><th>Findings</th></tr>");
    char t[32];
    for (size_t i = 0; i < c->nvariants; i++) {
        const cp_variant_result *v = &c->variants[i];
        const cp_metrics *m = &v->metrics;
        html_raw(b, "<tr>");
        html_cell(b, v->name);
        if (v->skip_reason[0]) {
            html_raw(b, "<td colspan=\"12\" class=\"skipped\">not run: ");
            html_text(b, v->skip_reason);
            html_raw(b, "</td></tr>");
            continue;
        }
        if (v->timing.runs == 0) {
            /* A traced program without --repeat: its one run carried the
             * tracing, so it has no timing to show, not a time of 0. */
            html_raw(b, "<td colspan=\"2\" class=\"skipped\">not timed</td><td>0");
        } else {
            median_cell(b, v);
            html_raw(b, "<td>");
            html_text(b, cp_fmt_ms(v->timing.min_ms, t, sizeof t));
            html_raw(b, " to ");
            html_text(b, cp_fmt_ms(v->timing.max_ms, t, sizeof t));
            html_fmt(b, "</td><td>%d", v->timing.runs);
        }
        if (v->stopped_by[0])
            html_fmt(b, " <small>(%s)</small>",
                     strcmp(v->stopped_by, "noise") == 0         ? "noise target met"
                     : strcmp(v->stopped_by, "max_time") == 0    ? "time limit"
                     : strcmp(v->stopped_by, "max_samples") == 0 ? "most runs"
                                                                 : "fixed count");
        html_raw(b, "</td>");
        if (!v->traced) {
            html_raw(b, "<td colspan=\"9\">untraced: ");
            html_text(b, v->untraced_reason);
            html_raw(b, "</td></tr>");
            continue;
        }
        time_cell(b, (double)m->span_ns / 1e6);
        html_cell(b, m->copies && m->kernels ? cp_fmt_percent(m->copy_kernel_overlap_ratio, t,
                                                                 sizeof t)
                                             : "no copies and kernels");
        html_fmt(b, "<td>%u</td><td>%.1f</td>", m->peak_concurrent_kernels,
                 m->mean_concurrent_kernels);
        time_cell(b, (double)m->idle_ns / 1e6);
        html_cell(b, cp_fmt_percent(m->efficiency, t, sizeof t));
        html_cell(b, m->bound ? m->bound : "");
        html_fmt(b, "<td>%zu</td><td>", m->nlanes);
        /* Graph-launched work is said beside the findings: how many
         * launches of how many graphs, and the device time they kept busy. */
        if (m->ngraphs) {
            html_fmt(b, "<b>CUDA graphs</b>: %u launch%s of %zu graph%s, busy ", m->graph_launches,
                     m->graph_launches == 1 ? "" : "es", m->ngraphs, m->ngraphs == 1 ? "" : "s");
            html_text(b, cp_fmt_ms((double)m->graph_busy_ns / 1e6, t, sizeof t));
            html_raw(b, "<br>");
        }
        for (size_t f = 0; f < m->nfindings; f++) {
            html_raw(b, "<b>");
            html_human(b, m->findings[f].name);
            html_raw(b, "</b>: ");
            html_human(b, m->findings[f].message);
            html_raw(b, "<br>");
        }
        html_raw(b, "</td></tr>");
    }
    html_raw(b, "</table>");
}

/* One per-collective table: by operation, algorithm and protocol, or
 * (`by_size`) by message-size bucket too. */
static void collectives_html(html_buf *b, const cp_collective_row *rows, size_t n, bool by_size)
{
    if (!n)
        return;
    bool sized = by_size;
    for (size_t i = 0; i < n; i++)
        sized |= rows[i].sized > 0;
    html_fmt(b, "<table><tr><th>Collective</th><th>Algorithm</th><th>Protocol</th>%s"
                "<th>Kernels</th><th>Total</th><th>Median</th><th>Exposed</th>%s</tr>",
             by_size ? "<th>Message (bytes)</th>" : "",
             sized ? "<th>Messages</th><th>Bus GB/s</th>" : "");
    for (size_t i = 0; i < n; i++) {
        const cp_collective_row *r = &rows[i];
        html_raw(b, "<tr><td>");
        html_text(b, r->op);
        html_raw(b, "</td><td>");
        html_text(b, r->algo);
        html_raw(b, "</td><td>");
        html_text(b, r->proto);
        if (by_size)
            html_fmt(b, "</td><td>%llu to %llu", (unsigned long long)r->size_lo,
                     (unsigned long long)r->size_hi);
        html_fmt(b, "</td><td>%u</td>", r->count);
        time_cell(b, (double)r->total_ns / 1e6);
        time_cell(b, (double)r->median_ns / 1e6);
        time_cell(b, (double)r->exposed_ns / 1e6);
        if (sized) {
            /* NCCL's own account ("-": not every kernel had its call). */
            char text[32] = "-", bus[32] = "-";
            uint64_t bytes = 0;
            double alg = 0, busbw = 0;
            if (cp_collective_row_bytes(r, &bytes))
                cp_fmt_bytes((double)bytes, text, sizeof text);
            if (cp_collective_row_bandwidth(r, &alg, &busbw))
                snprintf(bus, sizeof bus, "%.3g", busbw);
            html_fmt(b, "<td>%s</td><td>%s</td>", text, bus);
        }
        html_raw(b, "</tr>");
    }
    html_raw(b, "</table>");
}

/* The kernel breakdown of one traced variant (kernels.h): per class, the
 * top kernels by total device time, demangled, and the rest summed. The
 * rules of the classes are the class cells' titles. */
static void breakdown_html(html_buf *b, const char *variant, const cp_metrics *m)
{
    size_t comm = 0;
    for (size_t i = 0; i < m->nkernel_stats; i++)
        comm += m->kernel_stats[i].cls == CP_CLASS_COMMUNICATION;
    html_raw(b, "<h4>");
    html_text(b, variant);
    html_fmt(b, " <small>%zu distinct kernel%s, %zu of them communication</small></h4>",
             m->nkernel_stats, m->nkernel_stats == 1 ? "" : "s", comm);
    html_raw(b, "<table><tr><th>Class</th><th>Kernel</th><th>Launches</th><th>Total</th>"
                "<th>Mean</th><th>Least</th><th>Most</th></tr>");
    for (size_t c = 0; c < CP_BREAKDOWN_NCLASSES; c++) {
        size_t top[CP_BREAKDOWN_TOP];
        cp_breakdown_rest rest;
        size_t n = cp_breakdown_top(m, cp_breakdown_classes[c], top, &rest);
        for (size_t i = 0; i < n; i++) {
            const cp_kernel_stat *k = &m->kernel_stats[top[i]];
            char name[1024];
            cp_demangle(k->name, name, sizeof name);
            html_raw(b, "<tr><td title=\"");
            html_text(b, cp_work_class_rule(k->cls));
            html_fmt(b, "\">%s</td><td title=\"", cp_work_class_name(k->cls));
            html_text(b, k->name);
            html_raw(b, "\"><code>");
            html_text(b, name);
            html_fmt(b, "</code></td><td>%u</td>", k->count);
            time_cell(b, (double)k->total_ns / 1e6);
            time_cell(b, k->count ? (double)k->total_ns / k->count / 1e6 : 0.0);
            time_cell(b, (double)k->min_ns / 1e6);
            time_cell(b, (double)k->max_ns / 1e6);
            html_raw(b, "</tr>");
        }
        if (rest.kernels) {
            html_fmt(b, "<tr><td>%s</td><td>%zu other kernels</td><td>%llu</td>",
                     cp_work_class_name(cp_breakdown_classes[c]), rest.kernels,
                     (unsigned long long)rest.count);
            time_cell(b, (double)rest.total_ns / 1e6);
            html_raw(b, "<td></td><td></td><td></td></tr>");
        }
    }
    html_raw(b, "</table>");
    /* The collectives by operation (cp_collective_row), then by message
     * size (collective_size_rows). */
    collectives_html(b, m->collective_rows, m->ncollective_rows, false);
    collectives_html(b, m->collective_size_rows, m->ncollective_size_rows, true);
}

static void case_html(html_buf *b, const cp_case_result *c, bool replay)
{
    html_fmt(b, "<section id=\"case-%s\" class=\"case\" data-status=\"%s\"><h2>", c->name,
             cp_status_name(c->status));
    html_text(b, c->name);
    html_fmt(b, " <span class=\"%s\">%s</span></h2><p>", cp_status_name(c->status),
             cp_status_name(c->status));
    html_text(b, c->title);
    html_raw(b, " <small>(");
    html_text(b, c->source);
    html_raw(b, ")</small>");
    if (c->gpu_name[0]) {
        /* A replay ran on no GPU: the GPU is the one it was recorded on,
         * as on the terminal. */
        html_fmt(b, " <small>%s GPU %d, ", replay ? "recorded on" : "on", c->device);
        html_text(b, c->gpu_name);
        html_raw(b, "</small>");
    }
    html_raw(b, "</p>");
    char headline[1024];
    cp_case_headline(c, headline, sizeof headline);
    html_fmt(b, "<p class=\"headline %s\">", cp_status_name(c->status));
    html_human(b, headline);
    html_raw(b, "</p>");
    if (c->nclaims)
        claims_html(b, c);
    if (c->nchecks)
        checks_html(b, c);
    times_chart(b, c);
    if (c->nvariants)
        variants_html(b, c);
    bool any_traced = false;
    for (size_t i = 0; i < c->nvariants; i++)
        any_traced = any_traced || c->variants[i].traced;
    if (any_traced) {
        html_raw(b, "<h3>Timelines</h3>");
        html_raw(b, legend_html);
        for (size_t i = 0; i < c->nvariants; i++) {
            if (!c->variants[i].traced)
                continue;
            char id[160];
            snprintf(id, sizeof id, "tl-%s-%s", c->name, c->variants[i].name);
            /* A timeline of many lanes is a screen or more tall: folded,
             * its summary line giving its lanes; it is drawn all the
             * same, ready when opened. */
            size_t lanes = c->variants[i].metrics.nlanes;
            html_fmt(b, "<details class=\"tl\"%s><summary><h4>",
                     lanes <= TL_OPEN_LANES ? " open" : "");
            html_text(b, c->variants[i].name);
            html_fmt(b, " <small>%zu lane%s <a href=\"%s.%s.%s\" title=\"open it in "
                        "ui.perfetto.dev\">Perfetto trace</a></small></h4></summary>",
                     lanes, lanes == 1 ? "" : "s", c->name, c->variants[i].name,
                     c->variants[i].summary ? "perfetto-trace"
                                            : cp_perfetto_suffix(&c->variants[i].trace));
            timeline_html(b, id, &c->variants[i].trace, &c->variants[i].metrics,
                          c->variants[i].summary);
            html_raw(b, "</details>");
        }
    }
    /* Folded, as the checks: a table per traced variant would push the
     * next case a screen down, and the summary line says what it holds. */
    size_t with_kernels = 0;
    for (size_t i = 0; i < c->nvariants; i++)
        with_kernels += c->variants[i].traced && c->variants[i].metrics.nkernel_stats;
    if (with_kernels) {
        html_fmt(b, "<details class=\"kernels\"><summary><h3>Kernels by device time</h3> "
                    "top %d per class, %zu traced variant%s</summary>",
                 CP_BREAKDOWN_TOP, with_kernels, with_kernels == 1 ? "" : "s");
        for (size_t i = 0; i < c->nvariants; i++)
            if (c->variants[i].traced && c->variants[i].metrics.nkernel_stats)
                breakdown_html(b, c->variants[i].name, &c->variants[i].metrics);
        html_raw(b, "</details>");
    }
    bool any_series = false;
    for (size_t i = 0; i < c->nvariants; i++)
        any_series = any_series || c->variants[i].nseries;
    if (any_series) {
        html_raw(b, "<h3>Measured by the run itself</h3><table><tr><th>Variant</th>"
                    "<th>Series</th><th>Values</th><th>Mean</th><th>Standard deviation</th>"
                    "<th>Unit</th></tr>");
        for (size_t i = 0; i < c->nvariants; i++)
            for (size_t k = 0; k < c->variants[i].nseries; k++) {
                const cp_series *sr = &c->variants[i].series[k];
                double mean, std;
                cp_mean_std(sr->values, sr->n, &mean, &std);
                html_raw(b, "<tr>");
                html_cell(b, c->variants[i].name);
                html_raw(b, "<td>");
                html_human(b, sr->name);
                html_fmt(b, "</td><td>%zu</td><td>%.4g</td><td>%.4g</td>", sr->n, mean, std);
                html_cell(b, sr->unit);
                html_raw(b, "</tr>");
            }
        html_raw(b, "</table>");
    }
    if (c->nfigures) {
        /* Folded, as the checks: values the case computed beside its
         * timings, which the headline and claims already draw on. */
        html_fmt(b, "<details class=\"figures\"><summary><h3>Figures</h3> %zu value%s"
                    "</summary><ul>",
                 c->nfigures, c->nfigures == 1 ? "" : "s");
        for (size_t i = 0; i < c->nfigures; i++) {
            html_raw(b, "<li>");
            /* The terminal's rule (cuproof/units.h): "launch call: 8.60 µs". */
            char name[160], value[64];
            html_human(b, cp_fmt_figure_name(c->figures[i].name, c->figures[i].unit, name,
                                             sizeof name));
            html_fmt(b, ": ");
            html_text(b, cp_fmt_value(c->figures[i].value, c->figures[i].unit, value,
                                      sizeof value));
            html_raw(b, "</li>");
        }
        html_raw(b, "</ul></details>");
    }
    html_raw(b, "</section>");
}

/* Key findings listed at most; past it the block says how many more the
 * cases hold, so that it stays within the first screen. */
#define KEY_FINDINGS_SHOWN 12

/* "Key findings": right under the verdict counts, a line per finding
 * (cp_key_findings) that starts with a link to its case. */
static void key_findings(html_buf *b, const cp_report *r)
{
    static const char *const kind_class[] = {"failed", "inconclusive", "speedup", "overlap",
                                             "claim"};
    cp_key_finding found[KEY_FINDINGS_SHOWN];
    size_t n = cp_key_findings(r, found, KEY_FINDINGS_SHOWN);
    html_raw(b, "<section id=\"key-findings\"><h2>Key findings</h2>");
    if (!n) {
        html_raw(b, "<p>None: no case failed or was inconclusive, no variant ran 3% or more "
                    "faster than its case's baseline, no case declared copy/kernel overlap or "
                    "kernel concurrency, and no claim of a source was refuted or "
                    "exceeded.</p></section>");
        return;
    }
    html_raw(b, "<ul>");
    for (size_t i = 0; i < n && i < KEY_FINDINGS_SHOWN; i++) {
        const char *name = r->cases[found[i].case_index].name;
        html_fmt(b, "<li class=\"%s\"><a href=\"#case-", kind_class[found[i].kind]);
        html_text(b, name);
        html_raw(b, "\">");
        html_text(b, name);
        html_raw(b, "</a>: ");
        html_human(b, found[i].text);
        html_raw(b, "</li>");
    }
    html_raw(b, "</ul>");
    if (n > KEY_FINDINGS_SHOWN)
        html_fmt(b, "<p>%zu more in the cases below.</p>", n - KEY_FINDINGS_SHOWN);
    html_raw(b, "</section>");
}

/* ---- a distributed program's ranks ---- */

/* "2.50 ms" with its sign: a host's clock may be behind host 0's. */
static void signed_ms_cell(html_buf *b, int64_t ns)
{
    char t[32];
    html_raw(b, "<td>");
    if (ns < 0)
        html_raw(b, "-");
    html_text(b, cp_fmt_ms((double)(ns < 0 ? -(uint64_t)ns : (uint64_t)ns) / 1e6, t, sizeof t));
    html_raw(b, "</td>");
}

/* A time and its share: "6.00 ms (50%)". */
static void share_cell(html_buf *b, uint64_t ns, double share)
{
    char t[32], p[32];
    html_raw(b, "<td>");
    html_text(b, cp_fmt_ms((double)ns / 1e6, t, sizeof t));
    html_fmt(b, " (%s)</td>", cp_fmt_percent(share, p, sizeof p));
}

static void rank_row_html(html_buf *b, const cp_ranks *r, const cp_rank_row *w)
{
    bool straggler = r->straggler && w->rank == r->straggler_rank;
    char t[32];
    html_fmt(b, "<tr data-rank=\"%d\"%s>", (int)w->rank, straggler ? " class=\"straggler\"" : "");
    html_cell(b, w->host < r->nhosts ? r->hosts[w->host].name : "");
    html_fmt(b, "<td>%d%s</td><td>%u</td><td>", (int)w->rank,
             straggler ? " <b class=\"failed\">straggler</b>" : "", w->pid);
    for (uint32_t k = 0; k < w->ndevices && k < CP_RANK_MAX_DEVICES; k++)
        html_fmt(b, "%s%u", k ? ", " : "", w->devices[k]);
    if (w->ndevices > CP_RANK_MAX_DEVICES)
        html_fmt(b, " and %u more", w->ndevices - CP_RANK_MAX_DEVICES);
    html_raw(b, "</td>");
    time_cell(b, (double)w->busy_ns / 1e6);
    share_cell(b, w->idle_ns, w->idle_share);
    html_cell(b, cp_fmt_percent(w->comm_compute_overlap_ratio, t, sizeof t));
    share_cell(b, w->exposed_comm_ns, w->exposed_comm_share);
    html_fmt(b, "<td>%u</td><td>%u</td>", w->collectives, w->arrived_last);
    time_cell(b, (double)w->mean_lag_ns / 1e6);
    html_raw(b, "</tr>");
}

/* The hosts' clocks, only with more than one host (one host has one
 * clock): the offset applied to each, its residual, or "not aligned". */
static void hosts_html(html_buf *b, const cp_ranks *r)
{
    if (r->nhosts < 2)
        return;
    html_raw(b, "<table class=\"hosts\"><tr><th>Host</th><th title=\"added to its times to put "
                "them on the first host's clock\">Clock offset applied</th><th title=\"median "
                "distance of the collectives' ends from the offset\">Residual</th>"
                "<th>Collectives shared</th></tr>");
    for (size_t h = 0; h < r->nhosts; h++) {
        const cp_host_clock *c = &r->hosts[h];
        html_raw(b, "<tr>");
        html_cell(b, c->name);
        if (h > 0 && !c->aligned) {
            html_fmt(b, "<td colspan=\"2\" class=\"failed\">not aligned: no collective shared "
                        "with the first host</td><td>%u</td></tr>", c->shared);
            continue;
        }
        signed_ms_cell(b, c->offset_ns);
        time_cell(b, (double)c->residual_ns / 1e6);
        html_fmt(b, "<td>%u</td></tr>", c->shared);
    }
    html_raw(b, "</table>");
}

/* A variant's ranks, right after the key findings: a row per rank with
 * its own figures, the straggler marked and said under the table, then
 * the hosts' clocks. */
static void ranks_html(html_buf *b, const cp_case_result *c, const cp_variant_result *v)
{
    const cp_ranks *r = v->ranks;
    char t[32];
    html_fmt(b, "<section class=\"ranks\" id=\"ranks-%s-%s\"><h2>Ranks <small>", c->name, v->name);
    html_text(b, c->name);
    html_raw(b, " / ");
    html_text(b, v->name);
    html_fmt(b, ": %zu rank%s on %zu host%s, %u collective%s</small></h2>", r->nrows,
             r->nrows == 1 ? "" : "s", r->nhosts, r->nhosts == 1 ? "" : "s", r->collectives,
             r->collectives == 1 ? "" : "s");
    html_raw(b, "<table class=\"ranks\"><tr><th>Host</th><th>Rank</th><th>PID</th>"
                "<th>Devices</th><th>Busy</th><th>Idle</th>");
    metric_th(b, "comm_compute_overlap_ratio");
    html_raw(b, "<th title=\"communication with no compute under it, and its share of the "
                "rank's span\">Exposed communication</th><th>Collectives</th><th title=\"the "
                "collectives this rank started last\">Arrived last</th><th title=\"its mean "
                "lag over the others' median start\">Mean lag</th></tr>");
    for (size_t i = 0; i < r->nrows; i++)
        rank_row_html(b, r, &r->rows[i]);
    html_raw(b, "</table>");
    if (r->straggler) {
        const cp_rank_row *s = cp_ranks_row(r, r->straggler_rank);
        html_fmt(b, "<p class=\"straggler\">Straggler: rank %d arrived last at %u of %u "
                    "collectives, lag mean ",
                 (int)r->straggler_rank, s ? s->arrived_last : 0,
                 s ? s->collectives : r->collectives);
        html_text(b, cp_fmt_ms((double)r->straggler_mean_lag_ns / 1e6, t, sizeof t));
        html_raw(b, ", median ");
        html_text(b, cp_fmt_ms((double)r->straggler_median_lag_ns / 1e6, t, sizeof t));
        html_raw(b, ", most ");
        html_text(b, cp_fmt_ms((double)r->straggler_max_lag_ns / 1e6, t, sizeof t));
        html_raw(b, ".</p>");
    }
    /* The matched collectives' time split at the last rank's arrival. */
    if (r->nwaits)
        html_raw(b, "<table><tr><th>Collective</th><th>Matched</th><th>Waiting for the last "
                    "rank</th><th>Transfer</th></tr>");
    for (size_t i = 0; i < r->nwaits; i++) {
        const cp_collective_wait *w = &r->waits[i];
        char ms[32], label[64];
        cp_collective_label(w->op, w->algo, w->proto, label, sizeof label);
        html_raw(b, "<tr><td>");
        html_text(b, label);
        html_fmt(b, "</td><td>%u</td><td>", w->matched);
        html_text(b, cp_fmt_ms((double)w->wait_ns / 1e6, ms, sizeof ms));
        html_raw(b, "</td><td>");
        html_text(b, cp_fmt_ms((double)w->transfer_ns / 1e6, ms, sizeof ms));
        html_raw(b, "</td></tr>");
    }
    if (r->nwaits)
        html_raw(b, "</table>");
    hosts_html(b, r);
    html_raw(b, "</section>");
}

char *cp_report_html(const cp_report *r)
{
    html_buf b = {0};
    html_raw(&b, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>cuproof report</title><style>"
            "body{font-family:sans-serif;margin:2em;max-width:80em}"
            "table{border-collapse:collapse;margin:.5em 0}"
            "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}"
            ".passed,.confirmed,.exceeded{color:#060}.fell-short{color:#a60}.failed,.refuted{color:#a00}.skipped{color:#888}"
            ".inconclusive{color:#b60}.headline{font-size:1.1em;background:#f4f6f8;"
            "padding:.4em .6em;border-left:4px solid #2a6fdb}.headline.failed{border-color:#a00}"
            ".headline.inconclusive{border-color:#b60}.headline.skipped{border-color:#888}"
            ".replay{background:#fff4d6;border:1px solid #e0b94a;padding:.5em}"
            "#key-findings{background:#f4f6f8;border-left:4px solid #2a6fdb;padding:.1em .8em;"
            "margin:1em 0}#key-findings h2{margin:.4em 0}#key-findings ul{margin:.3em 0;"
            "padding-left:1.2em}#key-findings li.failed{color:#a00}"
            "#key-findings li.inconclusive{color:#b60}"
            "section.ranks h2{margin:.6em 0 .2em}tr.straggler{background:#fdecea}"
            "p.straggler{margin:.2em 0}"
            "details>summary{cursor:pointer}details>summary h3,details>summary h4{display:inline;"
            "margin-right:.5em}details.checks,details.tl,details.figures{margin:.8em 0}");
    html_raw(&b, timeline_style);
    html_raw(&b, "</style></head><body><h1>cuproof report</h1>");
    if (r->replayed_from[0]) {
        html_raw(&b, "<p class=\"replay\">Replayed from a recording on ");
        html_text(&b, r->env.gpu_name);
        html_raw(&b, ", ");
        html_text(&b, r->recorded_date);
        html_raw(&b, " (");
        html_text(&b, r->replayed_from);
        html_raw(&b, "): no GPU was used here. Metrics, timings and the declared checks were "
                     "recomputed from the recorded traces and timed samples and agree with the "
                     "recording; outputs, events and the source's claims are as recorded.</p>");
    }
    size_t counts[4] = {0}; /* by cp_status */
    for (size_t i = 0; i < r->ncases; i++)
        if ((unsigned)r->cases[i].status < 4)
            counts[r->cases[i].status]++;
    const cp_env *e = &r->env;
    html_raw(&b, "<table class=\"summary\"><tr><th>GPU</th>");
    if (e->has_device) {
        html_raw(&b, "<td>");
        html_text(&b, e->gpu_name);
        html_fmt(&b, " (sm_%d%d, %d SMs, %d copy engines)</td></tr>", e->cc_major, e->cc_minor,
                 e->sm_count, e->copy_engines);
    } else {
        html_cell(&b, e->no_device_reason);
        html_raw(&b, "</tr>");
    }
    /* The driver's and runtime's versions as CUDA numbers them: 13000 is 13.0. */
    html_fmt(&b, "<tr><th>CUDA driver and runtime</th><td>%d.%d and %d.%d</td></tr>",
             e->driver_version / 1000, e->driver_version % 1000 / 10, e->runtime_version / 1000,
             e->runtime_version % 1000 / 10);
    html_raw(&b, "<tr><th>Host</th>");
    html_cell(&b, e->cpu_model[0] ? e->cpu_model : e->host);
    html_raw(&b, "</tr><tr><th>Profile</th>");
    html_cell(&b, strcmp(r->profile, "full") == 0 ? "full (the sources' sizes)"
                  : strcmp(r->profile, "ci") == 0 ? "ci (small sizes)"
                                                  : r->profile);
    if (r->repeat > 0)
        html_fmt(&b, "</tr><tr><th>Timed runs</th><td>%d per variant</td></tr>", r->repeat);
    else
        html_fmt(&b, "</tr><tr><th>Timed runs</th><td>%d to %d per variant, until the median's "
                     "noise is under %g%% or %g s have passed</td></tr>",
                 r->min_samples, r->max_samples, 100 * r->max_noise, r->max_time_s);
    html_raw(&b, "<tr><th>Tracing</th>");
    html_cell(&b, r->traced ? "CUPTI activity trace, one separate run per variant"
                            : r->untraced_reason);
    html_raw(&b, "</tr><tr><th>Date</th>");
    html_cell(&b, r->replayed_from[0] ? r->recorded_date : r->date);
    html_fmt(&b, "</tr><tr><th>Verdicts</th><td class=\"counts\" data-passed=\"%zu\" "
                 "data-failed=\"%zu\" data-inconclusive=\"%zu\" data-skipped=\"%zu\">"
                 "<span class=\"passed\">%zu passed</span>, <span class=\"failed\">%zu "
                 "failed</span>, <span class=\"inconclusive\">%zu inconclusive</span>, "
                 "<span class=\"skipped\">%zu skipped</span></td></tr></table>",
             counts[CP_STATUS_PASSED], counts[CP_STATUS_FAILED], counts[CP_STATUS_INCONCLUSIVE],
             counts[CP_STATUS_SKIPPED], counts[CP_STATUS_PASSED], counts[CP_STATUS_FAILED],
             counts[CP_STATUS_INCONCLUSIVE], counts[CP_STATUS_SKIPPED]);
    key_findings(&b, r);
    for (size_t i = 0; i < r->ncases; i++)
        for (size_t k = 0; k < r->cases[i].nvariants; k++)
            if (r->cases[i].variants[k].ranks)
                ranks_html(&b, &r->cases[i], &r->cases[i].variants[k]);
    /* The cases by interest (cp_case_interest: failed and inconclusive,
     * then those with findings or claims, then the rest), in the run's
     * order within each group; the sections below follow the table. */
    html_raw(&b, "<h2>Cases</h2><table class=\"cases\"><tr><th>Case</th><th>Verdict</th>"
                 "<th>What it showed</th></tr>");
    for (int g = 0; g < 3; g++)
    for (size_t i = 0; i < r->ncases; i++) {
        if (cp_case_interest(r, i) != g)
            continue;
        const cp_case_result *c = &r->cases[i];
        char headline[1024];
        cp_case_headline(c, headline, sizeof headline);
        html_fmt(&b, "<tr><td><a href=\"#case-%s\">%s</a></td><td class=\"%s\">%s</td><td>",
                 c->name, c->name, cp_status_name(c->status), cp_status_name(c->status));
        html_human(&b, headline);
        html_raw(&b, "</td></tr>");
    }
    html_raw(&b, "</table>");
    for (int g = 0; g < 3; g++)
        for (size_t i = 0; i < r->ncases; i++)
            if (cp_case_interest(r, i) == g)
                case_html(&b, &r->cases[i], r->replayed_from[0] != 0);
    html_raw(&b, timeline_script);
    html_raw(&b, "</body></html>\n");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

char *cp_trace_files_html(const cp_trace_file *files, size_t n)
{
    html_buf b = {0};
    html_raw(&b, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>cuproof timelines</title><style>"
            "body{font-family:sans-serif;margin:2em;max-width:90em}"
            "table{border-collapse:collapse;margin:.5em 0}"
            "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}");
    html_raw(&b, timeline_style);
    html_raw(&b, "</style></head><body><h1>cuproof timelines</h1>"
            "<p>Drawn from recorded trace files (cuproof.trace/1).</p>");
    html_raw(&b, legend_html);
    for (size_t f = 0; f < n; f++) {
        const cp_trace_file *tf = &files[f];
        html_raw(&b, "<section><h2>");
        html_text(&b, tf->case_name);
        html_raw(&b, "</h2><p>recorded on ");
        html_text(&b, tf->device);
        html_raw(&b, "</p>");
        for (size_t v = 0; v < tf->nvariants; v++) {
            cp_metrics m;
            if (cp_timeline_analyse(&tf->variants[v].trace, NULL, &m) < 0) {
                b.oom = true;
                break;
            }
            html_raw(&b, "<h3>");
            html_text(&b, tf->variants[v].name);
            /* Through the one table of units (cuproof/units.h). */
            char span[32], lanes[32], overlap[96];
            html_fmt(&b, "</h3><p>span %s, %s, up to %u kernel%s at once, %s</p>",
                     cp_fmt_ms((double)m.span_ns / 1e6, span, sizeof span),
                     cp_fmt_copy_overlap(m.copies > 0, m.copy_kernel_overlap_ratio, false,
                                         overlap, sizeof overlap),
                     m.peak_concurrent_kernels, m.peak_concurrent_kernels == 1 ? "" : "s",
                     cp_fmt_count((double)m.nlanes, "lanes", lanes, sizeof lanes));
            char id[200];
            snprintf(id, sizeof id, "tl-%s-%s", tf->case_name, tf->variants[v].name);
            timeline_html(&b, id, &tf->variants[v].trace, &m, NULL);
            cp_metrics_free(&m);
        }
        html_raw(&b, "</section>");
    }
    html_raw(&b, timeline_script);
    html_raw(&b, "</body></html>\n");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

int cp_report_html_write(const cp_report *r, const char *path)
{
    char *html = cp_report_html(r);
    int rc = html ? cp_write_file(path, html)
                  : cp_failf(CP_ENOMEM, "out of memory while writing %s", path);
    free(html);
    return rc;
}
